//! PostToolUse (`tools/post-execute`).
//!
//! Fires for every call that ran, failed or not (vector
//! `C1-tool-failing-cmd`); not for a call a PreToolUse hook blocked.
//! `tool_response` is the tool's output as one string.
//!
//! A block replaces the output the model sees: exit 2 with stderr (trimmed),
//! `decision: "block"` with a reason, or `continue: false` (its
//! `stopReason`; the turn goes on, `C4-continue-false`). `additionalContext`
//! is added after the step's results; plain stdout, other exits and
//! `updatedMCPToolOutput` on a built-in tool change nothing. The
//! replacement and each context are capped as Codex caps them
//! ([`crate::spill`]).
//!
//! An `exec_command` still running when its call returned fires nothing
//! then: PostToolUse fires for it when the `write_stdin` that sees it end
//! returns, as that `exec_command` call (its `tool_use_id`, `tool_input`),
//! with the last chunk as `tool_response`, and a block replaces what that
//! `write_stdin` returns (recorded `C207-*`;
//! [`dsh_plugin_api::sdk::codex_exec`]). Other `write_stdin` calls fire
//! nothing.

use std::future::Future;

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::abi_stable::std_types::{ROption, RVec};
use dsh_plugin_api::sdk::codex_exec::{EXEC_COMMAND, ExecStructured, WRITE_STDIN};
use dsh_plugin_api::{AuthoredContext, ContentBlock, PostExecuteInput, PostToolDecision, ToolCall};
use serde_json::Value;

use super::{invalid, read, turn_head};
use crate::CodexBridge;
use crate::output::{PostOutput, decode, trimmed};
use crate::tool::codex_tool;

/// The event name.
pub const EVENT: &str = "PostToolUse";

/// Whether `name` is an MCP server's tool (`mcp__<server>__<tool>`).
fn is_mcp(name: &str) -> bool {
    name.starts_with("mcp__")
}

/// The tool's output as Codex reports it: for an MCP tool the server's
/// whole answer (`{content, structuredContent?, isError}`, vectors
/// `C75-*`); otherwise one string (a structured response's `output`, else
/// the result's text).
fn tool_response(input: &PostExecuteInput) -> Value {
    let structured: Option<Value> = input
        .result
        .structured
        .as_ref()
        .into_option()
        .and_then(|s| serde_json::from_str(s).ok());
    match structured {
        Some(mcp @ Value::Object(_)) if is_mcp(&input.call.name) => mcp,
        Some(Value::Object(o)) if o.get("output").is_some_and(Value::is_string) => {
            o["output"].clone()
        }
        _ => Value::String(input.result.text_content()),
    }
}

/// The stdin payload, for `call` (the input's own call, or the
/// `exec_command` call a `write_stdin` saw end).
pub fn payload(input: &PostExecuteInput, call: &ToolCall, model: &str) -> Value {
    let tool = codex_tool(call);
    let cwd = tool.workdir.as_deref().unwrap_or(&call.session.cwd);
    let mut m = turn_head(&call.session, cwd, EVENT, model);
    m.insert("tool_name".into(), tool.name.into());
    m.insert("tool_input".into(), tool.input);
    m.insert("tool_response".into(), tool_response(input));
    m.insert("tool_use_id".into(), call.call_id.as_str().into());
    Value::Object(m)
}

/// The call PostToolUse fires for: the input's own, none for an
/// `exec_command` still running or a `write_stdin` that did not see its
/// process end, and that process's `exec_command` call for the one that
/// did.
fn hooked_call(input: &PostExecuteInput) -> Option<ToolCall> {
    let exec = input
        .result
        .structured
        .as_ref()
        .into_option()
        .filter(|_| matches!(input.call.name.as_str(), EXEC_COMMAND | WRITE_STDIN))
        .and_then(|s| ExecStructured::parse(s));
    let Some(exec) = exec else {
        return (input.call.name.as_str() != WRITE_STDIN).then(|| (*input.call).clone());
    };
    if exec.running_session_id.is_some() {
        return None;
    }
    match (input.call.name.as_str(), exec.finished_call) {
        (WRITE_STDIN, Some(started)) => Some(ToolCall {
            call_id: started.call_id.into(),
            name: EXEC_COMMAND.into(),
            arguments: started.arguments.into(),
            ..(*input.call).clone()
        }),
        (WRITE_STDIN, None) => None,
        _ => Some((*input.call).clone()),
    }
}

impl CodexBridge {
    /// Runs the rest of the waterfall, then the PostToolUse hooks, whose
    /// block replaces the content and whose context is added.
    pub async fn on_post_tool_use<F, Fut>(
        &self,
        input: &PostExecuteInput,
        next: F,
    ) -> Result<PostToolDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<PostToolDecision, String>>,
    {
        // An MCP call that failed fires no PostToolUse (vector `C75b_fail`).
        let failed_mcp = is_mcp(&input.call.name) && input.result.is_error;
        if input.denied || failed_mcp || !self.has_hooks(&input.call.session, EVENT) {
            return next().await;
        }
        let Some(call) = hooked_call(input) else {
            return next().await;
        };
        let call = &call;
        let tool = codex_tool(call);
        let mut runs = self
            .fire(
                EVENT,
                &call.session,
                Some(&tool.name),
                &payload(input, call, &self.model),
            )
            .await;
        let mut replacement: Vec<String> = Vec::new();
        let mut contexts = Vec::new();
        for run in &mut runs {
            let reading = read(run);
            if let Some(reason) = reading.block {
                replacement.push(reason);
                continue;
            }
            let Some(json) = reading.json else { continue };
            let out = match decode::<PostOutput>(&json) {
                Ok(out) => out,
                Err(e) => {
                    invalid(run, e);
                    continue;
                }
            };
            if out.suppress_output {
                invalid(
                    run,
                    "PostToolUse hook returned unsupported suppressOutput".into(),
                );
                continue;
            }
            let blocking = match (out.decision.is_some(), trimmed(out.reason.as_deref())) {
                (true, None) => {
                    invalid(
                        run,
                        "PostToolUse hook returned decision:block without a non-empty reason"
                            .into(),
                    );
                    continue;
                }
                (true, Some(reason)) => Some(reason),
                (false, Some(_)) if out.proceed => {
                    invalid(
                        run,
                        "PostToolUse hook returned reason without decision".into(),
                    );
                    continue;
                }
                (false, _) if !out.proceed => Some(out.stop_reason.clone().unwrap_or_default()),
                (false, _) => None,
            };
            contexts.extend(out.hook_specific_output.and_then(|h| h.additional_context));
            if let Some(text) = blocking {
                run.outcome = Outcome::Blocked;
                replacement.push(text);
            }
        }
        self.record(&call.session, EVENT, &runs);
        let session_id = &call.session.session_id;
        let contexts: Vec<String> = contexts
            .into_iter()
            .map(|text| self.cap(session_id, text))
            .collect();
        // Every block, in config order, joined by a blank line (vector
        // `C50-post-block-plus-context`).
        let replaced = (!replacement.is_empty()).then(|| {
            RVec::from(vec![ContentBlock::text(
                self.cap(session_id, replacement.join("\n\n")),
            )])
        });
        // Each hook's context is its own piece, before what the rest of the
        // chain added.
        let decision = next().await?;
        let decision = if contexts.is_empty() {
            decision
        } else {
            let mut pieces: Vec<AuthoredContext> =
                contexts.into_iter().map(AuthoredContext::new).collect();
            pieces.extend(decision.context());
            decision.with_pieces(pieces)
        };
        Ok(match (decision, replaced) {
            (
                PostToolDecision::Accept {
                    additional_context, ..
                },
                Some(content),
            ) => PostToolDecision::Accept {
                content: ROption::RSome(content),
                additional_context,
            },
            (PostToolDecision::AcceptAuthored { context, .. }, Some(content)) => {
                PostToolDecision::AcceptAuthored {
                    content: ROption::RSome(content),
                    context,
                }
            }
            (decision, _) => decision,
        })
    }
}
