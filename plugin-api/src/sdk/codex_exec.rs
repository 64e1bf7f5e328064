//! What Codex's shell tools (`exec_command`, `write_stdin`: `bash-local`)
//! tell the Codex bridge in a result's `structured` payload, so the bridge
//! fires PostToolUse when Codex does (recorded `C207-*`):
//!
//! - `{"output": <text>}`: a command that ended; PostToolUse fires for the
//!   call, its `tool_response` the text.
//! - `{"output": <text>, "running_session_id": <n>}`: an `exec_command`
//!   still running after its `yield_time_ms`; no PostToolUse now.
//! - `{"output": <text>}` from `write_stdin` while the process runs: no
//!   hook at all (Codex fires none for `write_stdin`).
//! - `{"output": <text>, "finished_call": {"call_id", "arguments"}}` from
//!   the `write_stdin` that saw the process end: PostToolUse fires then,
//!   as for the `exec_command` call that started it (its `tool_use_id` and
//!   `tool_input`), with this last chunk as `tool_response`.

use serde::{Deserialize, Serialize};

/// Codex's tool that starts a command.
pub const EXEC_COMMAND: &str = "exec_command";
/// Codex's tool that writes to (or polls) a running command.
pub const WRITE_STDIN: &str = "write_stdin";

/// The `exec_command` call a finished process was started by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinishedCall {
    /// The call's id (PostToolUse's `tool_use_id`).
    pub call_id: String,
    /// Its arguments, as the model gave them (canonical JSON).
    pub arguments: String,
}

/// A shell tool's structured result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecStructured {
    /// The output the model read (after Codex's cut).
    pub output: String,
    /// The process still runs, under this session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_session_id: Option<i32>,
    /// The process ended during this `write_stdin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_call: Option<FinishedCall>,
}

impl ExecStructured {
    /// As JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Read back from a result's `structured` text; `None` for anything
    /// else.
    pub fn parse(structured: &str) -> Option<ExecStructured> {
        serde_json::from_str(structured).ok()
    }
}
