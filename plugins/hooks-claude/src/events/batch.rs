//! PostToolBatch and MessageDisplay, both observe only, both fired from
//! the turn's end-of-step point (`agent/turn-continuation`), before Stop.
//!
//! - **PostToolBatch** (vectors `S1-*`): once a step's tool calls have all
//!   finished, every call of the step with `tool_name` as the model called
//!   it (`Task`, not `Agent`), `tool_input`, `tool_use_id` and
//!   `tool_response`, what the model reads: its text, or the list of its
//!   blocks when it reads several (the `Agent` call's answer and usage
//!   note). The bridge collects the calls as their post-execute phase
//!   passes it.
//! - **MessageDisplay** (`S1-*`): the turn's final answer as Claude Code
//!   shows it in `-p` mode: one call, `index: 0`, `final: true`, `delta` the
//!   whole text, a `message_id` of its own.
//!
//! A subagent's steps fire PostToolBatch as the subagent's (the main
//! session's ids, `agent_id` and `agent_type`: `S180-child-err-after-tool`)
//! and never MessageDisplay (`S1-all-events`). What these hooks
//! answer changes nothing here (MessageDisplay's `displayContent` only
//! changes what a terminal shows).

use dsh_plugin_api::{
    ContentBlock, ContinuationDecision, ContinuationInput, PostExecuteInput, SessionRef,
};
use serde_json::{Map, Value, json};

use super::{effort, head, permission_mode, prompt_id, read};
use crate::ClaudeBridge;

/// PostToolBatch.
pub const BATCH: &str = "PostToolBatch";
/// MessageDisplay.
pub const DISPLAY: &str = "MessageDisplay";

/// One call as PostToolBatch lists it.
pub fn batch_entry(input: &PostExecuteInput) -> Value {
    let call = &input.call;
    json!({
        "tool_name": call.name.as_str(),
        "tool_input": super::tool_input::for_batch_call(call),
        "tool_use_id": call.call_id.as_str(),
        "tool_response": read_by_model(&input.result),
    })
}

/// What the model reads of `result` as Claude Code lists it: one text
/// block as its text, several blocks or an image (`Read` of a PNG, S120)
/// as Anthropic content blocks.
fn read_by_model(result: &dsh_plugin_api::ToolResult) -> Value {
    let image = result
        .content
        .iter()
        .any(|b| matches!(b.as_enum(), Ok(ContentBlock::Image { .. })));
    if result.content.len() <= 1 && !image {
        return result.text_content().into();
    }
    let blocks = result
        .content
        .iter()
        .filter_map(|b| match b.as_enum().ok()? {
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text.as_str()})),
            ContentBlock::Image { mime_type, data } => Some(json!({"type": "image",
                "source": {"type": "base64", "data": data.as_str(), "media_type": mime_type.as_str()}})),
        })
        .collect();
    Value::Array(blocks)
}

/// The PostToolBatch payload.
pub fn batch_payload(session: &SessionRef, effort_level: Option<&str>, calls: Vec<Value>) -> Value {
    let mut m = head(session);
    prompt_id(&mut m, session);
    permission_mode(&mut m, session);
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), BATCH.into());
    m.insert("tool_calls".into(), Value::Array(calls));
    Value::Object(m)
}

/// The MessageDisplay payload.
pub fn display_payload(session: &SessionRef, message_id: &str, text: &str) -> Value {
    let mut m: Map<String, Value> = head(session);
    prompt_id(&mut m, session);
    m.insert("hook_event_name".into(), DISPLAY.into());
    m.insert("turn_id".into(), session.turn_id.as_str().into());
    m.insert("message_id".into(), message_id.into());
    m.insert("index".into(), 0.into());
    m.insert("final".into(), true.into());
    m.insert("delta".into(), text.into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// Remembers a finished call for its step's PostToolBatch.
    pub(crate) fn note_batch_call(&self, input: &PostExecuteInput) {
        if !self.has_hooks(&input.call.session, BATCH) {
            return;
        }
        if let Ok(mut m) = self.batches.lock() {
            m.entry(input.call.session.session_id.to_string())
                .or_default()
                .push(batch_entry(input));
        }
    }

    /// At a step's end: PostToolBatch for its calls, then MessageDisplay
    /// for a final answer.
    pub async fn on_step_end(&self, input: &ContinuationInput) {
        let session = &input.session;
        let calls = self
            .batches
            .lock()
            .ok()
            .and_then(|mut m| m.remove(session.session_id.as_str()))
            .unwrap_or_default();
        if !calls.is_empty() {
            let payload = batch_payload(session, self.effort.as_deref(), calls);
            let mut runs = self.fire(BATCH, session, &[], &payload).await;
            for run in &mut runs {
                read(run, BATCH);
            }
            self.record(session, BATCH, &runs);
        }
        // What the step's reads loaded (S240): after PostToolBatch.
        self.fire_nested_instructions(session).await;
        let text = input.last_assistant_message.as_str();
        let last = input.default_decision() == Some(ContinuationDecision::Stop);
        if last
            && !text.is_empty()
            && !super::is_subagent(session)
            && self.has_hooks(session, DISPLAY)
        {
            let message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
            let payload = display_payload(session, &message_id, text);
            let mut runs = self.fire(DISPLAY, session, &[], &payload).await;
            for run in &mut runs {
                read(run, DISPLAY);
            }
            self.record(session, DISPLAY, &runs);
        }
    }
}
