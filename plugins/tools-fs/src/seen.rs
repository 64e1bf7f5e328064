//! What each session has read, so an unchanged file is not sent twice.
//!
//! Claude Code 2.1.197 (recorded S84-reread) answers a `Read` of a file
//! whose modification time has not changed since the session read it with
//! the same `offset` (absent counts as 1) and `limit` with
//! [`UNCHANGED_TEXT`] instead of the lines. A `Write` or `Edit` of the file
//! makes the next `Read` read again (Claude Code records those without an
//! offset, which no `Read` matches). Reads through the session's editor are
//! not recorded: a buffer has no modification time. The log is bounded: past
//! [`MAX_ENTRIES`] it starts over, which only costs a re-read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// What the model reads for an unchanged file.
pub const UNCHANGED_TEXT: &str = "Wasted call \u{2014} file unchanged since your last Read. Refer to that earlier tool_result instead.";
/// Entries kept before the log starts over.
pub const MAX_ENTRIES: usize = 10_000;

/// One read: the file's modification time then, and the window asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    modified: SystemTime,
    offset: u64,
    limit: Option<u64>,
}

/// Per-session reads, keyed by session id and resolved path.
#[derive(Debug, Default)]
pub struct ReadLog {
    entries: Mutex<HashMap<(String, PathBuf), Entry>>,
    /// The files each session has read, written or edited: what `Edit`
    /// and `Write` of an existing file need first (Claude Code's "File has
    /// not been read yet", S239-edit-checks).
    known: Mutex<std::collections::HashSet<(String, PathBuf)>>,
}

impl ReadLog {
    /// Whether `path` was read with this window at this modification time.
    pub fn unchanged(
        &self,
        session: &str,
        path: &Path,
        offset: Option<u64>,
        limit: Option<u64>,
        modified: SystemTime,
    ) -> bool {
        let want = Entry {
            modified,
            offset: offset.unwrap_or(1),
            limit,
        };
        self.with(|m| m.get(&(session.to_string(), path.to_path_buf())) == Some(&want))
    }

    /// Records a read.
    pub fn record(
        &self,
        session: &str,
        path: &Path,
        offset: Option<u64>,
        limit: Option<u64>,
        modified: SystemTime,
    ) {
        let entry = Entry {
            modified,
            offset: offset.unwrap_or(1),
            limit,
        };
        self.with(|m| {
            if m.len() >= MAX_ENTRIES {
                m.clear();
            }
            m.insert((session.to_string(), path.to_path_buf()), entry);
        });
    }

    /// Forgets `path` for the session (it was written or edited).
    pub fn forget(&self, session: &str, path: &Path) {
        self.with(|m| {
            m.remove(&(session.to_string(), path.to_path_buf()));
        });
    }

    /// Notes that the session has `path`'s content (it read, wrote or
    /// edited it).
    pub fn know(&self, session: &str, path: &Path) {
        let mut known = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if known.len() >= MAX_ENTRIES {
            known.clear();
        }
        known.insert((session.to_string(), path.to_path_buf()));
    }

    /// Whether the session has read, written or edited `path`.
    pub fn knows(&self, session: &str, path: &Path) -> bool {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(&(session.to_string(), path.to_path_buf()))
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<(String, PathBuf), Entry>) -> T) -> T {
        // A panic while holding the lock leaves a map that is still whole.
        let mut guard = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_window_and_time_match_others_do_not() {
        let log = ReadLog::default();
        let t = SystemTime::UNIX_EPOCH;
        let later = t + std::time::Duration::from_secs(1);
        let p = Path::new("/p/a");
        log.record("s", p, None, None, t);
        assert!(log.unchanged("s", p, Some(1), None, t));
        assert!(!log.unchanged("s", p, Some(2), None, t));
        assert!(!log.unchanged("s", p, None, Some(5), t));
        assert!(!log.unchanged("s", p, None, None, later));
        assert!(!log.unchanged("other", p, None, None, t));
        log.forget("s", p);
        assert!(!log.unchanged("s", p, None, None, t));
    }
}
