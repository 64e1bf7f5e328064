//! The permission step of the tool pipeline (ARCHITECTURE.md §4, phase 2):
//! the session's mode and rules weigh what the pre-execute waterfall said
//! ([`crate::permissions::decide`]); an ask goes to
//! `tools/permission-request` when someone could be asked, then to the
//! `approval` service, and without one is refused as `claude -p` refuses
//! it. "Allow always" and a hook's `updatedPermissions` add session rules.

use std::sync::Arc;

use abi_stable::std_types::{RArc, ROption, RResult, RString};
use dsh_plugin_api::services::approval::{ApprovalAnswer, ApprovalRequest, METHOD_REQUEST};
use dsh_plugin_api::{PermissionDecision, PermissionRequestInput, SeamInput, SeamOutput, ToolCall};
use serde_json::Value;

use super::pipeline::{APPROVAL_SERVICE, Gate};
use super::session::Session;
use super::turn::{default_terminal, originator};
use crate::permissions::{
    Behavior, HookStance, PermissionUpdate, Rule, Verdict, decide_with, parse_updates,
};
use crate::seams::Traced;
use crate::session::SessionEvent;

/// The rule an "allow always" answer adds: the exact command for `Bash`
/// (`Bash(npm test)`), the tool for anything else.
fn always_rule(call: &ToolCall) -> String {
    let command = serde_json::from_str::<Value>(&call.arguments)
        .ok()
        .and_then(|a| a.get("command").and_then(Value::as_str).map(str::to_string));
    match command {
        Some(c) if call.name.as_str() == "Bash" && !c.trim().is_empty() => {
            format!("Bash({})", c.trim())
        }
        _ => call.name.to_string(),
    }
}

/// What `tools/permission-request` said.
pub(super) enum Asked {
    /// A listener decided; with the arguments an allow rewrote.
    Decided(Gate, Option<RArc<ToolCall>>),
    /// Nobody decided: ask.
    Ask,
}

impl Session {
    /// `tools/permission-request`, when someone could be asked (an approval
    /// service is mounted; Claude Code's `-p` mode never fires it, S32).
    pub(super) async fn permission_request(
        &self,
        view: &crate::plugins::HostView,
        call: &RArc<ToolCall>,
        reason: &str,
        offered: &Value,
    ) -> Asked {
        if view.services.get(APPROVAL_SERVICE).is_none() {
            return Asked::Ask;
        }
        self.written().await;
        let input = PermissionRequestInput {
            call: call.clone(),
            reason: RString::from(reason),
            suggestions: RString::from(offered.to_string()),
        };
        let terminal = default_terminal(SeamOutput::Permission(PermissionDecision::Ask));
        let Traced {
            answer,
            trace,
            timed_out,
        } = view
            .bus
            .waterfall_traced(SeamInput::PermissionRequest(RArc::new(input)), terminal)
            .await;
        self.note_listener_failures("tools/permission-request", &timed_out, true);
        let by = answer
            .as_ref()
            .into_result()
            .ok()
            .and_then(|out| originator(&trace, out))
            .unwrap_or_else(|| "error".into());
        let decided = |outcome: &str, reason: String| SessionEvent::ToolApproval {
            call_id: call.call_id.to_string(),
            outcome: outcome.into(),
            reason: Some(reason),
        };
        match answer {
            RResult::ROk(SeamOutput::Permission(PermissionDecision::Allow {
                updated_arguments,
                updated_permissions,
            })) => {
                self.append(decided(
                    "allow_once",
                    format!("allowed by {by} on tools/permission-request"),
                ));
                let mut rewritten = None;
                if let ROption::RSome(text) = &updated_arguments {
                    match serde_json::from_str::<Value>(text) {
                        Ok(args @ Value::Object(_)) => {
                            self.append(SessionEvent::ToolUpdated {
                                call_id: call.call_id.to_string(),
                                arguments: args.clone(),
                                plugin: by.clone(),
                            });
                            let mut now = (**call).clone();
                            now.arguments = RString::from(args.to_string());
                            rewritten = Some(RArc::new(now));
                        }
                        _ => {
                            let reason = format!(
                                "plugin `{by}` rewrote the arguments into something that is not a JSON object"
                            );
                            return Asked::Decided(Gate::Denied { reason, by }, None);
                        }
                    }
                }
                if let ROption::RSome(text) = &updated_permissions {
                    let (updates, skipped) = parse_updates(text);
                    for s in skipped {
                        tracing::warn!(session = %self.id, plugin = %by, "updatedPermissions: {s}; ignored");
                    }
                    for update in updates {
                        match update {
                            PermissionUpdate::AddRule { behavior, rule } => {
                                self.add_session_rule(behavior, rule, &call.call_id)
                            }
                            PermissionUpdate::SetMode(mode) => self.set_permission_mode(mode, &by),
                        }
                    }
                }
                Asked::Decided(Gate::Run, rewritten)
            }
            RResult::ROk(SeamOutput::Permission(PermissionDecision::Deny {
                message,
                interrupt,
            })) => {
                self.append(decided(
                    "reject",
                    format!("denied by {by} on tools/permission-request"),
                ));
                if interrupt {
                    let _ = self.halt(&by, message.to_string());
                }
                let reason = message.to_string();
                Asked::Decided(Gate::Denied { reason, by }, None)
            }
            RResult::ROk(SeamOutput::Permission(_)) => Asked::Ask,
            // A failed or confused waterfall decides nothing: ask.
            RResult::ROk(other) => {
                tracing::warn!(session = %self.id, "tools/permission-request answered with {other:?}; asking");
                Asked::Ask
            }
            RResult::RErr(e) => {
                tracing::warn!(session = %self.id, "tools/permission-request failed: {e}; asking");
                Asked::Ask
            }
        }
    }

    /// The permission verdict on `call` (`permissions/`).
    /// `tool_ask` is the tool's own permission question, when it has one
    /// (its input check's `ask`).
    pub(super) fn permission_verdict(
        &self,
        call: &ToolCall,
        stance: &HookStance,
        tool_ask: Option<&str>,
    ) -> Verdict {
        let perms = self.state().perms.clone();
        let args = serde_json::from_str::<Value>(&call.arguments).unwrap_or(Value::Null);
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        decide_with(
            &perms,
            &call.name,
            &args,
            std::path::Path::new(call.session.cwd.as_str()),
            &self.cwd,
            home.as_deref(),
            stance,
            tool_ask,
        )
    }

    /// A file tool's refusal by a path deny rule, due before the
    /// pre-execute waterfall ([`crate::permissions::refused_on_input`]).
    pub(super) fn refusal_on_input(&self, call: &ToolCall) -> Option<Gate> {
        let args = serde_json::from_str::<Value>(&call.arguments).unwrap_or(Value::Null);
        // `Read` refuses a binary extension by name while it checks its
        // input, in every session (S84, S120): no hook hears of the call.
        if call.name.as_str() == "Read"
            && let Some(path) = args.get("file_path").and_then(Value::as_str)
        {
            let full = std::path::Path::new(call.session.cwd.as_str()).join(path);
            if let Some(refusal) =
                dsh_tools_fs::image::binary_extension_refusal(&full.to_string_lossy())
            {
                return Some(Gate::Denied {
                    reason: refusal,
                    by: "tools-fs (input check)".into(),
                });
            }
        }
        let perms = self.state().perms.clone();
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        match crate::permissions::refused_on_input(
            &perms,
            &call.name,
            &args,
            std::path::Path::new(call.session.cwd.as_str()),
            &self.cwd,
            home.as_deref(),
        )? {
            Verdict::Deny { message, by } => Some(Gate::Denied {
                reason: message,
                by: format!("permissions ({by})"),
            }),
            _ => None,
        }
    }

    /// Asks the `approval` service about `call`, showing `reason`;
    /// `headless` is what the model reads when nobody can be asked.
    pub(super) async fn ask_approval(
        self: &Arc<Self>,
        call: &RArc<ToolCall>,
        reason: Option<&str>,
        headless: &str,
    ) -> Gate {
        let Some(service) = self.view().services.get(APPROVAL_SERVICE) else {
            // Nobody to ask: answer as `claude -p` does, a refusal the model
            // reads as the ask's own text (vectors S3-ask, S30, S31).
            self.append(SessionEvent::ToolApproval {
                call_id: call.call_id.to_string(),
                outcome: "unavailable".into(),
                reason: Some("no approval service is mounted (headless)".into()),
            });
            return Gate::Denied {
                reason: headless.to_string(),
                by: "approval".into(),
            };
        };
        let args = ApprovalRequest {
            session_id: self.id.clone(),
            call_id: call.call_id.to_string(),
            name: call.name.to_string(),
            arguments: serde_json::from_str::<Value>(&call.arguments).unwrap_or(Value::Null),
            reason: reason.map(str::to_string),
        };
        let args = serde_json::to_string(&args).unwrap_or_default();
        // A call that fails, or an answer this build cannot read (an
        // outcome it does not know), is `unavailable`: the tool is denied.
        let answer = service
            .call(RString::from(METHOD_REQUEST), RString::from(args))
            .await
            .into_result()
            .map_err(String::from)
            .and_then(|a| {
                serde_json::from_str::<ApprovalAnswer>(&a)
                    .map_err(|e| format!("the approval service answered badly: {e}"))
            })
            .unwrap_or_else(ApprovalAnswer::unavailable);
        self.append(SessionEvent::ToolApproval {
            call_id: call.call_id.to_string(),
            outcome: answer.outcome().to_string(),
            reason: answer.reason().map(str::to_string),
        });
        let by = "approval".to_string();
        match answer {
            ApprovalAnswer::AllowOnce => Gate::Run,
            ApprovalAnswer::AllowAlways => {
                match Rule::parse(&always_rule(call)) {
                    Ok(rule) => self.add_session_rule(Behavior::Allow, rule, &call.call_id),
                    Err(e) => tracing::warn!(session = %self.id, "allow always: {e}"),
                }
                Gate::Run
            }
            ApprovalAnswer::Reject { reason, interrupt } => {
                let reason = reason.unwrap_or_else(|| "the user rejected this tool call".into());
                if interrupt {
                    // The turn ends after this step; the model hears of
                    // the refusal with the next prompt, followed (after
                    // every result of the step) by Claude Code's
                    // interrupted-by-user text block (S34).
                    let _ = self.halt("approval", "the user rejected a tool call".into());
                    self.state()
                        .buffered
                        .push(super::session::Buffered::Context {
                            plugin: "approval".into(),
                            text: crate::permissions::INTERRUPTED_FOR_TOOL_USE.into(),
                            role: crate::session::ContextRole::User,
                        });
                }
                Gate::Denied { reason, by }
            }
            ApprovalAnswer::Cancelled => Gate::Denied {
                reason: "the approval request was cancelled".into(),
                by,
            },
            ApprovalAnswer::Unavailable { reason } => Gate::Denied {
                reason: format!(
                    "approval unavailable: {}",
                    reason.unwrap_or_else(|| "the approval service gave no reason".into())
                ),
                by,
            },
        }
    }
}
