//! The `elicitation` service: ask whoever owns a session to answer an MCP
//! server's request for input (`elicitation/create`), when no listener of
//! `mcp/elicitation` did. The ACP server provides it and asks the
//! session's editor when the editor offers elicitation.
//!
//! Method [`METHOD_REQUEST`] takes an [`ElicitationRequest`] and answers an
//! [`ElicitationAnswer`]. A provider that cannot ask anyone answers
//! `cancel`; a caller treats a failed call, or an action it does not know,
//! as `cancel` too (what `claude -p` answers when nobody can be asked).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The service's name.
pub const SERVICE: &str = "elicitation";
/// Its one method.
pub const METHOD_REQUEST: &str = "request";
/// The contract's version (see the [evolution rule](super#evolution-rule)).
pub const VERSION: u32 = 1;

/// One request for input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationRequest {
    /// The session whose tool call the server is answering.
    pub session_id: String,
    /// The MCP server's name.
    pub server: String,
    /// What the server tells the user.
    pub message: String,
    /// `form` or `url`.
    pub mode: String,
    /// The form's JSON Schema (form mode).
    #[serde(default)]
    pub requested_schema: Option<Value>,
    /// Where the user should go (url mode).
    #[serde(default)]
    pub url: Option<String>,
    /// The server's id for this elicitation (url mode).
    #[serde(default)]
    pub elicitation_id: Option<String>,
}

/// The answer, tagged by `action`; an unknown action does not decode, and
/// a caller then treats it as `cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ElicitationAnswer {
    /// The user answered; `content` is the form's values (a JSON object).
    Accept {
        /// The values, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Value>,
    },
    /// The user said no.
    Decline,
    /// The user dismissed it, or nobody could be asked.
    Cancel,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_read_as_mcp_writes_them() {
        let read = |v: Value| serde_json::from_value::<ElicitationAnswer>(v);
        assert_eq!(
            read(json!({"action": "accept", "content": {"a": 1}})).unwrap(),
            ElicitationAnswer::Accept {
                content: Some(json!({"a": 1}))
            }
        );
        assert_eq!(
            read(json!({"action": "decline"})).unwrap(),
            ElicitationAnswer::Decline
        );
        assert!(read(json!({"action": "maybe"})).is_err());
        assert_eq!(
            serde_json::to_value(ElicitationAnswer::Accept { content: None }).unwrap(),
            json!({"action": "accept"})
        );
    }
}
