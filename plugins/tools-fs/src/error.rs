//! [`FsToolError`]: every way a file tool call can fail.
//!
//! The `Display` text is exactly what the model reads in the error result,
//! so messages follow Claude Code's wording where the model is used to it.

use std::io;
use std::path::PathBuf;

/// Why a `Read`, `Write` or `Edit` call failed.
#[derive(Debug, thiserror::Error)]
pub enum FsToolError {
    /// The arguments are not a JSON object (or not JSON).
    #[error("{tool}: arguments must be a JSON object{detail}")]
    NotObject {
        /// The tool.
        tool: &'static str,
        /// Extra detail (a JSON parse error), possibly empty.
        detail: String,
    },
    /// A required parameter is absent.
    #[error("{tool}: missing required parameter `{key}`")]
    Missing {
        /// The tool.
        tool: &'static str,
        /// The parameter.
        key: &'static str,
    },
    /// A parameter has the wrong type or value.
    #[error("{tool}: parameter `{key}` must be {expected}")]
    Invalid {
        /// The tool.
        tool: &'static str,
        /// The parameter.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// The file does not exist.
    #[error("File does not exist: {}", path.display())]
    NotFound {
        /// The resolved path.
        path: PathBuf,
    },
    /// `Read` of a file that does not exist: Claude Code's text, which
    /// names the session's folder, not the path (vectors `S172-*`).
    #[error("File does not exist. Note: your current working directory is {}.", cwd.display())]
    ReadMissing {
        /// The session's working directory.
        cwd: PathBuf,
    },
    /// The path names a directory.
    #[error("Path is a directory, not a file: {}", path.display())]
    IsDirectory {
        /// The resolved path.
        path: PathBuf,
    },
    /// A FIFO, a socket or a device: reading it would wait for a writer
    /// that may never come, or never end (`/dev/zero`).
    #[error("Cannot read {}: it is a {kind}, not a regular file", path.display())]
    NotRegular {
        /// The resolved path.
        path: PathBuf,
        /// `FIFO`, `socket` or `device`.
        kind: &'static str,
    },
    /// `Write` or `Edit` of a path holding a FIFO, socket or device:
    /// reading its old text would wait for a writer forever (a FIFO) or
    /// never end (`/dev/zero`).
    #[error("Cannot {action} {}: it is a {kind}, not a regular file", path.display())]
    NotRegularTarget {
        /// `write` or `edit`.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// `FIFO`, `socket` or `device`.
        kind: &'static str,
    },
    /// A partial read whose text is over the token cap (Claude Code's
    /// text).
    #[error(
        "File content ({tokens} tokens) exceeds maximum allowed tokens ({cap}). Use offset and \
         limit parameters to read specific portions of the file, or search for specific content \
         instead of reading the whole file."
    )]
    OverTokenCap {
        /// The estimate.
        tokens: u64,
        /// The cap.
        cap: u64,
    },
    /// The file is not UTF-8 text, so editing it would corrupt it.
    #[error("Cannot edit {}: the file is not valid UTF-8 text", path.display())]
    NotUtf8 {
        /// The resolved path.
        path: PathBuf,
    },
    /// A whole-file read of a file over the size limit.
    #[error(
        "File content ({size} bytes) exceeds maximum allowed size ({max} bytes). \
         Please use offset and limit parameters to read specific portions of the file."
    )]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Any other I/O failure.
    #[error("Cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `create the parent directories of`).
        action: &'static str,
        /// The resolved path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// `old_string == new_string`.
    #[error("No changes to make: old_string and new_string are exactly the same.")]
    NoChange,
    /// `old_string` does not occur in the file.
    #[error("String to replace not found in file.\nString: {0}")]
    StringNotFound(String),
    /// `old_string` occurs more than once and `replace_all` is false.
    #[error(
        "Found {count} matches of the string to replace, but replace_all is false. To replace \
         all occurrences, set replace_all to true. To replace only one occurrence, please \
         provide more context to uniquely identify the instance.\nString: {old}"
    )]
    NotUnique {
        /// How many times it occurs.
        count: usize,
        /// The string.
        old: String,
    },
    /// An empty `old_string` (create) on a file that has content.
    #[error("Cannot create new file - file already exists.")]
    AlreadyExists,
    /// The session's editor refused a read or a write (`editor-fs`).
    #[error("Cannot {action} {} in the editor: {message}", path.display())]
    Editor {
        /// `read` or `write`.
        action: &'static str,
        /// The resolved path.
        path: PathBuf,
        /// What the editor said.
        message: String,
    },
    /// The blocking task running the tool panicked or was cancelled.
    #[error("{tool}: internal error: {detail}")]
    Internal {
        /// The tool.
        tool: &'static str,
        /// What happened.
        detail: String,
    },
}

impl FsToolError {
    /// Maps an I/O error on `path`, naming the common cases.
    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: io::Error) -> Self {
        let path = path.to_path_buf();
        match source.kind() {
            io::ErrorKind::NotFound => FsToolError::NotFound { path },
            io::ErrorKind::IsADirectory => FsToolError::IsDirectory { path },
            _ => FsToolError::Io {
                action,
                path,
                source,
            },
        }
    }
}
