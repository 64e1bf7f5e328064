//! Codex's sub-agent tools (Codex's `multi_agent_v1` namespace), offered
//! when the manifest says `subagent_tools: codex`; the Claude-shaped
//! `Agent` tool stays as it is. This file holds `spawn_agent` and what
//! the five tools share (the spawned agents, their rounds, the
//! notification); `wait_agent` is in [`super::codex_subagent_wait`],
//! `send_input`, `close_agent` and `resume_agent` in
//! [`super::codex_subagent_manage`].
//!
//! As recorded from Codex 0.171.0 (vectors `C180-*`–`C186-*`): `spawn_agent
//! {message}` returns at once with `{"agent_id":…,"nickname":…}` while the
//! child runs on in a session of its own linked to the parent (agent type
//! `default`, offered no sub-agent tools of its own); `subagent/start`
//! fires inside the child's first turn, before its prompt, and
//! `subagent/end` after each of its turns. The child stays open (a later
//! `send_input` runs it again) until `close_agent` or its parent's close.
//! Its status is `"pending_init"`, `"running"`, then final:
//! `{"completed":<answer>}`, `{"errored":<the provider's error>}` (C184a),
//! `"shutdown"` (closed while running, C185c), `"not_found"` (closed).
//! The first final status after a spawn (or a resume) reaches the parent
//! as a user message
//! `<subagent_notification>\n{"agent_path":<id>,"status":<status>}\n</subagent_notification>`,
//! added as the parent's context where it stands (after the tool results
//! of a step in progress); a completion after a `send_input` is not
//! notified (C185a). `fork_context: true` starts the child with its
//! parent's history before its task (C186a). `wait_agent {targets,
//! timeout_ms}` waits for the first of its targets to reach a final
//! status and returns
//! `{"status":{<id>:<status>},"timed_out":false}`, or
//! `{"status":{},"timed_out":true}` when the time runs out (Codex's own
//! description; its default 30 s, clamped to 10 s–1 h).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RString, RVec};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, ToolBody, ToolBody_TO};
use dsh_plugin_api::{
    ContentBlock, MessageSource, SeamInput, SubagentInfo, ToolCall, ToolResult, ToolSpec,
};
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::codex_nicknames;
use super::codex_subagent_manage as manage;
use super::runtime::Agent;
use super::session::{Prompt, Session};
use super::subagent::CORE_OWNER;
use crate::session::{ContextRole, SessionEvent, TurnEndReason};

/// The tool that starts a sub-agent.
pub const SPAWN: &str = "spawn_agent";
/// The tool that waits for sub-agents.
pub const WAIT: &str = "wait_agent";
/// All of Codex's sub-agent tools, which a sub-agent is not offered.
pub const TOOLS: [&str; 5] = [SPAWN, WAIT, manage::SEND, manage::CLOSE, manage::RESUME];
/// The agent type Codex gives a spawned agent.
pub const AGENT_TYPE: &str = "default";

/// One spawned agent, open or closed.
pub(super) struct Child {
    pub(super) id: String,
    pub(super) parent_id: String,
    pub(super) nickname: &'static str,
    /// What `subagent/start` and `subagent/end` are told.
    info: SubagentInfo,
    /// Its status (see the module doc).
    pub(super) status: watch::Sender<Value>,
    /// Whether a round (the task running its turns) is on.
    pub(super) running: watch::Sender<bool>,
    /// The parent is owed a notification of the next final status (set by
    /// a spawn and a resume).
    pub(super) notify_owed: AtomicBool,
    pub(super) closed: AtomicBool,
}

/// What the tools share: the spawned agents, open and closed, by id.
#[derive(Default)]
pub(super) struct Children {
    pub(super) open: Mutex<HashMap<String, Arc<Child>>>,
    pub(super) closed: Mutex<HashMap<String, Arc<Child>>>,
}

/// Every lookup is by the calling session: a session reaches only the
/// agents it spawned (Codex's parent knows no other thread's children), so
/// one session of a daemon cannot wait on, message, close or resume
/// another's.
impl Children {
    /// `parent`'s open agent `id`.
    pub(super) fn open(&self, id: &str, parent: &str) -> Option<Arc<Child>> {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .filter(|c| c.parent_id == parent)
            .cloned()
    }

    /// Removes `parent`'s open agent `id`.
    pub(super) fn take_open(&self, id: &str, parent: &str) -> Option<Arc<Child>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.get(id).is_some_and(|c| c.parent_id == parent) {
            open.remove(id)
        } else {
            None
        }
    }

    /// `parent`'s closed agent `id`.
    pub(super) fn closed(&self, id: &str, parent: &str) -> Option<Arc<Child>> {
        self.closed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .filter(|c| c.parent_id == parent)
            .cloned()
    }

    pub(super) fn is_closed(&self, id: &str, parent: &str) -> bool {
        self.closed(id, parent).is_some()
    }
}

/// Whether `status` is final (wait_agent returns on it).
pub(super) fn is_final(status: &Value) -> bool {
    status.is_object() || status == "shutdown" || status == "not_found"
}

struct SpawnTool {
    agent: Weak<Agent>,
    children: Arc<Children>,
}

pub(super) fn spec(name: &str, description: &str, schema: Value) -> ToolSpec {
    ToolSpec {
        name: RString::from(name),
        description: RString::from(description),
        input_schema: RString::from(schema.to_string()),
        aliases: RVec::new(),
    }
}

/// Mounts Codex's five sub-agent tools.
pub(crate) fn register_tools(agent: &Arc<Agent>) {
    let children = Arc::new(Children::default());
    let spawn = spec(
        SPAWN,
        "Spawn a sub-agent for a well-scoped task. Returns the spawned agent id plus the user-facing nickname when available.",
        json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "Initial plain-text task for the new agent. Use either message or items."},
                "items": {"type": "array", "description": "Structured input items.", "items": {"type": "object"}},
                "fork_context": {"type": "boolean"},
                "model": {"type": "string"},
                "reasoning_effort": {"type": "string"}
            },
            "additionalProperties": false
        }),
    );
    let wait = spec(
        WAIT,
        "Wait for agents to reach a final status. Completed statuses may include the agent's final message. Returns empty status when timed out. Once the agent reaches a final status, a notification message will be received containing the same completed status.",
        json!({
            "type": "object",
            "properties": {
                "targets": {"type": "array", "items": {"type": "string"}, "description": "Agent ids to wait on. Pass multiple ids to wait for whichever finishes first."},
                "timeout_ms": {"type": "number", "description": "Timeout in milliseconds. Defaults to 30000, min 10000, max 3600000."}
            },
            "required": ["targets"],
            "additionalProperties": false
        }),
    );
    let spawn_body = ToolBody_TO::from_value(
        SpawnTool {
            agent: Arc::downgrade(agent),
            children: children.clone(),
        },
        TD_Opaque,
    );
    let wait_body = ToolBody_TO::from_value(
        super::codex_subagent_wait::WaitTool {
            children: children.clone(),
        },
        TD_Opaque,
    );
    let mut tools = vec![(spawn, spawn_body), (wait, wait_body)];
    tools.extend(manage::tools(agent, &children));
    for (spec, body) in tools {
        let name = spec.name.to_string();
        if let Err(e) = agent.core.mount_tool(CORE_OWNER, spec, body) {
            tracing::warn!("the {name} tool is not available: {e}");
        }
    }
}

impl ToolBody for SpawnTool {
    fn run(&self, call: RArc<ToolCall>, _signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let agent = self.agent.clone();
        let children = self.children.clone();
        async move {
            let Some(agent) = agent.upgrade() else {
                return ToolResult::error("the agent has shut down");
            };
            spawn(&agent, &children, &call).await
        }
        .into_ffi()
    }
}

/// The text of a `message` or of `items` (their `text`s, a line each).
pub(super) fn task_text(args: &Value) -> Option<String> {
    if let Some(m) = args.get("message").and_then(Value::as_str) {
        return Some(m.to_string());
    }
    let items = args.get("items")?.as_array()?;
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|i| i.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// A prompt from the parent to its child.
pub(super) fn prompt_from(parent_id: &str, text: String) -> Prompt {
    Prompt {
        content: vec![ContentBlock::text(text)],
        source: MessageSource::Agent {
            session_id: RString::from(parent_id),
        },
        commands: false,
        submit: true,
    }
}

async fn spawn(agent: &Arc<Agent>, children: &Arc<Children>, call: &ToolCall) -> ToolResult {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let Some(task) = task_text(&args) else {
        return ToolResult::error(
            "spawn_agent needs a string `message` (or `items` with text) for the new agent",
        );
    };
    let Some(parent) = agent.get(&call.session.session_id) else {
        return ToolResult::error("the parent session is not live");
    };
    if parent.parent.is_some() {
        // Codex offers a spawned agent no multi_agent_v1 tools.
        return ToolResult::error("a sub-agent cannot spawn agents of its own");
    }
    let child = match agent
        .create_child(
            &parent.current_cwd(),
            None,
            Some(parent.id.clone()),
            Some(AGENT_TYPE.to_string()),
        )
        .await
    {
        Ok(child) => child,
        Err(e) => return ToolResult::error(format!("cannot start the sub-agent: {e}")),
    };
    link(&parent, &child, &call.call_id);
    let info = SubagentInfo {
        parent: call.session.clone(),
        child_session_id: RString::from(child.id.as_str()),
        child_log_path: RString::from(child.log_path().to_string_lossy().as_ref()),
        agent_type: RString::from(AGENT_TYPE),
        description: RString::new(),
        prompt: RString::from(task.as_str()),
        call_id: call.call_id.clone(),
        result: ROption::RNone,
    };
    *child
        .subagent_start
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = Some(info.clone());
    if args.get("fork_context").and_then(Value::as_bool) == Some(true) {
        fork_history(&parent, &child, &call.call_id);
    }
    child.enqueue(prompt_from(&parent.id, task));
    let nickname = {
        let open = children.open.lock().unwrap_or_else(|p| p.into_inner());
        let taken: Vec<&str> = open
            .values()
            .filter(|c| c.parent_id == parent.id)
            .map(|c| c.nickname)
            .collect();
        codex_nicknames::pick(&taken)
    };
    let entry = Arc::new(Child {
        id: child.id.clone(),
        parent_id: parent.id.clone(),
        nickname,
        info,
        status: watch::channel(json!("running")).0,
        running: watch::channel(true).0,
        notify_owed: AtomicBool::new(true),
        closed: AtomicBool::new(false),
    });
    children
        .open
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(child.id.clone(), entry.clone());
    // The parent by id only: a closed parent is not kept alive by its child.
    drop(parent);
    let mut answer = Map::new();
    answer.insert("agent_id".into(), entry.id.as_str().into());
    answer.insert("nickname".into(), nickname.into());
    run_round(agent, entry, child);
    ToolResult::text(Value::Object(answer).to_string())
}

/// Copies the parent's conversation so far into the child's log, for
/// `fork_context: true` (C186a: the child's first request holds the
/// parent's history, then its task): every message the parent's model has
/// read, up to the step whose call spawns, which is left out.
fn fork_history(parent: &Session, child: &Session, call_id: &str) {
    let events = parent.log().events().to_vec();
    let cut = events
        .iter()
        .position(|e| {
            matches!(&e.event, SessionEvent::AssistantMessage { tool_calls, .. }
                if tool_calls.iter().any(|c| c.id == call_id))
        })
        .unwrap_or(events.len());
    // In a turn of its own, as the log keeps messages only in turns.
    let turn_id = super::session::new_id("turn");
    child.append(child.turn_start(&turn_id, crate::session::TurnKind::Injection));
    for logged in &events[..cut] {
        if matches!(
            logged.event,
            SessionEvent::UserMessage { .. }
                | SessionEvent::ContextMessage { .. }
                | SessionEvent::SteeringMessage { .. }
                | SessionEvent::AssistantMessage { .. }
                | SessionEvent::ToolResult { .. }
                | SessionEvent::Compacted { .. }
                | SessionEvent::CommandOutput { .. }
        ) {
            child.append(logged.event.clone());
        }
    }
    child.append(SessionEvent::turn_end(
        &turn_id,
        TurnEndReason::Completed,
        None,
    ));
}

/// Links a child session to its parent: its MCP tools, the call that
/// made it, and its taking messages in a running turn.
pub(super) fn link(parent: &Session, child: &Session, call_id: &str) {
    *child.mcp.lock().unwrap_or_else(|p| p.into_inner()) = parent.mcp();
    let _ = child.parent_call.set(format!("{}/{}", parent.id, call_id));
    // A send_input while it runs joins its running turn (C185d).
    child
        .joins_running_turn
        .store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Runs the child's queued prompts, a turn each, in a task of its own
/// (`running` is already on); at the end publishes its final status and,
/// when owed, the parent's notification (a child closed meanwhile has had
/// both from `close_agent`).
pub(super) fn run_round(agent: &Arc<Agent>, child: Arc<Child>, session: Arc<Session>) {
    let runner = agent.clone();
    tokio::spawn(async move {
        loop {
            let outcome = session.run_turn().await;
            let last_text = outcome
                .events
                .iter()
                .rev()
                .find_map(|e| match &e.event {
                    SessionEvent::AssistantMessage { content, .. } => Some(content.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            let mut info = child.info.clone();
            info.result = ROption::RSome(RString::from(last_text.as_str()));
            for f in runner
                .core
                .view()
                .bus
                .notify(SeamInput::SubagentEnd(RArc::new(info)))
                .await
            {
                tracing::warn!(plugin = %f.plugin, "subagent/end listener failed: {}", f.message);
            }
            let status = if outcome.reason == TurnEndReason::Completed {
                json!({"completed": last_text})
            } else {
                json!({"errored": provider_text(outcome.message.as_deref().unwrap_or_default())})
            };
            // Decided under `running`'s lock: a send_input queues before it
            // looks at `running`, so its prompt is either run here or starts
            // a round of its own. A closed child is `close_agent`'s.
            let mut more = false;
            child.running.send_if_modified(|running| {
                let closed = child.closed.load(Ordering::SeqCst);
                if !closed && session.has_queued() {
                    more = true;
                    return false;
                }
                if !closed {
                    if child.notify_owed.swap(false, Ordering::SeqCst)
                        && let Some(parent) = runner.get(&child.parent_id)
                    {
                        parent.inject(
                            CORE_OWNER,
                            notification(&child.id, &status),
                            ContextRole::User,
                        );
                    }
                    child.status.send_replace(status.clone());
                }
                *running = false;
                true
            });
            if !more {
                return;
            }
        }
    });
}

/// The provider's own words in a failed turn's message: Codex reports a
/// refused model request as the body the server answered (C184a).
fn provider_text(message: &str) -> String {
    message
        .strip_prefix("model request refused: HTTP ")
        .and_then(|rest| rest.split_once(": "))
        .map_or_else(|| message.to_string(), |(_, body)| body.to_string())
}

/// The `<subagent_notification>` user message Codex adds to the parent.
pub fn notification(agent_id: &str, status: &Value) -> String {
    let mut m = Map::new();
    m.insert("agent_path".into(), agent_id.into());
    m.insert("status".into(), status.clone());
    format!(
        "<subagent_notification>\n{}\n</subagent_notification>",
        Value::Object(m)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(id: &str, parent: &str) -> Arc<Child> {
        let session = |id: &str| dsh_plugin_api::SessionRef {
            session_id: id.into(),
            cwd: RString::new(),
            log_path: RString::new(),
            permission_mode: RString::new(),
            turn_id: RString::new(),
            prompt_id: RString::new(),
            parent_session_id: ROption::RNone,
            agent_type: ROption::RNone,
        };
        Arc::new(Child {
            id: id.into(),
            parent_id: parent.into(),
            nickname: "Euclid",
            info: SubagentInfo {
                parent: session(parent),
                child_session_id: id.into(),
                child_log_path: RString::new(),
                agent_type: AGENT_TYPE.into(),
                description: RString::new(),
                prompt: RString::new(),
                call_id: RString::new(),
                result: ROption::RNone,
            },
            status: watch::channel(json!("running")).0,
            running: watch::channel(true).0,
            notify_owed: AtomicBool::new(true),
            closed: AtomicBool::new(false),
        })
    }

    #[test]
    fn a_session_reaches_only_the_agents_it_spawned() {
        let children = Children::default();
        for (id, parent) in [("a1", "A"), ("b1", "B")] {
            let c = child(id, parent);
            children.open.lock().unwrap().insert(id.into(), c);
        }
        children
            .closed
            .lock()
            .unwrap()
            .insert("a2".into(), child("a2", "A"));
        assert!(children.open("a1", "A").is_some());
        assert!(
            children.open("a1", "B").is_none(),
            "B reached A's open child"
        );
        assert!(
            children.take_open("a1", "B").is_none(),
            "B closed A's child"
        );
        assert!(
            children.open("a1", "A").is_some(),
            "a refused take removed it"
        );
        assert!(children.is_closed("a2", "A"));
        assert!(!children.is_closed("a2", "B"), "B saw A's closed child");
        assert!(
            children.closed("a2", "B").is_none(),
            "B could resume A's child"
        );
        assert_eq!(
            children.take_open("b1", "B").map(|c| c.id.clone()),
            Some("b1".to_string())
        );
        assert!(children.open("b1", "B").is_none());
    }

    #[test]
    fn a_refused_request_is_reported_as_the_servers_answer() {
        assert_eq!(
            provider_text("model request refused: HTTP 400: {\"error\": {\"message\": \"no\"}}"),
            "{\"error\": {\"message\": \"no\"}}"
        );
        assert_eq!(provider_text("cancelled"), "cancelled");
    }
}
