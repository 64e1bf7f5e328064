//! UserPromptSubmit (`agent/prompt-submit`): veto the prompt or add context.
//!
//! - exit 2 or `decision: "block"`: [`PromptDecision::Block`] with Claude
//!   Code's message, `UserPromptSubmit operation blocked by hook:\n<why>\n\n
//!   Original prompt: <prompt>` (`<why>` is `[command]: stderr` for exit 2,
//!   the reason for JSON; vectors `S4-exit2`, `S4-decision-block`); the
//!   first blocking hook's `suppressOriginalPrompt: true` leaves out the
//!   `Original prompt` part (`S278-ups-suppress-original`);
//! - `continue: false`: no model call; `Operation stopped by hook: <stopReason>`
//!   is reported (Block; vector `S273-continue-false`);
//! - plain stdout of an exit-0 hook or `additionalContext`: system-role
//!   context after the prompt, as Claude Code's system message (`UserPromptSubmit
//!   hook success: ...` / `... additional context: ...`, vectors
//!   `S4-plain-stdout`, `S4-json-additional-context`), injected once the rest
//!   of the chain allowed the prompt (the host writes it right after it);
//!   `systemMessage` is not model context (`S4-system-message`); a text
//!   over 10,000 characters is saved and replaced ([`crate::persist`]).
//!
//! A hook that only adds context is not a veto: later plugins still see
//! the prompt, and their decision stands.

use std::future::Future;

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::abi_stable::std_types::{RNone, ROption, RVec};
use dsh_plugin_api::{ContentBlock_NE, PromptDecision, PromptSubmitInput, blocks_text};
use serde_json::Value;

use super::{
    JsonCount, capped_context, capped_plain, completion, fresh_id, head, permission_mode,
    prompt_id, quoted_stderr, read,
};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "UserPromptSubmit";

/// The stdin payload.
pub fn payload(input: &PromptSubmitInput) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    permission_mode(&mut m, &input.session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("prompt".into(), blocks_text(&input.content).into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// Asks the agent to allow a command's `allowed-tools` for the rest of
    /// the turn; rules that allow nothing (or a host that keeps no turn
    /// rules) are said.
    async fn allow_for_turn(&self, session_id: &str, rules: Vec<String>) {
        if rules.is_empty() {
            return;
        }
        match self.host.allow_for_turn(session_id, rules).await {
            Ok(skipped) if skipped.is_empty() => {}
            Ok(skipped) => self.host.warn(&format!(
                "hooks-claude: a command's allowed-tools that allow nothing: {}",
                skipped.join("; ")
            )),
            Err(e) => self.host.warn(&format!(
                "hooks-claude: a command's allowed-tools allow nothing: {e}"
            )),
        }
    }

    /// Runs the UserPromptSubmit hooks, then (unless they veto) the rest of
    /// the waterfall.
    pub async fn on_prompt_submit<F, Fut>(
        &self,
        input: &PromptSubmitInput,
        next: F,
    ) -> Result<PromptDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<PromptDecision, String>>,
    {
        // Even without UserPromptSubmit hooks: SessionEnd reports it.
        self.note_prompt(&input.session);
        // A turn starts: its hooks are the files as they are now.
        if !super::is_subagent(&input.session) {
            let resolution = self.refresh(&input.session);
            self.notice_untrusted(&input.session, &resolution);
        }
        let prompt = blocks_text(&input.content);
        // A project slash command: its UserPromptExpansion hooks first, and
        // the model reads the command's text instead of the prompt.
        if !super::is_subagent(&input.session) {
            let project = std::path::PathBuf::from(self.project_dir_of(&input.session));
            if let Some(reason) = crate::slash::unknown(&self.home, &project, &prompt) {
                return Ok(PromptDecision::Block {
                    reason: reason.into(),
                });
            }
        }
        let command = self.slash_command(&input.session, &prompt);
        let mut contexts = Vec::new();
        if let Some(command) = &command {
            match self.on_prompt_expansion(input, &command.invocation).await {
                Ok(added) => contexts = added,
                Err(reason) => {
                    return Ok(PromptDecision::Block {
                        reason: reason.into(),
                    });
                }
            }
        }
        let decision = self
            .run_prompt_submit(input, &prompt, contexts, next)
            .await?;
        Ok(match command {
            Some(command) => {
                if !matches!(decision, PromptDecision::Block { .. }) {
                    self.allow_for_turn(&input.session.session_id, command.allowed_tools)
                        .await;
                }
                expanded(decision, command.content)
            }
            None => decision,
        })
    }

    /// The UserPromptSubmit hooks, then the rest of the waterfall; `contexts`
    /// (UserPromptExpansion's) go first in the system message.
    async fn run_prompt_submit<F, Fut>(
        &self,
        input: &PromptSubmitInput,
        prompt: &str,
        mut contexts: Vec<String>,
        next: F,
    ) -> Result<PromptDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<PromptDecision, String>>,
    {
        if !self.has_hooks(&input.session, EVENT) || super::is_subagent(&input.session) {
            let decision = next().await?;
            if !contexts.is_empty() && !matches!(decision, PromptDecision::Block { .. }) {
                self.inject_system(&input.session.session_id, &contexts.join("\n\n"));
            }
            return Ok(decision);
        }
        let mut runs = self.fire(EVENT, &input.session, &[], &payload(input)).await;
        let mut blocks = Vec::new();
        let mut suppress_original: Option<bool> = None;
        let mut stop: Option<String> = None;
        let batch = fresh_id();
        let spill = self.spill(&input.session.session_id, &input.session.log_path, &batch);
        let mut answers = JsonCount::default();
        // In the order the hooks finished (vector `S53-ups-several-contexts`).
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, EVENT);
            let nth = answers.count(&reading);
            if reading.blocked || reading.decision() == Some("block") {
                // Whether the message leaves the prompt out is the first
                // block's hook's say (vectors `S278-ups-suppress-original`,
                // `S278-ups-exit2-suppress-original`).
                suppress_original.get_or_insert(suppresses_original(&reading));
            }
            if reading.blocked {
                blocks.push(quoted_stderr(run));
                continue;
            }
            if let Some(reason) = reading.stop() {
                run.outcome = Outcome::Blocked;
                // Claude Code's words (vector `S273-continue-false`).
                stop.get_or_insert_with(|| match reason {
                    Some(reason) => format!("Operation stopped by hook: {reason}"),
                    None => "Operation stopped by hook".to_string(),
                });
            }
            if reading.decision() == Some("block") {
                run.outcome = Outcome::Blocked;
                blocks.push(reading.reason().unwrap_or_default().to_string());
            }
            if let Some(text) = capped_plain(&spill, &reading) {
                contexts.push(format!("{EVENT} hook success: {text}"));
            }
            if let Some(ctx) = capped_context(&spill, &reading, nth) {
                contexts.push(format!("{EVENT} hook additional context: {ctx}"));
            }
        }
        self.record(&input.session, EVENT, &runs);
        if let Some(reason) = stop {
            return Ok(PromptDecision::Block {
                reason: reason.into(),
            });
        }
        if !blocks.is_empty() {
            let mut reason = format!("{EVENT} operation blocked by hook:\n{}", blocks.join("\n"));
            if suppress_original != Some(true) {
                reason.push_str(&format!("\n\nOriginal prompt: {prompt}"));
            }
            return Ok(PromptDecision::Block {
                reason: reason.into(),
            });
        }
        // The hooks' context is one system-role text, for an allowed prompt
        // only.
        let decision = next().await?;
        if !contexts.is_empty() && !matches!(decision, PromptDecision::Block { .. }) {
            self.inject_system(&input.session.session_id, &contexts.join("\n\n"));
        }
        Ok(decision)
    }
}

/// `hookSpecificOutput.suppressOriginalPrompt: true`.
fn suppresses_original(reading: &super::Reading) -> bool {
    reading
        .json
        .as_ref()
        .and_then(|j| j.get("hookSpecificOutput"))
        .and_then(|h| h.get("suppressOriginalPrompt"))
        == Some(&Value::Bool(true))
}

/// `decision` with the command's content as the prompt, unless a later
/// plugin already rewrote it or vetoed it.
fn expanded(decision: PromptDecision, content: Vec<ContentBlock_NE>) -> PromptDecision {
    match decision {
        PromptDecision::Allow {
            content: RNone,
            additional_context,
        } => PromptDecision::Allow {
            content: ROption::RSome(RVec::from(content)),
            additional_context,
        },
        PromptDecision::AllowAuthored {
            content: RNone,
            context,
        } => PromptDecision::AllowAuthored {
            content: ROption::RSome(RVec::from(content)),
            context,
        },
        other => other,
    }
}
