//! Whether a `.so` file may be trusted enough to map into the daemon: the
//! rule sshd's `StrictModes` applies to `authorized_keys`, over the whole
//! path.
//!
//! The path is resolved first (every symlink, `..` and `.`), and the library
//! is then mapped from that resolved path, so a symlink cannot be swapped
//! after the check. The file and every folder from it up to `/` must be owned
//! by root or by the daemon's effective user, and must not be writable by
//! anyone else: world write refuses; group write refuses unless the group is
//! the owner's user-private group (what `umask 002` gives every file and
//! folder a user creates: a group named like the user, its primary group,
//! with no other member).
//!
//! One exception, where dsh is more permissive than sshd: a folder with the
//! sticky bit (`/tmp`, mode 1777) may be writable by others. In a sticky
//! folder only an entry's owner, the folder's owner or root can rename or
//! remove the entry, and the entry below it on the path must itself pass the
//! owner check, so nobody untrusted can replace what the path leads to. sshd
//! refuses such folders outright; dsh accepts them because plugins built or
//! unpacked under the system temp folder are common and are exactly as safe.
//! A world-writable folder without the sticky bit (0777) is refused.

use std::fmt;
use std::path::{Path, PathBuf};

use nix::sys::stat::{FileStat, SFlag};
use nix::unistd::{Gid, Group, Uid, User};

use super::loader::PluginLoadError;

/// The part of a plugin's path a trust problem is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathPart {
    /// The file as the manifest names it.
    File,
    /// The file a symlink leads to.
    Target(PathBuf),
    /// A folder on the resolved path.
    Folder(PathBuf),
}

impl fmt::Display for PathPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathPart::File => f.write_str("file"),
            PathPart::Target(p) => write!(f, "its symlink target {}", p.display()),
            PathPart::Folder(p) => write!(f, "folder {}", p.display()),
        }
    }
}

/// Checks `path` and returns it resolved: the path to map the library from.
pub(crate) fn trusted_path(path: &Path) -> Result<PathBuf, PluginLoadError> {
    let unreadable = |message: String| PluginLoadError::Unreadable {
        path: path.to_path_buf(),
        message,
    };
    let resolved = std::fs::canonicalize(path).map_err(|e| unreadable(e.to_string()))?;
    let daemon = nix::unistd::geteuid();
    let file_part = if resolved == path {
        PathPart::File
    } else {
        PathPart::Target(resolved.clone())
    };
    let parts = std::iter::once((resolved.as_path(), file_part)).chain(
        resolved
            .ancestors()
            .skip(1)
            .map(|dir| (dir, PathPart::Folder(dir.to_path_buf()))),
    );
    for (at, part) in parts {
        let stat = nix::sys::stat::stat(at)
            .map_err(|e| unreadable(format!("cannot check {part}: {}", e.desc())))?;
        if let Some(problem) = problem_with(&stat, daemon) {
            return Err(problem.into_error(path, part, daemon));
        }
    }
    Ok(resolved)
}

/// Why one part of the path is not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Problem {
    /// Owned by someone other than root or the daemon's user.
    Owner { uid: u32, mode: u32 },
    /// Writable by someone other than its owner.
    Writable { mode: u32 },
}

impl Problem {
    fn into_error(self, path: &Path, part: PathPart, daemon: Uid) -> PluginLoadError {
        let path = path.to_path_buf();
        match self {
            Problem::Owner { uid, mode } => PluginLoadError::Owner {
                path,
                part,
                uid,
                mode,
                daemon: daemon.as_raw(),
            },
            Problem::Writable { mode } => PluginLoadError::Writable { path, part, mode },
        }
    }
}

/// The problem with one file or folder, if any.
fn problem_with(stat: &FileStat, daemon: Uid) -> Option<Problem> {
    let mode = stat.st_mode & 0o7777;
    let owner = Uid::from_raw(stat.st_uid);
    if !owner.is_root() && owner != daemon {
        return Some(Problem::Owner {
            uid: owner.as_raw(),
            mode,
        });
    }
    let is_dir = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
    let sticky_dir = is_dir && mode & 0o1000 != 0;
    let shared_group = || !private_group_of(owner, Gid::from_raw(stat.st_gid)).unwrap_or(false);
    let writable = mode & 0o002 != 0 || (mode & 0o020 != 0 && shared_group());
    (writable && !sticky_dir).then_some(Problem::Writable { mode })
}

/// Whether `gid` is the user-private group of `uid`; `None` when either
/// cannot be looked up (the caller then assumes the worst).
fn private_group_of(uid: Uid, gid: Gid) -> Option<bool> {
    let user = User::from_uid(uid).ok()??;
    let group = Group::from_gid(gid).ok()??;
    Some(is_private_group(
        &UserEntry {
            name: user.name,
            primary_gid: user.gid.as_raw(),
        },
        &GroupEntry {
            gid: group.gid.as_raw(),
            name: group.name,
            members: group.mem,
        },
    ))
}

/// A user, as far as the permission check needs one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UserEntry {
    name: String,
    primary_gid: u32,
}

/// A group, as far as the permission check needs one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GroupEntry {
    gid: u32,
    name: String,
    members: Vec<String>,
}

/// Whether `group` is `user`'s user-private group (the convention behind
/// `umask 002`: a group named like the user, its primary group, listing no
/// one else), so group write grants nobody but the owner.
fn is_private_group(user: &UserEntry, group: &GroupEntry) -> bool {
    group.gid == user.primary_gid
        && group.name == user.name
        && group.members.iter().all(|m| *m == user.name)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).expect("stat").permissions().mode() & 0o7777
    }

    fn user(name: &str, gid: u32) -> UserEntry {
        UserEntry {
            name: name.into(),
            primary_gid: gid,
        }
    }

    fn group(gid: u32, name: &str, members: &[&str]) -> GroupEntry {
        GroupEntry {
            gid,
            name: name.into(),
            members: members.iter().map(|m| m.to_string()).collect(),
        }
    }

    #[test]
    fn group_write_is_private_only_for_the_owners_own_group() {
        let ann = user("ann", 1000);
        assert!(is_private_group(&ann, &group(1000, "ann", &[])));
        assert!(is_private_group(&ann, &group(1000, "ann", &["ann"])));
        assert!(!is_private_group(&ann, &group(1000, "ann", &["bob"])));
        assert!(!is_private_group(&ann, &group(100, "users", &[])));
        assert!(!is_private_group(&ann, &group(1000, "staff", &[])));
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    /// A file `libx.so` with `mode` inside a folder with `dir_mode`, checked.
    fn check(mode: u32, dir_mode: u32) -> Result<PathBuf, String> {
        let base = tempfile::tempdir().expect("temp dir");
        let dir = base.path().join("plugins");
        std::fs::create_dir(&dir).expect("mkdir");
        let file = dir.join("libx.so");
        std::fs::write(&file, b"x").expect("write");
        chmod(&file, mode);
        chmod(&dir, dir_mode);
        assert_eq!(mode_of(&dir), dir_mode);
        let out = trusted_path(&file).map_err(|e| {
            let text = e.to_string();
            let file = file.display().to_string();
            text.replace(&file, "FILE")
                .replace(&dir.display().to_string(), "DIR")
        });
        chmod(&dir, 0o700);
        out
    }

    #[test]
    fn writable_files_and_folders_are_refused_and_umask_022_passes() {
        assert!(check(0o755, 0o755).is_ok());
        assert!(check(0o644, 0o700).is_ok());
        assert_eq!(
            check(0o666, 0o755).expect_err("world-writable file"),
            "FILE: refused: file is writable by group or others (mode 666); run `chmod go-w` on it"
        );
        assert_eq!(
            check(0o644, 0o777).expect_err("world-writable folder"),
            "FILE: refused: folder DIR is writable by group or others (mode 777); run `chmod go-w` on it"
        );
        // Sticky folders are the one exception (see the module doc).
        assert!(check(0o644, 0o1777).is_ok());
        // Group write passes exactly when the group is the owner's private
        // group (as `umask 002` leaves a freshly built plugin).
        let me = nix::unistd::geteuid();
        let mine = User::from_uid(me).expect("passwd").expect("current user");
        let private = private_group_of(me, mine.gid).unwrap_or(false);
        assert_eq!(check(0o775, 0o755).is_ok(), private);
        assert_eq!(check(0o755, 0o775).is_ok(), private);
    }

    #[test]
    fn a_symlink_is_judged_by_where_it_leads_and_resolved() {
        let base = tempfile::tempdir().expect("temp dir");
        let open = base.path().join("open");
        std::fs::create_dir(&open).expect("mkdir");
        let target = open.join("libx.so");
        std::fs::write(&target, b"x").expect("write");
        let clean = base.path().join("clean");
        std::fs::create_dir(&clean).expect("mkdir");
        let link = clean.join("libx.so");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert_eq!(trusted_path(&link).expect("trusted"), target);
        chmod(&open, 0o777);
        let err = trusted_path(&link).expect_err("open folder").to_string();
        chmod(&open, 0o700);
        assert_eq!(
            err,
            format!(
                "{}: refused: folder {} is writable by group or others (mode 777); run `chmod go-w` on it",
                link.display(),
                open.display()
            )
        );
    }

    #[test]
    fn a_missing_file_is_unreadable() {
        let err = trusted_path(Path::new("/nonexistent/libx.so"))
            .expect_err("missing")
            .to_string();
        assert!(
            err.starts_with("/nonexistent/libx.so: refused: cannot read plugin file: "),
            "{err}"
        );
    }
}
