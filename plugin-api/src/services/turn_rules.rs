//! The `turn-rules` service: permission rules that hold for the rest of a
//! session's running turn.
//!
//! Claude Code runs a slash command whose frontmatter has `allowed-tools`
//! with those calls allowed for that command's turn (its `allowed_tools`
//! permission layer, rule source `command`). The Claude bridge expands the
//! command; the rules are the agent's, so the agent provides this service
//! and the bridge asks it. The rules end with the turn.

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "turn-rules";
/// The contract's version.
pub const VERSION: u32 = 1;
/// Allow calls for the rest of the turn: [`AllowRequest`] →
/// [`AllowAnswer`].
pub const METHOD_ALLOW: &str = "allow";

/// `allow`: the session and the rules, in Claude Code's syntax
/// (`Bash(git status:*)`, `Read`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowRequest {
    /// The session whose turn it is.
    pub session_id: String,
    /// The rules to allow.
    pub rules: Vec<String>,
}

/// `allow`'s answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowAnswer {
    /// The rules that did not parse (and so allow nothing), each with why.
    #[serde(default)]
    pub skipped: Vec<String>,
}
