//! The `background-tasks` service: the background shell jobs a session has
//! running (`bash-local` provides it; the Claude bridge calls it for the
//! Stop payload's `background_tasks`, recorded `S260-left-running`; `dsh
//! prompt` waits on it while it winds down, [`METHOD_WAIT`]). A
//! JSON contract: nothing here changes the plugin API version (see the
//! [evolution rule](super#evolution-rule)).

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "background-tasks";
/// The first method: the jobs of a session still running.
pub const METHOD_LIST: &str = "list";
/// The contract's version.
pub const VERSION: u32 = 1;

/// Which session's jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRequest {
    /// The session.
    pub session_id: String,
}

/// One running job, as Claude Code's Stop payload lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// Its id (`b…`).
    pub id: String,
    /// `shell`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `running`.
    pub status: String,
    /// The model's description, else the command.
    pub description: String,
    /// The command.
    pub command: String,
}

/// The answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListAnswer {
    /// The session's running jobs, oldest first.
    #[serde(default)]
    pub tasks: Vec<Task>,
}

/// The second method (same contract version: an older provider answers
/// "no method", which a caller reads as "nothing to wait for"): waits
/// until none of a session's jobs is running, or `timeout_ms` passed,
/// and answers the jobs still running then ([`ListAnswer`]). `dsh
/// prompt`'s wind-down asks it (Claude Code's 5 s grace, recorded
/// `S262-ends-in-grace`, `S260-left-running`).
pub const METHOD_WAIT: &str = "wait";

/// Which session's jobs to wait for, and how long at most.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitRequest {
    /// The session.
    pub session_id: String,
    /// The most to wait, in milliseconds.
    pub timeout_ms: u64,
}
