//! SessionEnd (`agent/session-end`): observe only (exit 1 or 2,
//! `decision: "block"`, `continue: false` change nothing; vectors
//! `C171-*`). Its payload has no `turn_id`, `model` or `permission_mode`
//! (vector `C1-resume`).

use dsh_plugin_api::SessionEndInput;
use serde_json::{Map, Value};

use super::{read, transcript};
use crate::CodexBridge;

/// The event name.
pub const EVENT: &str = "SessionEnd";

/// The stdin payload.
pub fn payload(input: &SessionEndInput) -> Value {
    let s = &input.session;
    let mut m = Map::new();
    m.insert("session_id".into(), s.session_id.as_str().into());
    m.insert("transcript_path".into(), transcript(s));
    m.insert("cwd".into(), s.cwd.as_str().into());
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("reason".into(), input.reason.as_str().into());
    Value::Object(m)
}

impl CodexBridge {
    /// Runs the SessionEnd hooks.
    pub async fn on_session_end(&self, input: &SessionEndInput) {
        // A sub-agent's end runs no SessionEnd (vectors `C180-*`: one
        // SessionEnd, the main session's).
        if input.session.parent_session_id.is_some() || !self.has_hooks(&input.session, EVENT) {
            return;
        }
        let mut runs = self
            .fire(
                EVENT,
                &input.session,
                Some(input.reason.as_str()),
                &payload(input),
            )
            .await;
        for run in &mut runs {
            read(run);
        }
        self.record(&input.session, EVENT, &runs);
    }
}
