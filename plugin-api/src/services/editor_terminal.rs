//! The `editor-terminal` service: a command run in a terminal the
//! session's editor owns, so the user watches its output live.
//!
//! When an editor offers terminals (ACP `terminal: true` at `initialize`),
//! the ACP server provides this service and the `Bash` tool asks it first:
//! the editor creates the terminal (`terminal/create`), shows it inside the
//! tool call, and the answer carries what the model reads (the output, as
//! the editor kept it, and how the command ended). The terminal is always
//! released afterwards. For a session whose editor does not offer
//! terminals (or with no editor at all) the answer is
//! [`TerminalAnswer::Local`]: run the command locally. Callers treat a
//! missing service the same way.
//!
//! A run is stopped early with [`METHOD_KILL`] (the tool's abort: a
//! `session/cancel`, a disposal); the pending [`METHOD_RUN`] then answers
//! with `interrupted: true` and the output so far.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "editor-terminal";
/// The contract's version.
pub const VERSION: u32 = 1;
/// Runs a command to its end: [`RunRequest`] → [`TerminalAnswer`].
pub const METHOD_RUN: &str = "run";
/// Stops a pending `run`: [`KillRequest`] → `{}`.
pub const METHOD_KILL: &str = "kill";
/// Whether the session's editor offers terminals at all:
/// [`OffersRequest`] → [`OffersAnswer`]. A cheap question asked before a
/// `run`, whose request carries the whole environment; a provider that
/// does not know it answers an error, and the caller asks `run`.
pub const METHOD_OFFERS: &str = "offers";

/// `offers`: the session asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffersRequest {
    /// The session.
    pub session_id: String,
}

/// `offers`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffersAnswer {
    /// Whether a `run` for this session would run in the editor.
    pub offers: bool,
}

/// `run`: one command in a new terminal of the session's editor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The session whose editor runs it.
    pub session_id: String,
    /// The tool call the terminal belongs to (the editor shows it there).
    pub call_id: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it, on top of the editor's own environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// An absolute working directory.
    pub cwd: String,
    /// The most output the editor keeps (it drops the beginning past it).
    #[serde(default)]
    pub output_byte_limit: Option<u64>,
    /// Past this many milliseconds the terminal is killed and the answer
    /// says `timed_out`.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// `kill`: stop the pending `run` of `call_id`, if there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillRequest {
    /// The session.
    pub session_id: String,
    /// The call whose run to stop.
    pub call_id: String,
}

/// How a `run` went. Unknown outcomes read as [`TerminalAnswer::Local`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TerminalAnswer {
    /// The command ran in the editor's terminal (which is released).
    Done {
        /// Its output (stdout and stderr as the terminal interleaved them).
        output: String,
        /// The editor dropped the beginning of the output to its limit.
        #[serde(default)]
        truncated: bool,
        /// The exit code, when it exited.
        #[serde(default)]
        exit_code: Option<u32>,
        /// The signal that ended it (a name such as `SIGKILL`, or a number).
        #[serde(default)]
        signal: Option<String>,
        /// Killed because `timeout_ms` passed.
        #[serde(default)]
        timed_out: bool,
        /// Killed by a `kill`.
        #[serde(default)]
        interrupted: bool,
    },
    /// The editor could not run it (its terminal request failed); why.
    Failed {
        /// What went wrong.
        message: String,
    },
    /// This session's editor offers no terminals: run it locally.
    #[serde(other)]
    Local,
}
