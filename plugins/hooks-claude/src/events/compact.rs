//! PreCompact (`agent/compact`, plugin API 1.5) and PostCompact
//! (`agent/compacted`), as Claude Code runs them around `/compact`
//! (recorded `S90-*`, `tools/recorder-scenarios/FINDINGS-compact.md`).
//!
//! - **PreCompact**: `trigger` (`manual`, `auto`; the matcher subject) and
//!   `custom_instructions` (the text after `/compact`, `null` when none).
//!   Exit 2 blocks the compaction with `Compaction blocked by PreCompact
//!   hook: [<command>]: <stderr>` (`S90-pre-exit2`), as does a JSON
//!   `{"decision": "block", "reason"}` with its reason
//!   (`S90-pre-json-block`). The plain stdout of an exit-0 hook joins the
//!   summary instructions (`Additional Instructions:` in the summary
//!   prompt, `S90-hook-output`).
//! - **PostCompact**: `trigger` and `compact_summary`, the model's whole
//!   answer. Observe only: Claude Code shows its stdout to the user.

use dsh_plugin_api::{CompactInput, CompactedInput, PromptDecision};
use serde_json::Value;

use super::{completion, head, prompt_id, quoted_stderr, read};
use crate::ClaudeBridge;

/// PreCompact.
pub const PRE: &str = "PreCompact";
/// PostCompact.
pub const POST: &str = "PostCompact";

/// The PreCompact payload.
pub fn pre_payload(input: &CompactInput) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    m.insert("hook_event_name".into(), PRE.into());
    m.insert("trigger".into(), input.trigger.as_str().into());
    let custom = input.custom_instructions.as_ref().into_option();
    m.insert(
        "custom_instructions".into(),
        custom.map_or(Value::Null, |c| c.as_str().into()),
    );
    Value::Object(m)
}

/// The PostCompact payload.
pub fn post_payload(input: &CompactedInput) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    m.insert("hook_event_name".into(), POST.into());
    m.insert("trigger".into(), input.trigger.as_str().into());
    m.insert("compact_summary".into(), input.summary.as_str().into());
    Value::Object(m)
}

/// Claude Code's text for a compaction a hook blocked.
fn blocked(quoted: &str) -> String {
    format!("Compaction blocked by PreCompact hook: {quoted}")
}

impl ClaudeBridge {
    /// Runs the PreCompact hooks: a block keeps the history; plain stdout
    /// becomes summary instructions, folded onto `next`'s answer.
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
        let mut runs = self
            .fire(PRE, &input.session, &[trigger], &pre_payload(input))
            .await;
        let mut block = None;
        let mut instructions = Vec::new();
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, PRE);
            if block.is_some() {
                continue;
            }
            if reading.blocked {
                let mut quoted = quoted_stderr(run);
                quoted.truncate(quoted.trim_end().len());
                block = Some(blocked(&quoted));
            } else if reading.decision() == Some("block") {
                let reason = reading.reason().unwrap_or_default();
                block = Some(blocked(&format!("[{}]: {reason}", run.command)));
            } else if let Some(text) = reading.plain.as_deref().filter(|t| !t.is_empty()) {
                instructions.push(text.to_string());
            }
        }
        self.record(&input.session, PRE, &runs);
        if let Some(reason) = block {
            return Ok(PromptDecision::Block {
                reason: reason.into(),
            });
        }
        let decision = next().await?;
        Ok(if instructions.is_empty() {
            decision
        } else {
            decision.with_context_last(instructions.join("\n\n"))
        })
    }

    /// Runs the PostCompact hooks (observe only).
    pub async fn on_post_compact(&self, input: &CompactedInput) {
        if !self.has_hooks(&input.session, POST) {
            return;
        }
        let trigger = input.trigger.as_str();
        let mut runs = self
            .fire(POST, &input.session, &[trigger], &post_payload(input))
            .await;
        for run in &mut runs {
            read(run, POST);
        }
        self.record(&input.session, POST, &runs);
    }
}
