//! SubagentStart (`subagent/start`) and SubagentStop (the subagent's
//! `agent/turn-continuation`).
//!
//! A SubagentStart `additionalContext` starts the subagent's system
//! message, right after its prompt, as `SubagentStart hook additional
//! context: <text>` (vector `S170-additional-context`; several hooks'
//! texts a line each under the one prefix, `S174-two-start-contexts`); its plain stdout,
//! exit 2, `continue: false` and `decision: "block"` change nothing: the
//! subagent runs, neither model reads them (`S170-*`).
//!
//! SubagentStop fires when the subagent's turn is about to end, as Stop
//! does for a session's: `decision: "block"` or exit 2 keeps the subagent
//! going with the steering text `Stop hook feedback:\n<reason>` (exit 2:
//! `[command]: stderr`), and the next firing says `stop_hook_active: true`;
//! the Agent tool then returns the subagent's later answer (vectors
//! `S171-block-once`, `S171-exit2-once`). Plain stdout and `continue:
//! false` change nothing (`S171-plain-stdout`, `S171-continue-false`).
//! Matcher subject: the agent type.
//!
//! A subagent whose model request fails gets no SubagentStop: its
//! StopFailure hooks run (payload as the subagent's own, no MessageDisplay)
//! and the Agent call completes with Claude Code's text for the error as
//! its answer (vectors `S180-*`, [`ClaudeBridge::failed_agent_answer`]). A
//! subagent cancelled with its parent's turn fires nothing more
//! (`S181-sigint-in-child-tool`).

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::{ContinuationDecision, ContinuationInput, ROption, RString, SubagentInfo};
use serde_json::{Value, json};

use super::{
    JsonCount, capped_context, completion, effort, fresh_id, head, permission_mode, prompt_id, read,
};
use crate::ClaudeBridge;

/// The start event name.
pub const START: &str = "SubagentStart";
/// The stop event name.
pub const STOP: &str = "SubagentStop";

/// A running subagent, as the bridge keeps it from `subagent/start` to
/// `subagent/end`.
#[derive(Clone, Debug)]
pub struct Running {
    info: SubagentInfo,
    /// Whether SubagentStop is settled for it: its hooks fired (its turn
    /// came to a natural end), or its turn ended another way (a failed
    /// model request, a cancel), which fires none.
    settled: bool,
    /// The text Claude Code shows for the model error that ended its
    /// turn, if one did: the Agent call's answer ([`ClaudeBridge::failed_agent_answer`]).
    failed: Option<String>,
}

/// `payload`, built for a subagent's own session, as Claude Code gives it
/// to that subagent's hooks: `session_id`, `transcript_path` and
/// `prompt_id` the main session's, then `agent_id` and `agent_type` after
/// `permission_mode` (vector `S174-failure-in-subagent`), or before
/// `effort` in a payload without it (`S180-child-err500`'s StopFailure).
pub fn as_subagents(payload: &Value, info: &SubagentInfo) -> Value {
    let Some(fields) = payload.as_object() else {
        return payload.clone();
    };
    let parent = &info.parent;
    let mut m = serde_json::Map::new();
    let mut placed = false;
    let agent = |m: &mut serde_json::Map<String, Value>| {
        m.insert("agent_id".into(), info.child_session_id.as_str().into());
        m.insert("agent_type".into(), info.agent_type.as_str().into());
    };
    for (key, value) in fields {
        let value = match key.as_str() {
            "session_id" => parent.session_id.as_str().into(),
            "transcript_path" => parent.log_path.as_str().into(),
            "prompt_id" if !parent.prompt_id.is_empty() => parent.prompt_id.as_str().into(),
            _ => value.clone(),
        };
        // Where `permission_mode` is or would be: before `effort` when a
        // payload has none (StopFailure, vector `S180-child-err500`).
        if !placed && (key == "hook_event_name" || key == "effort") {
            agent(&mut m);
            placed = true;
        }
        m.insert(key.clone(), value);
        if !placed && key == "permission_mode" {
            agent(&mut m);
            placed = true;
        }
    }
    if !placed {
        agent(&mut m);
    }
    Value::Object(m)
}

/// The SubagentStart stdin payload.
pub fn start_payload(info: &SubagentInfo) -> Value {
    let mut m = head(&info.parent);
    prompt_id(&mut m, &info.parent);
    m.insert("agent_id".into(), info.child_session_id.as_str().into());
    m.insert("agent_type".into(), info.agent_type.as_str().into());
    m.insert("hook_event_name".into(), START.into());
    Value::Object(m)
}

/// The SubagentStop stdin payload; `stop_hook_active` once a SubagentStop
/// block has kept the subagent going.
pub fn stop_payload(
    info: &SubagentInfo,
    effort_level: Option<&str>,
    stop_hook_active: bool,
) -> Value {
    let mut m = head(&info.parent);
    prompt_id(&mut m, &info.parent);
    permission_mode(&mut m, &info.parent);
    m.insert("agent_id".into(), info.child_session_id.as_str().into());
    m.insert("agent_type".into(), info.agent_type.as_str().into());
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), STOP.into());
    m.insert("stop_hook_active".into(), stop_hook_active.into());
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
        if let Ok(mut m) = self.subagents.lock() {
            m.insert(
                info.child_session_id.to_string(),
                Running {
                    info: info.clone(),
                    settled: false,
                    failed: None,
                },
            );
        }
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
        for i in completion(&runs) {
            let reading = read(&mut runs[i], START);
            let nth = answers.count(&reading);
            contexts.extend(capped_context(&spill, &reading, nth));
        }
        self.record(&info.parent, START, &runs);
        // Several hooks' contexts are one text under one prefix, a line
        // each (vector `S174-two-start-contexts`).
        if !contexts.is_empty() {
            let text = format!("{START} hook additional context: {}", contexts.join("\n"));
            self.inject_system(&info.child_session_id, &text);
        }
    }

    /// What the bridge knows of the running subagent whose session is
    /// `session_id`.
    pub(crate) fn running_subagent(&self, session_id: &str) -> Option<SubagentInfo> {
        let m = self.subagents.lock().ok()?;
        m.get(session_id).map(|r| r.info.clone())
    }

    /// Runs the SubagentStop hooks when a subagent's turn is about to end:
    /// what they make of it, `None` to let the rest of the chain decide.
    pub(crate) async fn on_subagent_stopping(
        &self,
        input: &ContinuationInput,
    ) -> Option<ContinuationDecision> {
        let mut info = {
            let mut m = self.subagents.lock().ok()?;
            let running = m.get_mut(input.session.session_id.as_str())?;
            running.settled = true;
            running.info.clone()
        };
        if !self.has_hooks(&info.parent, STOP) {
            return None;
        }
        info.result = ROption::RSome(RString::from(input.last_assistant_message.as_str()));
        let payload = stop_payload(
            &info,
            self.effort.as_deref(),
            input.consecutive_continues > 0,
        );
        let subject = info.agent_type.as_str();
        let runs = self.fire(STOP, &info.parent, &[subject], &payload).await;
        self.stop_decision(STOP, &info.parent, runs, input.consecutive_continues)
    }

    /// A subagent's turn has ended (`agent/turn-end`): no SubagentStop
    /// fires for it after this. `failed` is Claude Code's text for the
    /// model error that ended it, if one did: its Agent call answers that.
    pub(crate) fn note_subagent_end(&self, session_id: &str, failed: Option<String>) {
        if let Ok(mut m) = self.subagents.lock()
            && let Some(running) = m.get_mut(session_id)
        {
            running.settled = true;
            running.failed = failed;
        }
    }

    /// The subagent has ended. Its SubagentStop hooks ran at its
    /// `agent/turn-continuation` when its turn came to its end; a turn a
    /// failed model request ended had StopFailure instead (`S180-*`), one
    /// cancelled with its parent's has nothing (`S181-sigint-in-child-tool`).
    /// Only a subagent that ran no turn of its own (the forked agent that
    /// writes a compaction's summary, `S90-*`) has its SubagentStop here,
    /// observe only. The text of a failure is kept for its Agent call's
    /// post-execute.
    pub async fn on_subagent_stop(&self, info: &SubagentInfo) {
        // The compaction's agent had no `subagent/start`: nothing is kept
        // of it, and it is not settled.
        let running = self
            .subagents
            .lock()
            .ok()
            .and_then(|mut m| m.remove(info.child_session_id.as_str()));
        let settled = running.as_ref().is_some_and(|r| r.settled);
        if let Some(text) = running.and_then(|r| r.failed)
            && let Ok(mut m) = self.failed_agents.lock()
        {
            m.insert(info.call_id.to_string(), text);
        }
        if settled || !self.has_hooks(&info.parent, STOP) {
            return;
        }
        let subject = info.agent_type.as_str();
        let payload = stop_payload(info, self.effort.as_deref(), false);
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

    /// What the Agent call `call_id` answers, if its subagent's turn ended
    /// on a failed model request: Claude Code's text for that error.
    pub(crate) fn failed_agent_answer(&self, call_id: &str) -> Option<String> {
        self.failed_agents.lock().ok()?.remove(call_id)
    }
}
