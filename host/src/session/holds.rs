//! [`HoldTable`]: which sessions of one state folder this process holds,
//! kept as byte-range locks on one file, so an idle session costs no file
//! descriptor.
//!
//! A process that has a session open holds it until it closes it: no other
//! dsh process may write its log meanwhile (ARCHITECTURE.md §7). The log
//! file's own `flock` says so only while that file is open, and a daemon
//! holding hundreds of idle sessions should not keep hundreds of files open
//! (issue 15). So the hold is a lock of its own: an open-file-description
//! lock (`F_OFD_SETLK`) on one byte of `<state_dir>/.session-holds`, at an
//! offset hashed from the session id. Every process that writes a log takes
//! it before the log's `flock` and keeps it until it lets the session go;
//! the log file itself is open only while there is something to write
//! ([`super::files_store::FileWriter`]). The kernel drops the locks with the
//! process, so a crash leaves nothing held. All holds of one table share
//! one descriptor, closed again when the last hold is let go.
//!
//! Two ids that hash to one offset (62 bits of FNV-1a) would look held to
//! each other across processes; within a process the table counts holds
//! per offset and refuses by id, so its own sessions never collide.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::files::{PRIVATE_FILE_MODE, io_error};
use super::log::LogError;

/// The holds of one state folder, shared by everything in this process
/// that opens its sessions through one store.
#[derive(Debug)]
pub(crate) struct HoldTable {
    path: PathBuf,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Open while at least one session is held.
    file: Option<File>,
    /// Held session ids.
    ids: HashMap<String, u64>,
    /// How many held ids lock each offset.
    offsets: HashMap<u64, usize>,
}

/// One held session: let go when dropped.
#[derive(Debug)]
pub(crate) struct Hold {
    table: Arc<HoldTable>,
    id: String,
}

/// Where the byte for `id` sits: FNV-1a over the id, in 62 bits so that
/// `offset + 1` fits an `off_t`.
fn offset(id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash >> 2
}

/// Sets (`F_WRLCK`) or clears (`F_UNLCK`) the lock on one byte; `Ok(false)`
/// when another open file description holds it.
fn set_lock(file: &File, at: u64, kind: i32) -> std::io::Result<bool> {
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = at as libc::off_t;
    lock.l_len = 1;
    // SAFETY: fcntl(2) on a descriptor `file` owns, with a pointer to a
    // valid `flock` that outlives the call; OFD locks require l_pid 0.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &lock) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(false),
        _ => Err(e),
    }
}

impl HoldTable {
    /// The table of the state folder whose `sessions/` folder holds `log`.
    pub(crate) fn for_log(log: &Path) -> Arc<HoldTable> {
        let sessions = log.parent().unwrap_or(Path::new("."));
        let state = sessions.parent().unwrap_or(Path::new("."));
        Self::new(state)
    }

    /// The table of `state_dir`.
    pub(crate) fn new(state_dir: &Path) -> Arc<HoldTable> {
        Arc::new(HoldTable {
            path: state_dir.join(".session-holds"),
            inner: Mutex::new(Inner::default()),
        })
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds session `id` (whose log is `log`, for messages), or says it is
    /// in use: by this process, or by another that holds it.
    pub(crate) fn take(self: &Arc<Self>, id: &str, log: &Path) -> Result<Hold, LogError> {
        let locked = || LogError::Locked {
            path: log.to_path_buf(),
        };
        let mut inner = self.inner();
        if inner.ids.contains_key(id) {
            return Err(locked());
        }
        let at = offset(id);
        if !inner.offsets.contains_key(&at) {
            if inner.file.is_none() {
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(PRIVATE_FILE_MODE)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&self.path)
                    .map_err(|e| io_error(&self.path, "cannot open the session holds file", e))?;
                inner.file = Some(file);
            }
            let Some(file) = inner.file.as_ref() else {
                return Err(io_error(&self.path, "cannot open", "no file"));
            };
            match set_lock(file, at, libc::F_WRLCK) {
                Ok(true) => {}
                Ok(false) => {
                    self.close_if_unused(&mut inner);
                    return Err(locked());
                }
                Err(e) => {
                    self.close_if_unused(&mut inner);
                    return Err(io_error(&self.path, "cannot lock", e));
                }
            }
        }
        *inner.offsets.entry(at).or_insert(0) += 1;
        inner.ids.insert(id.to_string(), at);
        Ok(Hold {
            table: self.clone(),
            id: id.to_string(),
        })
    }

    fn close_if_unused(&self, inner: &mut Inner) {
        if inner.ids.is_empty() {
            inner.file = None;
        }
    }

    fn release(&self, id: &str) {
        let mut inner = self.inner();
        let Some(at) = inner.ids.remove(id) else {
            return;
        };
        let left = inner.offsets.get_mut(&at).map(|n| {
            *n -= 1;
            *n
        });
        if left == Some(0) {
            inner.offsets.remove(&at);
            if let Some(file) = &inner.file
                && let Err(e) = set_lock(file, at, libc::F_UNLCK)
            {
                tracing::error!(path = %self.path.display(), session = %id, "cannot let go of the session's hold: {e}");
            }
        }
        self.close_if_unused(&mut inner);
    }

    /// Sessions held through this table (for tests and metrics).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.inner().ids.len()
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.table.release(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_id_is_refused_in_process_and_across_descriptions_until_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sessions/a.jsonl");
        let here = HoldTable::new(dir.path());
        let other = HoldTable::new(dir.path());
        let held = here.take("a", &log).unwrap();
        assert!(matches!(here.take("a", &log), Err(LogError::Locked { .. })));
        // Another description of the file stands for another process.
        assert!(matches!(
            other.take("a", &log),
            Err(LogError::Locked { .. })
        ));
        let b = other.take("b", &log).unwrap();
        drop(held);
        let again = other.take("a", &log).unwrap();
        assert!(matches!(here.take("b", &log), Err(LogError::Locked { .. })));
        drop((again, b));
        assert_eq!(other.held(), 0);
        assert!(other.inner().file.is_none(), "no descriptor when idle");
        here.take("a", &log).unwrap();
    }

    #[test]
    fn offsets_fit_an_off_t() {
        for id in ["", "a", &"z".repeat(128)] {
            assert!(offset(id) < (i64::MAX as u64));
        }
    }
}
