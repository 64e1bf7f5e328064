//! The Codex-shaped shell tool `exec_command` (config `codex_exec_command`),
//! for sessions whose hooks are Codex's: what the model reads and what a
//! Codex hook gets as `tool_response` are Codex 0.171.0's (vectors
//! `codex/*`).
//!
//! Input `{cmd, workdir?, max_output_tokens?, ...}` (Codex's other
//! arguments, such as `yield_time_ms`, are accepted and change nothing). The command runs as Codex runs it, `/bin/bash -lc <cmd>`, in
//! `workdir` (relative to the session's cwd) or the session's cwd, with
//! stderr into the same stream as stdout, so the output is the raw
//! interleaved text, trailing newline kept. The model reads Codex's
//! framing:
//!
//! ```text
//! Chunk ID: <6 hex>
//! Wall time: <seconds> seconds
//! Process exited with code <N>
//! Original token count: <ceil(bytes / 4)>
//! Output:
//! <output>
//! ```
//!
//! and the structured response is `{"output": <output>}`, which the
//! Codex bridge hands its hooks as `tool_response`. The token count is of
//! the raw bytes; `<output>` is the text decoded lossily and cut to the
//! call's budget as Codex cuts it ([`crate::exec_output`]). The session's cwd does
//! not move (Codex's shell has no `cd` that persists). With a
//! `sandbox_mode` the command runs in Codex's sandbox ([`crate::sandbox`]):
//! a refused write is the command's own failure (`touch: cannot touch
//! 'x': Read-only file system`, exit 1), framed as any other output.

use std::path::{Path, PathBuf};

use dsh_plugin_api::{ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::runner::{self, RunRequest};
use crate::sandbox::Sandbox;

/// The tool's name.
pub const TOOL_NAME: &str = "exec_command";
/// Timeout when the model gives none (Codex's default exec timeout).
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    let schema = json!({
        "type": "object",
        "properties": {
            "cmd": {"type": "string", "description": "Shell command to execute."},
            "workdir": {"type": "string",
                "description": "The working directory to execute the command in (default: the session's)."},
            "yield_time_ms": {"type": "number"},
            "max_output_tokens": {"type": "number"}
        },
        "required": ["cmd"]
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Runs a command in a login bash shell and returns its output.".into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// Where the command runs: `workdir` against the session's cwd.
fn workdir(args: &Value, cwd: &Path) -> PathBuf {
    match args.get("workdir").and_then(Value::as_str) {
        Some(w) if !w.is_empty() => cwd.join(w),
        _ => cwd.to_path_buf(),
    }
}

/// Codex's framing of one finished command whose raw output had `bytes`
/// bytes.
pub fn framed(chunk_id: &str, wall_s: f64, exit_code: i64, bytes: usize, output: &str) -> String {
    let tokens = crate::exec_output::tokens_of(bytes);
    format!(
        "Chunk ID: {chunk_id}\nWall time: {wall_s:.4} seconds\nProcess exited with code {exit_code}\n\
         Original token count: {tokens}\nOutput:\n{output}"
    )
}

/// Runs the tool body, in `sandbox` when there is one (its policy cwd is
/// the session's `cwd`, as Codex's `sandbox_policy_cwd`).
pub async fn run(
    args: &Value,
    cwd: &Path,
    env_allow: &[String],
    env: &std::collections::BTreeMap<String, String>,
    sandbox: Option<&Sandbox>,
) -> ToolResult {
    let Some(cmd) = args.get("cmd").and_then(Value::as_str) else {
        return ToolResult::error("exec_command: missing required parameter `cmd`");
    };
    let dir = workdir(args, cwd);
    let program = vec![
        "/bin/bash".to_string(),
        "-c".to_string(),
        // stderr joins stdout, then the login shell runs the command.
        "exec 2>&1; exec /bin/bash -lc \"$1\"".to_string(),
        "bash".to_string(),
        cmd.to_string(),
    ];
    // The mask folders stay until the run has ended (`masks`).
    let (program, _masks) = match sandbox {
        Some(sandbox) => {
            let tmpdir = crate::sandbox::command_tmpdir(env.get("TMPDIR"));
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
    spec.timeout_ms = Some(DEFAULT_TIMEOUT_MS);
    spec.allow_env = env_allow.to_vec();
    spec.env
        .extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let started = std::time::Instant::now();
    let (outcome, bytes) = runner::run_counted(spec).await;
    if let Some(e) = &outcome.spawn_error {
        return ToolResult::error(format!("exec_command: {e}"));
    }
    if let Some(message) = sandbox.and_then(|_| crate::sandbox::refusal(&outcome)) {
        return ToolResult::error(format!("exec_command: {message}"));
    }
    let code = match (outcome.exit_code, outcome.signal) {
        (Some(c), _) => i64::from(c),
        (None, Some(s)) => 128 + i64::from(s),
        (None, None) => -1,
    };
    let chunk = &uuid::Uuid::new_v4().simple().to_string()[..6];
    let output = crate::exec_output::cut(&outcome.stdout, crate::exec_output::Budget::of(args));
    let text = framed(chunk, started.elapsed().as_secs_f64(), code, bytes, &output);
    ToolResult::text(text).with_structured(json!({"output": output}).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_is_codexs() {
        assert_eq!(
            framed("ab12cd", 0.0, 3, 8, "out\nerr\n"),
            "Chunk ID: ab12cd\nWall time: 0.0000 seconds\nProcess exited with code 3\nOriginal token count: 2\nOutput:\nout\nerr\n"
        );
        assert_eq!(
            workdir(&json!({"workdir": "/tmp"}), Path::new("/p")),
            PathBuf::from("/tmp")
        );
        assert_eq!(
            workdir(&json!({"workdir": "sub"}), Path::new("/p")),
            PathBuf::from("/p/sub")
        );
        assert_eq!(workdir(&json!({}), Path::new("/p")), PathBuf::from("/p"));
    }
}
