//! SessionStart (`agent/session-start`): context for the first request.
//!
//! Plain stdout of an exit-0 hook and `additionalContext` both become
//! context (vectors `S7-plain-stdout`, `S7-json-additional-context`), in
//! Claude Code's wording; an exit 2 blocks nothing (`S7-exit2`), and a
//! `decision: "block"` neither, its reason reaching the model as
//! `SessionStart:<source> hook blocking error from command: "<command>":
//! <reason>` (`S278-ss-decision-block`); `continue: false` is ignored
//! (`S278-ss-continue-false`). The host
//! awaits session-start listeners, so the context reaches the first request:
//! system-role context, which the host places right after the first prompt
//! (Claude Code's system message there, `S7-plain-stdout`).
//! A text over 10,000 characters is saved and replaced ([`crate::persist`]).
//! Matcher subject: the `source` (`startup`, `resume`, `clear`, `compact`).
//!
//! The output of a `resume` run reaches no model: Claude Code 2.1.197 runs
//! the hooks of a `--continue` run and shows the model nothing of them
//! (recorded `S131-hook-output`, as `S90-hook-output` before it), while
//! `compact`'s lands after the `/compact` command's message.

use dsh_plugin_api::SessionStartInput;
use serde_json::Value;

use super::{JsonCount, capped_context, capped_plain, completion, fresh_id, head, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "SessionStart";

/// The stdin payload. After a compaction (source `compact`, recorded
/// `S90-manual`) Claude Code adds the turn's `prompt_id` and the `model`
/// (the bridge's `model`, when configured).
pub fn payload(input: &SessionStartInput, model: Option<&str>) -> Value {
    let mut m = head(&input.session);
    let compact = input.source == dsh_plugin_api::SessionStartSource::Compact;
    if compact {
        super::prompt_id(&mut m, &input.session);
    }
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("source".into(), input.source.as_str().into());
    if let (true, Some(model)) = (compact, model) {
        m.insert("model".into(), model.into());
    }
    Value::Object(m)
}

impl ClaudeBridge {
    /// Runs the SessionStart hooks and injects their context.
    pub async fn on_session_start(&self, input: &SessionStartInput) {
        // Where the session starts stays its `CLAUDE_PROJECT_DIR`.
        self.note_project_dir(&input.session, &input.session.cwd);
        self.refresh(&input.session);
        self.note_settings(&input.session);
        if !self.has_hooks(&input.session, EVENT) {
            self.refresh_shell_prelude(&input.session);
            return;
        }
        let source = input.source.as_str();
        let mut runs = self
            .fire(
                EVENT,
                &input.session,
                &[source],
                &payload(input, self.model.as_deref()),
            )
            .await;
        // Plain outputs before contexts, each in the order the hooks
        // finished (vector `S53-ss-several-contexts`).
        let mut plain = Vec::new();
        let mut contexts = Vec::new();
        let batch = fresh_id();
        let spill = self.spill(&input.session.session_id, &input.session.log_path, &batch);
        let mut answers = JsonCount::default();
        let mut watch = Vec::new();
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, EVENT);
            let nth = answers.count(&reading);
            // Files to watch for FileChanged (vector `S184-file-changed`).
            watch.extend(super::file_changed::watch_paths(reading.json.as_ref()));
            // A JSON block stops nothing, but the model reads it (vector
            // `S278-ss-decision-block`; an exit 2's stderr it does not,
            // `S7-exit2`).
            if !reading.blocked && reading.decision() == Some("block") {
                plain.push(format!(
                    "{EVENT}:{source} hook blocking error from command: \"{}\": {}",
                    run.command,
                    reading.reason().unwrap_or("Blocked by hook")
                ));
            }
            if let Some(text) = capped_plain(&spill, &reading) {
                plain.push(format!("{EVENT}:{source} hook success: {text}"));
            }
            if let Some(ctx) = capped_context(&spill, &reading, nth) {
                contexts.push(format!("{EVENT} hook additional context: {ctx}"));
            }
        }
        plain.extend(contexts);
        let contexts = plain;
        self.record(&input.session, EVENT, &runs);
        self.watch_files(&input.session, watch);
        // What the hooks wrote into their `CLAUDE_ENV_FILE`s reaches the
        // session's `Bash` commands from now on.
        self.refresh_shell_prelude(&input.session);
        // One system-message text, as Claude Code joins them; none for a
        // resumed session (S131-hook-output).
        let resumed = input.source == dsh_plugin_api::SessionStartSource::Resume;
        if !contexts.is_empty() && !resumed {
            self.inject_system(&input.session.session_id, &contexts.join("\n\n"));
        }
    }
}
