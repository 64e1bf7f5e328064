//! PreCompact (`agent/compact`, plugin API 1.5) and PostCompact
//! (`agent/compacted`), as Codex 0.171.0 runs them around an automatic
//! compaction (recorded `C90-*`–`C92-*`,
//! `tools/recorder-scenarios/FINDINGS-ccompact.md`).
//!
//! - **Payload** (both): `session_id`, `turn_id`, `transcript_path`, `cwd`,
//!   `hook_event_name`, `model`, `trigger` (`auto`; `manual` for a
//!   `/compact`, which `codex exec` sends to the model as a prompt,
//!   `C90-slash-compact`). No `permission_mode`, no instructions, no
//!   summary. The matcher is matched against the trigger (`C92-matchers`).
//! - **Outcomes**: only `continue: false` acts. On PreCompact it ends the
//!   turn before the summary request and the history stays
//!   (`C91-pre-continue-false`); on PostCompact it ends the turn after the
//!   compaction, before SessionStart(compact) and any further request
//!   (`C91-post-continue-false`). Exit 2, `decision: "block"`, plain stdout,
//!   `systemMessage` and `additionalContext` change nothing: the summary
//!   prompt is Codex's own, unchanged (`C91-pre-*`, `C91-post-*`).

use dsh_plugin_api::{CompactInput, CompactedInput, PromptDecision, SessionRef};
use serde_json::{Map, Value};

use super::{invalid, read, transcript};
use crate::CodexBridge;
use crate::output::{CompactOutput, decode};

/// PreCompact.
pub const PRE: &str = "PreCompact";
/// PostCompact.
pub const POST: &str = "PostCompact";

/// The payload of `event` (both have the same keys).
pub fn payload(session: &SessionRef, event: &str, trigger: &str, model: &str) -> Value {
    let mut m = Map::new();
    m.insert("session_id".into(), session.session_id.as_str().into());
    m.insert("turn_id".into(), session.turn_id.as_str().into());
    m.insert("transcript_path".into(), transcript(session));
    m.insert("cwd".into(), session.cwd.as_str().into());
    m.insert("hook_event_name".into(), event.into());
    m.insert("model".into(), model.into());
    m.insert("trigger".into(), trigger.into());
    Value::Object(m)
}

/// The PreCompact payload.
pub fn pre_payload(input: &CompactInput, model: &str) -> Value {
    payload(&input.session, PRE, input.trigger.as_str(), model)
}

/// The PostCompact payload.
pub fn post_payload(input: &CompactedInput, model: &str) -> Value {
    payload(&input.session, POST, input.trigger.as_str(), model)
}

impl CodexBridge {
    /// Runs the hooks of `event`; `Some(reason)` when one stopped the turn.
    async fn fire_compact(
        &self,
        event: &str,
        session: &SessionRef,
        trigger: &str,
        payload: &Value,
    ) -> Option<String> {
        let mut runs = self.fire(event, session, Some(trigger), payload).await;
        let mut stop = None;
        for run in &mut runs {
            let reading = read(run);
            if let Some(stderr) = reading.block {
                // Codex counts any other exit as a failed hook: nothing
                // is blocked (`C91-pre-exit2-stderr`, `C91-post-exit2`).
                invalid(run, format!("{event} hooks cannot block: {stderr}"));
                continue;
            }
            let Some(json) = reading.json else { continue };
            match decode::<CompactOutput>(&json) {
                Err(e) => invalid(run, e),
                Ok(out) if !out.proceed => {
                    let reason = out
                        .stop_reason
                        .unwrap_or_else(|| format!("{event} hook stopped execution"));
                    stop.get_or_insert(reason);
                }
                Ok(_) => {}
            }
        }
        self.record(session, event, &runs);
        if let Some(reason) = &stop
            && let Err(e) = self.host.halt_turn(&session.session_id, reason)
        {
            self.host.warn(&format!(
                "hooks-codex: cannot halt the turn of {}: {e}",
                session.session_id
            ));
        }
        stop
    }

    /// Runs the PreCompact hooks: `continue: false` keeps the history and
    /// ends the turn; nothing else changes the compaction.
    pub async fn on_pre_compact<F, Fut>(
        &self,
        input: &CompactInput,
        next: F,
    ) -> Result<PromptDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<PromptDecision, String>>,
    {
        if !self.has_hooks(&input.session, PRE) {
            return next().await;
        }
        let trigger = input.trigger.as_str();
        let payload = pre_payload(input, &self.model);
        match self
            .fire_compact(PRE, &input.session, trigger, &payload)
            .await
        {
            Some(reason) => Ok(PromptDecision::Block {
                reason: reason.into(),
            }),
            None => next().await,
        }
    }

    /// Runs the PostCompact hooks: `continue: false` ends the turn.
    pub async fn on_post_compact(&self, input: &CompactedInput) {
        if !self.has_hooks(&input.session, POST) {
            return;
        }
        let trigger = input.trigger.as_str();
        let payload = post_payload(input, &self.model);
        self.fire_compact(POST, &input.session, trigger, &payload)
            .await;
    }
}
