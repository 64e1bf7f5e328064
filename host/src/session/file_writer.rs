//! [`FileWriter`]: the [`StoreWriter`] of a JSONL log, which lets the log's
//! file and thread go while the session is idle and takes them again on
//! the next write (issue 15: an idle session holds no file descriptor).
//!
//! While a turn runs, lines and syncs go to the log's own thread
//! ([`LogWriter`]) as always. When the session goes idle
//! ([`StoreWriter::release_idle`]) the thread is told to finish what is
//! queued and close the file, and nobody waits for it. The next append,
//! sync or barrier starts a new thread, which first waits for the old one
//! (so lines stay in order and the old `flock` is gone), then opens the log
//! again and checks it is the same file with exactly the bytes this session
//! wrote; otherwise nothing more is written and every sync says why. The
//! session stays held meanwhile: its [`Hold`] outlives every thread, so no
//! other dsh process can write the log while this one has the session
//! open.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::backend::StoreWriter;
use super::files::{LockedFile, io_error};
use super::holds::Hold;
use super::log::LogError;
use super::writer::{LogWriter, PendingSync, Source};

/// The writer of one JSONL log.
pub(crate) struct FileWriter {
    path: PathBuf,
    dev: u64,
    ino: u64,
    slot: Mutex<Slot>,
    /// The session's hold (none for a transcript another store holds); let
    /// go only after the last thread closed the file (see `Drop`).
    hold: Option<Hold>,
}

struct Slot {
    /// The running thread, while the session is writing.
    open: Option<LogWriter>,
    /// The thread let go at the last idle, possibly still finishing.
    previous: Option<JoinHandle<Option<String>>>,
    /// The file's length once every queued line is written.
    len: u64,
}

impl FileWriter {
    /// A writer for the log at `path`, open and locked as `file`.
    pub(crate) fn start(
        path: &Path,
        file: LockedFile,
        hold: Option<Hold>,
    ) -> Result<FileWriter, LogError> {
        use std::os::unix::fs::MetadataExt as _;
        let meta = file
            .metadata()
            .map_err(|e| io_error(path, "cannot stat", e))?;
        Ok(FileWriter {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            slot: Mutex::new(Slot {
                open: Some(LogWriter::start(path, file)?),
                previous: None,
                len: meta.len(),
            }),
            hold,
        })
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the running thread, starting one if the session was idle.
    fn with<T>(
        &self,
        f: impl FnOnce(&LogWriter, &mut u64) -> Result<T, LogError>,
    ) -> Result<T, LogError> {
        let mut slot = self.slot();
        let slot = &mut *slot;
        if slot.open.is_none() {
            let source = Source::Reopen {
                previous: slot.previous.take(),
                dev: self.dev,
                ino: self.ino,
                len: slot.len,
            };
            slot.open = Some(LogWriter::start_from(&self.path, source)?);
        }
        match &slot.open {
            Some(writer) => f(writer, &mut slot.len),
            None => Err(io_error(&self.path, "cannot write", "no writer thread")),
        }
    }

    /// Whether the log's thread (and so its file) is let go, once the
    /// thread let go at the last idle has ended.
    #[cfg(test)]
    pub(crate) fn settled_idle(&self) -> bool {
        let mut slot = self.slot();
        if let Some(previous) = slot.previous.take() {
            assert_eq!(previous.join().unwrap(), None);
        }
        slot.open.is_none()
    }
}

impl StoreWriter for FileWriter {
    fn append(&self, _seq: u64, line: &str) -> Result<(), LogError> {
        // One write per line: a killed process leaves whole lines behind.
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.with(|writer, len| {
            *len += bytes.len() as u64;
            writer.write_line(bytes)
        })
    }

    fn sync(&self) -> Result<(), LogError> {
        self.with(|writer, _| writer.sync())
    }

    fn sync_later(&self, durable: bool) -> Result<PendingSync, LogError> {
        self.with(|writer, _| writer.sync_later(durable))
    }

    fn release_idle(&self) {
        let mut slot = self.slot();
        if let Some(writer) = slot.open.take() {
            // Taking a thread over consumed the one before it.
            slot.previous = writer.detach();
        }
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        // The file closes before the hold goes, as the log's `flock` did.
        let slot = self.slot.get_mut().unwrap_or_else(|p| p.into_inner());
        drop(slot.open.take());
        if let Some(previous) = slot.previous.take()
            && previous.join().is_err()
        {
            tracing::error!(path = %self.path.display(), "the session log's writer thread panicked");
        }
        drop(self.hold.take());
    }
}

#[cfg(test)]
mod tests {
    use super::super::files;
    use super::super::holds::HoldTable;
    use super::*;

    fn writer(dir: &Path) -> (PathBuf, FileWriter) {
        let path = dir.join("sessions/s.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"type\":\"session\"}\n").unwrap();
        let hold = HoldTable::for_log(&path).take("s", &path).unwrap();
        let file = files::open_locked(&path).unwrap();
        (
            path.clone(),
            FileWriter::start(&path, file, Some(hold)).unwrap(),
        )
    }

    #[test]
    fn an_idle_log_is_closed_and_opened_again_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (path, w) = writer(dir.path());
        w.append(0, "{\"n\":0}").unwrap();
        w.release_idle();
        assert!(w.settled_idle());
        // Closed: another description can take the flock, and the session
        // is still held.
        let probe = files::open_locked(&path).unwrap();
        drop(probe);
        assert!(matches!(
            HoldTable::for_log(&path).take("s", &path),
            Err(LogError::Locked { .. })
        ));
        w.append(1, "{\"n\":1}").unwrap();
        w.sync().unwrap();
        assert!(!w.settled_idle());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"type\":\"session\"}\n{\"n\":0}\n{\"n\":1}\n"
        );
        drop(w);
        HoldTable::for_log(&path).take("s", &path).unwrap();
    }

    #[test]
    fn a_log_written_behind_an_idle_session_is_not_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let (path, w) = writer(dir.path());
        w.append(0, "{\"n\":0}").unwrap();
        w.sync().unwrap();
        w.release_idle();
        assert!(w.settled_idle());
        // Not dsh: something that ignores the hold appends a line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"n\":\"x\"}\n"))
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        w.append(1, "{\"n\":1}").unwrap();
        let e = w.sync().err().unwrap().to_string();
        assert!(
            e.contains("s.jsonl") && e.contains("changed while the session was idle"),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
