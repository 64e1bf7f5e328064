//! PreToolUse (`tools/pre-execute`): allow, ask, deny or rewrite a call.
//!
//! Per hook (vectors `S2-*`, `S3-*`):
//! - exit 2: deny; the model's error result is `PreToolUse:<tool> hook
//!   error: [<command>]: <stderr>`, stdout ignored;
//! - `hookSpecificOutput.permissionDecision` `allow` / `ask` / `deny` with
//!   `permissionDecisionReason` (a deny's reason is the model's error result
//!   verbatim), or the legacy top-level `decision` `approve` / `block` with
//!   `reason`; a JSON deny is honoured even on exit 1 (`S3-deny-exit1`);
//! - `updatedInput` replaces the whole argument object
//!   ([`PreToolDecision::Allow`] `updated_arguments`), with or without a
//!   `permissionDecision` (`S275-updated-input-no-decision`); one the
//!   tool's input check refuses fails the call (`PreToolUse hook for <tool>
//!   returned updatedInput that failed schema validation: …`,
//!   `S275-updated-input-bad-schema`), unknown keys passed on unchecked
//!   (`S275-updated-input-unknown-key`);
//! - `additionalContext`: a `<system-reminder>` the host delivers after the
//!   step's tool results (`S3-allow-additional-context`); over 10,000
//!   characters it is saved and replaced ([`crate::persist`]);
//! - `continue: false`: the call's outcome stands and the turn ends after
//!   this step (`Host::halt_turn`);
//! - `permissionDecision: "defer"` (unless another hook denies): the call
//!   does not run and the turn ends after this step (`S278-pre-defer`);
//! - a `hookEventName` naming another event voids the output
//!   (`S3-wrong-event-name`).
//!
//! Merge: deny > ask > allow. Unless denied, the rest of the waterfall runs
//! and a stronger downstream answer wins.

use std::future::Future;

use dsh_hook_protocol::codec;
use dsh_hook_protocol::merge::{self, Permission, Vote};
use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::abi_stable::std_types::{ROption, RString};
use dsh_plugin_api::{PreToolDecision, ToolCall};
use serde_json::Value;

use super::{
    JsonCount, capped_context, claude_tool_name, completion, effort, head, permission_mode,
    prompt_id, quoted_stderr, read, text_blocks, tool_subjects,
};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "PreToolUse";

/// The call's arguments as hooks get them ([`super::tool_input`]; a
/// string when they are not JSON).
pub(crate) fn tool_input(call: &ToolCall) -> Value {
    super::tool_input::for_call(call)
}

/// The stdin payload.
pub fn payload(call: &ToolCall, effort_level: Option<&str>) -> Value {
    let mut m = head(&call.session);
    prompt_id(&mut m, &call.session);
    permission_mode(&mut m, &call.session);
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("tool_name".into(), claude_tool_name(&call.name).into());
    m.insert("tool_input".into(), tool_input(call));
    m.insert("tool_use_id".into(), call.call_id.as_str().into());
    Value::Object(m)
}

fn vote_of_json(json: &serde_json::Map<String, Value>, tool: &str) -> Option<Vote> {
    let reason = codec::specific_str(json, "permissionDecisionReason").map(String::from);
    let denied = || {
        Some(
            reason
                .clone()
                .unwrap_or_else(|| format!("{EVENT}:{tool} hook denied this tool call")),
        )
    };
    match codec::specific_str(json, "permissionDecision") {
        Some("allow") => return Some(Vote::new(Permission::Allow, reason)),
        Some("ask") => return Some(Vote::new(Permission::Ask, reason)),
        Some("deny") => return Some(Vote::new(Permission::Deny, denied())),
        _ => {}
    }
    let legacy_reason = codec::str_field(json, "reason").map(String::from);
    match codec::str_field(json, "decision") {
        Some("approve") => Some(Vote::new(Permission::Allow, legacy_reason)),
        Some("block") => Some(Vote::new(
            Permission::Deny,
            legacy_reason.or_else(|| Some(format!("{EVENT}:{tool} hook denied this tool call"))),
        )),
        _ => None,
    }
}

/// What the model reads when a hook's `updatedInput` does not fit the
/// tool: `refusal` is the tool's own input check's text, whose
/// `<tool_use_error>InputValidationError: …</tool_use_error>` wrapper
/// Claude Code does not repeat here.
fn rewrite_refusal(tool: &str, refusal: &str) -> String {
    let body = unwrapped(refusal);
    format!("{EVENT} hook for {tool} returned updatedInput that failed schema validation: {body}")
}

/// An input check's refusal without its `<tool_use_error>InputValidationError: `
/// wrapper.
fn unwrapped(refusal: &str) -> &str {
    refusal
        .strip_prefix("<tool_use_error>")
        .and_then(|r| r.strip_suffix("</tool_use_error>"))
        .map(|r| r.strip_prefix("InputValidationError: ").unwrap_or(r))
        .unwrap_or(refusal)
}

/// The parameters an input check's refusal names as unexpected (its
/// `An unexpected parameter \`x\` was provided` lines).
fn unexpected_parameters(refusal: &str) -> Vec<&str> {
    unwrapped(refusal)
        .lines()
        .filter_map(|l| {
            l.strip_prefix("An unexpected parameter `")?
                .strip_suffix("` was provided")
        })
        .collect()
}

impl ClaudeBridge {
    /// The tool's input check's refusal of a hook's `updatedInput`, `None`
    /// when the tool takes it. Unknown keys do not make it fail: Claude
    /// Code runs the call with them, and hooks after it see them
    /// (`S275-updated-input-unknown-key`), so the rest is checked without
    /// them.
    async fn checked_rewrite(&self, call: &ToolCall, input: &Value) -> Option<String> {
        let refusal = self
            .host
            .check_input(&call.name, &call.session, input)
            .await?;
        let unexpected = unexpected_parameters(&refusal);
        let mut known = input.clone();
        let Some(map) = known.as_object_mut().filter(|_| !unexpected.is_empty()) else {
            return Some(refusal);
        };
        for key in unexpected {
            map.remove(key);
        }
        self.host
            .check_input(&call.name, &call.session, &known)
            .await
    }

    /// Runs the PreToolUse hooks, then (unless denied) the rest of the
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
        let resolution = self.hooks_for(&call.session);
        if !resolution.has(EVENT) {
            let decision = next().await?;
            self.mark_started(&call.call_id);
            return Ok(decision);
        }
        let tool = claude_tool_name(&call.name);
        let session = &call.session;
        let payload = payload(call, self.effort.as_deref());
        let mut runs = self
            .fire_resolved(&resolution, EVENT, session, &tool_subjects(tool), &payload)
            .await;
        let mut votes = Vec::new();
        let mut updated: Option<Value> = None;
        let mut contexts = Vec::new();
        let mut halt: Option<String> = None;
        let mut deferred: Option<String> = None;
        let spill = self.spill(&session.session_id, &session.log_path, &call.call_id);
        let mut answers = JsonCount::default();
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, EVENT);
            let nth = answers.count(&reading);
            // An exit 2's JSON answer is read too: its context and its
            // other votes (vector `S277-pre-exit2-json-context`).
            if reading.blocked {
                let reason = format!("{EVENT}:{tool} hook error: {}", quoted_stderr(run));
                votes.push(Vote::new(Permission::Deny, Some(reason)));
            }
            let Some(json) = reading.json.as_ref() else {
                continue;
            };
            if codec::specific_str(json, "permissionDecision") == Some("defer") {
                deferred.get_or_insert_with(|| {
                    codec::specific_str(json, "permissionDecisionReason").map_or_else(
                        || format!("{EVENT}:{tool} hook deferred this tool call"),
                        String::from,
                    )
                });
            }
            if let Some(vote) = vote_of_json(json, tool) {
                if vote.permission == Permission::Deny {
                    run.outcome = Outcome::Blocked;
                }
                votes.push(vote);
            }
            if let Some(input) = json
                .get("hookSpecificOutput")
                .and_then(|h| h.get("updatedInput"))
                && input.is_object()
            {
                updated = Some(input.clone());
            }
            if let Some(ctx) = capped_context(&spill, &reading, nth) {
                contexts.push(format!(
                    "<system-reminder>\n{EVENT}:{tool} hook additional context: {ctx}\n</system-reminder>"
                ));
            }
            if let Some(reason) = reading.stop() {
                halt.get_or_insert_with(|| reason.unwrap_or_default().to_string());
            }
        }
        self.record(session, EVENT, &runs);
        for text in &text_blocks(contexts) {
            self.inject(&session.session_id, text);
        }
        let merged = merge::merge(votes);
        // A hook's `continue: false` does not end the turn of a call another
        // hook denied (vector `S53-deny-plus-continue-false`).
        if let (Some(reason), false) = (halt, merged.denied()) {
            self.halt(&session.session_id, &reason);
        }
        // Of the strongest answers, the one that finished last is the one
        // the model reads (vectors `S53-two-denies`,
        // `S53-deny-exit2-and-json-deny`).
        let ours = merged.reasons.last().map(|r| RString::from(r.as_str()));
        if merged.denied() {
            return Ok(PreToolDecision::Deny {
                reason: ours.unwrap_or_default(),
            });
        }
        // `defer`: the call is left for later and the turn ends here, with
        // no result and no further request (vectors `S278-pre-defer`,
        // `S278-pre-defer-not-allowed`).
        if let Some(reason) = deferred {
            self.halt(&session.session_id, &reason);
            return Ok(PreToolDecision::Deny {
                reason: reason.into(),
            });
        }
        // The rewrite must fit the tool's input schema, or the call fails
        // with Claude Code's words (vector `S275-updated-input-bad-schema`).
        if let Some(input) = &updated
            && let Some(refusal) = self.checked_rewrite(call, input).await
        {
            return Ok(PreToolDecision::Deny {
                reason: rewrite_refusal(tool, &refusal).into(),
            });
        }
        let decision = match (next().await?, merged.permission) {
            (d @ PreToolDecision::Deny { .. }, _) => d,
            (PreToolDecision::Ask { reason: theirs }, Some(Permission::Ask)) => {
                PreToolDecision::Ask {
                    reason: ours.map_or(theirs, ROption::RSome),
                }
            }
            (d @ PreToolDecision::Ask { .. }, _) => d,
            (PreToolDecision::Allow { .. }, Some(Permission::Ask)) => PreToolDecision::Ask {
                reason: ours.into(),
            },
            (PreToolDecision::Allow { updated_arguments }, permission) => {
                // Only an argument object can be handed back (a rewrite
                // must be one); a call whose arguments are not one gets a
                // plain allow.
                let explicit = permission == Some(Permission::Allow)
                    && serde_json::from_str::<Value>(&call.arguments).is_ok_and(|v| v.is_object());
                PreToolDecision::Allow {
                    updated_arguments: updated_arguments
                        .into_option()
                        .or_else(|| updated.map(|v| RString::from(v.to_string())))
                        // A hook's `allow` skips the permission prompt in
                        // Claude Code (S3-allow); the host reads an allow
                        // that hands back the call's own arguments as an
                        // explicit allow that rewrites nothing.
                        .or_else(|| explicit.then(|| call.arguments.clone()))
                        .into(),
                }
            }
        };
        self.mark_started(&call.call_id);
        Ok(decision)
    }
}
