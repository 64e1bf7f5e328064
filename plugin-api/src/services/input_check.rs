//! The `input-check/<tool>` services: a tool's own check of a call's input,
//! made before any listener hears of the call (Claude Code's
//! `validateInput`: its refusals reach no PreToolUse hook, vectors
//! `S230-*`).
//!
//! A plugin that registers a tool may also provide the service
//! `input-check/<tool name>`; the host then calls its [`METHOD_CHECK`] with
//! a [`CheckRequest`] for each call of that tool, before
//! `tools/pre-execute`, and a [`CheckAnswer`] with a `refusal` ends the
//! call there: the model reads the refusal as the call's error result, and
//! post-execute sees a denied call. A check that fails refuses the call
//! (fail closed). A JSON contract: nothing here changes the plugin API
//! version (see the [evolution rule](super#evolution-rule)).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The prefix of the services' names: `input-check/EnterWorktree`.
pub const SERVICE_PREFIX: &str = "input-check/";
/// The one method.
pub const METHOD_CHECK: &str = "check";
/// The contract's version.
pub const VERSION: u32 = 1;

/// The service checking `tool`'s calls.
pub fn service_name(tool: &str) -> String {
    format!("{SERVICE_PREFIX}{tool}")
}

/// One call to check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRequest {
    /// The session.
    pub session_id: String,
    /// The session's folder now.
    #[serde(default)]
    pub cwd: String,
    /// The call's arguments.
    #[serde(default)]
    pub arguments: Value,
}

/// The verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckAnswer {
    /// What the model reads instead of a result; `None`: the call goes on.
    #[serde(default)]
    pub refusal: Option<String>,
}

/// A `check` answer may also carry `ask`: the tool's own permission check.
/// Unless a rule or the session's mode allows the call, it is asked about
/// with this text (Claude Code's `Execute skill: <name>` for a skill with
/// tools of its own). Read from the same answer as [`CheckAnswer`]; a
/// provider that sends no `ask` asks nothing of its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskHint {
    /// The text of the question; `None`: no question of the tool's own.
    #[serde(default)]
    pub ask: Option<String>,
}
