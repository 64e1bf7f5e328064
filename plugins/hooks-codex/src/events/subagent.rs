//! SubagentStart (`subagent/start`) and SubagentStop (the sub-agent's
//! `agent/turn-continuation`), as Codex 0.171.0 fires them around a
//! `spawn_agent` child (vectors `C180-*`, `C181-*`, `C182-*`).
//!
//! SubagentStart: `{session_id: main's, turn_id: child's, transcript_path:
//! child's, cwd, hook_event_name, model, permission_mode, agent_id,
//! agent_type}`. Plain stdout and `additionalContext` reach the child as a
//! developer message before its prompt (`C181-additional-context`,
//! `C181-plain-stdout`); `decision: "block"`, exit 2 and `continue: false`
//! change nothing (`C181-decision-block`, `-exit2-stderr`,
//! `-continue-false`).
//!
//! SubagentStop fires instead of Stop when the child's turn would end:
//! `{session_id: main's, turn_id: child's, transcript_path: main's,
//! agent_transcript_path: child's, cwd, hook_event_name, model,
//! permission_mode, stop_hook_active, agent_id, agent_type,
//! last_assistant_message}`. A block (`decision: "block"` with a reason,
//! or exit 2 with stderr) keeps the child going with the reason as a
//! `<hook_prompt hook_run_id="subagent-stop:…">` message, and the next
//! firing says `stop_hook_active: true` (`C182-block-once`,
//! `C182-exit2-once`); `continue: false`, `additionalContext` and plain
//! stdout change nothing (`C182-continue-false`, `-additional-context`,
//! `-plain-stdout`). Matcher subject: the agent type.

use std::future::Future;

use dsh_plugin_api::{ConfigProblem, ContinuationDecision, ContinuationInput, SubagentInfo};
use serde_json::{Map, Value};

use super::{invalid, permission_mode, read, transcript};
use crate::CodexBridge;
use crate::output::decode;

/// The start event name.
pub const START: &str = "SubagentStart";
/// The stop event name.
pub const STOP: &str = "SubagentStop";

/// The SubagentStart stdin payload; `turn_id` is the child's open turn.
pub fn start_payload(info: &SubagentInfo, child_turn_id: &str, model: &str) -> Value {
    let p = &info.parent;
    let mut m = Map::new();
    m.insert("session_id".into(), p.session_id.as_str().into());
    m.insert("turn_id".into(), child_turn_id.into());
    m.insert(
        "transcript_path".into(),
        info.child_log_path.as_str().into(),
    );
    m.insert("cwd".into(), p.cwd.as_str().into());
    m.insert("hook_event_name".into(), START.into());
    m.insert("model".into(), model.into());
    m.insert("permission_mode".into(), permission_mode(p).into());
    m.insert("agent_id".into(), info.child_session_id.as_str().into());
    m.insert("agent_type".into(), info.agent_type.as_str().into());
    Value::Object(m)
}

/// The SubagentStop stdin payload, built on the child's continuation;
/// `parent_log` is the main session's transcript.
pub fn stop_payload(input: &ContinuationInput, parent_log: &Value, model: &str) -> Value {
    let s = &input.session;
    let mut m = Map::new();
    m.insert("session_id".into(), super::root_session(s).into());
    m.insert("turn_id".into(), s.turn_id.as_str().into());
    m.insert("transcript_path".into(), parent_log.clone());
    m.insert("agent_transcript_path".into(), transcript(s));
    m.insert("cwd".into(), s.cwd.as_str().into());
    m.insert("hook_event_name".into(), STOP.into());
    m.insert("model".into(), model.into());
    m.insert("permission_mode".into(), permission_mode(s).into());
    m.insert(
        "stop_hook_active".into(),
        (input.consecutive_continues > 0).into(),
    );
    super::agent_fields(&mut m, s);
    m.insert(
        "last_assistant_message".into(),
        input.last_assistant_message.as_str().into(),
    );
    Value::Object(m)
}

/// One warning per hooks file with SubagentStart/SubagentStop hooks, when
/// the host does not offer `spawn_agent` (config `spawn_agent` off): they
/// never run.
pub fn unfired(hooks: &[crate::CodexHook]) -> Vec<ConfigProblem> {
    let mut by_file: Vec<(String, Vec<&str>)> = Vec::new();
    for h in hooks {
        let event = h.hook.event.as_str();
        if event != START && event != STOP {
            continue;
        }
        let source = h.hook.source.clone();
        match by_file.iter_mut().find(|(s, _)| *s == source) {
            Some((_, events)) if !events.contains(&event) => events.push(event),
            Some(_) => {}
            None => by_file.push((source, vec![event])),
        }
    }
    by_file
        .into_iter()
        .map(|(source, events)| {
            ConfigProblem::warning(
                &source,
                "hooks",
                format!(
                    "dsh does not fire these Codex events, their hooks never run: {} \
                     (Codex's spawn_agent is off: set `subagent_tools: codex` in the manifest)",
                    events.join(", ")
                ),
            )
        })
        .collect()
}

impl CodexBridge {
    /// Runs the SubagentStart hooks; their text goes to the child, before
    /// its prompt.
    pub async fn on_subagent_start(&self, info: &SubagentInfo) {
        if !self.spawn_agent {
            return;
        }
        if let Ok(mut m) = self.subagents.lock() {
            m.insert(info.child_session_id.to_string(), transcript(&info.parent));
        }
        if !self.has_hooks(&info.parent, START) {
            return;
        }
        let turn_id = self
            .host
            .session(&info.child_session_id)
            .map(|s| s.turn_id.to_string())
            .unwrap_or_default();
        let payload = start_payload(info, &turn_id, &self.model);
        let subject = info.agent_type.as_str();
        let mut runs = self
            .fire(START, &info.parent, Some(subject), &payload)
            .await;
        let mut contexts = Vec::new();
        for run in &mut runs {
            let reading = read(run);
            if reading.block.is_some() {
                // Exit 2 blocks nothing here (`C181-exit2-stderr`).
                continue;
            }
            contexts.extend(reading.plain);
            let Some(json) = reading.json else { continue };
            let out = match decode::<crate::output::PromptOutput>(&json) {
                Ok(out) => out,
                Err(e) => {
                    invalid(run, e);
                    continue;
                }
            };
            contexts.extend(out.hook_specific_output.and_then(|h| h.additional_context));
        }
        self.record(&info.parent, START, &runs);
        for text in contexts {
            let text = self.cap(&info.child_session_id, text);
            self.inject(&info.child_session_id, &text);
        }
    }

    /// The sub-agent has ended: the bridge forgets it.
    pub async fn on_subagent_end(&self, info: &SubagentInfo) {
        if let Ok(mut m) = self.subagents.lock() {
            m.remove(info.child_session_id.as_str());
        }
    }

    /// Runs the SubagentStop hooks when a sub-agent's turn would end (its
    /// Stop hooks do not run).
    pub async fn on_subagent_stop<F, Fut>(
        &self,
        input: &ContinuationInput,
        next: F,
    ) -> Result<ContinuationDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<ContinuationDecision, String>>,
    {
        if !self.spawn_agent
            || !self.has_hooks(&input.session, STOP)
            || input.default != ContinuationDecision::Stop
        {
            return next().await;
        }
        let parent_log = self
            .subagents
            .lock()
            .ok()
            .and_then(|m| m.get(input.session.session_id.as_str()).cloned())
            // A child run again after its first turn (`send_input`,
            // `resume_agent`, C185-*): its parent's transcript, asked of
            // the host.
            .or_else(|| {
                let parent = input.session.parent_session_id.as_ref().into_option()?;
                self.host.session(parent.as_str()).map(|p| transcript(&p))
            })
            .unwrap_or(Value::Null);
        let payload = stop_payload(input, &parent_log, &self.model);
        let subject = input
            .session
            .agent_type
            .as_ref()
            .map(|t| t.to_string())
            .into_option()
            .unwrap_or_else(|| "default".into());
        let mut runs = self
            .fire(STOP, &input.session, Some(&subject), &payload)
            .await;
        // `continue: false` changes nothing for a sub-agent (C182-*).
        let continuation = self
            .read_stop_runs(&input.session, STOP, &mut runs)
            .continuation;
        self.record(&input.session, STOP, &runs);
        if !continuation.is_empty() {
            return Ok(ContinuationDecision::steer(continuation));
        }
        next().await
    }
}
