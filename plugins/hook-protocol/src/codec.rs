//! The exit-code contract and stdout classification shared by both dialects.
//!
//! - exit 0: stdout is the hook's answer ([`Stdout`]);
//! - exit 2: block; stderr is the reason and stdout is ignored;
//! - any other exit (127 included), a signal, a timeout or a spawn failure:
//!   a non-blocking error, the hook has no say;
//! - an output over [`crate::MAX_OUTPUT_BYTES`] ([`Exit::OutputTooLarge`]):
//!   the hook was killed and its answer cannot be read whole, so it is taken
//!   as a block (exit 2) whose stderr names the error. A gate whose answer
//!   cannot be read fails closed, never open.
//!
//! Where the dialects differ the vectors decide: Claude also honours a JSON
//! object printed by a hook that exits 1 or 3 or dies of a signal (vectors
//! `S3-deny-exit1`, `S277-pre-exit3-json-deny`, `S283-*`), so
//! [`Exit::output_counts`] says whether
//! stdout is read at all per dialect, and Codex reports "looks like JSON
//! but is not a JSON object" as invalid output where Claude falls back to
//! plain text. Claude reads an exit 2's JSON too (`S277-*`): the Claude
//! bridge parses that stdout itself, [`read_output`] does not. Claude trims
//! stdout as JavaScript does ([`trim`]) and reads JSON of any depth
//! ([`crate::deep_json`]).

use serde_json::{Map, Value};

use crate::Dialect;
use crate::runner::RunAnswer;

/// How a hook process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit 0.
    Success,
    /// Exit 2: block with stderr.
    Block,
    /// Another exit code.
    Failed {
        /// The code.
        code: i32,
    },
    /// Killed by a signal (not our timeout).
    Signaled {
        /// The signal number, when known.
        signal: Option<i32>,
    },
    /// The timeout fired; the hook fails open.
    TimedOut,
    /// Never started (or the runner was unreachable).
    SpawnFailed {
        /// Why.
        message: String,
    },
    /// An output stream passed the hard limit: the hook was killed, its
    /// answer is unreadable, and it counts as a block.
    OutputTooLarge {
        /// `stdout` or `stderr`.
        stream: &'static str,
    },
}

/// The stderr a hook whose output passed the limit is read with: the reason
/// of its block.
pub fn output_too_large_message(stream: &str) -> String {
    format!(
        "hook {stream} exceeded the {} MiB output limit; the hook was killed and its answer \
         taken as a blocking error",
        crate::MAX_OUTPUT_BYTES / (1024 * 1024)
    )
}

impl Exit {
    /// Classifies a runner answer.
    pub fn of(answer: &RunAnswer) -> Exit {
        if let Some(message) = &answer.spawn_error {
            return Exit::SpawnFailed {
                message: message.clone(),
            };
        }
        // A cut stdout is never parsed: whatever a runner reports as not
        // whole (killed at the limit, or an older runner's tail cut) is an
        // unreadable answer.
        if answer.output_limit_exceeded || answer.stdout_truncated {
            let stream = if answer.stdout_truncated || !answer.stderr_truncated {
                "stdout"
            } else {
                "stderr"
            };
            return Exit::OutputTooLarge { stream };
        }
        if answer.timed_out {
            return Exit::TimedOut;
        }
        match answer.exit_code {
            Some(0) => Exit::Success,
            Some(2) => Exit::Block,
            Some(code) => Exit::Failed { code },
            None => Exit::Signaled {
                signal: answer.signal,
            },
        }
    }

    /// Whether the hook blocks: exit 2, or an output past the limit.
    pub fn blocks(&self) -> bool {
        matches!(self, Exit::Block | Exit::OutputTooLarge { .. })
    }

    /// Whether the hook's stdout is read as its answer.
    ///
    /// Both dialects read stdout on exit 0. Claude Code also honours a JSON
    /// object on other ordinary exit codes (not 2, whose stdout is ignored
    /// here): vector `S3-deny-exit1` denies on exit 1; and from a hook that
    /// died of a signal, which it reports as exit 1 (`S283-*`: a deny
    /// printed before a SIGKILL or SIGTERM is honoured). Plain text is
    /// context only on exit 0 (see [`Stdout::plain_counts`]); a hook past
    /// its timeout is never read (`S280-*`).
    pub fn output_counts(&self, dialect: Dialect) -> bool {
        matches!(
            (self, dialect),
            (Exit::Success, _) | (Exit::Failed { .. } | Exit::Signaled { .. }, Dialect::Claude)
        )
    }
}

/// What a hook printed on stdout.
#[derive(Clone, Debug, PartialEq)]
pub enum Stdout {
    /// Nothing but whitespace.
    Empty,
    /// A JSON object: the structured answer.
    Json(Map<String, Value>),
    /// Plain text, trimmed.
    Plain(String),
    /// Looked like JSON but is not a JSON object (Codex: an error, fail open).
    Invalid(String),
}

impl Stdout {
    /// Classifies stdout for `dialect`.
    ///
    /// Leading text makes stdout plain text in both dialects: only output
    /// whose first non-blank character is `{` can be JSON. Claude treats a
    /// `{` that does not parse as plain text; Codex reports it (and a bare
    /// `[`) as invalid output and ignores it.
    pub fn parse(stdout: &str, dialect: Dialect) -> Stdout {
        let trimmed = trim(stdout, dialect);
        if trimmed.is_empty() {
            return Stdout::Empty;
        }
        // Claude Code reads any depth: values nested past what the parser
        // follows are cut to a string first, so a deep answer still reads
        // (`crate::deep_json`). Codex's own reader stops where ours does.
        let parsed = if trimmed.starts_with('{') {
            let text = match dialect {
                Dialect::Claude => crate::deep_json::flattened(trimmed),
                Dialect::Codex => std::borrow::Cow::Borrowed(trimmed),
            };
            serde_json::from_str::<Value>(&text).ok()
        } else {
            None
        };
        match (parsed, dialect) {
            (Some(Value::Object(map)), _) => Stdout::Json(map),
            (_, Dialect::Codex) if trimmed.starts_with('{') || trimmed.starts_with('[') => {
                Stdout::Invalid(trimmed.to_string())
            }
            _ => Stdout::Plain(trimmed.to_string()),
        }
    }

    /// The plain text, when stdout is plain text and the exit allows it.
    pub fn plain_counts<'a>(&'a self, exit: &Exit) -> Option<&'a str> {
        match (self, exit) {
            (Stdout::Plain(text), Exit::Success) => Some(text),
            _ => None,
        }
    }
}

/// `text` without leading and trailing white space, as each dialect trims
/// a hook's stdout: Codex with Rust's `trim`, Claude Code with
/// JavaScript's, which also drops a byte order mark (U+FEFF) and keeps
/// U+0085 (vector `S270-bom-json`: a JSON answer after a BOM is read).
pub fn trim(text: &str, dialect: Dialect) -> &str {
    match dialect {
        Dialect::Codex => text.trim(),
        Dialect::Claude => text.trim_matches(is_js_space),
    }
}

/// JavaScript's `String.prototype.trim` set: white space (tab, vertical
/// tab, form feed, U+FEFF and the space separators) and line terminators.
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The stdout of a finished hook, classified, when its exit lets stdout count.
pub fn read_output(answer: &RunAnswer, dialect: Dialect) -> (Exit, Stdout) {
    let exit = Exit::of(answer);
    let stdout = if exit.output_counts(dialect) {
        Stdout::parse(&answer.stdout, dialect)
    } else {
        Stdout::Empty
    };
    (exit, stdout)
}

/// `hookSpecificOutput.hookEventName`, when present.
pub fn hook_event_name(output: &Map<String, Value>) -> Option<&str> {
    output
        .get("hookSpecificOutput")?
        .get("hookEventName")?
        .as_str()
}

/// Checks that `hookSpecificOutput.hookEventName`, when given, names
/// `expected`; otherwise the whole output is invalid (Claude; vector
/// `S3-wrong-event-name`). The error is the CLI's own wording.
pub fn check_event_name(output: &Map<String, Value>, expected: &str) -> Result<(), String> {
    match hook_event_name(output) {
        Some(name) if name != expected => Err(format!(
            "Hook returned incorrect event name: expected '{expected}' but got '{name}'"
        )),
        _ => Ok(()),
    }
}

/// A string field of a JSON output.
pub fn str_field<'a>(output: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    output.get(key)?.as_str()
}

/// A string field of `hookSpecificOutput`.
pub fn specific_str<'a>(output: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    output.get("hookSpecificOutput")?.get(key)?.as_str()
}

/// `continue: false`, with the `stopReason` if any.
pub fn stop_requested(output: &Map<String, Value>) -> Option<Option<&str>> {
    match output.get("continue") {
        Some(Value::Bool(false)) => Some(str_field(output, "stopReason")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: Option<i32>, stdout: &str) -> RunAnswer {
        RunAnswer {
            exit_code: code,
            stdout: stdout.into(),
            ..RunAnswer::default()
        }
    }

    #[test]
    fn exit_codes_classify() {
        assert_eq!(Exit::of(&answer(Some(0), "")), Exit::Success);
        assert_eq!(Exit::of(&answer(Some(2), "")), Exit::Block);
        assert_eq!(Exit::of(&answer(Some(127), "")), Exit::Failed { code: 127 });
        let mut killed = answer(None, "");
        killed.signal = Some(9);
        assert_eq!(Exit::of(&killed), Exit::Signaled { signal: Some(9) });
        let mut late = answer(None, "");
        late.timed_out = true;
        assert_eq!(Exit::of(&late), Exit::TimedOut);
        assert!(matches!(
            Exit::of(&RunAnswer::spawn_failure("no shell")),
            Exit::SpawnFailed { .. }
        ));
    }

    #[test]
    fn an_output_past_the_limit_blocks_and_its_stdout_is_never_read() {
        // A valid deny, cut: never parsed, whatever its exit code.
        let mut cut = answer(Some(0), r#"{"decision":"block","reason":"x"#);
        cut.stdout_truncated = true;
        cut.output_limit_exceeded = true;
        let (exit, out) = read_output(&cut, Dialect::Claude);
        assert_eq!(exit, Exit::OutputTooLarge { stream: "stdout" });
        assert!(exit.blocks());
        assert_eq!(out, Stdout::Empty);
        // An older runner that cut the head without killing: same.
        let mut tail = answer(Some(0), "}");
        tail.stdout_truncated = true;
        assert!(Exit::of(&tail).blocks());
        // stderr past the limit.
        let mut err = answer(None, "");
        err.stderr_truncated = true;
        err.output_limit_exceeded = true;
        assert_eq!(Exit::of(&err), Exit::OutputTooLarge { stream: "stderr" });
        assert!(output_too_large_message("stdout").contains("16 MiB"));
        assert!(!Exit::Success.blocks() && Exit::Block.blocks());
    }

    #[test]
    fn json_only_when_stdout_is_an_object() {
        assert!(matches!(
            Stdout::parse("  {\"a\":1}\n", Dialect::Claude),
            Stdout::Json(_)
        ));
        assert_eq!(
            Stdout::parse("note {\"a\":1}", Dialect::Claude),
            Stdout::Plain("note {\"a\":1}".into())
        );
        assert_eq!(Stdout::parse(" \n", Dialect::Codex), Stdout::Empty);
        assert_eq!(
            Stdout::parse("\n\n  line A\nline B  \n\n", Dialect::Codex),
            Stdout::Plain("line A\nline B".into())
        );
    }

    #[test]
    fn claude_trims_as_javascript_does() {
        let bom = "\u{feff}\n {\"a\":1}\n";
        assert!(matches!(
            Stdout::parse(bom, Dialect::Claude),
            Stdout::Json(_)
        ));
        assert_eq!(
            Stdout::parse(bom, Dialect::Codex),
            Stdout::Plain("\u{feff}\n {\"a\":1}".into())
        );
        assert_eq!(trim("\u{85}x\u{3000}", Dialect::Claude), "\u{85}x");
        assert_eq!(trim("\u{85}x\u{3000}", Dialect::Codex), "x");
    }

    #[test]
    fn broken_json_is_plain_for_claude_and_invalid_for_codex() {
        assert_eq!(
            Stdout::parse("{oops", Dialect::Claude),
            Stdout::Plain("{oops".into())
        );
        assert_eq!(
            Stdout::parse("{oops", Dialect::Codex),
            Stdout::Invalid("{oops".into())
        );
        assert_eq!(
            Stdout::parse("[1,2]", Dialect::Codex),
            Stdout::Invalid("[1,2]".into())
        );
    }

    #[test]
    fn exit_two_ignores_stdout_and_claude_reads_json_on_exit_one() {
        let (exit, out) = read_output(
            &answer(Some(2), "{\"decision\":\"approve\"}"),
            Dialect::Claude,
        );
        assert_eq!((exit, out), (Exit::Block, Stdout::Empty));
        let (_, out) = read_output(
            &answer(Some(1), "{\"decision\":\"block\"}"),
            Dialect::Claude,
        );
        assert!(matches!(out, Stdout::Json(_)));
        let (_, out) = read_output(&answer(Some(1), "{\"decision\":\"block\"}"), Dialect::Codex);
        assert_eq!(out, Stdout::Empty);
        let (exit, out) = read_output(&answer(Some(1), "plain"), Dialect::Claude);
        assert_eq!(out.plain_counts(&exit), None);
        // Killed by a signal after printing: Claude reads it as exit 1.
        let mut killed = answer(None, "{\"decision\":\"block\"}");
        killed.signal = Some(9);
        assert!(matches!(
            read_output(&killed, Dialect::Claude).1,
            Stdout::Json(_)
        ));
        assert_eq!(read_output(&killed, Dialect::Codex).1, Stdout::Empty);
        // Past its timeout: never read.
        killed.timed_out = true;
        assert_eq!(read_output(&killed, Dialect::Claude).1, Stdout::Empty);
    }

    #[test]
    fn wrong_event_name_is_reported_in_the_cli_wording() {
        let Stdout::Json(map) = Stdout::parse(
            r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse"}}"#,
            Dialect::Claude,
        ) else {
            panic!("json expected")
        };
        assert_eq!(
            check_event_name(&map, "PreToolUse").unwrap_err(),
            "Hook returned incorrect event name: expected 'PreToolUse' but got 'PostToolUse'"
        );
        assert!(check_event_name(&map, "PostToolUse").is_ok());
    }

    #[test]
    fn continue_false_carries_its_stop_reason() {
        let Stdout::Json(map) = Stdout::parse(
            r#"{"continue":false,"stopReason":"enough"}"#,
            Dialect::Codex,
        ) else {
            panic!("json expected")
        };
        assert_eq!(stop_requested(&map), Some(Some("enough")));
    }
}
