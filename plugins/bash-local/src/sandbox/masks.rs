//! The folders made on disk for Codex's masks, and their removal.
//!
//! Codex 0.171 shows `.agents`, `.aws`, `.codex` and `.git` as empty
//! read-only folders in a writable root that has none (C140a): right
//! before the command it makes each as a plain folder (mode 0755) in the
//! root, mounts an empty read-only tmpfs on it inside the sandbox, and
//! removes the folder once the command has ended, so a hook after it and
//! the disk after the run see none of them (recorded by a watcher outside
//! the sandbox). dsh does the same: the shell tool makes the folders
//! ([`Masks::make`]) before it spawns `dsh sandbox-exec --mask <path>...`,
//! and the [`Masks`] it holds removes them when dropped, after the run
//! (cancelled or timed out runs included).
//!
//! Calls of one process that run at once share a folder: a registry counts
//! its users and the last one removes it. A folder is only ever removed
//! with `rmdir`, so one something else has put a file in (outside the
//! sandbox) stays, with the file. Another process's run sees such a
//! folder as a real one and protects it; when it is gone by the time that
//! run's sandbox binds it (this run ended), that run skips it rather than
//! fail (`helper.rs`).

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

use super::SandboxError;

/// How many runs use each folder this process made.
fn registry() -> MutexGuard<'static, HashMap<PathBuf, usize>> {
    static USERS: OnceLock<Mutex<HashMap<PathBuf, usize>>> = OnceLock::new();
    USERS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The mask folders one run uses; dropping it releases them.
#[derive(Debug, Default)]
pub struct Masks {
    paths: Vec<PathBuf>,
}

impl Masks {
    /// Makes (or joins) a folder at each of `paths`, the places
    /// [`super::policy::missing_protected`] named. A place where something
    /// appeared meanwhile, or where this process may not write (so the
    /// command cannot either), gets no mask; any other failure is an error
    /// naming the path, and releases what was made.
    pub fn make(paths: &[PathBuf]) -> Result<Masks, SandboxError> {
        let mut masks = Masks::default();
        for path in paths {
            let mut users = registry();
            if let Some(count) = users.get_mut(path) {
                *count += 1;
                masks.paths.push(path.clone());
                continue;
            }
            match std::fs::DirBuilder::new().mode(0o755).create(path) {
                Ok(()) => {
                    users.insert(path.clone(), 1);
                    masks.paths.push(path.clone());
                }
                Err(e) if skippable(&e) => {
                    tracing::debug!(path = %path.display(), "no mask folder: {e}");
                }
                Err(source) => {
                    drop(users);
                    drop(masks);
                    return Err(SandboxError::Setup {
                        step: "make the protected folder",
                        path: path.clone(),
                        source,
                    });
                }
            }
        }
        Ok(masks)
    }

    /// The folders, for the helper's `--mask` arguments.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }
}

/// Failures that leave the place as it was for the command too: something
/// is there now (a real folder, which the policy protects if it is one),
/// or this process may not write there, and neither may the command.
fn skippable(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::AlreadyExists
        || matches!(
            e.raw_os_error(),
            Some(libc::EACCES | libc::EPERM | libc::EROFS)
        )
}

impl Drop for Masks {
    fn drop(&mut self) {
        let mut users = registry();
        for path in self.paths.drain(..) {
            let Some(count) = users.get_mut(&path) else {
                continue;
            };
            *count -= 1;
            if *count == 0 {
                users.remove(&path);
                remove(&path);
            }
        }
    }
}

/// Removes a mask folder if it is still an empty folder.
fn remove(path: &Path) {
    if let Err(e) = std::fs::remove_dir(path)
        && e.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), "a protected folder made for the sandbox stays: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_shared_by_runs_at_once_and_removed_by_the_last() {
        let dir = tempfile::tempdir().expect("temp dir");
        let git = dir.path().join(".git");
        let codex = dir.path().join(".codex");
        let first = Masks::make(&[git.clone(), codex.clone()]).expect("make");
        let second = Masks::make(std::slice::from_ref(&git)).expect("make");
        assert_eq!(first.paths(), [git.clone(), codex.clone()]);
        assert_eq!(second.paths(), std::slice::from_ref(&git));
        drop(first);
        assert!(git.is_dir(), "the second run still uses it");
        assert!(!codex.exists());
        drop(second);
        assert!(!git.exists());
    }

    #[test]
    fn a_folder_with_a_file_in_it_stays_and_an_existing_one_is_not_taken() {
        let dir = tempfile::tempdir().expect("temp dir");
        let aws = dir.path().join(".aws");
        let agents = dir.path().join(".agents");
        std::fs::create_dir(&agents).expect("mkdir");
        let masks = Masks::make(&[aws.clone(), agents.clone()]).expect("make");
        assert_eq!(masks.paths(), std::slice::from_ref(&aws));
        std::fs::write(aws.join("config"), "[default]\n").expect("write");
        drop(masks);
        assert_eq!(
            std::fs::read_to_string(aws.join("config")).expect("kept"),
            "[default]\n"
        );
        assert!(agents.is_dir(), "not this run's to remove");
    }

    #[test]
    fn a_place_that_cannot_be_made_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let git = dir.path().join(".git");
        let bad = dir.path().join("no-such-root").join(".codex");
        let err = Masks::make(&[git.clone(), bad.clone()]).expect_err("refused");
        assert!(
            err.to_string().contains(&bad.display().to_string()),
            "{err}"
        );
        assert!(!git.exists(), "what was made is released");
    }
}
