//! The `Agent` tool (alias `Task`, its former name): runs a child agent
//! in-process, in its own session linked to its parent, firing
//! `subagent/start` and `subagent/end` around it.
//!
//! Its result is Claude Code's (vector `S1-all-events`): the model reads two
//! text blocks, the child's last answer (or `(Subagent completed but
//! returned no output.)`) and `agentId: <id> (use SendMessage ...)` with a
//! `<usage>` summary; the structured response (Claude's `tool_response`)
//! has `status`, `prompt`, `agentId`, `agentType`, `content`,
//! `resolvedModel`, `totalDurationMs`, `totalTokens`, `totalToolUseCount`
//! and `usage`. The model name and the usage are what the model provider
//! reported for the child's last request ([`dsh_plugin_api::services::model::ModelReply`]'s
//! `model` and `usage`), the usage laid over Claude Code's empty usage
//! record as Claude Code lays an API's over it (an OpenAI-style
//! `prompt_tokens`/`completion_tokens` counts as input/output), and
//! `toolStats` when the child called tools ([`super::subagent_stats`]).
//!
//! A child whose turn ended in error (a failed model request) still
//! completes the call, as Claude Code's does (vectors `S180-*`): the answer
//! is the turn's error text (the Claude bridge shows a model error as
//! Claude Code words it), the
//! usage that of a failed request, the model its parent's when the child
//! got no answer. A child cancelled with its parent's turn is dropped with
//! the call: nothing more of it runs or fires (`S181-sigint-in-child-tool`).

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
        commands: false,
        submit: true,
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
    let (model, usage) = {
        let state = child.state();
        (state.last_model.clone(), state.last_usage.clone())
    };
    // A child that never got an answer reports the model it asked for: its
    // parent's (Claude Code's subagent runs on its parent's model).
    let model = model.or_else(|| parent.state().last_model.clone());
    agent.close_session(&child.id, "other").await;
    // A model request that failed the child's turn: Claude Code's Agent
    // tool still completes, answering the error's text, with the usage of
    // the failed request (vectors `S180-*`).
    let failed = outcome.reason == TurnEndReason::Error;
    let last_text = if failed {
        outcome.message.clone().unwrap_or_default()
    } else {
        last_text
    };
    let usage = if failed {
        failed_usage()
    } else {
        claude_usage(usage.as_ref())
    };
    let total_tokens = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    ]
    .iter()
    .filter_map(|k| usage[*k].as_u64())
    .sum::<u64>();
    let duration_ms = started.elapsed().as_millis() as u64;
    let mut structured = serde_json::Map::new();
    let answered = matches!(
        outcome.reason,
        TurnEndReason::Completed | TurnEndReason::Error
    );
    let status = if answered {
        "completed"
    } else {
        outcome.reason.as_str()
    };
    structured.insert("status".into(), status.into());
    structured.insert("prompt".into(), prompt.into());
    structured.insert("agentId".into(), child.id.clone().into());
    structured.insert("agentType".into(), agent_type.into());
    structured.insert(
        "content".into(),
        json!([{"type": "text", "text": last_text}]),
    );
    if let Some(model) = model {
        structured.insert("resolvedModel".into(), model.into());
    }
    structured.insert("totalDurationMs".into(), duration_ms.into());
    structured.insert("totalTokens".into(), total_tokens.into());
    structured.insert("totalToolUseCount".into(), tool_uses.into());
    structured.insert("usage".into(), usage);
    if let Some(stats) = super::subagent_stats::tool_stats(&outcome.events) {
        structured.insert("toolStats".into(), stats);
    }
    let structured = Value::Object(structured);
    let mut result = if answered {
        let answer = if last_text.is_empty() {
            "(Subagent completed but returned no output.)".to_string()
        } else {
            last_text
        };
        let footer = format!(
            "agentId: {id} (use SendMessage with to: '{id}', summary: '<5-10 word recap>' to continue this agent)\n\
             <usage>subagent_tokens: {total_tokens}\ntool_uses: {tool_uses}\nduration_ms: {duration_ms}</usage>",
            id = child.id
        );
        ToolResult {
            content: RVec::from(vec![ContentBlock::text(answer), ContentBlock::text(footer)]),
            is_error: false,
            structured: ROption::RNone,
        }
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

/// Claude Code's usage record of a request that failed (vectors
/// `S180-*`): every count 0, in this order, and `null` where a reply would
/// have named its service tier, region, iterations and speed.
fn failed_usage() -> Value {
    json!({
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": null,
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": null,
        "iterations": null,
        "speed": null
    })
}

/// Claude Code's usage record of one request: its empty record (every
/// count 0, `service_tier` and `speed` `standard`, ...) with what the
/// provider reported laid over it, key by key. OpenAI's
/// `prompt_tokens`/`completion_tokens` (and `prompt_tokens_details.cached_tokens`)
/// stand in for the input/output (cache-read) counts when the Anthropic
/// names are absent.
fn claude_usage(reported: Option<&Value>) -> Value {
    let mut usage = json!({
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard"
    });
    let Some(reported) = reported.and_then(Value::as_object) else {
        return usage;
    };
    let aliases = [
        ("input_tokens", "/prompt_tokens"),
        ("output_tokens", "/completion_tokens"),
        (
            "cache_read_input_tokens",
            "/prompt_tokens_details/cached_tokens",
        ),
    ];
    if let Some(fields) = usage.as_object_mut() {
        for (key, value) in fields.iter_mut() {
            match reported.get(key) {
                Some(v) if !v.is_null() => *value = v.clone(),
                _ => {
                    let alias = aliases.iter().find(|(k, _)| k == key).map(|(_, p)| *p);
                    if let Some(v) =
                        alias.and_then(|p| Value::Object(reported.clone()).pointer(p).cloned())
                    {
                        *value = v;
                    }
                }
            }
        }
    }
    usage
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn usage_lays_the_providers_counts_over_claude_codes_record() {
        // The recorder's mock API answered this (S1-all-events).
        let u = claude_usage(Some(&json!({"input_tokens": 100, "output_tokens": 20,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})));
        assert_eq!(
            u.to_string(),
            r#"{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard"}"#
        );
        let u = claude_usage(Some(&json!({"prompt_tokens": 7, "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 2}})));
        assert_eq!(
            (
                u["input_tokens"].clone(),
                u["output_tokens"].clone(),
                u["cache_read_input_tokens"].clone()
            ),
            (json!(7), json!(3), json!(2))
        );
        assert_eq!(claude_usage(None)["input_tokens"], 0);
    }
}
