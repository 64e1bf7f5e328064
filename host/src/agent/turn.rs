//! One turn: the loop's three load-bearing decisions (ARCHITECTURE.md §4).
//!
//! 1. The turn opens first; each drained prompt goes through
//!    `agent/prompt-submit`; a veto is recorded as `prompt/blocked`, and a
//!    turn whose every prompt was blocked ends `rejected` with zero steps.
//! 2. Context added while a step runs its tools is buffered and written only
//!    after every `tool/result` of that step.
//! 3. A continue forced by `agent/turn-continuation` is recorded as
//!    `steering/message` at the top of the next step of the same turn.

use std::future::Future;
use std::sync::Arc;

use abi_stable::std_types::{RArc, RResult, RString};
use dsh_plugin_api::{
    AuthoredContext, ContinuationDecision, ContinuationInput, PromptDecision, PromptSubmitInput,
    SeamInput, SeamOutput, SessionRef, TurnEndInput,
};
use futures::FutureExt as _;
use tokio_util::sync::CancellationToken;

use super::compact::{NotCompacted, Trigger};
use super::session::{Phase, Prompt, Session, TurnOutcome, content_text, new_id, rvec};
use crate::model::request_text::{RequestText, ToolText};
use crate::model::{MODEL_SERVICE, ModelError, ModelErrorKind, ModelReply, StopReason};
use crate::seams::{ListenerFailure, TerminalFn, TraceEntry, Traced};
use crate::session::{EventSource, SessionEvent, TurnEndReason, TurnKind, history};
use dsh_plugin_api::services::model::METHOD_COMPLETE;

type Ending = (TurnEndReason, Option<String>);

/// Runs `fut` unless the turn is cancelled first; dropping it then kills
/// whatever it started (hook and tool processes die with their futures).
pub(crate) async fn unless_cancelled<T>(
    cancel: &CancellationToken,
    fut: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        value = fut => Some(value),
    }
}

fn cancelled() -> Ending {
    (TurnEndReason::Aborted, Some("cancelled".into()))
}

/// How a turn a plugin halted ends, when one did.
fn halted(halt: &Option<(String, String)>) -> Option<Ending> {
    halt.as_ref().map(|(plugin, reason)| {
        (
            TurnEndReason::Completed,
            Some(format!("halted by plugin `{plugin}`: {reason}")),
        )
    })
}

/// The plugin whose answer became the chain's answer: the innermost
/// listener that returned it while its `next` (if called) did not.
pub(crate) fn originator(trace: &[TraceEntry], answer: &SeamOutput) -> Option<String> {
    trace.iter().enumerate().rev().find_map(|(pos, e)| {
        if e.plugin.is_empty() || &e.output != answer {
            return None;
        }
        let next_same = trace
            .get(pos + 1)
            .is_some_and(|n| n.index == e.index + 1 && &n.output == answer);
        (!next_same).then(|| e.plugin.to_string())
    })
}

/// The `(plugin, text)` of every piece of added context a plugin added, in
/// the decision's order. An empty text is kept: Codex sends a hook's empty
/// `additionalContext` as an empty developer message (vector
/// `C201-ups-context-empty`); a bridge that drops empty texts drops them
/// itself.
pub(crate) fn authored(pieces: Vec<AuthoredContext>) -> Vec<(String, String)> {
    pieces
        .into_iter()
        .filter(|p| !p.plugin.is_empty())
        .map(|p| (p.plugin.into_string(), p.text.into_string()))
        .collect()
}

/// A terminal that answers with a fixed default.
pub(crate) fn default_terminal(answer: SeamOutput) -> Arc<dyn crate::seams::Terminal> {
    Arc::new(TerminalFn(move |_input| {
        let answer = answer.clone();
        async move { RResult::ROk(answer) }.boxed()
    }))
}

impl Session {
    /// Records each failed listener on `seam` (one the host cut off for going
    /// over its time limit, or a notification listener that failed) as
    /// `listener/failed`: now, or with `after_step` once every tool result
    /// of the step is in (call/result adjacency).
    pub(crate) fn note_listener_failures(
        &self,
        seam: &str,
        cut: &[ListenerFailure],
        after_step: bool,
    ) {
        for f in cut {
            tracing::warn!(session = %self.id, plugin = %f.plugin, "{seam} listener failed: {}", f.message);
            let record = SessionEvent::listener_failed(seam, &f.plugin, &f.message);
            if after_step {
                self.state()
                    .buffered
                    .push(super::session::Buffered::Record(record));
            } else {
                self.append(record);
            }
        }
    }

    /// Runs a turn for `prompt`. Calls on one session are serialized by
    /// the session itself: each waits for the turn before it to end, then
    /// runs its own prompt (with anything else queued meanwhile) in a turn
    /// of its own.
    pub async fn prompt(self: &Arc<Self>, prompt: Prompt) -> TurnOutcome {
        let waiting = Waiting::new(self);
        let one_at_a_time = self.turn_lock.lock().await;
        self.enqueue(prompt);
        self.run_locked(one_at_a_time, waiting).await
    }

    /// Runs one turn over every queued prompt (after the running turn, if
    /// any, has ended).
    pub async fn run_turn(self: &Arc<Self>) -> TurnOutcome {
        let waiting = Waiting::new(self);
        let one_at_a_time = self.turn_lock.lock().await;
        self.run_locked(one_at_a_time, waiting).await
    }

    async fn run_locked(
        self: &Arc<Self>,
        _one_at_a_time: tokio::sync::MutexGuard<'_, ()>,
        waiting: Waiting<'_>,
    ) -> TurnOutcome {
        let first = self.log().events().len();
        let cancel = CancellationToken::new();
        let turn_id = {
            let mut state = self.state();
            let turn_id = state.next_turn_id.take().unwrap_or_else(|| new_id("turn"));
            waiting.started(&mut state);
            if std::mem::take(&mut state.cancel_next) {
                cancel.cancel();
            }
            state.phase = Phase::InTurn;
            state.turn_id = turn_id.clone();
            state.prompt_id = new_id("prompt");
            state.halt = None;
            state.cancel = cancel.clone();
            state.view = Some(self.core.view());
            turn_id
        };
        let kind = if self.queued_compaction().is_some() {
            TurnKind::Compact
        } else {
            TurnKind::Prompt
        };
        self.append(self.turn_start(&turn_id, kind));
        let span =
            tracing::info_span!(parent: &self.span, "turn", session = %self.id, turn = %turn_id);
        let (mut reason, mut message) =
            tracing::Instrument::instrument(self.turn_body(&cancel), span).await;
        // What plugins opened as turns while this one ran and no request
        // since carried: turns of their own, after it.
        self.open_held_turns();
        self.flush_buffered();
        // A report of the context no compaction answered is kept, so the
        // session loaded in another process compacts as this one would.
        let unsaved = {
            let mut state = self.state();
            let unsaved = state.usage.filter(|_| state.usage_unsaved);
            state.usage_unsaved = false;
            unsaved
        };
        if let Some((used, size)) = unsaved {
            self.append(SessionEvent::ContextUsage { used, size });
        }
        self.end_turn_rules();
        self.append(SessionEvent::turn_end(&turn_id, reason, message.as_deref()));
        // The turn end's fsync, off the runtime's workers: durable before
        // any plugin hears the turn ended, and once the turn returns. A turn
        // the store could not keep fails with the store's error.
        if let Err(e) = self.sync().await {
            reason = TurnEndReason::Error;
            message = Some(format!("the turn's events were not stored: {e}"));
        }
        let ended = self.session_ref();
        let view = {
            let mut state = self.state();
            state.phase = Phase::Idle;
            state.turn_id.clear();
            state.prompt_id.clear();
            state.halt = None;
            state.view.take()
        };
        self.turn_ended(ended, reason, message.as_deref(), view)
            .await;
        self.flush_one_shot();
        let events = self.log().events()[first..].to_vec();
        TurnOutcome {
            turn_id,
            reason,
            message,
            events,
        }
    }

    /// `agent/turn-end`, through the plugins the turn ran with. The session
    /// is idle by then, so context a listener adds opens its own one-shot
    /// turn.
    async fn turn_ended(
        &self,
        session: SessionRef,
        reason: TurnEndReason,
        message: Option<&str>,
        view: Option<crate::plugins::HostView>,
    ) {
        let view = view.unwrap_or_else(|| self.core.view());
        let input = TurnEndInput {
            session,
            reason: RString::from(reason.as_str()),
            message: message.map(RString::from).into(),
        };
        for f in view.bus.notify(SeamInput::TurnEnd(RArc::new(input))).await {
            tracing::warn!(plugin = %f.plugin, "agent/turn-end listener failed: {}", f.message);
        }
    }

    async fn turn_body(self: &Arc<Self>, cancel: &CancellationToken) -> Ending {
        let drained: Vec<Prompt> = self.state().inbox.drain(..).collect();
        if drained.is_empty() {
            return (
                TurnEndReason::Error,
                Some("there was no prompt to run".into()),
            );
        }
        let start_halt = self.state().start_halt.take();
        if let Some((plugin, reason)) = start_halt {
            // Halted before it began: no prompt is submitted, none reaches
            // the model; the log keeps them as blocked by that plugin.
            for prompt in &drained {
                self.append(SessionEvent::PromptBlocked {
                    content: content_text(&prompt.content),
                    source: EventSource::from(&prompt.source),
                    reason: reason.clone(),
                    plugin: Some(plugin.clone()),
                });
            }
            return (TurnEndReason::Rejected, Some(reason));
        }
        // `/compact [instructions]` alone: the turn compacts the history.
        if let [prompt] = drained.as_slice()
            && prompt.commands
            && let Some(custom) = super::compact::command(&content_text(&prompt.content))
        {
            return self.compaction_turn(prompt, custom, cancel).await;
        }
        // The context filled up (reported after a turn that did not end
        // well): compacted first, then the prompts.
        if let Some(ending) = self.auto_compact(cancel).await {
            return ending;
        }
        // A session-start held back for this compaction runs now if the
        // compaction did not run it (it was blocked, failed or not due).
        if self.state().halt.is_none() {
            self.pending_session_start().await;
        }
        if let Some(ending) = halted(&self.state().halt) {
            return ending;
        }
        // A Codex-shaped subagent hears of its start inside its first
        // turn (its hooks see the child's turn id), and what a listener
        // adds there precedes its prompt, as Codex's SubagentStart context
        // does (vector `C181-additional-context`).
        let start = self
            .subagent_start
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(info) = start {
            for f in self
                .view()
                .bus
                .notify(SeamInput::SubagentStart(RArc::new(info)))
                .await
            {
                tracing::warn!(plugin = %f.plugin, "subagent/start listener failed: {}", f.message);
            }
            self.flush_buffered();
        }
        let mut accepted = 0;
        let mut vetoes = Vec::new();
        for prompt in &drained {
            if !prompt.submit {
                self.append_opened(prompt);
                accepted += 1;
                continue;
            }
            match unless_cancelled(cancel, self.submit_prompt(prompt)).await {
                None => return cancelled(),
                Some(Ok(None)) => accepted += 1,
                Some(Ok(Some(reason))) => vetoes.push(reason),
                Some(Err(e)) => return (TurnEndReason::Error, Some(e)),
            }
        }
        self.flush_buffered();
        if accepted == 0 {
            return (TurnEndReason::Rejected, Some(vetoes.join("\n")));
        }
        let ending = self.steps(cancel).await;
        // The context filled up: the turn ends with the history compacted,
        // so the next one (in this process or another) starts from the
        // summary.
        if ending.0 == TurnEndReason::Completed
            && !self.compacts_like_codex()
            && let Some(cancelled) = self.auto_compact(cancel).await
        {
            return cancelled;
        }
        ending
    }

    /// An automatic compaction when the provider last reported the context
    /// window full enough ([`crate::config::CompactionSettings`]); one that
    /// does not happen (blocked, failed) leaves the turn as it was. `Some`
    /// only when the turn was cancelled meanwhile.
    async fn auto_compact(self: &Arc<Self>, cancel: &CancellationToken) -> Option<Ending> {
        if !self.auto_compaction_due() {
            return None;
        }
        match self.compact(Trigger::Auto, None, cancel).await {
            Ok(()) => None,
            Err(NotCompacted::Cancelled) => Some(cancelled()),
            Err(e) => {
                tracing::warn!(session = %self.id, "automatic compaction did not happen: {e:?}");
                // Not asked again until the provider reports anew.
                self.state().usage = None;
                None
            }
        }
    }

    /// The instructions of the one queued prompt when it is `/compact`.
    fn queued_compaction(&self) -> Option<Option<String>> {
        let state = self.state();
        match state.inbox.iter().collect::<Vec<_>>().as_slice() {
            [prompt] if prompt.commands => super::compact::command(&content_text(&prompt.content)),
            _ => None,
        }
    }

    /// A `/compact` turn: no prompt reaches the model; a blocked
    /// compaction keeps the prompt as `prompt/blocked` and ends `rejected`;
    /// one with nothing to summarize ends `completed` with
    /// `Not enough messages to compact.` as its message.
    async fn compaction_turn(
        self: &Arc<Self>,
        prompt: &Prompt,
        custom: Option<String>,
        cancel: &CancellationToken,
    ) -> Ending {
        let result = self.compact(Trigger::Manual, custom.clone(), cancel).await;
        self.log_command_output(custom.as_deref(), &result);
        match result {
            Ok(()) => (TurnEndReason::Completed, None),
            Err(NotCompacted::Cancelled) => cancelled(),
            Err(NotCompacted::Blocked(reason, plugin)) => {
                self.append(SessionEvent::PromptBlocked {
                    content: content_text(&prompt.content),
                    source: EventSource::from(&prompt.source),
                    reason: reason.clone(),
                    plugin,
                });
                (TurnEndReason::Rejected, Some(reason))
            }
            // Claude Code's run succeeds with this text (`S110-one-exchange`:
            // `subtype: success`, `is_error: false`): nothing went wrong.
            Err(NotCompacted::Failed(e)) if e == super::compact::NOTHING_TO_COMPACT => {
                (TurnEndReason::Completed, Some(e))
            }
            Err(NotCompacted::Failed(e)) => (TurnEndReason::Error, Some(e)),
        }
    }

    /// A prompt nobody submitted (a turn a plugin opened): logged as it
    /// is, with its plugin as the source.
    fn append_opened(&self, prompt: &Prompt) {
        self.append(SessionEvent::UserMessage {
            content: content_text(&prompt.content),
            source: EventSource::from(&prompt.source),
            original_content: None,
            parts: Vec::new(),
        });
    }

    /// Runs prompt-submit for one prompt; `Some(reason)` when vetoed.
    async fn submit_prompt(self: &Arc<Self>, prompt: &Prompt) -> Result<Option<String>, String> {
        self.written().await;
        let original = content_text(&prompt.content);
        let source = EventSource::from(&prompt.source);
        let input = PromptSubmitInput {
            session: self.session_ref(),
            content: rvec(&prompt.content),
            source: prompt.source.clone().into(),
        };
        let terminal = default_terminal(SeamOutput::Prompt(PromptDecision::allow()));
        let buffered_before = self.buffered_len();
        let Traced {
            answer,
            trace,
            timed_out,
        } = self
            .view()
            .bus
            .waterfall_traced(SeamInput::PromptSubmit(RArc::new(input)), terminal)
            .await;
        // A blocked prompt leaves nothing its deciders injected meanwhile.
        let drop_injected = || {
            let deciders: Vec<&str> = trace.iter().map(|e| &*e.plugin).collect();
            self.drop_buffered_context(buffered_before, &deciders);
        };
        self.note_listener_failures("agent/prompt-submit", &timed_out, false);
        let answer = match (answer.into_result(), timed_out.first()) {
            (Ok(answer), _) => answer,
            // A prompt gate that did not decide in time blocks the prompt.
            (Err(e), Some(cut)) => {
                drop_injected();
                let reason = format!("agent/prompt-submit failed: {e}");
                self.append(SessionEvent::PromptBlocked {
                    content: original,
                    source,
                    reason: reason.clone(),
                    plugin: Some(cut.plugin.to_string()),
                });
                return Ok(Some(reason));
            }
            (Err(e), None) => return Err(format!("agent/prompt-submit failed: {e}")),
        };
        match &answer {
            SeamOutput::Prompt(
                allowed @ (PromptDecision::Allow { content, .. }
                | PromptDecision::AllowAuthored { content, .. }),
            ) => {
                let rewritten = content.as_ref().map(|c| content_text(c)).into_option();
                // A rewrite into several text blocks: one message with a
                // part each (a Claude project command's, S185).
                let parts = content
                    .as_ref()
                    .map(|c| text_parts(c))
                    .into_option()
                    .filter(|p| p.len() > 1)
                    .unwrap_or_default();
                let text = rewritten.clone().unwrap_or_else(|| original.clone());
                let original = rewritten.is_some().then_some(original);
                self.append(SessionEvent::UserMessage {
                    content: text,
                    source,
                    original_content: original,
                    parts,
                });
                // Each piece as its author added it (stamped by the chain).
                for (plugin, text) in authored(allowed.context()) {
                    let role = self.core.context_role(&plugin);
                    self.append(SessionEvent::context_as(text, plugin, role));
                }
                // What a plugin injected while deciding (Claude's
                // UserPromptSubmit context) follows this prompt.
                self.flush_buffered();
                Ok(None)
            }
            SeamOutput::Prompt(PromptDecision::Block { reason }) => {
                drop_injected();
                let by = originator(&trace, &answer);
                self.append(SessionEvent::PromptBlocked {
                    content: original,
                    source,
                    reason: reason.to_string(),
                    plugin: by,
                });
                Ok(Some(reason.to_string()))
            }
            other => Err(format!("agent/prompt-submit answered with {other:?}")),
        }
    }

    async fn steps(self: &Arc<Self>, cancel: &CancellationToken) -> Ending {
        let mut steering: Option<(Option<String>, Vec<String>)> = None;
        let mut consecutive = 0u32;
        let mut step = 0u32;
        loop {
            step += 1;
            if step > self.max_steps {
                return (
                    TurnEndReason::Error,
                    Some(format!(
                        "the turn reached its limit of {} steps",
                        self.max_steps
                    )),
                );
            }
            // Back-pressure: a reader far behind holds the turn here.
            unless_cancelled(cancel, self.feed.room()).await;
            self.append(SessionEvent::StepStart { step });
            let step_span = tracing::trace_span!("step", session = %self.id, step);
            if let Some((plugin, parts)) = steering.take() {
                // Several parts: one message with a text part each (plugin
                // API 1.6); `content` holds them joined for older readers.
                let content = parts.join(dsh_plugin_api::STEERING_PART_SEPARATOR);
                self.append(SessionEvent::SteeringMessage {
                    content,
                    source: plugin.map_or(EventSource::User, EventSource::plugin),
                    parts: if parts.len() > 1 { parts } else { Vec::new() },
                });
            }
            self.model_request_seam(step).await;
            let reply = tokio::select! {
                _ = cancel.cancelled() => Err(None),
                reply = tracing::Instrument::instrument(
                    self.request_model(),
                    tracing::trace_span!(parent: &step_span, "model.request", session = %self.id, step),
                ) => reply.map_err(Some),
            };
            let mut reply = match reply {
                Ok(reply) => reply,
                Err(e) => {
                    self.append(SessionEvent::StepEnd { step });
                    return match e {
                        None => cancelled(),
                        Some(e) => (TurnEndReason::Error, Some(e)),
                    };
                }
            };
            for call in &mut reply.tool_calls {
                if call.id.is_empty() {
                    call.id = new_id("call");
                }
            }
            {
                let mut state = self.state();
                state.last_model = reply.model.take();
                state.last_usage = reply.usage.take();
            }
            self.append(SessionEvent::AssistantMessage {
                content: reply.text.clone(),
                tool_calls: crate::model::with_argument_values(&reply.tool_calls),
            });
            for call in &reply.tool_calls {
                let span = tracing::trace_span!(parent: &step_span, "tool.call", session = %self.id, call_id = %call.id, tool = %call.name);
                tracing::Instrument::instrument(self.run_tool(call, cancel), span).await;
            }
            // Decision 2: context from the step's tools goes after every result.
            self.flush_buffered();
            self.append(SessionEvent::StepEnd { step });
            if cancel.is_cancelled() {
                return cancelled();
            }
            if let Some(ending) = halted(&self.state().halt) {
                return ending;
            }
            // A Codex sub-agent takes a message sent to it while it ran
            // here, after the step's tool calls, in this turn (C185d).
            if !reply.tool_calls.is_empty()
                && self
                    .joins_running_turn
                    .load(std::sync::atomic::Ordering::SeqCst)
            {
                let queued: Vec<Prompt> = self.state().inbox.drain(..).collect();
                for prompt in &queued {
                    match unless_cancelled(cancel, self.submit_prompt(prompt)).await {
                        None => return cancelled(),
                        Some(Err(e)) => return (TurnEndReason::Error, Some(e)),
                        Some(Ok(_)) => {}
                    }
                }
                self.flush_buffered();
            }
            // Codex compacts before it asks the model again after a tool
            // step (`C90-mid-turn`); a listener may halt the turn there.
            if !reply.tool_calls.is_empty() && self.compacts_like_codex() {
                if let Some(cancelled) = self.auto_compact(cancel).await {
                    return cancelled;
                }
                if let Some(ending) = halted(&self.state().halt) {
                    return ending;
                }
            }
            if reply.tool_calls.is_empty() && reply.stop_reason == StopReason::MaxTokens {
                return (TurnEndReason::MaxTokens, None);
            }
            let default = if reply.tool_calls.is_empty() {
                ContinuationDecision::Stop
            } else {
                ContinuationDecision::Continue {
                    reason: None.into(),
                }
            };
            let (decision, by) = match self
                .continuation(step, default.clone(), consecutive, &reply.text)
                .await
            {
                Ok(d) => d,
                Err(e) => return (TurnEndReason::Error, Some(e)),
            };
            let Some(parts) = decision.steering_parts() else {
                return (TurnEndReason::Completed, None);
            };
            let forced = default == ContinuationDecision::Stop;
            consecutive = if forced { consecutive + 1 } else { 0 };
            // Decision 3: the reason is steering in this same turn; several
            // parts (several hooks' blocks) stay parts of one message.
            match (forced, parts.is_empty()) {
                (_, false) => steering = Some((by, parts)),
                (true, true) => steering = Some((by, vec!["Continue.".into()])),
                (false, true) => {}
            }
        }
    }

    async fn continuation(
        self: &Arc<Self>,
        step: u32,
        default: ContinuationDecision,
        consecutive: u32,
        last_text: &str,
    ) -> Result<(ContinuationDecision, Option<String>), String> {
        self.written().await;
        let input = ContinuationInput {
            session: self.session_ref(),
            step_count: step,
            default: default.clone().into(),
            consecutive_continues: consecutive,
            last_assistant_message: RString::from(last_text),
        };
        let terminal = default_terminal(SeamOutput::Continuation(default));
        let Traced {
            answer,
            trace,
            timed_out,
        } = self
            .view()
            .bus
            .waterfall_traced(SeamInput::TurnContinuation(RArc::new(input)), terminal)
            .await;
        // A continuation gate that did not decide in time stops the turn
        // (it ends `error`, naming the plugin): no further model request.
        self.note_listener_failures("agent/turn-continuation", &timed_out, false);
        let answer = answer
            .into_result()
            .map_err(|e| format!("agent/turn-continuation failed: {e}"))?;
        let by = originator(&trace, &answer);
        match answer {
            SeamOutput::Continuation(d) => Ok((d, by)),
            other => Err(format!("agent/turn-continuation answered with {other:?}")),
        }
    }

    /// `agent/model-request` (plugin API 1.4): before each model request
    /// (Codex's `PreModelRequest` hooks run here). Observe only.
    async fn model_request_seam(self: &Arc<Self>, step: u32) {
        let input = dsh_plugin_api::ModelRequestInput {
            session: self.session_ref(),
            request_id: RString::from(uuid::Uuid::new_v4().to_string()),
            step,
            attempt: 1,
        };
        let failures = self
            .view()
            .bus
            .notify(SeamInput::ModelRequest(RArc::new(input)))
            .await;
        self.note_listener_failures("agent/model-request", &failures, true);
    }

    async fn request_model(self: &Arc<Self>) -> Result<ModelReply, String> {
        let view = self.view();
        // A sub-agent is offered no sub-agent tools of its own, as Codex
        // offers its child no `multi_agent_v1` (vector `C180-spawn-wait`).
        let child = self.parent.is_some();
        // Each schema's text as the model reads it, made once per distinct
        // schema (`request_text`), not typed and written again per request.
        let tools: Vec<ToolText> = self
            .tools(&view)
            .iter_specs()
            .filter(|s| !(child && super::codex_subagent::TOOLS.contains(&s.name.as_str())))
            .map(|s| ToolText::new(&s.name, &s.description, &s.input_schema))
            .collect();
        let messages = history::derive(self.log().events());
        self.complete(messages, tools).await
    }

    /// One request to the mounted model.
    pub(crate) async fn complete(
        self: &Arc<Self>,
        messages: Vec<crate::model::ChatMessage>,
        tools: Vec<ToolText>,
    ) -> Result<ModelReply, String> {
        let view = self.view();
        let service = view.services.get(MODEL_SERVICE).ok_or_else(|| {
            "no model is mounted: add a model plugin (e.g. `name: model-scripted`) to the manifest".to_string()
        })?;
        // The text of a `ModelRequest` of these parts (`request_text`).
        let request = RequestText {
            session_id: &self.id,
            messages: &messages,
            tools: &tools,
        };
        let body = serde_json::to_string(&request).map_err(|e| e.to_string())?;
        drop((messages, tools));
        // The provider's error is the contract's typed `ModelError`; its
        // kind decides the wording, never the text it carries.
        let answer = service
            .call(RString::from(METHOD_COMPLETE), RString::from(body))
            .await
            .into_result()
            .map_err(|e| ModelError::from_wire(&e).to_string())?;
        serde_json::from_str(&answer)
            .map_err(|e| ModelError::new(ModelErrorKind::Protocol, e.to_string()).to_string())
    }
}

/// A turn asked for and not started yet: counted so that a cancel arriving
/// meanwhile is kept for it ([`Session::cancel`]); uncounted when it starts
/// or when the caller gives up waiting (the future is dropped).
struct Waiting<'a> {
    session: &'a Session,
    counted: bool,
}

impl<'a> Waiting<'a> {
    fn new(session: &'a Session) -> Self {
        session.state().waiting += 1;
        Waiting {
            session,
            counted: true,
        }
    }

    fn started(mut self, state: &mut super::session::SessionState) {
        state.waiting = state.waiting.saturating_sub(1);
        self.counted = false;
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.counted {
            let mut state = self.session.state();
            state.waiting = state.waiting.saturating_sub(1);
            if state.waiting == 0 && state.inbox.is_empty() {
                state.cancel_next = false;
            }
        }
    }
}

/// The text of each text block, in order.
fn text_parts(blocks: &[dsh_plugin_api::ContentBlock_NE]) -> Vec<String> {
    blocks
        .iter()
        .filter_map(|b| match b.as_enum() {
            Ok(dsh_plugin_api::ContentBlock::Text { text }) => Some(text.to_string()),
            _ => None,
        })
        .collect()
}
