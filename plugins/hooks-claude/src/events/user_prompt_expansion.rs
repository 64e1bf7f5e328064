//! UserPromptExpansion (`agent/prompt-submit`, before UserPromptSubmit): a
//! prompt that runs a project or user slash command ([`crate::slash`]).
//!
//! Recorded (S185, `tools/recorder-scenarios/FINDINGS-csub2.md` §3, §5):
//! the hooks fire first, with `expansion_type: "slash_command"`,
//! `command_name`, `command_args`, `command_source` (`"projectSettings"`;
//! `"userSettings"` for the user's, S241) and
//! the unexpanded `prompt`; UserPromptSubmit then sees the unexpanded
//! prompt too, and the model reads the command's blocks
//! ([`crate::slash::content`]). Answers:
//! - exit 2 or `decision: "block"`: no model call, `UserPromptExpansion
//!   operation blocked by hook:\n<why>\n\nOriginal prompt: <prompt>`;
//! - `continue: false`: no model call, `Operation stopped by hook:
//!   <stopReason>`;
//! - plain stdout / `additionalContext`: `UserPromptExpansion hook
//!   success: ...` / `... additional context: ...` in the system message
//!   after the prompt (before UserPromptSubmit's, which fire later).

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::{ContentBlock_NE, PromptSubmitInput, SessionRef, blocks_text};
use serde_json::Value;

use super::{
    JsonCount, capped_context, capped_plain, completion, fresh_id, head, permission_mode,
    prompt_id, quoted_stderr, read,
};
use crate::ClaudeBridge;
use crate::slash::{self, Invocation};

/// The event name.
pub const EVENT: &str = "UserPromptExpansion";

/// A prompt that runs a project command.
pub struct Command {
    pub invocation: Invocation,
    /// What the model reads instead of the prompt.
    pub content: Vec<ContentBlock_NE>,
    /// The file's `allowed-tools`: allowed for the rest of the turn.
    pub allowed_tools: Vec<String>,
}

/// The stdin payload.
pub fn payload(input: &PromptSubmitInput, inv: &Invocation) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    permission_mode(&mut m, &input.session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("expansion_type".into(), "slash_command".into());
    m.insert("command_name".into(), inv.name.clone().into());
    m.insert("command_args".into(), inv.args.clone().into());
    m.insert("command_source".into(), inv.source.into());
    m.insert("prompt".into(), blocks_text(&input.content).into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// The command `prompt` runs in `session`: the user's file (which wins,
    /// S241-same-name, and needs no trust, as the user's settings file),
    /// else the project's if it is trusted; what keeps one from running is
    /// a warning.
    pub fn slash_command(&self, session: &SessionRef, prompt: &str) -> Option<Command> {
        if super::is_subagent(session) {
            return None;
        }
        let mut inv = slash::invocation(prompt)?;
        let warn = |msg: String| self.host.warn(&format!("hooks-claude: {msg}"));
        let user = slash::file_of(&self.home, &inv.name);
        // No home known: no user commands (never a path relative to dsh's
        // own folder).
        let user_bytes = match slash::read(&user) {
            _ if self.home.as_os_str().is_empty() => None,
            Ok(found) => found,
            Err(e) => {
                warn(e.to_string());
                return None;
            }
        };
        if let Some(bytes) = user_bytes {
            inv.source = slash::USER_SOURCE;
            return match slash::expand(&user, &bytes, &inv.args) {
                Ok(expanded) => Some(Command {
                    content: slash::content(&inv, &expanded),
                    invocation: inv,
                    allowed_tools: slash::allowed_tools(&String::from_utf8_lossy(&bytes)),
                }),
                Err(e) => {
                    warn(e.to_string());
                    None
                }
            };
        }
        let project = std::path::PathBuf::from(self.project_dir_of(session));
        let path = slash::file_of(&project, &inv.name);
        let bytes = match slash::read(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None,
            Err(e) => {
                warn(e.to_string());
                return None;
            }
        };
        let trust = self
            .discovery
            .trust_of(&path, &bytes, &mut |p| warn(p.to_string()));
        if trust != dsh_hook_protocol::trust::Trust::Trusted {
            warn(format!(
                "the command file {} is not run: it is not approved by `dsh trust` ({trust:?})",
                path.display()
            ));
            return None;
        }
        match slash::expand(&path, &bytes, &inv.args) {
            Ok(expanded) => Some(Command {
                content: slash::content(&inv, &expanded),
                invocation: inv,
                allowed_tools: slash::allowed_tools(&String::from_utf8_lossy(&bytes)),
            }),
            Err(e) => {
                warn(e.to_string());
                None
            }
        }
    }

    /// Runs the UserPromptExpansion hooks: `Err(reason)` when they stop the
    /// prompt, else the context they add.
    pub async fn on_prompt_expansion(
        &self,
        input: &PromptSubmitInput,
        inv: &Invocation,
    ) -> Result<Vec<String>, String> {
        if !self.has_hooks(&input.session, EVENT) {
            return Ok(Vec::new());
        }
        let prompt = blocks_text(&input.content);
        let mut runs = self
            .fire(EVENT, &input.session, &[], &payload(input, inv))
            .await;
        let mut blocks = Vec::new();
        let mut stop: Option<String> = None;
        let mut contexts = Vec::new();
        let batch = fresh_id();
        let spill = self.spill(&input.session.session_id, &input.session.log_path, &batch);
        let mut answers = JsonCount::default();
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, EVENT);
            let nth = answers.count(&reading);
            if reading.blocked {
                blocks.push(quoted_stderr(run));
                continue;
            }
            if let Some(reason) = reading.stop() {
                run.outcome = Outcome::Blocked;
                stop.get_or_insert_with(|| {
                    format!("Operation stopped by hook: {}", reason.unwrap_or_default())
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
            return Err(reason);
        }
        if !blocks.is_empty() {
            return Err(format!(
                "{EVENT} operation blocked by hook:\n{}\n\nOriginal prompt: {prompt}",
                blocks.join("\n")
            ));
        }
        Ok(contexts)
    }
}
