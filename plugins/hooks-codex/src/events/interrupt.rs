//! Interrupt (`agent/turn-end` with reason `aborted`): when a turn is
//! cancelled. Codex 0.171.0 fires it when `codex exec` gets SIGINT
//! mid-turn (vector `C173-sigint-during-tool`): after the running tool's
//! PreToolUse, with no PostToolUse and no Stop after it, then SessionEnd.
//! The payload is the turn head only: `session_id`, `turn_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `model`,
//! `permission_mode`. No matcher subject. Observe only: exit 2, `decision:
//! "block"`, `continue: false` and plain stdout change nothing
//! (vectors `C174-*`). A sub-agent's stopped turn fires none (its parent
//! interrupted, `C184-sigint-child-tool`; closed, `C185-close-running`).

use dsh_plugin_api::TurnEndInput;
use serde_json::Value;

use super::{read, turn_head};
use crate::CodexBridge;

/// The event name.
pub const EVENT: &str = "Interrupt";

/// The stdin payload, keys in Codex's order.
pub fn payload(input: &TurnEndInput, model: &str) -> Value {
    let s = &input.session;
    Value::Object(turn_head(s, s.cwd.as_str(), EVENT, model))
}

impl CodexBridge {
    /// Runs the Interrupt hooks when a turn ended cancelled.
    pub async fn on_turn_end(&self, input: &TurnEndInput) {
        // A sub-agent's turn stopped (its parent interrupted, or
        // close_agent) fires none: C184-sigint-child-tool, C185-close-running.
        if input.reason.as_str() != "aborted"
            || input.session.parent_session_id.is_some()
            || !self.has_hooks(&input.session, EVENT)
        {
            return;
        }
        let mut runs = self
            .fire(EVENT, &input.session, None, &payload(input, &self.model))
            .await;
        for run in &mut runs {
            read(run);
        }
        self.record(&input.session, EVENT, &runs);
    }
}
