//! SessionEnd (`agent/session-end`): observe only; nothing a hook answers
//! can change a session that is closing. Matcher subject: the `reason`.

use dsh_plugin_api::SessionEndInput;
use serde_json::Value;

use super::{head, prompt_id, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "SessionEnd";

/// The stdin payload.
pub fn payload(input: &SessionEndInput) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("reason".into(), input.reason.as_str().into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// Runs the SessionEnd hooks.
    pub async fn on_session_end(&self, input: &SessionEndInput) {
        if !self.has_hooks(EVENT) {
            return;
        }
        let mut runs = self
            .fire(
                EVENT,
                &input.session,
                &[input.reason.as_str()],
                &payload(input),
            )
            .await;
        for run in &mut runs {
            read(run, EVENT);
        }
        self.record(&input.session, EVENT, &runs);
    }
}
