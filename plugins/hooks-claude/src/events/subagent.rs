//! SubagentStart and SubagentStop (`subagent/start`, `subagent/end`).
//!
//! Both are notifications in dsh. A SubagentStart `additionalContext` is
//! injected into the live child session; a SubagentStop block cannot keep a
//! finished child going, so it is recorded and otherwise ignored. Matcher
//! subject: the agent type.

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::SubagentInfo;
use serde_json::{Value, json};

use super::{JsonCount, capped_context, effort, fresh_id, head, permission_mode, prompt_id, read};
use crate::ClaudeBridge;

/// The start event name.
pub const START: &str = "SubagentStart";
/// The stop event name.
pub const STOP: &str = "SubagentStop";

/// The SubagentStart stdin payload.
pub fn start_payload(info: &SubagentInfo) -> Value {
    let mut m = head(&info.parent);
    prompt_id(&mut m, &info.parent);
    m.insert("agent_id".into(), info.child_session_id.as_str().into());
    m.insert("agent_type".into(), info.agent_type.as_str().into());
    m.insert("hook_event_name".into(), START.into());
    Value::Object(m)
}

/// The SubagentStop stdin payload.
pub fn stop_payload(info: &SubagentInfo, effort_level: Option<&str>) -> Value {
    let mut m = head(&info.parent);
    prompt_id(&mut m, &info.parent);
    permission_mode(&mut m, &info.parent);
    m.insert("agent_id".into(), info.child_session_id.as_str().into());
    m.insert("agent_type".into(), info.agent_type.as_str().into());
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), STOP.into());
    m.insert("stop_hook_active".into(), false.into());
    m.insert(
        "agent_transcript_path".into(),
        info.child_log_path.as_str().into(),
    );
    let last = info
        .result
        .as_ref()
        .map(|r| r.as_str())
        .into_option()
        .unwrap_or_default();
    m.insert("last_assistant_message".into(), last.into());
    m.insert("background_tasks".into(), json!([]));
    m.insert("session_crons".into(), json!([]));
    Value::Object(m)
}

impl ClaudeBridge {
    /// Runs the SubagentStart hooks; their context goes to the child.
    pub async fn on_subagent_start(&self, info: &SubagentInfo) {
        if !self.has_hooks(&info.parent, START) {
            return;
        }
        let subject = info.agent_type.as_str();
        let mut runs = self
            .fire(START, &info.parent, &[subject], &start_payload(info))
            .await;
        let mut contexts = Vec::new();
        let batch = fresh_id();
        let spill = self.spill(&info.child_session_id, &info.child_log_path, &batch);
        let mut answers = JsonCount::default();
        for run in &mut runs {
            let reading = read(run, START);
            let nth = answers.count(&reading);
            if let Some(ctx) = capped_context(&spill, &reading, nth) {
                contexts.push(format!("{START} hook additional context: {ctx}"));
            }
        }
        self.record(&info.parent, START, &runs);
        for text in contexts {
            self.inject(&info.child_session_id, &text);
        }
    }

    /// Runs the SubagentStop hooks (observe only).
    pub async fn on_subagent_stop(&self, info: &SubagentInfo) {
        if !self.has_hooks(&info.parent, STOP) {
            return;
        }
        let subject = info.agent_type.as_str();
        let payload = stop_payload(info, self.effort.as_deref());
        let mut runs = self.fire(STOP, &info.parent, &[subject], &payload).await;
        for run in &mut runs {
            let reading = read(run, STOP);
            if reading.blocked || reading.decision() == Some("block") {
                run.detail =
                    Some("SubagentStop block ignored: the subagent has already ended".into());
                run.outcome = Outcome::NonBlockingError;
            }
        }
        self.record(&info.parent, STOP, &runs);
    }
}
