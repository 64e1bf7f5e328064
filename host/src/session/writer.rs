//! [`LogWriter`]: the thread that owns a session log's locked file, so no
//! append or fsync ever runs on an async runtime's worker thread.
//!
//! [`super::SessionLog`] keeps the events in memory and checks the turn
//! structure; each accepted line goes to this thread in order. The thread
//! writes every line queued when it wakes with one `write` (a killed
//! process leaves whole lines behind; lines queued before a sync are
//! written before it is answered, so nothing is reordered). A sync is
//! queued behind the lines before it and answered once `fdatasync` returns,
//! either to a blocked caller ([`LogWriter::sync`]) or to an awaiting one
//! ([`LogWriter::sync_later`]).
//!
//! The file, and with it the writer's `flock`, lives on this thread; dropping
//! the writer waits for the lines still queued and for the file to close, so
//! the lock is released when the [`super::SessionLog`] is dropped, as
//! before. A session going idle instead lets its thread go without waiting
//! ([`LogWriter::detach`]); the next thread opens the file itself once that
//! one has ended (`Source::Reopen`, used by `super::file_writer`). After a
//! failed write nothing more is written (the file stays a
//! prefix of whole lines, or ends torn, which the next load cuts): every
//! later sync reports that failure.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::files::{LockedFile, io_error};
use super::log::LogError;

/// Where a sync's answer goes.
enum Reply {
    Blocking(mpsc::Sender<Result<(), LogError>>),
    Later(tokio::sync::oneshot::Sender<Result<(), LogError>>),
}

enum Op {
    Line(Vec<u8>),
    /// Answer once every line before it is written; `fsync` too if asked.
    Sync {
        reply: Reply,
        fsync: bool,
    },
}

/// The log file's own thread.
pub(crate) struct LogWriter {
    path: PathBuf,
    ops: Option<mpsc::Sender<Op>>,
    thread: Option<JoinHandle<Option<String>>>,
}

/// A sync that was queued: await it for the answer.
pub struct PendingSync(
    tokio::sync::oneshot::Receiver<Result<(), LogError>>,
    PathBuf,
);

impl PendingSync {
    /// A sync answered through `rx` (another store's writer); `path` names
    /// the log in a failure.
    pub(crate) fn new(
        rx: tokio::sync::oneshot::Receiver<Result<(), LogError>>,
        path: PathBuf,
    ) -> PendingSync {
        PendingSync(rx, path)
    }

    /// The file is on disk up to the sync (or the failure that stopped it).
    pub async fn done(self) -> Result<(), LogError> {
        self.0.await.unwrap_or_else(|_| {
            Err(LogError::Io {
                path: self.1,
                message: "the log's writer thread ended before the sync".into(),
            })
        })
    }
}

/// The file a writer thread starts with.
pub(crate) enum Source {
    /// Already open and locked.
    Open(LockedFile),
    /// Opened again by the thread: after `previous` (the session's last
    /// writer thread, which may still be writing and holds the `flock`) has
    /// ended, the file at the path must still be the one the session had
    /// (`dev`, `ino`) and hold exactly the `len` bytes written to it.
    Reopen {
        previous: Option<JoinHandle<Option<String>>>,
        dev: u64,
        ino: u64,
        len: u64,
    },
}

/// Opens the log again for a session that let it go while idle, checking
/// nobody replaced or wrote it meanwhile.
fn reopen(
    path: &Path,
    previous: Option<JoinHandle<Option<String>>>,
    dev: u64,
    ino: u64,
    len: u64,
) -> Result<LockedFile, String> {
    use std::os::unix::fs::MetadataExt as _;
    if let Some(previous) = previous {
        match previous.join() {
            Ok(None) => {}
            Ok(Some(failed)) => return Err(failed),
            Err(_) => return Err("the log's previous writer thread panicked".into()),
        }
    }
    let file = super::files::open_locked(path).map_err(|e| format!("cannot open again: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot stat after opening again: {e}"))?;
    if meta.dev() != dev || meta.ino() != ino {
        return Err("the log was replaced by another file while the session was idle".into());
    }
    if meta.len() != len {
        return Err(format!(
            "the log changed while the session was idle ({} bytes, {len} written by this session)",
            meta.len()
        ));
    }
    Ok(file)
}

/// Lines queued behind each other are written together up to about this
/// many bytes (a `tool/result` may be large on its own: it goes alone).
const BATCH_BYTES: usize = 64 * 1024;

/// Writes the queued lines with one `write_all` and empties `batch`;
/// after a failure nothing more is written.
fn write_batch(
    path: &Path,
    file: Option<&mut LockedFile>,
    failed: &mut Option<String>,
    batch: &mut Vec<u8>,
) {
    if batch.is_empty() {
        return;
    }
    if let Some(file) = file.filter(|_| failed.is_none())
        && let Err(e) = file.write_all(batch)
    {
        tracing::error!(path = %path.display(), "session log append failed: {e}; nothing more is written to this log");
        *failed = Some(format!("cannot append: {e}"));
    }
    batch.clear();
}

/// Answers a sync once everything before it is written.
fn answer(
    path: &Path,
    file: Option<&LockedFile>,
    failed: &Option<String>,
    reply: Reply,
    fsync: bool,
) {
    let result = match failed {
        Some(message) => Err(LogError::Io {
            path: path.to_path_buf(),
            message: message.clone(),
        }),
        None if !fsync => Ok(()),
        None => file.map_or(Ok(()), |file| file.sync_data()).map_err(|e| {
            tracing::error!(path = %path.display(), "session log sync failed: {e}");
            io_error(path, "cannot sync", e)
        }),
    };
    match reply {
        Reply::Blocking(tx) => {
            let _ = tx.send(result);
        }
        Reply::Later(tx) => {
            let _ = tx.send(result);
        }
    }
}

fn run(path: PathBuf, source: Source, ops: mpsc::Receiver<Op>) -> Option<String> {
    let mut failed: Option<String> = None;
    let mut file = match source {
        Source::Open(file) => Some(file),
        Source::Reopen {
            previous,
            dev,
            ino,
            len,
        } => match reopen(&path, previous, dev, ino, len) {
            Ok(file) => Some(file),
            Err(message) => {
                tracing::error!(path = %path.display(), "session log: {message}; nothing more is written to this log");
                failed = Some(message);
                None
            }
        },
    };
    // Everything queued when the thread wakes is handled in one go: the
    // lines up to each sync (or to the end of the queue) go out in one
    // `write`, so a burst of lines costs one wake-up and one system call.
    let mut batch: Vec<u8> = Vec::new();
    while let Ok(first) = ops.recv() {
        let mut next = Some(first);
        while let Some(op) = next.take() {
            match op {
                Op::Line(line) => {
                    if batch.is_empty() {
                        batch = line;
                    } else {
                        batch.extend_from_slice(&line);
                    }
                }
                Op::Sync { reply, fsync } => {
                    write_batch(&path, file.as_mut(), &mut failed, &mut batch);
                    answer(&path, file.as_ref(), &failed, reply, fsync);
                }
            }
            if batch.len() < BATCH_BYTES {
                next = ops.try_recv().ok();
            }
        }
        write_batch(&path, file.as_mut(), &mut failed, &mut batch);
    }
    drop(file);
    failed
}

impl LogWriter {
    /// Hands `file` to a new writer thread.
    pub(crate) fn start(path: &Path, file: LockedFile) -> Result<LogWriter, LogError> {
        Self::start_from(path, Source::Open(file))
    }

    /// A new writer thread on `source`.
    pub(crate) fn start_from(path: &Path, source: Source) -> Result<LogWriter, LogError> {
        let (tx, rx) = mpsc::channel();
        let owned = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("dsh-session-log".into())
            .spawn(move || run(owned, source, rx))
            .map_err(|e| io_error(path, "cannot start the log's writer thread", e))?;
        Ok(LogWriter {
            path: path.to_path_buf(),
            ops: Some(tx),
            thread: Some(thread),
        })
    }

    fn send(&self, op: Op) -> Result<(), LogError> {
        self.ops
            .as_ref()
            .and_then(|tx| tx.send(op).ok())
            .ok_or_else(|| LogError::Io {
                path: self.path.clone(),
                message: "the log's writer thread has ended".into(),
            })
    }

    /// Queues one whole line (with its newline).
    pub(crate) fn write_line(&self, line: Vec<u8>) -> Result<(), LogError> {
        self.send(Op::Line(line))
    }

    /// Syncs everything queued so far, blocking the calling thread.
    pub(crate) fn sync(&self) -> Result<(), LogError> {
        let (tx, rx) = mpsc::channel();
        self.send(Op::Sync {
            reply: Reply::Blocking(tx),
            fsync: true,
        })?;
        rx.recv().unwrap_or_else(|_| {
            Err(LogError::Io {
                path: self.path.clone(),
                message: "the log's writer thread ended before the sync".into(),
            })
        })
    }

    /// Queues a sync of everything queued so far (an `fsync`, or with
    /// `fsync` false only the writes: readers of the file then see every
    /// line), to be awaited.
    pub(crate) fn sync_later(&self, fsync: bool) -> Result<PendingSync, LogError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Op::Sync {
            reply: Reply::Later(tx),
            fsync,
        })?;
        Ok(PendingSync(rx, self.path.clone()))
    }
}

impl LogWriter {
    /// Lets the thread finish what is queued and close the file on its
    /// own, without waiting for it; returns the thread, which says whether
    /// a write failed.
    pub(crate) fn detach(mut self) -> Option<JoinHandle<Option<String>>> {
        self.ops = None;
        self.thread.take()
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        // Closing the queue ends the thread once the queued lines are
        // written; joining it releases the file's lock before we return.
        self.ops = None;
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!(path = %self.path.display(), "the session log's writer thread panicked");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::files;
    use super::*;

    /// Lines of every size (some over a batch on their own) queued faster
    /// than the thread writes them, with barriers between: each barrier is
    /// answered only once every line before it is in the file, and the file
    /// ends as exactly the lines in the order they were queued.
    #[test]
    fn batched_lines_keep_their_order_and_barriers_wait_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "").unwrap();
        let writer = LogWriter::start(&path, files::open_locked(&path).unwrap()).unwrap();
        let mut expected = Vec::new();
        let mut barriers = Vec::new();
        for n in 0..600usize {
            let size = match n % 7 {
                0 => BATCH_BYTES + 10,
                3 => 3000,
                _ => 20,
            };
            let mut line = format!("{{\"n\":{n},\"pad\":\"").into_bytes();
            line.resize(line.len() + size, b'x');
            line.extend_from_slice(b"\"}\n");
            expected.extend_from_slice(&line);
            writer.write_line(line).unwrap();
            if n % 50 == 49 {
                barriers.push((expected.len(), writer.sync_later(false).unwrap()));
            }
        }
        for (len, barrier) in barriers {
            futures::executor::block_on(barrier.done()).unwrap();
            let now = std::fs::read(&path).unwrap();
            assert!(now.len() >= len, "a barrier came before its lines");
            assert_eq!(now[..len], expected[..len]);
        }
        writer.sync().unwrap();
        drop(writer);
        assert!(std::fs::read(&path).unwrap() == expected, "lines reordered");
    }
}
