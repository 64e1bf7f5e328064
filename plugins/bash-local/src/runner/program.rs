//! Where a bare program name (`bash`) lives, looked up in the child's own
//! `PATH` the way `execvp` would, so the spawn can go by absolute path.
//!
//! Rust's `Command` takes the `posix_spawn` (vfork-like) path only when it
//! need not search `PATH` itself: a bare name plus a rebuilt environment
//! makes it fork the whole daemon instead, page tables and all, for every
//! `Bash` call. Resolving the name here keeps every spawn on `posix_spawn`.
//! Answers are cached per (name, `PATH`); a cached file that has gone is
//! looked up again.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The search path `execvp` uses when `PATH` is unset (glibc's `_CS_PATH`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

type Cache = Mutex<HashMap<(OsString, OsString), PathBuf>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::default)
}

/// `program` as the child would run it: unchanged when it names a path
/// (has a `/`), else the first executable regular file of that name in
/// `path` (the child's `PATH`; empty entries are `cwd`, as for `execvp`).
/// `None` when there is none: the caller spawns the bare name and reports
/// the system's error.
pub(crate) fn resolve(program: &str, path: Option<&OsStr>, cwd: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    if program.is_empty() {
        return None;
    }
    let path = path.unwrap_or(OsStr::new(DEFAULT_PATH));
    let relative = path.as_bytes().split(|b| *b == b':').any(<[u8]>::is_empty);
    // A PATH with an empty entry depends on the cwd: never cached.
    let key = (!relative).then(|| (OsString::from(program), path.to_os_string()));
    if let Some(key) = &key {
        let cached = cache()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned();
        if let Some(found) = cached.filter(|f| is_executable(f)) {
            return Some(found);
        }
    }
    let found = path
        .as_bytes()
        .split(|b| *b == b':')
        .map(|dir| match dir {
            b"" => cwd.join(program),
            dir => Path::new(OsStr::from_bytes(dir)).join(program),
        })
        .find(|candidate| is_executable(candidate))?;
    if let Some(key) = key {
        cache()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, found.clone());
    }
    Some(found)
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_is_found_in_the_childs_path_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        for d in [&first, &second] {
            std::fs::create_dir(d).expect("dir");
            let tool = d.join("tool");
            std::fs::write(&tool, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        // Not executable: skipped, as execvp skips it.
        std::fs::write(dir.path().join("tool"), "").expect("write");
        let path = std::env::join_paths([dir.path(), &first, &second]).expect("path");
        assert_eq!(
            resolve("tool", Some(&path), Path::new("/")),
            Some(first.join("tool"))
        );
        // The cached answer is dropped once its file has gone.
        std::fs::remove_file(first.join("tool")).expect("rm");
        assert_eq!(
            resolve("tool", Some(&path), Path::new("/")),
            Some(second.join("tool"))
        );
        assert_eq!(resolve("no-such-tool", Some(&path), Path::new("/")), None);
    }

    #[test]
    fn paths_and_empty_entries_are_taken_as_execvp_takes_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let tool = dir.path().join("here");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(
            resolve("./x", None, Path::new("/")),
            Some(PathBuf::from("./x"))
        );
        assert_eq!(
            resolve("here", Some(OsStr::new("/nonexistent:")), dir.path()),
            Some(tool)
        );
        assert_eq!(
            resolve("sh", None, Path::new("/")),
            Some(PathBuf::from("/bin/sh"))
        );
    }
}
