//! Codex's compaction over the real `dsh` binary, real Codex hooks (shell
//! scripts through `hooks-codex`), real `exec_command` runs and a real
//! session log; only the model is scripted (recorded `C90-*`–`C92-*`).
//!
//! - a tool step after which the provider reports the context past the
//!   threshold compacts before the model is asked again, in the same turn:
//!   PreCompact, the checkpoint request (no tools), PostCompact,
//!   SessionStart `compact`, Stop; the next request holds the user's prompt
//!   and Codex's summary message, and a later `dsh prompt` (a new process)
//!   derives the same history from the log;
//! - PreCompact `continue: false` ends the turn there and keeps the history.

use serde_json::{Value, json};

pub(crate) use super::compaction::{Project, contents};

/// Codex's compaction at half the window.
pub(crate) const HALF_WINDOW: &str = "compaction:\n  threshold: 0.5\n  style: codex\n";

/// The model's replies of a compacting turn: `echo hi` reporting the
/// context 90% full, the summary, the final answer.
pub(crate) fn compacting_script() -> Value {
    json!([
        {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "echo hi"}}],
         "context": {"used": 90, "size": 100}},
        {"text": "SUMMARY: echoed hi", "context": {"used": 10, "size": 100}},
        {"text": "all done", "context": {"used": 12, "size": 100}},
    ])
}

pub(crate) const CHECKPOINT_HEAD: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION.";
pub(crate) const SUMMARY_MESSAGE: &str = "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\nSUMMARY: echoed hi";

const EVENTS: [(&str, &str); 6] = [
    ("SessionStart", "true"),
    ("PreToolUse", "true"),
    ("PostToolUse", "true"),
    ("PreCompact", "true"),
    ("PostCompact", "true"),
    ("Stop", "true"),
];

#[test]
fn a_tool_step_past_the_threshold_compacts_within_the_turn_as_codex_does() {
    let p = Project::codex(&EVENTS, HALF_WINDOW);
    let run = p.prompt("c1", "run echo hi", compacting_script());
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    assert_eq!(
        p.order(),
        [
            "SessionStart",
            "PreToolUse",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "SessionStart",
            "Stop"
        ]
    );
    // Codex's payload: no permission_mode, the trigger last.
    let pre: Value = p.hook_stdin("PreCompact", 0).0;
    let keys: Vec<&str> = pre
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "turn_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "model",
            "trigger"
        ]
    );
    assert_eq!(pre["trigger"], "auto");
    assert_eq!(pre["model"], "gpt-test");
    let post: Value = p.hook_stdin("PostCompact", 0).0;
    assert_eq!(post["hook_event_name"], "PostCompact");
    assert_eq!(post["turn_id"], pre["turn_id"]);
    let again: Value = p.hook_stdin("SessionStart", 1).0;
    assert_eq!(again["source"], "compact");

    let requests = p.requests();
    assert_eq!(requests.len(), 3);
    // The checkpoint request: the history, then Codex's prompt; no tools.
    let summary = contents(&requests[1]);
    let (role, last) = summary.last().unwrap();
    assert_eq!(role, "user");
    assert!(last.starts_with(CHECKPOINT_HEAD), "{last}");
    assert!(summary.iter().any(|(r, _)| r == "tool"));
    assert!(requests[1]["tools"].as_array().is_none_or(|t| t.is_empty()));
    // Then the prompt and the summary message, the tool step gone.
    let after = contents(&requests[2]);
    assert_eq!(
        after,
        [
            ("user".to_string(), "run echo hi".to_string()),
            ("user".to_string(), SUMMARY_MESSAGE.to_string()),
        ]
    );
    let compacted = run.of_type("session/compacted");
    assert_eq!(compacted.len(), 1);
    assert_eq!(compacted[0]["kept"], json!(["run echo hi"]));
    assert_eq!(run.of_type("turn/end")[0]["reason"], "completed");

    // A new process derives the same history from the log.
    let next = p.prompt("c1", "and now?", json!([{"text": "fine"}]));
    assert_eq!(next.outcome.code, Some(0), "{}", next.outcome.stderr);
    let requests = p.requests();
    assert_eq!(
        contents(&requests[3]),
        [
            ("user".to_string(), "run echo hi".to_string()),
            ("user".to_string(), SUMMARY_MESSAGE.to_string()),
            ("assistant".to_string(), "all done".to_string()),
            ("user".to_string(), "and now?".to_string()),
        ]
    );
}

#[test]
fn pre_compact_continue_false_ends_the_turn_and_keeps_the_history() {
    let p = Project::codex(
        &[
            (
                "PreCompact",
                r#"printf '%s' '{"continue":false,"stopReason":"not now"}'"#,
            ),
            ("PostCompact", "true"),
            ("Stop", "true"),
        ],
        HALF_WINDOW,
    );
    let run = p.prompt("c2", "run echo hi", compacting_script());
    assert_eq!(p.order(), ["PreCompact"]);
    assert!(run.of_type("session/compacted").is_empty());
    let end = run.of_type("turn/end");
    assert_eq!(
        end[0]["message"], "halted by plugin `hooks-codex`: not now",
        "{}",
        run.outcome.stderr
    );
    // No checkpoint request; the next turn has the whole history.
    assert_eq!(p.requests().len(), 1);
    let next = p.prompt("c2", "again", json!([{"text": "ok"}]));
    assert_eq!(next.outcome.code, Some(0), "{}", next.outcome.stderr);
    let roles: Vec<String> = contents(&p.requests()[1])
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "user"]);
}
