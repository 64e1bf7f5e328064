//! The `worktree-hooks` service: who makes and removes a session's
//! worktree when it is not git (Claude Code's WorktreeCreate and
//! WorktreeRemove hooks; the `hooks-claude` bridge provides it), and which
//! moves of a session's folder are a worktree tool's own.
//!
//! The `tools-worktree` built-in (`EnterWorktree`, `ExitWorktree`) calls
//! it; without a provider it uses git alone and its moves are ordinary
//! ones. A JSON contract, not an ABI type: nothing here changes the plugin
//! API version (see the [evolution rule](super#evolution-rule)).
//!
//! - [`METHOD_CREATE`] takes a [`CreateRequest`] and answers a
//!   [`CreateAnswer`]: `handled: false` when the session has no such hook
//!   (git makes the worktree), else the folder the hooks named. A failed
//!   call (`Err(text)`) fails the tool call with that text as its error.
//! - [`METHOD_REMOVE`] takes a [`RemoveRequest`] (a worktree the hooks
//!   made) and answers a [`RemoveAnswer`]: whether the hooks removed it.
//! - [`METHOD_MOVING`] takes a [`MovingRequest`] before the tool moves the
//!   session: Claude Code fires no CwdChanged for these moves (recorded,
//!   S230), so the bridge leaves that one move out. Answers `{}`.

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "worktree-hooks";
/// Make a worktree by hook.
pub const METHOD_CREATE: &str = "create";
/// Remove a worktree the hooks made.
pub const METHOD_REMOVE: &str = "remove";
/// The session is about to move into or out of a worktree.
pub const METHOD_MOVING: &str = "moving";
/// The contract's version.
pub const VERSION: u32 = 1;

/// `EnterWorktree` wants a new worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateRequest {
    /// The session.
    pub session_id: String,
    /// The worktree's name (given or generated).
    pub name: String,
}

/// What the hooks made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateAnswer {
    /// Whether a hook took the job (`false`: no hook, use git).
    pub handled: bool,
    /// The hooks' answer, as printed (the tool resolves and checks it).
    #[serde(default)]
    pub path: Option<String>,
}

/// `ExitWorktree remove` of a worktree the hooks made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveRequest {
    /// The session (still in the worktree while the hooks run).
    pub session_id: String,
    /// The worktree's folder.
    pub worktree_path: String,
}

/// Whether the hooks removed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoveAnswer {
    /// `false`: a hook failed (or none ran), the folder is kept.
    pub removed: bool,
}

/// The tool is about to move the session to `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovingRequest {
    /// The session.
    pub session_id: String,
    /// Where it goes.
    pub to: String,
}
