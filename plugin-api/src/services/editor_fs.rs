//! The `editor-fs` service: a session's files as its editor holds them.
//!
//! When an editor offers its file system (ACP `fs/read_text_file`,
//! `fs/write_text_file`), the ACP server provides this service and the file
//! tools read and write through it, so they see unsaved buffers and their
//! edits land in the editor. For a session whose editor does not offer it
//! (or with no editor at all) the answer is [`EditorFsAnswer::Local`]: use
//! the disk. Callers treat a missing service the same way.

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "editor-fs";
/// The contract's version.
pub const VERSION: u32 = 1;
/// Reads a file: [`ReadRequest`] → [`EditorFsAnswer`].
pub const METHOD_READ: &str = "read";
/// Writes a file: [`WriteRequest`] → [`EditorFsAnswer`].
pub const METHOD_WRITE: &str = "write";

/// `read`: the whole text of `path`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadRequest {
    /// The session whose editor is asked.
    pub session_id: String,
    /// An absolute path.
    pub path: String,
}

/// `write`: replace (or create) `path` with `content`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteRequest {
    /// The session whose editor is asked.
    pub session_id: String,
    /// An absolute path.
    pub path: String,
    /// The whole new text.
    pub content: String,
}

/// What the editor did. Unknown outcomes read as [`EditorFsAnswer::Local`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum EditorFsAnswer {
    /// `read`: the text; `write`: written (`content` empty).
    Done {
        /// The file's text (`read`).
        #[serde(default)]
        content: String,
    },
    /// The editor answered with an error (for a read: the file may not
    /// exist); its message.
    Failed {
        /// What the editor said.
        message: String,
    },
    /// This session's editor does not offer it: use the disk.
    #[serde(other)]
    Local,
}
