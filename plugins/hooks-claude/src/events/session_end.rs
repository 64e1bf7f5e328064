//! SessionEnd (`agent/session-end`): observe only; nothing a hook answers
//! can change a session that is closing. Matcher subject: the `reason`.

use dsh_plugin_api::SessionEndInput;
use serde_json::Value;

use super::{head, prompt_id, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "SessionEnd";

/// The stdin payload. `last_prompt` is the id of the session's last
/// prompt, which Claude Code reports although the turn is over.
pub fn payload(input: &SessionEndInput, last_prompt: Option<&str>) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    if let (false, Some(id)) = (m.contains_key("prompt_id"), last_prompt) {
        m.insert("prompt_id".into(), id.into());
    }
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("reason".into(), input.reason.as_str().into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// Runs the SessionEnd hooks; none when `dsh prompt` killed the
    /// background jobs its wind-down grace did not see end: `claude -p`
    /// then exits without them (recorded `S260-left-running`).
    pub async fn on_session_end(&self, input: &SessionEndInput) {
        let last_prompt = self.take_last_prompt(&input.session.session_id);
        if !self.has_hooks(&input.session, EVENT)
            || super::is_subagent(&input.session)
            || input.reason.as_str() == dsh_plugin_api::SESSION_END_WIND_DOWN_KILLED
        {
            return;
        }
        let mut runs = self
            .fire(
                EVENT,
                &input.session,
                &[input.reason.as_str()],
                &payload(input, last_prompt.as_deref()),
            )
            .await;
        for run in &mut runs {
            read(run, EVENT);
        }
        self.record(&input.session, EVENT, &runs);
    }
}
