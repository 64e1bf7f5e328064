//! Stop (`agent/turn-continuation`).
//!
//! It fires only when the loop would end the turn on its own. A block
//! (`decision: "block"` with a non-empty reason, or exit 2 with stderr)
//! continues the turn; the model reads the reason as Codex wraps it,
//! `<hook_prompt hook_run_id="stop:<n>:<file>">reason</hook_prompt>`
//! (vectors `C5-block-once`, `C5-exit2-once`), and the next Stop payload has
//! `stop_hook_active: true`. Codex sets no cap (`C5-block-4-times`). A
//! reason-less block is invalid and ignored (`C5-block-no-reason`);
//! `continue: false` ends the turn. Several blockers: the first in config
//! order gives the text, capped as Codex caps it ([`crate::spill`]).

use std::future::Future;

use dsh_hook_protocol::point::HookRun;
use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::{ContinuationDecision, ContinuationInput, SessionRef};
use serde_json::Value;

use super::{invalid, read, turn_head};
use crate::CodexBridge;
use crate::output::{StopOutput, decode, trimmed};

/// The event name.
pub const EVENT: &str = "Stop";

/// The stdin payload.
pub fn payload(input: &ContinuationInput, model: &str) -> Value {
    let mut m = turn_head(&input.session, &input.session.cwd, EVENT, model);
    m.insert(
        "stop_hook_active".into(),
        (input.consecutive_continues > 0).into(),
    );
    m.insert(
        "last_assistant_message".into(),
        input.last_assistant_message.as_str().into(),
    );
    Value::Object(m)
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The continuation prompt Codex makes of a Stop hook's reason.
pub fn hook_prompt(run_id: &str, reason: &str) -> String {
    format!(
        "<hook_prompt hook_run_id=\"{}\">{}</hook_prompt>",
        escape_xml(run_id).replace('"', "&quot;"),
        escape_xml(reason)
    )
}

impl CodexBridge {
    /// Runs the Stop hooks when the turn is about to end.
    pub async fn on_stop<F, Fut>(
        &self,
        input: &ContinuationInput,
        next: F,
    ) -> Result<ContinuationDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<ContinuationDecision, String>>,
    {
        if !self.has_hooks(&input.session, EVENT) || input.default != ContinuationDecision::Stop {
            return next().await;
        }
        let mut runs = self
            .fire(EVENT, &input.session, None, &payload(input, &self.model))
            .await;
        let read = self.read_stop_runs(&input.session, EVENT, &mut runs);
        self.record(&input.session, EVENT, &runs);
        if read.halted {
            return Ok(ContinuationDecision::Stop);
        }
        // Every block is a `<hook_prompt>` of its own, in config order
        // (vector `C50-two-stop-blocks`: an `input_text` item each of one
        // user message): the steering's parts.
        if !read.continuation.is_empty() {
            return Ok(ContinuationDecision::steer(read.continuation));
        }
        next().await
    }

    /// Reads Stop-shaped runs (Stop, SubagentStop) in config order: each
    /// block (exit 2 with stderr, or `decision` with a non-empty reason) as
    /// its `<hook_prompt>`, capped; a reason-less `decision` is invalid;
    /// `halted` when a hook said `continue: false` (what the caller makes
    /// of it is its own: SubagentStop ignores it, C182-*).
    pub(super) fn read_stop_runs(
        &self,
        session: &SessionRef,
        event: &str,
        runs: &mut [HookRun],
    ) -> StopReading {
        let mut reading_all = StopReading::default();
        let resolution = self.hooks_for(session);
        for run in runs {
            let reading = read(run);
            let run_id = resolution
                .hooks
                .get(run.index)
                .map(|h| h.run_id())
                .unwrap_or_default();
            if let Some(reason) = reading.block {
                let reason = self.cap(&session.session_id, reason);
                reading_all.continuation.push(hook_prompt(&run_id, &reason));
                continue;
            }
            let Some(json) = reading.json else { continue };
            let out = match decode::<StopOutput>(&json) {
                Ok(out) => out,
                Err(e) => {
                    invalid(run, e);
                    continue;
                }
            };
            if !out.proceed {
                reading_all.halted = true;
            }
            if out.decision.is_some() {
                match trimmed(out.reason.as_deref()) {
                    Some(reason) => {
                        run.outcome = Outcome::Blocked;
                        let reason = self.cap(&session.session_id, reason);
                        reading_all.continuation.push(hook_prompt(&run_id, &reason));
                    }
                    None => invalid(
                        run,
                        format!("{event} hook returned decision:block without a non-empty reason"),
                    ),
                }
            }
        }
        reading_all
    }
}

/// What Stop-shaped runs said ([`CodexBridge::read_stop_runs`]).
#[derive(Default)]
pub(super) struct StopReading {
    /// Each block's `<hook_prompt>`, in config order.
    pub(super) continuation: Vec<String>,
    /// A hook said `continue: false`.
    pub(super) halted: bool,
}
