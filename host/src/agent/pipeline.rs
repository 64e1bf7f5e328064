//! The five-phase tool pipeline:
//! `tools/pre-execute` → guards → (ask → approval) → `tools/execute` →
//! core dispatch → `tools/post-execute` → `tools/result`.
//!
//! Arguments are materialized once into canonical JSON and sealed in a
//! [`ToolCall`] before pre-execute; nothing downstream can change them, except
//! a pre-execute `updated_arguments`, which replaces the whole argument
//! object as one unit (the log keeps the original call and the rewrite).
//! Every outcome, a denial included, reaches post-execute and
//! `tools/result`, and every failure ends as a JSON-safe `isError` result.

use std::sync::Arc;

use abi_stable::std_types::{RArc, ROption, RResult, RString};
use dsh_plugin_api::services::approval;
use dsh_plugin_api::{
    CwdChangedInput, ExecuteInput, PostExecuteInput, PostToolDecision, PreToolDecision, SeamInput,
    SeamOutput, ToolCall, ToolResult,
};
use futures::FutureExt as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::permission_step::Asked;
use super::session::{Buffered, Session};
use super::signal::TokenSignal;
use super::turn::{authored, default_terminal, originator, unless_cancelled};
use crate::model::ModelToolCall;
use crate::permissions::{HookStance, Verdict, suggestions};
use crate::plugins::services::ToolsView;
use crate::seams::{GuardVerdict, Terminal, TerminalFn, Traced};
use crate::session::SessionEvent;

/// The name of the service that answers `ask`.
pub const APPROVAL_SERVICE: &str = approval::SERVICE;

/// The terminal of `tools/execute`: find the tool and run its body.
fn dispatch(tools: ToolsView) -> Arc<dyn Terminal> {
    Arc::new(TerminalFn(move |input| {
        let tools = tools.clone();
        async move {
            let SeamInput::Execute(exec) = input else {
                return RResult::RErr(RString::from("core dispatch received a non-execute input"));
            };
            let Some(tool) = tools.get(&exec.call.name) else {
                let known: Vec<String> = tools.specs().iter().map(|s| s.name.to_string()).collect();
                return RResult::ROk(SeamOutput::Execute(ToolResult::error(format!(
                    "unknown tool `{}` (available: {})",
                    exec.call.name,
                    known.join(", ")
                ))));
            };
            let result = tool.body.run(exec.call.clone(), exec.signal.clone()).await;
            RResult::ROk(SeamOutput::Execute(result))
        }
        .boxed()
    }))
}

/// The image blocks of `result`, in order, as the history carries them.
fn images_of(result: &ToolResult) -> Vec<crate::model::MessageImage> {
    result
        .content
        .iter()
        .filter_map(|b| match b.as_enum().ok()? {
            dsh_plugin_api::ContentBlock::Image { mime_type, data } => {
                Some(crate::model::MessageImage {
                    mime_type: mime_type.to_string(),
                    data: data.to_string(),
                })
            }
            _ => None,
        })
        .collect()
}

/// Makes a result safe to persist and send: structured parts must be JSON.
fn json_safe(name: &str, result: ToolResult) -> ToolResult {
    match &result.structured {
        ROption::RSome(s) if serde_json::from_str::<Value>(s).is_err() => {
            ToolResult::error(format!("tool `{name}` returned a result that is not JSON"))
        }
        _ => result,
    }
}

pub(super) enum Gate {
    Run,
    Denied { reason: String, by: String },
}

impl Session {
    /// Runs one tool call through the pipeline and records it.
    pub(crate) async fn run_tool(
        self: &Arc<Self>,
        call: &ModelToolCall,
        cancel: &CancellationToken,
    ) {
        let view = self.view();
        let bus = &view.bus;
        // Materialize once: a string that holds JSON is the JSON it holds;
        // the tool is handed that text as the model wrote it (a parse error
        // points where the model's text has it, as Codex's do: C207-stdin).
        let arguments = crate::model::arguments_value(&call.arguments);
        let text = match &call.arguments {
            Value::String(s) if !arguments.is_string() => s.clone(),
            _ => arguments.to_string(),
        };
        // Back-pressure: a reader far behind holds the turn here.
        unless_cancelled(cancel, self.feed.room()).await;
        // A directory deleted under the session stays the session's until a
        // shell tool moves it (Claude Code: hooks cannot start there, and
        // `Bash` recovers, S236-deleted-under-session*).
        self.append(SessionEvent::ToolCall {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: arguments.clone(),
        });
        let sealed = RArc::new(ToolCall {
            session: self.session_ref(),
            call_id: RString::from(call.id.as_str()),
            name: RString::from(call.name.as_str()),
            arguments: RString::from(text),
            parent: self
                .parent_call
                .get()
                .map(|t| RString::from(t.as_str()))
                .into(),
        });

        self.written().await;
        // A file tool whose path a deny rule covers, or a `Read` of a
        // binary extension, is refused while its input is checked, before
        // any listener hears of it (Claude Code's order, vectors
        // `S31-read-deny-glob`, `S81-*`, `S120-binary`).
        let mut tool_ask = None;
        let early = match self.refusal_on_input(&sealed) {
            Some(refused) => Some(refused),
            // The tool's own input check (`input_check.rs`), and its own
            // permission question.
            None => {
                let (refused, ask) = self.input_check(&view, &sealed).await;
                tool_ask = ask;
                refused
            }
        };
        // Phase 1: the pre-execute waterfall.
        let terminal = default_terminal(SeamOutput::PreTool(PreToolDecision::allow()));
        let Traced {
            answer,
            trace,
            timed_out,
        } = if let Some(Gate::Denied { reason, .. }) = &early {
            Traced {
                answer: RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
                    reason: RString::from(reason.as_str()),
                })),
                trace: Vec::new(),
                timed_out: Vec::new(),
            }
        } else {
            let pre = bus.waterfall_traced(SeamInput::PreExecute(sealed.clone()), terminal);
            unless_cancelled(cancel, pre)
                .await
                .unwrap_or_else(|| Traced::failed(RString::from("the turn was cancelled")))
        };
        self.note_listener_failures("tools/pre-execute", &timed_out, true);
        let mut exec = sealed.clone();
        // An `ask` waits for the guards: nobody is asked to approve a call
        // a guard would deny anyway.
        let mut ask: Option<Option<String>> = None;
        let mut explicit_allow = false;
        let mut gate = match &answer {
            // A gate that failed or did not decide in time denies.
            RResult::RErr(e) => Gate::Denied {
                reason: format!("tools/pre-execute failed: {e}"),
                by: timed_out
                    .first()
                    .map_or_else(|| "error".into(), |f| f.plugin.to_string()),
            },
            RResult::ROk(SeamOutput::PreTool(PreToolDecision::Allow { updated_arguments })) => {
                let by = originator(&trace, answer.as_ref().unwrap_or(&SeamOutput::Observed));
                // A listener that answered `allow` itself (not the seam's
                // default passed along) allowed the call explicitly; so did
                // one that hands back the arguments it allows, unchanged
                // (the Claude bridge's hook `allow`): no rewrite then.
                explicit_allow = by.is_some();
                let by = by.unwrap_or_default();
                match updated_arguments.as_ref().into_option() {
                    None => Gate::Run,
                    Some(text)
                        if serde_json::from_str::<Value>(text).ok().as_ref()
                            == Some(&arguments) =>
                    {
                        explicit_allow = true;
                        Gate::Run
                    }
                    Some(text) => {
                        explicit_allow = true;
                        match serde_json::from_str::<Value>(text) {
                            Ok(args @ Value::Object(_)) => {
                                self.append(SessionEvent::ToolUpdated {
                                    call_id: call.id.clone(),
                                    arguments: args.clone(),
                                    plugin: by.clone(),
                                });
                                let mut rewritten = (*sealed).clone();
                                rewritten.arguments = RString::from(args.to_string());
                                exec = RArc::new(rewritten);
                                Gate::Run
                            }
                            _ => Gate::Denied {
                                reason: format!(
                                    "plugin `{by}` rewrote the arguments into something that is not a JSON object"
                                ),
                                by,
                            },
                        }
                    }
                }
            }
            RResult::ROk(out @ SeamOutput::PreTool(PreToolDecision::Deny { reason })) => {
                Gate::Denied {
                    reason: reason.to_string(),
                    by: originator(&trace, out).unwrap_or_default(),
                }
            }
            RResult::ROk(SeamOutput::PreTool(PreToolDecision::Ask { reason })) => {
                ask = Some(reason.as_ref().map(|r| r.to_string()).into_option());
                Gate::Run
            }
            RResult::ROk(other) => Gate::Denied {
                reason: format!("tools/pre-execute answered with {other:?}"),
                by: "error".into(),
            },
        };

        if let Some(refused) = early {
            gate = refused;
        }

        // Phase 2: guards, which can only deny; then the session's
        // permission mode and rules; then an `ask` is approved or not.
        if let Gate::Run = gate
            && let GuardVerdict::Deny { plugin, reason } = bus.check_guards(&exec).await
        {
            gate = Gate::Denied {
                reason,
                by: plugin.to_string(),
            };
        }
        if let Gate::Run = gate {
            let stance = match ask {
                Some(reason) => HookStance::Ask(reason),
                None if explicit_allow => HookStance::Allow,
                None => HookStance::Silent,
            };
            let hook_reason = match &stance {
                HookStance::Ask(reason) => Some(reason.clone()),
                _ => None,
            };
            match self.permission_verdict(&exec, &stance, tool_ask.as_deref()) {
                Verdict::Allow => {}
                Verdict::Deny { message, by } => {
                    gate = Gate::Denied {
                        reason: message,
                        by: format!("permissions ({by})"),
                    };
                }
                Verdict::Ask { message, rule } => {
                    // A tool-decided ask offers Claude Code's suggestions.
                    let offered = if hook_reason.is_none() && rule.is_none() {
                        let args = serde_json::from_str(&exec.arguments).unwrap_or(Value::Null);
                        suggestions(&exec.name, &args)
                    } else {
                        json!([])
                    };
                    // The editor is shown the hook's own reason (none if it
                    // gave none), else why the permissions ask.
                    let shown = hook_reason.unwrap_or_else(|| Some(message.clone()));
                    let exec_ref = &mut exec;
                    let view_ref = &view;
                    let asked = async move {
                        let requested = self
                            .permission_request(view_ref, exec_ref, &message, &offered)
                            .await;
                        match requested {
                            Asked::Decided(decided, rewritten) => {
                                if let Some(r) = rewritten {
                                    *exec_ref = r;
                                }
                                decided
                            }
                            Asked::Ask => {
                                self.ask_approval(exec_ref, shown.as_deref(), &message)
                                    .await
                            }
                        }
                    };
                    gate = unless_cancelled(cancel, asked)
                        .await
                        .unwrap_or_else(|| Gate::Denied {
                            reason: "the approval request was cancelled".into(),
                            by: "approval".into(),
                        });
                }
            }
        }

        // Phase 3: around-dispatch waterfall and the core dispatch.
        let result = match &gate {
            Gate::Denied { reason, by } => {
                self.append(SessionEvent::ToolDenied {
                    call_id: call.id.clone(),
                    reason: reason.clone(),
                    by: by.clone(),
                });
                ToolResult::error(reason.clone())
            }
            Gate::Run => {
                let input = ExecuteInput {
                    call: exec.clone(),
                    signal: TokenSignal::boxed(cancel.child_token()),
                };
                let run = bus.waterfall_traced(
                    SeamInput::Execute(RArc::new(input)),
                    dispatch(self.tools(&view)),
                );
                let answer = unless_cancelled(cancel, run).await.map(|traced| {
                    self.note_listener_failures("tools/execute", &traced.timed_out, true);
                    traced.answer
                });
                match answer {
                    None => ToolResult::error("the tool call was cancelled"),
                    Some(RResult::ROk(SeamOutput::Execute(r))) => json_safe(&call.name, r),
                    Some(RResult::ROk(other)) => {
                        ToolResult::error(format!("tools/execute answered with {other:?}"))
                    }
                    Some(RResult::RErr(e)) => {
                        ToolResult::error(format!("tools/execute failed: {e}"))
                    }
                }
            }
        };

        self.written().await;
        // A call that moved the session (`cd`): post-execute and everything
        // after it already see the new directory, as in Claude Code.
        let moved = self.take_cwd_move();
        // (A quiet move, away from a deleted folder, is no announced one.)
        if moved.is_some() || std::path::Path::new(exec.session.cwd.as_str()) != self.current_cwd()
        {
            let mut now = (*exec).clone();
            now.session = self.session_ref();
            exec = RArc::new(now);
        }
        // Phase 4: post-execute, from a protected snapshot plus the decision.
        let denied = matches!(gate, Gate::Denied { .. });
        let snapshot = PostExecuteInput {
            call: exec.clone(),
            result: result.clone(),
            denied,
        };
        let terminal = default_terminal(SeamOutput::PostTool(PostToolDecision::accept()));
        let post = bus.waterfall_traced(SeamInput::PostExecute(RArc::new(snapshot)), terminal);
        let Traced {
            answer,
            trace,
            timed_out,
        } = unless_cancelled(cancel, post)
            .await
            .unwrap_or_else(|| Traced::answered(SeamOutput::PostTool(PostToolDecision::accept())));
        self.note_listener_failures("tools/post-execute", &timed_out, true);
        if let Some((old, new)) = moved {
            self.cwd_changed(&view, &old, &new).await;
        }
        let mut delivered = result.clone();
        let mut later: Vec<(String, String)> = Vec::new();
        match &answer {
            RResult::ROk(out @ SeamOutput::PostTool(decision)) => {
                // Each piece as its author added it (stamped by the chain).
                later = authored(decision.context());
                if let Some(content) = decision.replaced_content() {
                    delivered.content = content.clone();
                }
                if let Some(feedback) = decision.feedback() {
                    let by = originator(&trace, out).unwrap_or_default();
                    later.insert(0, (by, feedback.to_string()));
                }
            }
            RResult::ROk(other) => {
                delivered =
                    ToolResult::error(format!("tools/post-execute answered with {other:?}"));
            }
            RResult::RErr(e) => {
                delivered = ToolResult::error(format!(
                    "{}\n\ntools/post-execute failed: {e}",
                    result.text_content()
                ));
            }
        }

        self.written().await;
        // Phase 5: observers see exactly what the model and the log get.
        let final_input = PostExecuteInput {
            call: exec.clone(),
            result: delivered.clone(),
            denied,
        };
        let failures = bus
            .notify(SeamInput::ToolResult(RArc::new(final_input)))
            .await;
        let structured = delivered
            .structured
            .as_ref()
            .into_option()
            .and_then(|s| serde_json::from_str::<Value>(s).ok());
        // A skill's `allowed-tools` hold for the calls after it in this
        // turn, as Claude Code's `Skill` result adds them (its
        // `tool_response.allowedTools`).
        if call.name == "Skill" && !denied && !delivered.is_error {
            let granted: Vec<String> = structured
                .as_ref()
                .and_then(|s| s["allowedTools"].as_array())
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            if !granted.is_empty() {
                self.allow_for_turn(&granted);
            }
        }
        self.append(SessionEvent::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: delivered.text_content(),
            is_error: delivered.is_error,
            structured,
            images: images_of(&delivered),
        });
        self.note_listener_failures("tools/result", &failures, true);
        let mut state = self.state();
        for (plugin, text) in later {
            let role = self.core.context_role(&plugin);
            state
                .buffered
                .push(Buffered::Context { plugin, text, role });
        }
    }

    /// `agent/cwd-changed`, once per move, after the post-execute phase of
    /// the call that moved the session.
    async fn cwd_changed(
        &self,
        view: &crate::plugins::HostView,
        old: &std::path::Path,
        new: &std::path::Path,
    ) {
        let input = CwdChangedInput {
            session: self.session_ref(),
            old_cwd: RString::from(old.to_string_lossy().as_ref()),
            new_cwd: RString::from(new.to_string_lossy().as_ref()),
        };
        let failures = view
            .bus
            .notify(SeamInput::CwdChanged(RArc::new(input)))
            .await;
        self.note_listener_failures("agent/cwd-changed", &failures, true);
    }
}
