//! [`FileStore`]: the default [`SessionStore`], one JSONL file per session
//! under `<state_dir>/sessions/` (ARCHITECTURE.md §7).
//!
//! Creating a session writes its header under a temporary name and links it
//! into place, so a log appears whole; opening one takes the file's writer
//! `flock` (refused while another process holds it) and cuts a crash-cut last
//! line, keeping the original bytes aside as `<id>.jsonl.damaged-<n>`; any
//! other damage is refused with the line and the way forward. Lines go to
//! the log's own writer thread ([`super::writer`]), through a
//! [`FileWriter`] that closes the file while the session is idle; the
//! session stays held by this process meanwhile ([`super::holds`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::backend::{Held, SessionStore};
use super::file_writer::FileWriter;
use super::files::{self, io_error};
use super::holds::HoldTable;
use super::log::{LogError, SessionHeader, id_of, read_all, session_path};
use super::scan::scan;
use super::store::{LogSnapshot, StoredSession, list_sessions, read_log};

/// The JSONL files under one state folder.
#[derive(Debug, Clone)]
pub struct FileStore {
    state_dir: PathBuf,
    /// The sessions this store holds (one descriptor for all of them).
    holds: Arc<HoldTable>,
}

impl FileStore {
    /// The store under `state_dir`.
    pub fn new(state_dir: &Path) -> FileStore {
        FileStore {
            state_dir: state_dir.to_path_buf(),
            holds: HoldTable::new(state_dir),
        }
    }
}

impl SessionStore for FileStore {
    fn describe(&self) -> String {
        format!("files under {}", self.state_dir.join("sessions").display())
    }

    /// Creates the log (0600, in a 0700 folder) and takes its lock; refuses
    /// to overwrite one. The file appears whole: it is written under a
    /// temporary name and linked into place.
    fn create(&self, header: &SessionHeader) -> Result<Held, LogError> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let path = session_path(&self.state_dir, &header.session_id)?;
        let dir = files::sessions_dir(&self.state_dir)?;
        let hold = match self.holds.take(&header.session_id, &path) {
            Ok(hold) => hold,
            // Held by someone: it exists, or is being created right now.
            Err(LogError::Locked { .. }) if path.symlink_metadata().is_ok() => {
                return Err(LogError::Exists { path });
            }
            Err(e) => return Err(e),
        };
        let mut line = serde_json::to_string(header).map_err(|e| io_error(&path, "header", e))?;
        line.push('\n');
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(
            ".{}.jsonl.new-{}-{n}",
            header.session_id,
            std::process::id()
        ));
        let made = files::create_private_file(&temp).and_then(|file| {
            let mut file = files::lock(file, &temp)?;
            file.write_all(line.as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| io_error(&temp, "cannot write header", e))?;
            match std::fs::hard_link(&temp, &path) {
                Ok(()) => Ok(file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Err(LogError::Exists { path: path.clone() })
                }
                // A file system without hard links: create in place.
                Err(_) => {
                    let mut file = files::lock(files::create_private_file(&path)?, &path)?;
                    file.write_all(line.as_bytes())
                        .and_then(|()| file.sync_all())
                        .map_err(|e| io_error(&path, "cannot write header", e))?;
                    Ok(file)
                }
            }
        });
        let _ = std::fs::remove_file(&temp);
        let file = made?;
        files::sync_dir(&dir);
        Ok(Held {
            writer: Box::new(FileWriter::start(&path, file, Some(hold))?),
            path,
            header: header.clone(),
            events: Vec::new(),
            kept_aside: None,
        })
    }

    fn open(&self, id: &str) -> Result<Held, LogError> {
        open_file(&session_path(&self.state_dir, id)?, &self.holds)
    }

    fn read(&self, id: &str) -> Result<LogSnapshot, LogError> {
        read_log(&session_path(&self.state_dir, id)?)
    }

    fn list(&self) -> Result<Vec<StoredSession>, LogError> {
        Ok(list_sessions(&self.state_dir))
    }

    fn exists(&self, id: &str) -> bool {
        session_path(&self.state_dir, id).is_ok_and(|p| p.symlink_metadata().is_ok())
    }
}

/// Opens the existing log at `path` as its writer: takes its lock (refused
/// while another process holds it), cuts a crash-cut end (keeping those
/// bytes aside as `<id>.jsonl.damaged-<n>`). Any other damage is refused
/// with the line and the way forward (`dsh sessions repair`). The session
/// is held through `holds` until the writer is dropped.
pub(crate) fn open_file(path: &Path, holds: &Arc<HoldTable>) -> Result<Held, LogError> {
    let id = id_of(path)?;
    let hold = holds.take(&id, path)?;
    let mut file = files::open_locked(path)?;
    let bytes = read_all(&mut file, path)?;
    let scanned = scan(&bytes, &id);
    if let Some(first) = scanned.damage.first() {
        let others = scanned.damage.len() - 1;
        return Err(LogError::Damaged {
            path: path.to_path_buf(),
            id,
            line: first.line,
            message: first.message.clone(),
            more: match others {
                0 => String::new(),
                1 => " (and 1 more damaged line)".into(),
                n => format!(" (and {n} more damaged lines)"),
            },
        });
    }
    let header = scanned.header.ok_or_else(|| LogError::Damaged {
        path: path.to_path_buf(),
        id: id.clone(),
        line: 1,
        message: "no header".into(),
        more: String::new(),
    })?;
    let mut kept_aside = None;
    if let Some(tail) = &scanned.tail {
        let aside = files::keep_aside(path, &bytes)?;
        file.set_len(tail.start as u64)
            .map_err(|e| io_error(path, "cannot cut the crash-cut end", e))?;
        tracing::warn!(path = %path.display(), line = tail.line, kept = %aside.display(), "cut a crash-cut last line from the session log; the original is kept aside");
        kept_aside = Some(aside);
    }
    Ok(Held {
        writer: Box::new(FileWriter::start(path, file, Some(hold))?),
        path: path.to_path_buf(),
        header,
        events: scanned.events,
        kept_aside,
    })
}

/// Writes `<dir>/<id>.jsonl` afresh (header, then `lines`) and keeps it open
/// for appending: the local transcript of a session another store keeps
/// (hooks read the file their `transcript_path` names). Written under a
/// temporary name, then renamed into place whole, 0600, with the writer's
/// lock (the session itself is held by the other store).
pub(crate) fn write_transcript(
    dir: &Path,
    id: &str,
    header_line: &str,
    lines: &[String],
) -> Result<(PathBuf, FileWriter), LogError> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    crate::session::id::check_session_id(id)?;
    files::create_state_dir(dir)?;
    let path = dir.join(format!("{id}.jsonl"));
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{id}.jsonl.new-{}-{n}", std::process::id()));
    let written = files::create_private_file(&temp).and_then(|file| {
        let mut file = files::lock(file, &temp)?;
        let mut text = String::with_capacity(header_line.len() + 1);
        text.push_str(header_line);
        text.push('\n');
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        file.write_all(text.as_bytes())
            .map_err(|e| io_error(&temp, "cannot write the transcript", e))?;
        std::fs::rename(&temp, &path).map_err(|e| io_error(&path, "cannot put in place", e))?;
        Ok(file)
    });
    let file = match written {
        Ok(file) => file,
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
    };
    Ok((path.clone(), FileWriter::start(&path, file, None)?))
}
