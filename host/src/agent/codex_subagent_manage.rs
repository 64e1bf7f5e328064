//! Codex's `send_input`, `close_agent` and `resume_agent` (the rest of
//! its `multi_agent_v1` namespace), beside [`super::codex_subagent`]'s
//! `spawn_agent` and `wait_agent`.
//!
//! As recorded from Codex 0.171.0 (vectors `C185-*`):
//! - `send_input {target, message | items, interrupt}` returns
//!   `{"submission_id":<id>}`. A child that is done runs the message as a
//!   turn of its own (UserPromptSubmit fires, no second SubagentStart;
//!   SubagentStop at its end; no notification, C185a); the submission id
//!   is that turn's id. A running child takes it in its running turn, after
//!   the pending tool calls (UserPromptSubmit fires then; one SubagentStop,
//!   C185d); the submission id is then one of its own. `interrupt: true`
//!   cancels the running turn first.
//! - `close_agent {target}` returns `{"previous_status":<status>}` and
//!   shuts the child down: a running one stops where it is (no
//!   SubagentStop) and the parent is notified `"shutdown"` if it was owed a
//!   notification (C185c); `wait_agent` then says `"not_found"`.
//! - `resume_agent {id}` reopens a closed child from its log and returns
//!   `{"status":"pending_init"}`; its history is kept, and its next final
//!   status is notified again (C185b).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::RArc;
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, ToolBody, ToolBody_TO};
use dsh_plugin_api::{ToolCall, ToolResult, ToolSpec};
use serde_json::{Map, Value, json};

use super::codex_subagent::{
    Children, link, notification, prompt_from, run_round, spec, task_text,
};
use super::runtime::Agent;
use super::session::new_id;
use super::subagent::CORE_OWNER;
use crate::session::ContextRole;

/// The tool that sends a child a message.
pub const SEND: &str = "send_input";
/// The tool that shuts a child down.
pub const CLOSE: &str = "close_agent";
/// The tool that reopens a closed child.
pub const RESUME: &str = "resume_agent";

/// How long `close_agent` waits for a running child's turn to stop.
const STOP_WAIT: Duration = Duration::from_secs(30);

#[derive(Clone, Copy)]
enum Which {
    Send,
    Close,
    Resume,
}

struct ManageTool {
    which: Which,
    agent: Weak<Agent>,
    children: Arc<Children>,
}

/// The three tools, to mount.
pub(super) fn tools(
    agent: &Arc<Agent>,
    children: &Arc<Children>,
) -> Vec<(ToolSpec, dsh_plugin_api::ffi::ToolBodyBox)> {
    let send = spec(
        SEND,
        "Send a message to an existing agent. Use interrupt=true to redirect work immediately. You should reuse the agent by send_input if you believe your assigned task is highly dependent on the context of a previous task.",
        json!({
            "type": "object",
            "properties": {
                "interrupt": {"type": "boolean", "description": "True interrupts the current task and handles this message immediately; false or omitted queues it."},
                "items": {"type": "array", "description": "Structured input items.", "items": {"type": "object"}},
                "message": {"type": "string", "description": "Legacy plain-text message to send to the agent. Use either message or items."},
                "target": {"type": "string", "description": "Agent id to message (from spawn_agent)."}
            },
            "required": ["target"],
            "additionalProperties": false
        }),
    );
    let close = spec(
        CLOSE,
        "Close an agent and any open descendants when they are no longer needed, and return the target agent's previous status before shutdown was requested. Completed agents remain open and count toward the concurrency limit until closed. Don't keep agents open for too long if they are not needed anymore.",
        json!({
            "type": "object",
            "properties": {"target": {"type": "string", "description": "Agent id to close (from spawn_agent)."}},
            "required": ["target"],
            "additionalProperties": false
        }),
    );
    let resume = spec(
        RESUME,
        "Resume a previously closed agent by id so it can receive send_input and wait_agent calls.",
        json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "Agent id to resume."}},
            "required": ["id"],
            "additionalProperties": false
        }),
    );
    [
        (send, Which::Send),
        (close, Which::Close),
        (resume, Which::Resume),
    ]
    .into_iter()
    .map(|(spec, which)| {
        let body = ToolBody_TO::from_value(
            ManageTool {
                which,
                agent: Arc::downgrade(agent),
                children: children.clone(),
            },
            TD_Opaque,
        );
        (spec, body)
    })
    .collect()
}

impl ToolBody for ManageTool {
    fn run(&self, call: RArc<ToolCall>, _signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let agent = self.agent.clone();
        let children = self.children.clone();
        let which = self.which;
        async move {
            let Some(agent) = agent.upgrade() else {
                return ToolResult::error("the agent has shut down");
            };
            let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
            match which {
                Which::Send => send(&agent, &children, &call, &args),
                Which::Close => close(&agent, &children, &call, &args).await,
                Which::Resume => resume(&agent, &children, &call, &args).await,
            }
        }
        .into_ffi()
    }
}

fn answer(key: &str, value: Value) -> ToolResult {
    let mut m = Map::new();
    m.insert(key.into(), value);
    ToolResult::text(Value::Object(m).to_string())
}

fn send(agent: &Arc<Agent>, children: &Children, call: &ToolCall, args: &Value) -> ToolResult {
    let Some(target) = args.get("target").and_then(Value::as_str) else {
        return ToolResult::error("send_input needs `target`, an agent id");
    };
    let Some(text) = task_text(args) else {
        return ToolResult::error("send_input needs a string `message` (or `items` with text)");
    };
    let parent = call.session.session_id.as_str();
    let (Some(child), Some(session)) = (children.open(target, parent), agent.get(target)) else {
        return ToolResult::error(format!("send_input: no open agent with id {target}"));
    };
    if args.get("interrupt").and_then(Value::as_bool) == Some(true) {
        session.cancel();
    }
    // The submission id is the id of the turn the message starts, as in
    // Codex (C185a, C185b); a running child takes it in its running turn
    // (C185d), and the id is one of its own.
    let submission = new_id("turn");
    session.enqueue(prompt_from(&child.parent_id, text));
    // Queued first, then a round is started unless one runs (which then
    // takes the prompt).
    let start = child.running.send_if_modified(|running| {
        if *running {
            return false;
        }
        *running = true;
        true
    });
    if start {
        session.state().next_turn_id = Some(submission.clone());
        child.status.send_replace(json!("running"));
        run_round(agent, child, session);
    }
    answer("submission_id", submission.into())
}

async fn close(
    agent: &Arc<Agent>,
    children: &Children,
    call: &ToolCall,
    args: &Value,
) -> ToolResult {
    let Some(target) = args.get("target").and_then(Value::as_str) else {
        return ToolResult::error("close_agent needs `target`, an agent id");
    };
    let Some(child) = children.take_open(target, &call.session.session_id) else {
        return ToolResult::error(format!("close_agent: no open agent with id {target}"));
    };
    let previous = child.status.borrow().clone();
    child.closed.store(true, Ordering::SeqCst);
    children
        .closed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(child.id.clone(), child.clone());
    let mut running = child.running.subscribe();
    if *running.borrow() {
        let shutdown = json!("shutdown");
        if child.notify_owed.swap(false, Ordering::SeqCst)
            && let Some(parent) = agent.get(&child.parent_id)
        {
            parent.inject(
                CORE_OWNER,
                notification(&child.id, &shutdown),
                ContextRole::User,
            );
        }
        child.status.send_replace(shutdown);
        if let Some(session) = agent.get(&child.id) {
            session.cancel();
        }
        if tokio::time::timeout(STOP_WAIT, running.wait_for(|r| !*r))
            .await
            .is_err()
        {
            tracing::warn!(agent = %child.id, "the sub-agent's turn did not stop in time");
        }
    }
    agent.close_session(&child.id, "other").await;
    answer("previous_status", previous)
}

async fn resume(
    agent: &Arc<Agent>,
    children: &Children,
    call: &ToolCall,
    args: &Value,
) -> ToolResult {
    let Some(id) = args.get("id").and_then(Value::as_str) else {
        return ToolResult::error("resume_agent needs `id`, an agent id");
    };
    let parent_id = call.session.session_id.as_str();
    if let Some(open) = children.open(id, parent_id) {
        let status = open.status.borrow().clone();
        return answer("status", status);
    }
    let Some(child) = children.closed(id, parent_id) else {
        return ToolResult::error(format!("resume_agent: no closed agent with id {id}"));
    };
    let Some(parent) = agent.get(&call.session.session_id) else {
        return ToolResult::error("the parent session is not live");
    };
    let session = match agent.load_session(id).await {
        Ok(session) => session,
        Err(e) => return ToolResult::error(format!("resume_agent: cannot reopen {id}: {e}")),
    };
    link(&parent, &session, &call.call_id);
    children
        .closed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(id);
    let pending = json!("pending_init");
    child.status.send_replace(pending.clone());
    child.notify_owed.store(true, Ordering::SeqCst);
    child.closed.store(false, Ordering::SeqCst);
    children
        .open
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(child.id.clone(), child);
    answer("status", pending)
}
