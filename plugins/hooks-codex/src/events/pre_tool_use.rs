//! PreToolUse (`tools/pre-execute`), with Codex's narrow output contract.
//!
//! Blocks (the call does not run, PostToolUse does not fire, and the model
//! reads `Command blocked by PreToolUse hook: <reason>. Command: <cmd>`):
//! exit 2 with a non-empty stderr, legacy `decision: "block"` with a reason,
//! or `permissionDecision: "deny"` with a reason (vectors `C2-exit2-*`,
//! `C2-json-decision-block`, `C2-pd-deny`). Several blockers: the first in
//! config order gives the reason.
//!
//! Ignored as invalid (fail open): `ask`, legacy `approve`, a reason-less
//! deny or block, `updatedInput` without `allow`, `continue: false`,
//! `stopReason`, `suppressOutput`, unknown keys. `allow` with
//! `updatedInput.command` rewrites the command (without a string `command`
//! the call fails with Codex's message, `C2-allow-updated-input-cmd-key`).
//! `additionalContext` reaches the model even when the call is blocked,
//! capped as Codex caps it ([`crate::spill`]). `write_stdin` fires no
//! hook.

use std::future::Future;

use dsh_hook_protocol::point::{HookRun, Outcome};
use dsh_plugin_api::abi_stable::std_types::RString;
use dsh_plugin_api::sdk::codex_exec::WRITE_STDIN;
use dsh_plugin_api::{PreToolDecision, ToolCall};
use serde_json::Value;

use super::{invalid, read, turn_head};
use crate::CodexBridge;
use crate::output::{PermissionDecision, PreDecision, PreOutput, decode, trimmed};
use crate::tool::{CodexTool, codex_tool, rewrite_command};

/// The event name.
pub const EVENT: &str = "PreToolUse";

/// Codex's message when `updatedInput` has no string `command`.
pub const UPDATED_INPUT_WITHOUT_COMMAND: &str =
    "hook returned updatedInput without string field `command`";

/// The stdin payload.
pub fn payload(call: &ToolCall, model: &str) -> Value {
    let tool = codex_tool(call);
    let cwd = tool.workdir.as_deref().unwrap_or(&call.session.cwd);
    let mut m = turn_head(&call.session, cwd, EVENT, model);
    m.insert("tool_name".into(), tool.name.into());
    m.insert("tool_input".into(), tool.input);
    m.insert("tool_use_id".into(), call.call_id.as_str().into());
    Value::Object(m)
}

/// What one valid answer asks for.
#[derive(Default)]
struct Asked {
    block: Option<String>,
    context: Option<String>,
    updated: Option<Value>,
}

fn interpret(run: &mut HookRun, out: PreOutput) -> Option<Asked> {
    let unsupported = if !out.proceed {
        Some("unsupported continue:false")
    } else if out.stop_reason.is_some() {
        Some("unsupported stopReason")
    } else if out.suppress_output {
        Some("unsupported suppressOutput")
    } else {
        None
    };
    if let Some(why) = unsupported {
        invalid(run, format!("PreToolUse hook returned {why}"));
        return None;
    }
    let specific = out.hook_specific_output.unwrap_or_default();
    let mut asked = Asked {
        context: specific.additional_context.clone(),
        ..Asked::default()
    };
    let specific_decides = specific.permission_decision.is_some()
        || specific.permission_decision_reason.is_some()
        || specific.updated_input.is_some();
    let problem = if specific_decides {
        match (specific.permission_decision, specific.updated_input) {
            (Some(PermissionDecision::Allow), Some(input)) => {
                asked.updated = Some(input);
                None
            }
            (_, Some(_)) => Some("updatedInput without permissionDecision:allow"),
            (Some(PermissionDecision::Allow), None) => Some("unsupported permissionDecision:allow"),
            (Some(PermissionDecision::Ask), None) => Some("unsupported permissionDecision:ask"),
            (Some(PermissionDecision::Deny), None) => {
                asked.block = trimmed(specific.permission_decision_reason.as_deref());
                asked.block.is_none().then_some(
                    "permissionDecision:deny without a non-empty permissionDecisionReason",
                )
            }
            (None, None) => Some("permissionDecisionReason without permissionDecision"),
        }
    } else {
        match out.decision {
            Some(PreDecision::Approve) => Some("unsupported decision:approve"),
            Some(PreDecision::Block) => {
                asked.block = trimmed(out.reason.as_deref());
                asked
                    .block
                    .is_none()
                    .then_some("decision:block without a non-empty reason")
            }
            None if out.reason.is_some() => Some("reason without decision"),
            None => None,
        }
    };
    if let Some(why) = problem {
        invalid(run, format!("PreToolUse hook returned {why}"));
        return None;
    }
    Some(asked)
}

/// The model-facing text of a blocked call: Codex's message, cut as Codex
/// cuts every tool output it hands the model (`tool_output_tokens`, see
/// [`crate::spill::truncate_middle`]; vector `C21-deny-1mb`). An MCP tool's
/// message names the tool instead of a command (vector `C75e_deny`).
pub fn blocked_message(tool: &CodexTool, reason: &str, tool_output_tokens: usize) -> String {
    let text = match &tool.command {
        Some((_, command)) => {
            format!("Command blocked by PreToolUse hook: {reason}. Command: {command}")
        }
        None if tool.name.starts_with("mcp__") => format!(
            "Tool call blocked by PreToolUse hook: {reason}. Tool: {}",
            tool.name
        ),
        None => format!(
            "Command blocked by PreToolUse hook: {reason}. Command: {}",
            tool.input
        ),
    };
    crate::spill::truncate_middle(&text, tool_output_tokens)
}

impl CodexBridge {
    /// Runs the PreToolUse hooks, then (unless they block) the rest of the
    /// waterfall.
    pub async fn on_pre_tool_use<F, Fut>(
        &self,
        call: &ToolCall,
        next: F,
    ) -> Result<PreToolDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<PreToolDecision, String>>,
    {
        // Codex fires no hook for `write_stdin` (recorded `C207-*`).
        if call.name.as_str() == WRITE_STDIN || !self.has_hooks(&call.session, EVENT) {
            return next().await;
        }
        let tool = codex_tool(call);
        let payload = payload(call, &self.model);
        let mut runs = self
            .fire(EVENT, &call.session, Some(&tool.name), &payload)
            .await;
        let mut block: Option<String> = None;
        let mut updated: Option<Value> = None;
        let mut contexts = Vec::new();
        for run in &mut runs {
            let reading = read(run);
            if let Some(reason) = reading.block {
                block.get_or_insert(reason);
                continue;
            }
            let Some(json) = reading.json else { continue };
            let asked = match decode::<PreOutput>(&json) {
                Ok(out) => interpret(run, out),
                Err(e) => {
                    invalid(run, e);
                    None
                }
            };
            let Some(asked) = asked else { continue };
            contexts.extend(asked.context);
            if let Some(reason) = asked.block {
                run.outcome = Outcome::Blocked;
                block.get_or_insert(reason);
            } else if asked.updated.is_some() {
                updated = asked.updated;
            }
        }
        self.record(&call.session, EVENT, &runs);
        for text in contexts {
            let text = self.cap(&call.session.session_id, text);
            self.inject(&call.session.session_id, &text);
        }
        if let Some(reason) = block {
            return Ok(PreToolDecision::Deny {
                reason: blocked_message(&tool, &reason, self.tool_output_tokens).into(),
            });
        }
        let rewritten = match updated {
            None => None,
            Some(input) => match (input.get("command").and_then(Value::as_str), &tool.command) {
                (Some(command), Some((key, _))) => Some(rewrite_command(call, key, command)),
                (Some(_), None) => Some(input.to_string()),
                (None, _) => {
                    return Ok(PreToolDecision::Deny {
                        reason: UPDATED_INPUT_WITHOUT_COMMAND.into(),
                    });
                }
            },
        };
        match next().await? {
            PreToolDecision::Allow { updated_arguments } => Ok(PreToolDecision::Allow {
                updated_arguments: updated_arguments
                    .into_option()
                    .or(rewritten.map(RString::from))
                    .into(),
            }),
            other => Ok(other),
        }
    }
}
