//! Where a `Bash` command left its shell: the side channel that makes a
//! `cd` persist across calls.
//!
//! The command runs wrapped as Claude Code wraps it,
//! `eval '<command>' && pwd -P >| <file>` into a private temp file (never
//! stdout, which is the tool's output): the call's status is the
//! command's, or `pwd`'s after a command that succeeded. After the run the file holds the
//! shell's final physical directory; the tool hands it to the host
//! (`set_session_shell_cwd`, which keeps the shell inside the session's
//! root as Claude Code does) when it differs from where the call started.
//! A command that fails, ends the shell itself (`exit 3`) or kills it
//! leaves the file empty: the directory stays where it was.

use std::fs::OpenOptions;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh, private (0600, created exclusively) file the wrapped command
/// writes its final directory into; removed when dropped.
#[derive(Debug)]
pub struct CwdFile {
    path: PathBuf,
}

impl CwdFile {
    /// Creates the file in [`folder`] (for a sandboxed command, in the
    /// system temp folder), or in the system temp folder when that folder
    /// refuses it.
    pub fn create(sandboxed: bool) -> std::io::Result<CwdFile> {
        let temp = std::env::temp_dir();
        match folder(sandboxed) {
            Some(memory) => Self::create_in(memory).or_else(|_| Self::create_in(&temp)),
            None => Self::create_in(&temp),
        }
    }

    /// Creates the file in `dir`.
    pub fn create_in(dir: &Path) -> std::io::Result<CwdFile> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut last = None;
        for _ in 0..8 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("dsh-cwd-{}-{nanos:x}-{n}", std::process::id()));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(_) => return Ok(CwdFile { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no free temp file name")))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory the command ended in: the file's one line, if it is
    /// an absolute path to a directory that still exists.
    pub fn read(&self) -> Option<PathBuf> {
        let mut text = String::new();
        let mut file = std::fs::File::open(&self.path).ok()?;
        file.read_to_string(&mut text).ok()?;
        let line = text.strip_suffix('\n').unwrap_or(&text);
        let dir = PathBuf::from(line);
        (!line.is_empty() && !line.contains('\n') && dir.is_absolute() && dir.is_dir())
            .then_some(dir)
    }
}

impl Drop for CwdFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `text` as one single-quoted shell word.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Where an unsandboxed command's file goes when no `$TMPDIR` names a
/// place for it: `/dev/shm` when it is a memory file system (`tmpfs`).
/// The file is created and removed around every `Bash` call, which on a
/// disk-backed `/tmp` is two journaled metadata updates on the way from a
/// hook's exit to the next model request (issue 15: 0.1 to 0.2 ms per call
/// on an ext4 `/tmp`); in memory it is a few microseconds. A sandboxed
/// command keeps the system temp folder, which its sandbox already makes
/// writable; `None` means that folder.
pub fn folder(sandboxed: bool) -> Option<&'static Path> {
    if sandboxed || std::env::var_os("TMPDIR").is_some() {
        return None;
    }
    static MEMORY: OnceLock<Option<&'static Path>> = OnceLock::new();
    *MEMORY.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        is_tmpfs(shm).then_some(shm)
    })
}

/// Whether `dir` is on a `tmpfs`.
fn is_tmpfs(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    let mut stat = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string and `stat` a buffer of the
    // size `statfs` writes; it is read only when the call succeeded.
    let ok = unsafe { libc::statfs(path.as_ptr(), stat.as_mut_ptr()) } == 0;
    // SAFETY: initialized by the successful call above.
    let stat = ok.then(|| unsafe { stat.assume_init() });
    // `f_type`'s and the constant's integer types differ by architecture.
    #[allow(clippy::unnecessary_cast)]
    stat.is_some_and(|s| s.f_type as i64 == libc::TMPFS_MAGIC as i64)
}

/// The script `<shell> -c` runs, as Claude Code's: `eval <command> && pwd
/// -P >| <file>`. A failed command moves nothing (recorded
/// `S238-cd-out-fail`); a `pwd` that fails (its folder deleted under it)
/// fails the call with its own error in the output (`S236-deleted-*`).
pub fn wrap(command: &str, file: &Path) -> String {
    format!(
        "eval {} && pwd -P >| {}",
        shell_quote(command),
        shell_quote(&file.to_string_lossy())
    )
}

/// Whether `new` is somewhere other than `old` (compared physically, so a
/// session started through a symlink does not "move" on every call).
pub fn moved(old: &Path, new: &Path) -> bool {
    let old = std::fs::canonicalize(old).unwrap_or_else(|_| old.to_path_buf());
    old != new
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsandboxed_file_lives_in_memory_when_it_can() {
        let shm = Path::new("/dev/shm");
        let memory = std::env::var_os("TMPDIR").is_none() && is_tmpfs(shm);
        let file = CwdFile::create(false).expect("cwd file");
        let expected = if memory {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        assert_eq!(file.path().parent(), Some(expected.as_path()));
        let sandboxed = CwdFile::create(true).expect("cwd file");
        assert_eq!(
            sandboxed.path().parent(),
            Some(std::env::temp_dir().as_path())
        );
        assert_eq!(folder(true), None);
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists(), "removed when dropped");
        // A place that refuses the file: none is made, the error says why.
        let gone = Path::new("/nonexistent-dsh-dir");
        assert!(CwdFile::create_in(gone).is_err());
    }

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
