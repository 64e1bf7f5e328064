//! UserPromptSubmit (`agent/prompt-submit`).
//!
//! - exit 2 with stderr, `decision: "block"` with a non-empty reason, or
//!   `continue: false`: the prompt is blocked and no model request is made
//!   (vectors `C3-ups-exit2-stderr`, `C3-ups-decision-block`,
//!   `C3-ups-continue-false`); Codex shows no reason to the model;
//! - plain stdout of an exit-0 hook (trimmed as a whole) and
//!   `additionalContext` are context after the prompt
//!   (`C3-ups-plain-stdout`, `C3-ups-json-additional`); a valid JSON answer
//!   is never plain text and `systemMessage` is not model context.
//!
//! Each context is capped as Codex caps it ([`crate::spill`]).
//!
//! Context-only hooks are not a veto: the rest of the waterfall runs and
//! the context is folded onto its decision.

use std::future::Future;

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::{AuthoredContext, PromptDecision, PromptSubmitInput, blocks_text};
use serde_json::Value;

use super::{invalid, read, turn_head};
use crate::CodexBridge;
use crate::output::{PromptOutput, decode, trimmed};

/// The event name.
pub const EVENT: &str = "UserPromptSubmit";

/// The stdin payload.
pub fn payload(input: &PromptSubmitInput, model: &str) -> Value {
    let mut m = turn_head(&input.session, &input.session.cwd, EVENT, model);
    m.insert("prompt".into(), blocks_text(&input.content).into());
    Value::Object(m)
}

impl CodexBridge {
    /// Runs the UserPromptSubmit hooks, then (unless they block) the rest
    /// of the waterfall.
    pub async fn on_prompt_submit<F, Fut>(
        &self,
        input: &PromptSubmitInput,
        next: F,
    ) -> Result<PromptDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<PromptDecision, String>>,
    {
        // A turn starts: its hooks are the files as they are now.
        let resolution = self.refresh(&input.session);
        self.notice_untrusted(&input.session, &resolution);
        if !self.has_hooks(&input.session, EVENT) {
            return next().await;
        }
        let mut runs = self
            .fire(EVENT, &input.session, None, &payload(input, &self.model))
            .await;
        let mut block: Option<String> = None;
        let mut contexts = Vec::new();
        for run in &mut runs {
            let reading = read(run);
            if let Some(reason) = reading.block {
                block.get_or_insert(reason);
                continue;
            }
            contexts.extend(reading.plain);
            let Some(json) = reading.json else { continue };
            let out = match decode::<PromptOutput>(&json) {
                Ok(out) => out,
                Err(e) => {
                    invalid(run, e);
                    continue;
                }
            };
            if out.decision.is_some() {
                match trimmed(out.reason.as_deref()) {
                    Some(reason) => {
                        run.outcome = Outcome::Blocked;
                        block.get_or_insert(reason);
                    }
                    None => {
                        invalid(run, "UserPromptSubmit hook returned decision:block without a non-empty reason".into());
                        continue;
                    }
                }
            }
            if !out.proceed {
                run.outcome = Outcome::Blocked;
                block.get_or_insert(out.stop_reason.unwrap_or_default());
            }
            contexts.extend(out.hook_specific_output.and_then(|h| h.additional_context));
        }
        self.record(&input.session, EVENT, &runs);
        if let Some(reason) = block {
            return Ok(PromptDecision::Block {
                reason: reason.into(),
            });
        }
        match next().await? {
            // Each hook's context is its own developer message, in config
            // order (vector `C50-ups-several-contexts`), before what the
            // rest of the chain added.
            allowed @ (PromptDecision::Allow { .. } | PromptDecision::AllowAuthored { .. }) => {
                let session_id = &input.session.session_id;
                let mut pieces: Vec<AuthoredContext> = contexts
                    .into_iter()
                    .map(|text| AuthoredContext::new(self.cap(session_id, text)))
                    .collect();
                if pieces.is_empty() {
                    return Ok(allowed);
                }
                pieces.extend(allowed.context());
                Ok(allowed.with_pieces(pieces))
            }
            blocked => Ok(blocked),
        }
    }
}
