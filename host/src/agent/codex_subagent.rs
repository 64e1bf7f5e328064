//! Codex's sub-agent tools, `spawn_agent` and `wait_agent` (Codex's
//! `multi_agent_v1` namespace), offered when the manifest says
//! `subagent_tools: codex`; the Claude-shaped `Agent` tool stays as it is.
//!
//! As recorded from Codex 0.171.0 (vectors `C180-*`): `spawn_agent
//! {message}` returns at once with `{"agent_id":…,"nickname":…}` while the
//! child runs on in a session of its own linked to the parent (agent type
//! `default`, offered no sub-agent tools of its own); `subagent/start` fires inside
//! the child's first turn, before its prompt, and `subagent/end` when it is
//! done. Its completion reaches the parent as a user message
//! `<subagent_notification>\n{"agent_path":<id>,"status":{"completed":<answer>}}\n</subagent_notification>`,
//! added as the parent's context where it stands (after the tool results of
//! a step in progress). `wait_agent {targets, timeout_ms}` waits for the
//! first of its targets to finish and returns
//! `{"status":{<id>:{"completed":<answer>}},"timed_out":false}`, or
//! `{"status":{},"timed_out":true}` when the time runs out (Codex's own
//! description; its default 30 s, clamped to 10 s–1 h).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RString, RVec};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, ToolBody, ToolBody_TO};
use dsh_plugin_api::{
    ContentBlock, MessageSource, SeamInput, SubagentInfo, ToolCall, ToolResult, ToolSpec,
};
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::runtime::Agent;
use super::session::Prompt;
use super::subagent::CORE_OWNER;
use crate::session::{ContextRole, SessionEvent, TurnEndReason};

/// The tool that starts a sub-agent.
pub const SPAWN: &str = "spawn_agent";
/// The tool that waits for sub-agents.
pub const WAIT: &str = "wait_agent";
/// Both, which a sub-agent is not offered.
pub const TOOLS: [&str; 2] = [SPAWN, WAIT];
/// The agent type Codex gives a spawned agent.
pub const AGENT_TYPE: &str = "default";

/// Names given to spawned agents in turn (Codex picks one of its own list).
const NICKNAMES: [&str; 8] = [
    "Peirce", "Raman", "Kuhn", "Rawls", "Noether", "Turing", "Hopper", "Euler",
];

/// What the tools share: each spawned agent's final status (`None` while
/// it runs), by agent id.
#[derive(Default)]
struct Children {
    status: Mutex<HashMap<String, watch::Receiver<Option<Value>>>>,
    spawned: std::sync::atomic::AtomicUsize,
}

struct SpawnTool {
    agent: Weak<Agent>,
    children: Arc<Children>,
}

struct WaitTool {
    children: Arc<Children>,
}

fn spec(name: &str, description: &str, schema: Value) -> ToolSpec {
    ToolSpec {
        name: RString::from(name),
        description: RString::from(description),
        input_schema: RString::from(schema.to_string()),
        aliases: RVec::new(),
    }
}

/// Mounts `spawn_agent` and `wait_agent`.
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
        "Wait for agents to reach a final status. Completed statuses may include the agent's final message. Returns empty status when timed out.",
        json!({
            "type": "object",
            "properties": {
                "targets": {"type": "array", "items": {"type": "string"}, "description": "Agent ids to wait on."},
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
    let wait_body = ToolBody_TO::from_value(WaitTool { children }, TD_Opaque);
    for (spec, body) in [(spawn, spawn_body), (wait, wait_body)] {
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

/// The task `spawn_agent` was given: `message`, or the text of its
/// `items`.
fn task_text(args: &Value) -> Option<String> {
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
    *child.mcp.lock().unwrap_or_else(|p| p.into_inner()) = parent.mcp();
    let _ = child
        .parent_call
        .set(format!("{}/{}", parent.id, call.call_id));
    let mut info = SubagentInfo {
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
    child.enqueue(Prompt {
        content: vec![ContentBlock::text(task)],
        source: MessageSource::Agent {
            session_id: RString::from(parent.id.as_str()),
        },
        commands: false,
    });
    let (done, status) = watch::channel(None);
    children
        .status
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(child.id.clone(), status);
    let n = children
        .spawned
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nickname = NICKNAMES[n % NICKNAMES.len()];
    let runner = agent.clone();
    let child_id = child.id.clone();
    // The parent by id only: a closed parent is not kept alive by its child.
    let parent_id = parent.id.clone();
    drop(parent);
    let mut answer = Map::new();
    answer.insert("agent_id".into(), child_id.as_str().into());
    answer.insert("nickname".into(), nickname.into());
    tokio::spawn(async move {
        let outcome = child.run_turn().await;
        let last_text = outcome
            .events
            .iter()
            .rev()
            .find_map(|e| match &e.event {
                SessionEvent::AssistantMessage { content, .. } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
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
            json!({"errored": format!(
                "the sub-agent's turn ended {}: {}",
                outcome.reason.as_str(),
                outcome.message.unwrap_or_default()
            )})
        };
        runner.close_session(&child_id, "other").await;
        if let Some(parent) = runner.get(&parent_id) {
            parent.inject(
                CORE_OWNER,
                notification(&child_id, &status),
                ContextRole::User,
            );
        }
        let _ = done.send(Some(status));
    });
    ToolResult::text(Value::Object(answer).to_string())
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

impl ToolBody for WaitTool {
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let children = self.children.clone();
        async move { wait(&children, &call, signal).await }.into_ffi()
    }
}

/// `timeout_ms` as Codex takes it: 30 s when absent, within 10 s–1 h.
fn timeout(args: &Value) -> Duration {
    let ms = args
        .get("timeout_ms")
        .and_then(Value::as_f64)
        .unwrap_or(30_000.0)
        .clamp(10_000.0, 3_600_000.0);
    Duration::from_millis(ms as u64)
}

async fn wait(children: &Children, call: &ToolCall, signal: AbortSignalBox) -> ToolResult {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let Some(targets) = args.get("targets").and_then(Value::as_array) else {
        return ToolResult::error("wait_agent needs `targets`, a list of agent ids");
    };
    let mut watched = Vec::new();
    for t in targets {
        let Some(id) = t.as_str() else {
            return ToolResult::error("wait_agent: every target must be an agent id (a string)");
        };
        let found = children
            .status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned();
        match found {
            Some(rx) => watched.push((id.to_string(), rx)),
            None => return ToolResult::error(format!("wait_agent: no agent with id {id}")),
        }
    }
    if watched.is_empty() {
        return ToolResult::error("wait_agent needs at least one target");
    }
    let any_done = async {
        let waits = watched.iter().map(|(_, rx)| {
            let mut rx = rx.clone();
            Box::pin(async move {
                let _ = rx.wait_for(Option::is_some).await;
            })
        });
        futures::future::select_all(waits).await;
    };
    let timed_out = tokio::select! {
        _ = any_done => false,
        _ = tokio::time::sleep(timeout(&args)) => true,
        _ = signal.aborted() => return ToolResult::error("wait_agent was interrupted"),
    };
    let mut status = Map::new();
    for (id, rx) in &watched {
        if let Some(s) = rx.borrow().clone() {
            status.insert(id.clone(), s);
        }
    }
    let mut answer = Map::new();
    answer.insert("status".into(), Value::Object(status));
    answer.insert(
        "timed_out".into(),
        (timed_out && answer_empty(&watched)).into(),
    );
    ToolResult::text(Value::Object(answer).to_string())
}

fn answer_empty(watched: &[(String, watch::Receiver<Option<Value>>)]) -> bool {
    watched.iter().all(|(_, rx)| rx.borrow().is_none())
}
