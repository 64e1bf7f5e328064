//! PreModelRequest (`agent/model-request`, plugin API 1.4): observe only,
//! before every request to the model (vector `C1-all-events-hooks-json`:
//! after UserPromptSubmit, and again after the tool's PostToolUse).
//!
//! The payload is Codex 0.171.0's: `kind: "sampling"`, a fresh
//! `request_id` per request, `attempt_number` (1), `session_id` and
//! `thread_id` (the same id), `turn_id`, `cwd`, `transcript_path`, `model`.
//! No matcher subject. Codex reads nothing from the answer: plain stdout,
//! exit 1 or 2, `decision: "block"`, `continue: false` and
//! `additionalContext` leave both requests, the tool call and the run as
//! they were (vectors `C170-*`).

use dsh_plugin_api::ModelRequestInput;
use serde_json::{Map, Value};

use super::{agent_fields, read, root_session, transcript};
use crate::CodexBridge;

/// The event name.
pub const EVENT: &str = "PreModelRequest";

/// The stdin payload, keys in Codex's order.
pub fn payload(input: &ModelRequestInput, model: &str) -> Value {
    let s = &input.session;
    let mut m = Map::new();
    m.insert("kind".into(), "sampling".into());
    m.insert("request_id".into(), input.request_id.as_str().into());
    m.insert("attempt_number".into(), input.attempt.into());
    m.insert("session_id".into(), root_session(s).into());
    m.insert("thread_id".into(), s.session_id.as_str().into());
    m.insert("turn_id".into(), s.turn_id.as_str().into());
    m.insert("cwd".into(), s.cwd.as_str().into());
    m.insert("transcript_path".into(), transcript(s));
    m.insert("model".into(), model.into());
    // A sub-agent's request: the main session's id, its own as
    // `thread_id`, the agent after `model` (vector `C180-child-tool`).
    agent_fields(&mut m, s);
    m.insert("hook_event_name".into(), EVENT.into());
    Value::Object(m)
}

impl CodexBridge {
    /// Runs the PreModelRequest hooks.
    pub async fn on_model_request(&self, input: &ModelRequestInput) {
        if !self.has_hooks(&input.session, EVENT) {
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
