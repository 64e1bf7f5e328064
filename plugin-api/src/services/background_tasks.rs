//! The `background-tasks` service: the background shell jobs a session has
//! running (`bash-local` provides it; the Claude bridge calls it for the
//! Stop payload's `background_tasks`, recorded `S260-left-running`). A
//! JSON contract: nothing here changes the plugin API version (see the
//! [evolution rule](super#evolution-rule)).

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "background-tasks";
/// The one method: the jobs of a session still running.
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
