//! Codex's `write_stdin {session_id, chars?, yield_time_ms?,
//! max_output_tokens?}`: writes to a running `exec_command` process and
//! returns what it wrote since, framed as `exec_command`'s output
//! (recorded `C207-*`, `C208-*`).
//!
//! - Empty `chars` polls: the call waits until the process ends or
//!   `yield_time_ms` passes, clamped to 5 s .. 300 s (Codex's
//!   `MIN_EMPTY_YIELD_TIME_MS` and its background terminal timeout; a poll
//!   of 500 ms still waits up to 5 s, `C207-two-polls`).
//! - A process on a terminal (`tty: true`) gets the characters as typed:
//!   the terminal echoes them, and Ctrl-C interrupts (`C208-tty`).
//! - Without one, `"\u{3}"` is Ctrl-C: SIGINT to the process group
//!   (`Process exited with code 130`, `C208-interrupt-pipe`). Other
//!   characters cannot be written: the process's stdin is `/dev/null`, and
//!   the call fails with Codex's words (`C208-write-to-pipe`).
//! - A write's wait: 250 ms .. 30 s, 250 ms by default.
//! - A process that ended is forgotten: the call that saw its end is the
//!   last (`write_stdin failed: Unknown process id <n>`, `C207-*`).
//!
//! Arguments that do not parse fail as Codex's do, with serde's message
//! (`failed to parse function arguments: invalid type: null, expected i32
//! at line 1 column 19`, `C207-stdin`).

use dsh_plugin_api::sdk::codex_exec::WRITE_STDIN;
use dsh_plugin_api::{ToolCall, ToolResult, ToolSpec};
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;

use super::output::Budget;
use super::{ExecContext, MAX_YIELD_MS, MIN_YIELD_MS, Status, chunk_result, yield_time};

/// The tool's name.
pub const TOOL_NAME: &str = WRITE_STDIN;
/// Ctrl-C, the one input a process without a terminal takes.
pub const INTERRUPT: &str = "\u{3}";
/// An empty poll's shortest wait (Codex's `MIN_EMPTY_YIELD_TIME_MS`).
pub const MIN_POLL_MS: u64 = 5_000;
/// An empty poll's longest wait (Codex's default
/// `background_terminal_max_timeout`).
pub const MAX_POLL_MS: u64 = 300_000;
/// A write's wait when the model gives none.
pub const DEFAULT_WRITE_YIELD_MS: u64 = 250;
/// Codex's answer to characters for a process without a terminal.
pub const STDIN_CLOSED: &str =
    "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open";

/// The arguments, as Codex reads them.
#[derive(Debug, Deserialize)]
struct Args {
    session_id: i32,
    #[serde(default)]
    chars: String,
    #[serde(default)]
    yield_time_ms: Option<u64>,
    #[serde(default)]
    max_output_tokens: Option<u64>,
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    let schema = json!({
        "type": "object",
        "properties": {
            "session_id": {"type": "number",
                "description": "Identifier of the running unified exec session."},
            "chars": {"type": "string",
                "description": "Bytes to write to stdin (may be empty to poll)."},
            "yield_time_ms": {"type": "number",
                "description": "How long to wait (in milliseconds) for output before yielding."},
            "max_output_tokens": {"type": "number",
                "description": "Maximum number of tokens to return. Excess output will be truncated."}
        },
        "required": ["session_id"]
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Writes characters to an existing exec_command session and returns recent \
                      output."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// Runs the tool body.
pub async fn run(call: &ToolCall, ctx: &ExecContext) -> ToolResult {
    let parsed: Args = match serde_json::from_str(&call.arguments) {
        Ok(a) => a,
        Err(e) => return ToolResult::error(format!("failed to parse function arguments: {e}")),
    };
    let session = call.session.session_id.as_str();
    let id = parsed.session_id;
    let Some(kept) = ctx.processes.get(session, id) else {
        return ToolResult::error(format!("write_stdin failed: Unknown process id {id}"));
    };
    let started = Instant::now();
    let wait = if parsed.chars.is_empty() {
        let asked = yield_time(
            parsed.yield_time_ms,
            DEFAULT_WRITE_YIELD_MS,
            MIN_YIELD_MS,
            u64::MAX,
        );
        asked.clamp(
            std::time::Duration::from_millis(MIN_POLL_MS),
            std::time::Duration::from_millis(MAX_POLL_MS),
        )
    } else if kept.process.has_terminal() {
        if let Err(e) = kept.process.write(parsed.chars.into_bytes()) {
            return ToolResult::error(format!("write_stdin failed: {e}"));
        }
        yield_time(
            parsed.yield_time_ms,
            DEFAULT_WRITE_YIELD_MS,
            MIN_YIELD_MS,
            MAX_YIELD_MS,
        )
    } else if parsed.chars == INTERRUPT {
        kept.process.interrupt();
        yield_time(
            parsed.yield_time_ms,
            DEFAULT_WRITE_YIELD_MS,
            MIN_YIELD_MS,
            MAX_YIELD_MS,
        )
    } else {
        return ToolResult::error(format!("write_stdin failed: {STDIN_CLOSED}"));
    };
    let got = kept.process.collect(started + wait).await;
    let budget = Budget::tokens(parsed.max_output_tokens);
    match got.exit_code {
        Some(code) => {
            ctx.processes.remove(session, id);
            chunk_result(
                &got,
                started,
                Status::Exited(code),
                budget,
                Some(kept.call.clone()),
            )
        }
        None => chunk_result(&got, started, Status::Running(id), budget, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_session_id_fails_as_codexs_serde_does() {
        // The recorded arguments, byte for byte (`C207-stdin`).
        let e = serde_json::from_str::<Args>(
            r#"{"session_id": null, "chars": "hello\n", "yield_time_ms": 2000}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid type: null, expected i32 at line 1 column 19"
        );
    }
}
