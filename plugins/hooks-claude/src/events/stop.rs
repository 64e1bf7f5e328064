//! Stop (`agent/turn-continuation`): a hook may make the agent go on.
//!
//! It fires only when the loop would end the turn on its own. `decision:
//! "block"` or exit 2 continues the turn with the steering text `Stop hook
//! feedback:\n<reason>` (exit 2: `[command]: stderr`; vectors
//! `S6-decision-block`, `S6-exit2`; no reason: `Blocked by hook`,
//! `S175-stop-block-no-reason`); the next Stop payload then carries
//! `stop_hook_active: true`. Claude Code honours at most 8 blocks in a row
//! and overrides the 9th (vector `S6-block-always`). `continue: false` ends
//! the turn whatever else is said (`S6-continue-false`); plain stdout and
//! other exits are ignored. `hookSpecificOutput.additionalContext` also
//! continues the turn, the model reading `<system-reminder>\nStop hook
//! additional context: <text>\n</system-reminder>` (`S274-context`). A subagent's turn runs its SubagentStop hooks
//! here instead, read the same way (vectors `S171-*`, `S173-substop-block-always`;
//! [`crate::events::subagent`]).

use std::future::Future;

use dsh_hook_protocol::point::HookRun;
use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::{ContinuationDecision, ContinuationInput, SessionRef};
use serde_json::{Value, json};

use super::{completion, effort, head, permission_mode, prompt_id, quoted_stderr, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "Stop";

/// The feedback of a block that gives no reason.
pub const NO_REASON: &str = "Blocked by hook";

/// Consecutive blocks Claude Code honours before it lets the turn end.
pub const MAX_CONSECUTIVE_BLOCKS: u32 = 8;

/// The stdin payload.
pub fn payload(input: &ContinuationInput, effort_level: Option<&str>) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    permission_mode(&mut m, &input.session);
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert(
        "stop_hook_active".into(),
        (input.consecutive_continues > 0).into(),
    );
    m.insert(
        "last_assistant_message".into(),
        input.last_assistant_message.as_str().into(),
    );
    m.insert("background_tasks".into(), json!([]));
    m.insert("session_crons".into(), json!([]));
    Value::Object(m)
}

impl ClaudeBridge {
    /// Runs the Stop hooks when the turn is about to end (a subagent's
    /// turn: its SubagentStop hooks, [`ClaudeBridge::on_subagent_stopping`]).
    pub async fn on_stop<F, Fut>(
        &self,
        input: &ContinuationInput,
        next: F,
    ) -> Result<ContinuationDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<ContinuationDecision, String>>,
    {
        self.on_step_end(input).await;
        if input.default != ContinuationDecision::Stop {
            return next().await;
        }
        if super::is_subagent(&input.session) {
            return match self.on_subagent_stopping(input).await {
                Some(decision) => Ok(decision),
                None => next().await,
            };
        }
        if !self.has_hooks(&input.session, EVENT) {
            return next().await;
        }
        let mut payload = payload(input, self.effort.as_deref());
        // The session's background jobs still running (S260-left-running).
        let running = self
            .host
            .background_tasks(input.session.session_id.as_str())
            .await;
        if !running.is_empty() {
            payload["background_tasks"] = Value::Array(running);
        }
        let runs = self.fire(EVENT, &input.session, &[], &payload).await;
        match self.stop_decision(EVENT, &input.session, runs, input.consecutive_continues) {
            Some(decision) => Ok(decision),
            None => next().await,
        }
    }

    /// What the answers of `event`'s hooks (Stop, or a subagent's
    /// SubagentStop) make of a turn about to end, recording them on
    /// `session`: `Some(Stop)` for `continue: false`, a steering for a
    /// block (both events' feedback starts `Stop hook feedback:`, vectors
    /// `S6-*`, `S171-*`), `None` to let the rest of the chain decide.
    pub(crate) fn stop_decision(
        &self,
        event: &str,
        session: &SessionRef,
        mut runs: Vec<HookRun>,
        consecutive_continues: u32,
    ) -> Option<ContinuationDecision> {
        let mut blocks = 0;
        // The blocks' feedback and the hooks' context, in the order the
        // hooks finished.
        let mut steering = Vec::new();
        let mut halted = false;
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, event);
            if reading.blocked {
                blocks += 1;
                steering.push(feedback(&quoted_stderr(run)));
            } else if reading.decision() == Some("block") {
                run.outcome = Outcome::Blocked;
                // No reason: Claude Code's own words (vector
                // `S174-substop-block-no-reason`).
                let reason = reading.reason().filter(|r| !r.is_empty());
                blocks += 1;
                steering.push(feedback(reason.unwrap_or(NO_REASON)));
            }
            // Context continues the turn too, as its own steering part
            // (vector `S274-context`).
            if let Some(ctx) = reading.additional_context() {
                steering.push(format!(
                    "<system-reminder>\n{event} hook additional context: {ctx}\n</system-reminder>"
                ));
            }
            halted |= reading.stop().is_some();
        }
        let capped = consecutive_continues >= MAX_CONSECUTIVE_BLOCKS;
        if capped && blocks > 0 {
            for run in runs.iter_mut().filter(|r| r.outcome == Outcome::Blocked) {
                run.detail = Some(format!(
                    "block overridden: {MAX_CONSECUTIVE_BLOCKS} consecutive {event} blocks already honoured"
                ));
            }
        }
        self.record(session, event, &runs);
        if halted {
            return Some(ContinuationDecision::Stop);
        }
        if !steering.is_empty() && !capped {
            // Each block is its own text block of one user message, in the
            // order the hooks finished (vector `S53-two-stop-blocks`): the
            // steering's parts.
            return Some(ContinuationDecision::steer(super::text_blocks(steering)));
        }
        None
    }
}

/// A block's steering text (both events' start `Stop hook feedback:`).
fn feedback(reason: &str) -> String {
    format!("{EVENT} hook feedback:\n{reason}")
}
