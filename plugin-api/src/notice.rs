//! `user/notice`: the session-log record for text the user must see and
//! the model must not (a hook's `systemMessage`, the `stopReason` of a
//! `continue: false`). A plugin appends it with `Host::append_record`; the
//! host reads it as a typed event and shows it to the user (ACP: an agent
//! message), never to the model. A record, not an ABI type: nothing crosses
//! the boundary but its JSON.

use serde::{Deserialize, Serialize};

/// The record's `type`.
pub const USER_NOTICE: &str = "user/notice";

/// A `user/notice` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserNotice {
    /// Always [`USER_NOTICE`].
    #[serde(rename = "type")]
    pub kind: String,
    /// What the user reads.
    pub text: String,
    /// Where it came from, for the user (`"UserPromptSubmit hook"`).
    pub source: String,
}

impl UserNotice {
    /// A notice of `text` from `source`.
    pub fn new(text: impl Into<String>, source: impl Into<String>) -> UserNotice {
        UserNotice {
            kind: USER_NOTICE.to_string(),
            text: text.into(),
            source: source.into(),
        }
    }

    /// The record as `Host::append_record` takes it.
    pub fn record(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
