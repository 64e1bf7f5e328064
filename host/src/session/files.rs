//! The session files on disk: private folders and files, the writer's lock,
//! and names beside a log.
//!
//! State is private: the state folder and `sessions/` are created 0700 and
//! every file dsh writes there 0600, whatever the umask (the mode is set
//! explicitly after creation, since a umask can only take bits away).
//! Folders that already exist keep their mode: an operator may have chosen it.
//!
//! One writer per log: the process that appends to `<id>.jsonl` holds an
//! exclusive `flock` on it for as long as it has the session open. A log is
//! only ever replaced by a rename (`dsh sessions repair`), so after taking
//! the lock the writer checks that the path still names the file it locked.

use std::fs::Permissions;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::log::LogError;

/// Mode of the state folder and `sessions/`.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// Mode of every session file.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// A file held with the writer's exclusive lock (released on drop).
pub(crate) type LockedFile = Flock<File>;

pub(crate) fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> LogError {
    LogError::Io {
        path: path.to_path_buf(),
        message: format!("{what}: {e}"),
    }
}

/// Creates `dir` (and missing parents) when it does not exist; the folder
/// itself is made 0700.
fn create_private_dir(dir: &Path) -> Result<(), LogError> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| io_error(parent, "cannot create folder", e))?;
    }
    match DirBuilder::new().mode(PRIVATE_DIR_MODE).create(dir) {
        Ok(()) => std::fs::set_permissions(dir, Permissions::from_mode(PRIVATE_DIR_MODE))
            .map_err(|e| io_error(dir, "cannot make the folder private", e)),
        // Another process made it first: theirs is made the same way.
        Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(io_error(dir, "cannot create folder", e)),
    }
}

/// Creates the state folder (0700) when it does not exist.
pub fn create_state_dir(state_dir: &Path) -> Result<(), LogError> {
    create_private_dir(state_dir)
}

/// `<state_dir>/sessions`, created (with the state folder) 0700 if missing.
pub(crate) fn sessions_dir(state_dir: &Path) -> Result<PathBuf, LogError> {
    create_private_dir(state_dir)?;
    let dir = state_dir.join("sessions");
    create_private_dir(&dir)?;
    Ok(dir)
}

/// Creates `path` (which must not exist, nor be a symlink) 0600, for
/// reading and appending.
pub(crate) fn create_private_file(path: &Path) -> Result<File, LogError> {
    let file = OpenOptions::new()
        .create_new(true)
        .read(true)
        .append(true)
        .mode(PRIVATE_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| io_error(path, "cannot create", e))?;
    file.set_permissions(Permissions::from_mode(PRIVATE_FILE_MODE))
        .map_err(|e| io_error(path, "cannot make the file private", e))?;
    Ok(file)
}

/// `file` (opened with `O_NONBLOCK`, so a FIFO put where a log belongs
/// does not block the open) when it is a regular file, with `O_NONBLOCK`
/// cleared; a FIFO, device or folder is refused: reading one would wait
/// forever or never end.
pub(crate) fn regular(file: File, path: &Path) -> Result<File, LogError> {
    let kind = file
        .metadata()
        .map_err(|e| io_error(path, "cannot stat", e))?
        .file_type();
    if !kind.is_file() {
        return Err(io_error(
            path,
            "cannot open session log",
            "not a regular file (a FIFO, device or folder is never read as a log)",
        ));
    }
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = fcntl(&file, FcntlArg::F_GETFL)
        .map_err(|e| io_error(path, "cannot open session log", e))?;
    fcntl(
        &file,
        FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) - OFlag::O_NONBLOCK),
    )
    .map_err(|e| io_error(path, "cannot open session log", e))?;
    Ok(file)
}

/// Takes the writer's lock on `file`, or says who holds it.
pub(crate) fn lock(file: File, path: &Path) -> Result<LockedFile, LogError> {
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        if errno == Errno::EWOULDBLOCK {
            LogError::Locked {
                path: path.to_path_buf(),
            }
        } else {
            io_error(path, "cannot lock", errno)
        }
    })
}

/// Opens the existing log at `path` for reading and appending and takes
/// the writer's lock on it. Refuses a symlink.
pub(crate) fn open_locked(path: &Path) -> Result<LockedFile, LogError> {
    // A repair renames a new file over the path; a writer that opened the
    // old one just before then finds it replaced and opens again.
    for _ in 0..8 {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| match e.kind() {
                ErrorKind::NotFound => LogError::Missing {
                    path: path.to_path_buf(),
                },
                _ => io_error(path, "cannot open session log", e),
            })?;
        let file = regular(file, path)?;
        let locked = lock(file, path)?;
        let held = locked
            .metadata()
            .map_err(|e| io_error(path, "cannot stat", e))?;
        match std::fs::symlink_metadata(path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => return Ok(locked),
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error(path, "cannot stat", e)),
        }
    }
    Err(io_error(
        path,
        "cannot open session log",
        "it was replaced again and again while opening",
    ))
}

/// The first free `<log>.damaged-<n>` beside `path` (n from 1).
pub(crate) fn damaged_name(path: &Path) -> PathBuf {
    let mut n = 1u32;
    loop {
        let candidate = PathBuf::from(format!("{}.damaged-{n}", path.display()));
        if std::fs::symlink_metadata(&candidate).is_err() {
            return candidate;
        }
        n += 1;
    }
}

/// Keeps `bytes` (a damaged log's content) as a new private file beside
/// `path`; returns its name.
pub(crate) fn keep_aside(path: &Path, bytes: &[u8]) -> Result<PathBuf, LogError> {
    for _ in 0..8 {
        let aside = damaged_name(path);
        match create_private_file(&aside) {
            Ok(mut file) => {
                std::io::Write::write_all(&mut file, bytes)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| io_error(&aside, "cannot write", e))?;
                return Ok(aside);
            }
            // Taken between the look and the create: try the next number.
            Err(LogError::Io { .. }) if std::fs::symlink_metadata(&aside).is_ok() => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io_error(
        path,
        "cannot keep the damaged log aside",
        "no free name",
    ))
}

/// Flushes a folder's entries (a created or renamed file) to disk; best effort.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir)
        && let Err(e) = d.sync_all()
    {
        tracing::debug!(dir = %dir.display(), "folder sync failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_and_files_are_private_whatever_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("a/b/state");
        // The umask is process-wide; the explicit chmod makes it irrelevant,
        // which is what is checked (a 000 umask would give 0777 otherwise).
        let sessions = sessions_dir(&state).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(&sessions), 0o700);
        let file = sessions.join("x.jsonl");
        create_private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert!(create_private_file(&file).is_err(), "never overwrites");
    }

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "x\n").unwrap();
        let first = open_locked(&path).unwrap();
        assert!(matches!(open_locked(&path), Err(LogError::Locked { .. })));
        drop(first);
        open_locked(&path).unwrap();
    }
}
