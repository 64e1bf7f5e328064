//! PreCompact (`agent/compact`, plugin API 1.5) and PostCompact
//! (`agent/compacted`), as Claude Code runs them around `/compact`
//! (recorded `S90-*`, `tools/recorder-scenarios/FINDINGS-compact.md`).
//!
//! - **PreCompact**: `trigger` (`manual`, `auto`; the matcher subject) and
//!   `custom_instructions` (the text after `/compact`, `null` when none).
//!   Exit 2 blocks the compaction with `Compaction blocked by PreCompact
//!   hook: [<command>]: <stderr>` (`S90-pre-exit2`; `[<command>]` alone
//!   for an empty stderr, `S282-pre-exit2-empty`), as does a JSON
//!   `{"decision": "block", "reason"}` with its reason
//!   (`S90-pre-json-block`). The plain stdout of an exit-0 hook joins the
//!   summary instructions (`Additional Instructions:` in the summary
//!   prompt, `S90-hook-output`).
//! - **PostCompact**: `trigger` and `compact_summary`, the model's whole
//!   answer. Observe only: Claude Code shows its stdout to the user.
//!
//! Each run of either also gets the line Claude Code shows for it in
//! `/compact`'s output (`PreCompact [<command>] completed successfully`,
//! `... failed: <stderr>`; recorded `S90-*`, `S130-outcomes`), appended in
//! config order as a `command/display` record (plugin API 1.7), which the
//! host writes into the conversation.

use dsh_hook_protocol::codec::Exit;
use dsh_hook_protocol::point::HookRun;
use dsh_plugin_api::display::CommandDisplay;
use dsh_plugin_api::{CompactInput, CompactedInput, PromptDecision, SessionRef};
use serde_json::Value;

use super::{Reading, completion, head, prompt_id, read};
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

/// `[<command>]: <why>`, or `[<command>]` when `why` is blank.
fn quoted(command: &str, why: &str) -> String {
    match why.trim_end() {
        "" => format!("[{command}]"),
        why => format!("[{command}]: {why}"),
    }
}

/// The line Claude Code shows for one run of `event` (2.1.197's PreCompact
/// and PostCompact runners, recorded `S130-outcomes`): `<event> [<command>]
/// completed successfully` for a run that exited 0 (and, for PreCompact,
/// did not block), else `... failed`, either followed by `: <output>` when
/// the output is not blank. The output is a JSON block's `reason` (or the
/// stderr without one), else the stdout of an exit 0, else the stderr; a
/// run cut off by its timeout says `Hook cancelled`, one that never started
/// why.
pub(crate) fn display_line(event: &str, run: &HookRun, reading: &Reading) -> String {
    let exit = run.exit();
    let decided_block = reading.decision() == Some("block");
    let output = match &exit {
        // An answer that does not fit the schema fails the run, whatever
        // its exit code (vector `S282-pre-block-upper`).
        _ if reading.rejected.is_some() => reading.rejected.clone().unwrap_or_default(),
        Exit::TimedOut => "Hook cancelled".to_string(),
        Exit::SpawnFailed { message } => message.clone(),
        _ if decided_block => reading
            .reason()
            .filter(|r| !r.is_empty())
            .map_or_else(|| run.answer.stderr.clone(), str::to_string),
        Exit::Success => run.answer.stdout.clone(),
        _ => run.answer.stderr.clone(),
    };
    let blocks = event == PRE && (reading.blocked || decided_block);
    let outcome = if exit == Exit::Success && !blocks && reading.rejected.is_none() {
        "completed successfully"
    } else {
        "failed"
    };
    let command = &run.command;
    match output.trim() {
        "" => format!("{event} [{command}] {outcome}"),
        out => format!("{event} [{command}] {outcome}: {out}"),
    }
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
        let mut lines = vec![String::new(); runs.len()];
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, PRE);
            lines[i] = display_line(PRE, run, &reading);
            if block.is_some() {
                continue;
            }
            if reading.blocked {
                // No `No stderr output` here: `[<command>]` alone (vector
                // `S282-pre-exit2-empty`).
                block = Some(blocked(&quoted(&run.command, &run.answer.stderr)));
            } else if reading.decision() == Some("block") {
                // No reason: the stderr, as in the run's line.
                let reason = reading.reason().filter(|r| !r.is_empty());
                let why = reason.unwrap_or(&run.answer.stderr);
                block = Some(blocked(&quoted(&run.command, why)));
            } else if let Some(text) = reading.plain.as_deref().filter(|t| !t.is_empty()) {
                instructions.push(text.to_string());
            }
        }
        self.record(&input.session, PRE, &runs);
        self.display(&input.session, lines);
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
        let lines = runs
            .iter_mut()
            .map(|run| {
                let reading = read(run, POST);
                display_line(POST, run, &reading)
            })
            .collect();
        self.record(&input.session, POST, &runs);
        self.display(&input.session, lines);
    }

    /// Appends one `command/display` record per line, in order.
    fn display(&self, session: &SessionRef, lines: Vec<String>) {
        for line in lines {
            let record = CommandDisplay::new(line).record();
            if let Err(e) = self.host.append_record(&session.session_id, &record) {
                tracing::debug!(session = %session.session_id, error = %e, "display line not appended");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_hook_protocol::point::Outcome;
    use dsh_plugin_api::services::process_runner::RunAnswer;

    fn run(command: &str, exit: i32, stdout: &str, stderr: &str) -> HookRun {
        HookRun {
            index: 0,
            command: command.into(),
            matcher: None,
            source: "settings.json".into(),
            answer: RunAnswer {
                exit_code: Some(exit),
                stdout: stdout.into(),
                stderr: stderr.into(),
                ..RunAnswer::default()
            },
            outcome: Outcome::Success,
            detail: None,
            finished: 0,
        }
    }

    fn line(event: &str, mut r: HookRun) -> String {
        let reading = read(&mut r, event);
        display_line(event, &r, &reading)
    }

    #[test]
    fn each_outcome_is_named_as_claude_code_names_it() {
        // Recorded `S130-outcomes` (and `S90-manual` for the silent exit 0).
        assert_eq!(
            line(PRE, run("h pre", 0, "", "")),
            "PreCompact [h pre] completed successfully"
        );
        assert_eq!(
            line(PRE, run("h pre", 0, "MARK_S130_PRE_OUT\n", "")),
            "PreCompact [h pre] completed successfully: MARK_S130_PRE_OUT"
        );
        assert_eq!(
            line(PRE, run("h fail", 1, "", "MARK_S130_PRE_ERR\n")),
            "PreCompact [h fail] failed: MARK_S130_PRE_ERR"
        );
        assert_eq!(line(PRE, run("h q", 1, "", "")), "PreCompact [h q] failed");
        assert_eq!(
            line(POST, run("h post", 0, "MARK_S130_POST_OUT\n", "")),
            "PostCompact [h post] completed successfully: MARK_S130_POST_OUT"
        );
        assert_eq!(
            line(POST, run("h pf", 1, "", "MARK_S130_POST_ERR\n")),
            "PostCompact [h pf] failed: MARK_S130_POST_ERR"
        );
        // A block is a failure of PreCompact, its reason the output; an
        // exit 2 of PostCompact is a failure with its stderr.
        assert_eq!(
            line(PRE, run("h b", 2, "", "no\n")),
            "PreCompact [h b] failed: no"
        );
        assert_eq!(
            line(
                PRE,
                run("h j", 0, "{\"decision\":\"block\",\"reason\":\"R\"}\n", "")
            ),
            "PreCompact [h j] failed: R"
        );
        assert_eq!(
            line(POST, run("h p2", 2, "", "e\n")),
            "PostCompact [h p2] failed: e"
        );
    }

    #[test]
    fn an_answer_that_does_not_fit_the_schema_fails_the_run_in_claude_codes_words() {
        // Recorded `S282/pre_block_upper` and `S282/pre_context` (their
        // vectors are not kept: the compaction that follows needs the
        // summary mapping S90-* have): `/compact`'s output shows the whole
        // validation text, and the compaction goes on.
        let stdout = "{\"decision\": \"BLOCK\", \"reason\": \"MARK_S282_UP\"}\n";
        let mut r = run("bash $HOOKS/hook.sh PreCompact", 0, stdout, "");
        let reading = read(&mut r, PRE);
        assert!(!reading.blocked && reading.decision().is_none());
        let line = display_line(PRE, &r, &reading);
        assert!(
            line.starts_with(
                "PreCompact [bash $HOOKS/hook.sh PreCompact] failed: Hook JSON output validation \
                 failed \u{2014} (root): Invalid input\n\nThe hook's output was: {\n  \
                 \"decision\": \"BLOCK\",\n  \"reason\": \"MARK_S282_UP\"\n}\n\nExpected schema:\n{"
            ),
            "{line}"
        );
        let ctx = "{\"hookSpecificOutput\": {\"hookEventName\": \"PreCompact\", \"additionalContext\": \"c\"}}";
        let mut r = run("h", 0, ctx, "");
        let reading = read(&mut r, PRE);
        assert!(display_line(PRE, &r, &reading).starts_with("PreCompact [h] failed: Hook JSON"));
        // Recorded `S282/pre_continue_false`: read, not a failure.
        let stop = "{\"continue\": false, \"stopReason\": \"MARK_S282_STOP\"}";
        let mut r = run("h", 0, stop, "");
        let reading = read(&mut r, PRE);
        assert_eq!(
            display_line(PRE, &r, &reading),
            format!("PreCompact [h] completed successfully: {stop}")
        );
    }
}
