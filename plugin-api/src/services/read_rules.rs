//! The `read-rules` service: which files a session's `Read` deny rules
//! keep from it.
//!
//! Claude Code's `Glob` and `Grep` leave out every file a `Read(path)` deny
//! rule covers (recorded `S291-deny`), the way its `Read` refuses them. The
//! rules belong to the session (its settings files, the manifest, what the
//! user allowed on the way), so the agent provides this service and the
//! search tools ask it about the files they found, in one call. With no
//! provider, or a session nothing configured, no file is left out.

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "read-rules";
/// The contract's version.
pub const VERSION: u32 = 1;
/// Which of some paths are denied: [`DeniedRequest`] → [`DeniedAnswer`].
pub const METHOD_DENIED: &str = "denied";

/// `denied`: the session and the files it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeniedRequest {
    /// The session whose rules apply.
    pub session_id: String,
    /// Absolute paths.
    pub paths: Vec<String>,
}

/// `denied`'s answer: one flag per path, in the request's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeniedAnswer {
    /// `true` where a deny rule covers the path.
    pub denied: Vec<bool>,
}
