//! The Codex-shaped shell tools `exec_command` and `write_stdin` (config
//! `codex_exec_command`), for sessions whose hooks are Codex's: what the
//! model reads and what a Codex hook gets as `tool_response` are Codex
//! 0.171.0's (vectors `codex/*`, exec sessions `C207-*`, `C208-*`).
//!
//! `exec_command {cmd, workdir?, tty?, yield_time_ms?, max_output_tokens?}`
//! runs the command as Codex runs it, `/bin/bash -lc <cmd>`, in `workdir`
//! (relative to the session's cwd) or the session's cwd, stdin
//! `/dev/null`, stderr into the same stream as stdout (with `tty: true`, on
//! a terminal of its own: [`crate::runner::start_tapped_tty`]), with Codex's
//! variables for its commands ([`EXEC_ENV`], `CODEX_THREAD_ID`). The call
//! returns when the command ends or after `yield_time_ms` (default 10 s,
//! clamped to 250 ms .. 30 s), whichever is first. The model reads Codex's
//! framing:
//!
//! ```text
//! Chunk ID: <6 hex>
//! Wall time: <seconds> seconds
//! Process exited with code <N>            (or: Process running with session ID <n>)
//! Original token count: <ceil(bytes / 4)>
//! Output:
//! <output>
//! ```
//!
//! A command still running is kept ([`store`]) and `write_stdin
//! {session_id, chars?, yield_time_ms?, max_output_tokens?}` ([`write_stdin`])
//! collects what it wrote since, the same way framed, until it ends.
//! The structured result ([`dsh_plugin_api::sdk::codex_exec`]) tells the
//! Codex bridge when PostToolUse fires: at the end of the command, for the
//! `exec_command` call, with the last chunk. The token count is of the
//! raw bytes; `<output>` is the text decoded lossily and cut to the call's
//! budget as Codex cuts it ([`output`]). The session's cwd does not move
//! (Codex's shell has no `cd` that persists). With a `sandbox_mode` the
//! command runs in Codex's sandbox ([`crate::sandbox`]): a refused write is
//! the command's own failure (`touch: cannot touch 'x': Read-only file
//! system`, exit 1), framed as any other output.

pub mod output;
pub mod process;
pub mod store;
pub mod write_stdin;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use dsh_plugin_api::sdk::codex_exec::{ExecStructured, FinishedCall};
use dsh_plugin_api::{ToolCall, ToolResult, ToolSpec};
use serde_json::json;
use tokio::time::Instant;

use crate::runner::RunRequest;
use crate::sandbox::Sandbox;
use process::{Collected, ExecProcess};
use store::ExecSessions;

/// The tool's name.
pub const TOOL_NAME: &str = dsh_plugin_api::sdk::codex_exec::EXEC_COMMAND;
/// How long a call waits for its command when the model says nothing
/// (Codex's `DEFAULT_EXEC_YIELD_TIME_MS`, recorded `C202c`).
pub const DEFAULT_YIELD_MS: u64 = 10_000;
/// The shortest wait a call may ask for (Codex's `MIN_YIELD_TIME_MS`;
/// recorded `C208-bad-yield`: 100 waits 250).
pub const MIN_YIELD_MS: u64 = 250;
/// The longest (Codex's `MAX_YIELD_TIME_MS`).
pub const MAX_YIELD_MS: u64 = 30_000;

/// The variables Codex sets for every command it runs (its
/// `UNIFIED_EXEC_ENV`; recorded `C208-env`), over the configured ones.
pub const EXEC_ENV: [(&str, &str); 10] = [
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("LANG", "C.UTF-8"),
    ("LC_CTYPE", "C.UTF-8"),
    ("LC_ALL", "C.UTF-8"),
    ("COLORTERM", ""),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GH_PAGER", "cat"),
    ("CODEX_CI", "1"),
];

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    let schema = json!({
        "type": "object",
        "properties": {
            "cmd": {"type": "string", "description": "Shell command to execute."},
            "workdir": {"type": "string",
                "description": "The working directory to execute the command in (default: the session's)."},
            "tty": {"type": "boolean",
                "description": "Whether to run the command on a terminal, so write_stdin can send it input (default false)."},
            "yield_time_ms": {"type": "number",
                "description": "How long to wait (in milliseconds) for output before yielding."},
            "max_output_tokens": {"type": "number",
                "description": "Maximum number of tokens to return. Excess output will be truncated."}
        },
        "required": ["cmd"]
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Runs a command in a login bash shell, returning its output or, when it is \
                      still running after yield_time_ms, a session ID for write_stdin."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// `exec_command`'s arguments, as Codex reads them: a call that does not
/// fit fails with serde's message (`failed to parse function arguments:
/// missing field `cmd` at line 1 column 2`), as Codex's does (`C207-stdin`
/// for `write_stdin`). Other keys are ignored.
#[derive(Debug, serde::Deserialize)]
struct ExecArgs {
    cmd: String,
    #[serde(default)]
    workdir: Option<String>,
    #[serde(default)]
    tty: bool,
    #[serde(default)]
    yield_time_ms: Option<u64>,
    #[serde(default)]
    max_output_tokens: Option<u64>,
}

/// What the shell tools share: the plugin's settings and the kept
/// processes.
pub struct ExecContext {
    /// Credential-like variables children may still inherit.
    pub env_allow: Vec<String>,
    /// Variables set for every command (`codex_exec_env`).
    pub env: BTreeMap<String, String>,
    /// Codex's sandbox, when one is configured.
    pub sandbox: Option<Sandbox>,
    /// The processes still running.
    pub processes: ExecSessions,
}

/// Where the command runs: `workdir` against the session's cwd.
fn workdir(workdir: Option<&str>, cwd: &Path) -> PathBuf {
    match workdir {
        Some(w) if !w.is_empty() => cwd.join(w),
        _ => cwd.to_path_buf(),
    }
}

/// How a chunk of output ends its framing: the process's exit, or the id
/// it keeps running under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `Process exited with code <N>`.
    Exited(i64),
    /// `Process running with session ID <n>`.
    Running(i32),
}

/// Codex's framing of one chunk of output whose raw form had `bytes`
/// bytes.
pub fn framed(chunk_id: &str, wall_s: f64, status: Status, bytes: usize, output: &str) -> String {
    let tokens = output::tokens_of(bytes);
    let status = match status {
        Status::Exited(code) => format!("Process exited with code {code}"),
        Status::Running(id) => format!("Process running with session ID {id}"),
    };
    format!(
        "Chunk ID: {chunk_id}\nWall time: {wall_s:.4} seconds\n{status}\n\
         Original token count: {tokens}\nOutput:\n{output}"
    )
}

/// A call's wait: `asked`, else `default`, clamped to `min ..= max`.
pub(crate) fn yield_time(asked: Option<u64>, default: u64, min: u64, max: u64) -> Duration {
    Duration::from_millis(asked.unwrap_or(default).clamp(min, max))
}

/// One collected chunk as the model reads it, and the structured result
/// beside it.
pub(crate) fn chunk_result(
    got: &Collected,
    started: Instant,
    status: Status,
    budget: output::Budget,
    finished_call: Option<FinishedCall>,
) -> ToolResult {
    let chunk = &uuid::Uuid::new_v4().simple().to_string()[..6];
    let output = output::cut(&String::from_utf8_lossy(&got.bytes), budget);
    let text = framed(
        chunk,
        started.elapsed().as_secs_f64(),
        status,
        got.written,
        &output,
    );
    let structured = ExecStructured {
        output,
        running_session_id: match status {
            Status::Running(id) => Some(id),
            Status::Exited(_) => None,
        },
        finished_call,
    };
    ToolResult::text(text).with_structured(structured.to_json())
}

/// Runs the tool body, in the context's sandbox when there is one (its
/// policy cwd is the session's cwd, as Codex's `sandbox_policy_cwd`).
pub async fn run(call: &ToolCall, ctx: &ExecContext) -> ToolResult {
    let parsed: ExecArgs = match serde_json::from_str(&call.arguments) {
        Ok(a) => a,
        Err(e) => return ToolResult::error(format!("failed to parse function arguments: {e}")),
    };
    let cmd = parsed.cmd.as_str();
    let cwd = Path::new(call.session.cwd.as_str());
    let dir = workdir(parsed.workdir.as_deref(), cwd);
    let tty = parsed.tty;
    let program = vec![
        "/bin/bash".to_string(),
        "-c".to_string(),
        // Without a terminal, stderr joins stdout and stdin is nothing
        // (Codex's pipe sessions); then the login shell runs the command.
        if tty {
            "exec /bin/bash -lc \"$1\""
        } else {
            "exec 2>&1 </dev/null; exec /bin/bash -lc \"$1\""
        }
        .to_string(),
        "bash".to_string(),
        cmd.to_string(),
    ];
    // The mask folders stay until the process has ended (`masks`).
    let (program, masks) = match &ctx.sandbox {
        Some(sandbox) => {
            let tmpdir = crate::sandbox::command_tmpdir(ctx.env.get("TMPDIR"));
            match sandbox.wrap(program, cwd, &[], tmpdir.as_deref()) {
                Ok(w) => (w.argv, Some(w.masks)),
                Err(e) => {
                    return ToolResult::error(format!(
                        "exec_command: {}{e}{}",
                        crate::sandbox::MESSAGE_PREFIX,
                        crate::sandbox::NOT_RUN_SUFFIX
                    ));
                }
            }
        }
        None => (program, None),
    };
    let mut spec = RunRequest::new(program, &dir);
    spec.timeout_ms = None;
    spec.allow_env = ctx.env_allow.clone();
    spec.env.insert(
        "CODEX_THREAD_ID".into(),
        call.session.session_id.to_string(),
    );
    spec.env
        .extend(ctx.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    spec.env.extend(
        EXEC_ENV
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string())),
    );
    let started = Instant::now();
    let process = match ExecProcess::start(spec, masks, tty) {
        Ok(p) => Arc::new(p),
        Err(e) => return ToolResult::error(format!("exec_command: {e}")),
    };
    let wait = yield_time(
        parsed.yield_time_ms,
        DEFAULT_YIELD_MS,
        MIN_YIELD_MS,
        MAX_YIELD_MS,
    );
    let got = process.collect(started + wait).await;
    let status = match got.exit_code {
        Some(code) => {
            if ctx.sandbox.is_some() {
                let outcome = crate::runner::RunAnswer {
                    exit_code: i32::try_from(code).ok(),
                    stdout: String::from_utf8_lossy(&got.bytes).into_owned(),
                    ..Default::default()
                };
                if let Some(message) = crate::sandbox::refusal(&outcome) {
                    return ToolResult::error(format!("exec_command: {message}"));
                }
            }
            Status::Exited(code)
        }
        None => Status::Running(ctx.processes.insert(
            &call.session.session_id,
            process,
            FinishedCall {
                call_id: call.call_id.to_string(),
                arguments: call.arguments.to_string(),
            },
        )),
    };
    let budget = output::Budget::tokens(parsed.max_output_tokens);
    chunk_result(&got, started, status, budget, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_is_codexs() {
        assert_eq!(
            framed("ab12cd", 0.0, Status::Exited(3), 8, "out\nerr\n"),
            "Chunk ID: ab12cd\nWall time: 0.0000 seconds\nProcess exited with code 3\nOriginal token count: 2\nOutput:\nout\nerr\n"
        );
        assert_eq!(
            framed("01bc45", 0.3021, Status::Running(19434), 0, ""),
            "Chunk ID: 01bc45\nWall time: 0.3021 seconds\nProcess running with session ID 19434\nOriginal token count: 0\nOutput:\n"
        );
        assert_eq!(
            workdir(Some("/tmp"), Path::new("/p")),
            PathBuf::from("/tmp")
        );
        assert_eq!(
            workdir(Some("sub"), Path::new("/p")),
            PathBuf::from("/p/sub")
        );
        assert_eq!(workdir(None, Path::new("/p")), PathBuf::from("/p"));
    }
}
