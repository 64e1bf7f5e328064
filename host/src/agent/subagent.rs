//! The `Agent` tool (alias `Task`, its former name): runs a child agent
//! in-process, in its own session linked to its parent, firing
//! `subagent/start` and `subagent/end` around it.

use std::sync::{Arc, Weak};
use std::time::Instant;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RString, RVec};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, ToolBody, ToolBody_TO};
use dsh_plugin_api::{
    ContentBlock, MessageSource, SeamInput, SubagentInfo, ToolCall, ToolResult, ToolSpec,
};
use serde_json::{Value, json};

use super::runtime::Agent;
use super::session::Prompt;
use crate::session::{SessionEvent, TurnEndReason};

/// Who owns the tools the agent core registers itself.
pub const CORE_OWNER: &str = "dsh";

struct AgentTool(Weak<Agent>);

pub(crate) fn register_tool(agent: &Arc<Agent>) {
    let spec = ToolSpec {
        name: RString::from("Agent"),
        description: RString::from(
            "Launch a subagent to handle a task on its own. It starts with no history and returns its final answer.",
        ),
        input_schema: RString::from(
            json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                    "prompt": {"type": "string", "description": "The task for the agent to perform"},
                    "subagent_type": {"type": "string", "description": "The type of agent to use"}
                },
                "required": ["description", "prompt"],
                "additionalProperties": false
            })
            .to_string(),
        ),
        aliases: RVec::from(vec![RString::from("Task")]),
    };
    let body = ToolBody_TO::from_value(AgentTool(Arc::downgrade(agent)), TD_Opaque);
    if let Err(e) = agent.core.mount_tool(CORE_OWNER, spec, body) {
        tracing::warn!("the Agent tool is not available: {e}");
    }
}

fn text_arg(args: &Value, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_string)
}

impl ToolBody for AgentTool {
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let agent = self.0.clone();
        async move {
            let Some(agent) = agent.upgrade() else {
                return ToolResult::error("the agent has shut down");
            };
            run_subagent(&agent, &call, signal).await
        }
        .into_ffi()
    }
}

async fn run_subagent(agent: &Arc<Agent>, call: &ToolCall, signal: AbortSignalBox) -> ToolResult {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let (Some(description), Some(prompt)) =
        (text_arg(&args, "description"), text_arg(&args, "prompt"))
    else {
        return ToolResult::error("Agent needs string arguments `description` and `prompt`");
    };
    let agent_type = text_arg(&args, "subagent_type").unwrap_or_else(|| "general-purpose".into());
    let Some(parent) = agent.get(&call.session.session_id) else {
        return ToolResult::error("the parent session is not live");
    };
    let started = Instant::now();
    let child = match agent
        .create_child(
            &parent.current_cwd(),
            None,
            Some(parent.id.clone()),
            Some(agent_type.clone()),
        )
        .await
    {
        Ok(child) => child,
        Err(e) => return ToolResult::error(format!("cannot start the subagent: {e}")),
    };
    // A subagent has its parent's MCP tools, as in Claude Code.
    *child.mcp.lock().unwrap_or_else(|p| p.into_inner()) = parent.mcp();
    // The child's calls name this call only by an opaque token.
    let _ = child
        .parent_call
        .set(format!("{}/{}", parent.id, call.call_id));
    let mut info = SubagentInfo {
        parent: call.session.clone(),
        child_session_id: RString::from(child.id.as_str()),
        child_log_path: RString::from(child.log_path().to_string_lossy().as_ref()),
        agent_type: RString::from(agent_type.as_str()),
        description: RString::from(description.as_str()),
        prompt: RString::from(prompt.as_str()),
        call_id: call.call_id.clone(),
        result: ROption::RNone,
    };
    for f in agent
        .core
        .view()
        .bus
        .notify(SeamInput::SubagentStart(RArc::new(info.clone())))
        .await
    {
        tracing::warn!(plugin = %f.plugin, "subagent/start listener failed: {}", f.message);
    }
    child.enqueue(Prompt {
        content: vec![ContentBlock::text(prompt.clone())],
        source: MessageSource::Agent {
            session_id: RString::from(parent.id.as_str()),
        },
    });
    // Never drop a running turn: on abort, cancel it and let it close itself.
    let run = child.run_turn();
    tokio::pin!(run);
    let outcome = tokio::select! {
        outcome = &mut run => outcome,
        _ = signal.aborted() => {
            child.cancel();
            run.await
        }
    };
    let last_text = outcome
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.event {
            SessionEvent::AssistantMessage { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let tool_uses = outcome
        .events
        .iter()
        .filter(|e| matches!(e.event, SessionEvent::ToolCall { .. }))
        .count();
    info.result = ROption::RSome(RString::from(last_text.as_str()));
    for f in agent
        .core
        .view()
        .bus
        .notify(SeamInput::SubagentEnd(RArc::new(info)))
        .await
    {
        tracing::warn!(plugin = %f.plugin, "subagent/end listener failed: {}", f.message);
    }
    agent.close_session(&child.id, "other").await;
    let structured = json!({
        "status": if outcome.reason == TurnEndReason::Completed { "completed" } else { outcome.reason.as_str() },
        "prompt": prompt,
        "agentId": child.id,
        "agentType": agent_type,
        "content": [{"type": "text", "text": last_text}],
        "totalDurationMs": started.elapsed().as_millis() as u64,
        "totalTokens": 0,
        "totalToolUseCount": tool_uses,
    });
    let mut result = if outcome.reason == TurnEndReason::Completed {
        ToolResult::text(last_text)
    } else {
        ToolResult::error(format!(
            "the subagent's turn ended {}: {}",
            outcome.reason.as_str(),
            outcome.message.unwrap_or_default()
        ))
    };
    result.structured = ROption::RSome(RString::from(structured.to_string()));
    result
}
