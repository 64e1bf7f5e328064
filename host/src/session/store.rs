//! Stored logs read as they stand: no lock, no repair, no write. For
//! `dsh sessions list` and `show` (a live session's log is only read), and
//! for tests that look at a log a live session holds.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::events::LoggedEvent;
use super::files::io_error;
use super::log::{LogError, SessionHeader, id_of, read_all};
use super::scan::{Damage, scan};

/// A log as it stands on disk, read without a lock and without repair.
#[derive(Debug, Clone)]
pub struct LogSnapshot {
    /// The header, when line 1 is a good one.
    pub header: Option<SessionHeader>,
    /// Every readable event after the header.
    pub events: Vec<LoggedEvent>,
    /// Damaged lines.
    pub damage: Vec<Damage>,
    /// The line number of a crash-cut (or still being written) last line.
    pub tail_line: Option<usize>,
}

/// Reads the log at `path` without locking or changing it.
pub fn read_log(path: &Path) -> Result<LogSnapshot, LogError> {
    let id = id_of(path)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LogError::Missing {
                path: path.to_path_buf(),
            },
            _ => io_error(path, "cannot open session log", e),
        })?;
    let mut file = super::files::regular(file, path)?;
    let bytes = read_all(&mut file, path)?;
    let scanned = scan(&bytes, &id);
    Ok(LogSnapshot {
        header: scanned.header,
        events: scanned.events,
        damage: scanned.damage,
        tail_line: scanned.tail.map(|t| t.line),
    })
}

/// One stored session as `dsh sessions list` shows it.
#[derive(Debug, Clone)]
pub struct StoredSession {
    /// Its id (from the file name).
    pub id: String,
    /// Its log.
    pub path: PathBuf,
    /// The header, or why line 1 is not one.
    pub header: Result<SessionHeader, String>,
}

/// Every session log under `state_dir` (files named `<id>.jsonl` with an
/// id of dsh's form): readable ones oldest first, then damaged ones by id.
pub fn list_sessions(state_dir: &Path) -> Vec<StoredSession> {
    let Ok(entries) = std::fs::read_dir(state_dir.join("sessions")) else {
        return Vec::new();
    };
    let mut found: Vec<StoredSession> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|path| {
            let id = id_of(&path).ok()?;
            let header = first_line(&path).and_then(|line| {
                let first = serde_json::from_str::<Value>(&line).map_err(|e| e.to_string())?;
                serde_json::from_value::<SessionHeader>(first).map_err(|e| e.to_string())
            });
            Some(StoredSession { id, path, header })
        })
        .collect();
    found.sort_by(|a, b| match (&a.header, &b.header) {
        (Ok(x), Ok(y)) => x.created_ms.cmp(&y.created_ms),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.id.cmp(&b.id),
    });
    found
}

fn first_line(path: &Path) -> Result<String, String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let file = super::files::regular(file, path).map_err(|e| match e {
        LogError::Io { message, .. } => message,
        other => other.to_string(),
    })?;
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(file), &mut first)
        .map_err(|e| e.to_string())?;
    if first.is_empty() {
        return Err("the file is empty".into());
    }
    Ok(first)
}
