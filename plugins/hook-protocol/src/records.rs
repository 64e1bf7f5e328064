//! The `hook/invoked` and `hook/result` session-log records.
//!
//! One pair per hook that ran (or was refused) inside a turn, appended after
//! every hook of the point finished, in config order, so the log is
//! deterministic although the hooks ran in parallel. Output is summarized:
//! a long stderr is truncated with a marker, never stored whole (the hook's
//! effect on the conversation is recorded by the host separately).

use serde_json::{Value, json};

use dsh_plugin_api::notice::UserNotice;

use crate::Dialect;
use crate::point::HookRun;

/// Characters of stdout or stderr kept in a `hook/result` record.
pub const SUMMARY_CHARS: usize = 240;

/// Truncates `text` to `limit` characters, marking how much was cut.
pub fn summarize(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_string();
    }
    let kept: String = text.chars().take(limit).collect();
    format!("{kept}…[{} more chars]", total - limit)
}

/// The `hook/invoked` record, field for field in its JSON order.
#[derive(serde::Serialize)]
struct Invoked<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    dialect: &'static str,
    event: &'a str,
    command: &'a str,
    matcher: Option<&'a str>,
    source: &'a str,
    index: usize,
}

/// The `hook/result` record, field for field in its JSON order.
#[derive(serde::Serialize)]
struct Finished<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    dialect: &'static str,
    event: &'a str,
    command: &'a str,
    index: usize,
    outcome: &'static str,
    exit_code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    spawn_error: Option<&'a str>,
    duration_ms: u64,
    stdout: String,
    stdout_truncated: bool,
    stderr: String,
    stderr_truncated: bool,
    detail: Option<&'a str>,
}

/// The `hook/invoked` and `hook/result` records of one hook as JSON text,
/// written straight from the run (no `Value` tree): exactly what
/// [`invoked`] and [`result`] print. This is how the bridges send them
/// across the plugin boundary, which takes text.
pub fn pair_text(
    dialect: Dialect,
    event: &str,
    run: &HookRun,
) -> Result<[String; 2], serde_json::Error> {
    let a = &run.answer;
    let invoked = Invoked {
        kind: "hook/invoked",
        dialect: dialect.as_str(),
        event,
        command: &run.command,
        matcher: run.matcher.as_deref(),
        source: &run.source,
        index: run.index,
    };
    let result = Finished {
        kind: "hook/result",
        dialect: dialect.as_str(),
        event,
        command: &run.command,
        index: run.index,
        outcome: run.outcome.as_str(),
        exit_code: a.exit_code,
        signal: a.signal,
        timed_out: a.timed_out,
        spawn_error: a.spawn_error.as_deref(),
        duration_ms: a.duration_ms,
        stdout: summarize(&a.stdout, SUMMARY_CHARS),
        stdout_truncated: a.stdout_truncated,
        stderr: summarize(&a.stderr, SUMMARY_CHARS),
        stderr_truncated: a.stderr_truncated,
        detail: run.detail.as_deref(),
    };
    Ok([text(&invoked, 256)?, text(&result, 512)?])
}

/// `record` as JSON text, written into a buffer of `size` bytes to start
/// with (a record is a few hundred bytes: no growing and copying).
fn text<T: serde::Serialize>(record: &T, size: usize) -> Result<String, serde_json::Error> {
    let mut bytes = Vec::with_capacity(size);
    serde_json::to_writer(&mut bytes, record)?;
    String::from_utf8(bytes).map_err(<serde_json::Error as serde::ser::Error>::custom)
}

/// The `hook/invoked` record of one hook.
pub fn invoked(dialect: Dialect, event: &str, run: &HookRun) -> Value {
    json!({
        "type": "hook/invoked",
        "dialect": dialect.as_str(),
        "event": event,
        "command": run.command,
        "matcher": run.matcher,
        "source": run.source,
        "index": run.index,
    })
}

/// The `hook/result` record of one hook.
pub fn result(dialect: Dialect, event: &str, run: &HookRun) -> Value {
    let a = &run.answer;
    json!({
        "type": "hook/result",
        "dialect": dialect.as_str(),
        "event": event,
        "command": run.command,
        "index": run.index,
        "outcome": run.outcome.as_str(),
        "exit_code": a.exit_code,
        "signal": a.signal,
        "timed_out": a.timed_out,
        "spawn_error": a.spawn_error,
        "duration_ms": a.duration_ms,
        "stdout": summarize(&a.stdout, SUMMARY_CHARS),
        "stdout_truncated": a.stdout_truncated,
        "stderr": summarize(&a.stderr, SUMMARY_CHARS),
        "stderr_truncated": a.stderr_truncated,
        "detail": run.detail,
    })
}

/// The `user/notice` records of one hook's answer: its `systemMessage`,
/// and the `stopReason` of a `continue: false`, which the CLIs show the
/// user and never the model.
pub fn notices(dialect: Dialect, event: &str, run: &HookRun) -> Vec<Value> {
    let (_, stdout) = crate::codec::read_output(&run.answer, dialect);
    let crate::codec::Stdout::Json(map) = stdout else {
        return Vec::new();
    };
    let source = format!("{event} hook");
    let mut out = Vec::new();
    if let Some(text) = map.get("systemMessage").and_then(Value::as_str)
        && !text.is_empty()
    {
        out.push(UserNotice::new(text, source.clone()).record());
    }
    if let Some(Some(reason)) = crate::codec::stop_requested(&map)
        && !reason.is_empty()
    {
        out.push(UserNotice::new(reason, source).record());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_with_a_marker() {
        let long = "x".repeat(600);
        let s = summarize(&long, SUMMARY_CHARS);
        assert!(s.starts_with(&"x".repeat(SUMMARY_CHARS)));
        assert!(s.ends_with("…[360 more chars]"));
        assert!(s.chars().count() < 300);
        assert_eq!(summarize("short", SUMMARY_CHARS), "short");
    }

    fn run(matcher: Option<&str>, answer: crate::runner::RunAnswer) -> HookRun {
        HookRun {
            index: 3,
            command: "echo \"hi\" # é".into(),
            matcher: matcher.map(str::to_string),
            source: "/cfg/settings.json".into(),
            answer,
            outcome: crate::point::Outcome::NonBlockingError,
            detail: matcher.map(|_| "bad \n output".to_string()),
            finished: 0,
        }
    }

    #[test]
    fn the_text_pair_is_byte_for_byte_the_value_records() {
        let full = crate::runner::RunAnswer {
            exit_code: None,
            signal: Some(9),
            stdout: "o".repeat(300),
            stderr: "line\n\u{1}\"".into(),
            stdout_truncated: true,
            stderr_truncated: false,
            timed_out: true,
            spawn_error: Some("cannot run".into()),
            duration_ms: 1234,
            ..crate::runner::RunAnswer::default()
        };
        let plain = crate::runner::RunAnswer {
            exit_code: Some(0),
            ..crate::runner::RunAnswer::default()
        };
        for (dialect, run) in [
            (Dialect::Claude, run(Some("Bash|Edit"), full)),
            (Dialect::Codex, run(None, plain)),
        ] {
            let [invoked_text, result_text] = pair_text(dialect, "PreToolUse", &run).unwrap();
            assert_eq!(
                invoked_text,
                invoked(dialect, "PreToolUse", &run).to_string()
            );
            assert_eq!(result_text, result(dialect, "PreToolUse", &run).to_string());
        }
    }

    #[test]
    fn summary_counts_characters_not_bytes() {
        let s = summarize("ééé", 2);
        assert_eq!(s, "éé…[1 more chars]");
    }
}
