//! Loads one `.so` plugin through abi_stable, refusing what is unsafe or
//! incompatible with a one-line error that names the file and the reason.
//!
//! Each file is opened on its own (`lib_header_from_path` + `check_layout`),
//! never through `RootModule::load_from*`, which caches one library per root
//! module type and so could not load several plugins. Libraries are never
//! unloaded: unloading Rust code is unsound.
//!
//! Checks, in order: the file is a regular file; nobody but its owner can
//! write it (group write is allowed only for the owner's user-private group,
//! which is what `umask 002` systems give every file a user builds); it is a
//! loadable shared library; it exports the dsh root module; its types and
//! API version are ones this host accepts ([`dsh_plugin_api::compat`]: the
//! same or an older minor of this host's major).

use std::ffi::CStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use abi_stable::library::{LibraryError, lib_header_from_path};
use dsh_plugin_api::compat::{self, Refusal};
use dsh_plugin_api::{API_VERSION, PluginModuleRef};

/// Why a `.so` was refused.
#[derive(Debug, thiserror::Error)]
pub enum PluginLoadError {
    /// Missing or unreadable.
    #[error("{path}: refused: cannot read plugin file: {message}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Writable by someone other than its owner: they could swap the code
    /// the host runs.
    #[error(
        "{path}: refused: file is writable by group or others (mode {mode:o}); run `chmod go-w` on it"
    )]
    Writable {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Not a loadable shared library.
    #[error("{path}: refused: not a loadable shared library: {message}")]
    NotALibrary {
        /// The file.
        path: PathBuf,
        /// The dynamic loader's words.
        message: String,
    },
    /// A library without the dsh root module symbol.
    #[error(
        "{path}: refused: no dsh plugin root module in this library (a plugin exports one with `export_plugin!`)"
    )]
    MissingRoot {
        /// The file.
        path: PathBuf,
    },
    /// The library's types do not have the layout this host expects.
    #[error(
        "{path}: refused: ABI layout mismatch with this host's dsh-plugin-api (rebuild the plugin against it): {message}"
    )]
    AbiMismatch {
        /// The file.
        path: PathBuf,
        /// A summary of abi_stable's report: the type and what differs.
        message: String,
    },
    /// Built against another major, or a newer minor, of the plugin API.
    #[error("{path}: refused: built against plugin API {found}, this host speaks {expected}")]
    ApiVersion {
        /// The file.
        path: PathBuf,
        /// What the plugin says.
        found: String,
        /// What the host speaks.
        expected: &'static str,
    },
    /// Anything else abi_stable reports.
    #[error("{path}: refused: {message}")]
    Other {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// abi_stable's reports span many lines; problems are one line each.
fn one_line(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(max_lines)
        .collect();
    lines.join(" ")
}

/// The dynamic loader's reason without the path it repeats.
fn loader_reason(path: &Path, err: &dyn std::fmt::Display) -> String {
    let text = err.to_string();
    let prefix = format!("{}: ", path.display());
    one_line(text.strip_prefix(&prefix).unwrap_or(&text), 2)
}

/// Condenses abi_stable's layout report (hundreds of lines) to the type that
/// differs and each `Error:` it lists, with the expected and found values.
fn abi_summary(report: &str) -> String {
    let lines: Vec<&str> = report.lines().map(str::trim).collect();
    let mut culprit = None;
    let mut errors = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(ty) = line.strip_prefix("type:") {
            culprit = Some(ty);
        }
        if let Some(what) = line.strip_prefix("Error:") {
            let value = |label: &str, at: usize| match (lines.get(at), lines.get(at + 1)) {
                (Some(l), Some(v)) if l.starts_with(label) => v.to_string(),
                _ => "?".to_string(),
            };
            let (expected, found) = (value("Expected", i + 1), value("Found", i + 3));
            errors.push(format!("{what} (expected {expected}, found {found})"));
        }
    }
    // The last type named before the errors is the innermost one that differs.
    let culprit = lines
        .iter()
        .rposition(|l| l.starts_with("Layout of expected type"))
        .and_then(|end| {
            lines[..end]
                .iter()
                .rev()
                .find_map(|l| l.strip_prefix("type:"))
        })
        .or(culprit);
    match (culprit, errors.is_empty()) {
        (_, true) => one_line(report, 3),
        (Some(ty), false) => format!("{ty}: {}", errors.join("; ")),
        (None, false) => errors.join("; "),
    }
}

/// Loads the plugin root module of the library at `path`.
pub fn load_library(path: &Path) -> Result<PluginModuleRef, PluginLoadError> {
    let path_buf = path.to_path_buf();
    let meta = std::fs::metadata(path).map_err(|e| PluginLoadError::Unreadable {
        path: path_buf.clone(),
        message: e.to_string(),
    })?;
    if !meta.is_file() {
        return Err(PluginLoadError::Unreadable {
            path: path_buf,
            message: "not a regular file".into(),
        });
    }
    check_permissions(path, &meta)?;
    let header = lib_header_from_path(path).map_err(|e| match e {
        LibraryError::OpenError { err, .. } => PluginLoadError::NotALibrary {
            path: path_buf.clone(),
            message: loader_reason(path, &err),
        },
        LibraryError::GetSymbolError { .. } => PluginLoadError::MissingRoot {
            path: path_buf.clone(),
        },
        other => PluginLoadError::Other {
            path: path_buf.clone(),
            message: one_line(&other.to_string(), 3),
        },
    })?;
    // The policy's direction, not abi_stable's default: see `compat`.
    let module = compat::accept(header).map_err(|e| match e {
        Refusal::Layout(report) => PluginLoadError::AbiMismatch {
            path: path_buf.clone(),
            message: abi_summary(&report),
        },
        Refusal::Api { found } => PluginLoadError::ApiVersion {
            path: path_buf.clone(),
            found,
            expected: API_VERSION,
        },
        Refusal::Other(message) => PluginLoadError::Other {
            path: path_buf.clone(),
            message: one_line(&message, 3),
        },
    })?;
    Ok(module)
}

/// Refuses a file anyone but its owner can write. World write always
/// refuses; group write only when the group is someone else's too.
fn check_permissions(path: &Path, meta: &std::fs::Metadata) -> Result<(), PluginLoadError> {
    let mode = meta.mode() & 0o7777;
    let shared_group = || match (user_entry(meta.uid()), group_entry(meta.gid())) {
        (Some(user), Some(group)) => !is_private_group(&user, &group),
        _ => true,
    };
    if mode & 0o002 != 0 || (mode & 0o020 != 0 && shared_group()) {
        return Err(PluginLoadError::Writable {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
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

/// Calls a `get*_r` function with a growing buffer; `None` when the entry
/// does not exist or cannot be read (the caller then assumes the worst).
fn with_buffer<T>(
    mut call: impl FnMut(&mut [libc::c_char]) -> Result<Option<T>, i32>,
) -> Option<T> {
    let mut size = 4096;
    while size <= 1 << 20 {
        let mut buf = vec![0 as libc::c_char; size];
        match call(&mut buf) {
            Err(libc::ERANGE) => size *= 4,
            Err(_) => return None,
            Ok(entry) => return entry,
        }
    }
    None
}

fn user_entry(uid: u32) -> Option<UserEntry> {
    with_buffer(|buf| {
        let mut pwd = std::mem::MaybeUninit::<libc::passwd>::uninit();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `pwd`, `buf` and `found` are live, writable and sized as
        // passed; getpwuid_r only writes within them.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                pwd.as_mut_ptr(),
                buf.as_mut_ptr(),
                buf.len(),
                &mut found,
            )
        };
        if rc != 0 {
            return Err(rc);
        }
        if found.is_null() {
            return Ok(None);
        }
        // SAFETY: on success with a non-null result, `pwd` is initialized and
        // `pw_name` is a NUL-terminated string inside `buf`.
        let (name, primary_gid) = unsafe {
            let pwd = pwd.assume_init_ref();
            (
                CStr::from_ptr(pwd.pw_name).to_string_lossy().into_owned(),
                pwd.pw_gid,
            )
        };
        Ok(Some(UserEntry { name, primary_gid }))
    })
}

fn group_entry(gid: u32) -> Option<GroupEntry> {
    with_buffer(|buf| {
        let mut grp = std::mem::MaybeUninit::<libc::group>::uninit();
        let mut found: *mut libc::group = std::ptr::null_mut();
        // SAFETY: as in `user_entry`, for getgrgid_r.
        let rc = unsafe {
            libc::getgrgid_r(
                gid,
                grp.as_mut_ptr(),
                buf.as_mut_ptr(),
                buf.len(),
                &mut found,
            )
        };
        if rc != 0 {
            return Err(rc);
        }
        if found.is_null() {
            return Ok(None);
        }
        // SAFETY: on success `grp` is initialized; `gr_name` is a
        // NUL-terminated string and `gr_mem` a NULL-terminated array of
        // NUL-terminated strings, all inside `buf`.
        let entry = unsafe {
            let grp = grp.assume_init_ref();
            let mut members = Vec::new();
            let mut at = grp.gr_mem;
            while !at.is_null() && !(*at).is_null() {
                members.push(CStr::from_ptr(*at).to_string_lossy().into_owned());
                at = at.add(1);
            }
            GroupEntry {
                gid: grp.gr_gid,
                name: CStr::from_ptr(grp.gr_name).to_string_lossy().into_owned(),
                members,
            }
        };
        Ok(Some(entry))
    })
}

/// Every `.so` directly inside `dir`, sorted by name for a stable order.
pub fn libraries_in(dir: &Path) -> Result<Vec<PathBuf>, PluginLoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| PluginLoadError::Unreadable {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "so"))
        .collect();
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn mode_check(mode: u32) -> Result<(), PluginLoadError> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("libx.so");
        std::fs::write(&file, b"x").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let meta = std::fs::metadata(&file).expect("stat");
        check_permissions(&file, &meta)
    }

    #[test]
    fn world_or_shared_group_write_is_refused_and_umask_022_passes() {
        assert!(mode_check(0o755).is_ok());
        assert!(mode_check(0o644).is_ok());
        let err = mode_check(0o666).expect_err("world-writable").to_string();
        assert!(err.ends_with("libx.so: refused: file is writable by group or others (mode 666); run `chmod go-w` on it"), "{err}");
        // Group write passes exactly when the file's group is the owner's
        // private group (as `umask 002` leaves a freshly built plugin).
        let me = user_entry(current_uid()).expect("current user");
        let my_group = group_entry(me.primary_gid).expect("primary group");
        assert_eq!(mode_check(0o775).is_ok(), is_private_group(&me, &my_group));
    }

    /// The current user's id: the owner of a file this process creates.
    fn current_uid() -> u32 {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("owner");
        std::fs::write(&file, b"").expect("write");
        std::fs::metadata(&file).expect("stat").uid()
    }

    #[test]
    fn abi_reports_are_summarized_to_the_type_and_the_differences() {
        let report = "Compared <this>:\n type:PrefixRef<'a, PluginModule>\n2 error(s)inside:\n    <other>\n\
                      field_name:0\n type:PluginModule\n field_name:__returns\n type:PluginDescriptor\n\
                      Layout of expected type:\n type:PluginDescriptor\n\
                      Error:incompatible type size\nExpected:\n    192\nFound:\n    200\n\n\
                      Error:too many fields\nExpected:\n    6\nFound:\n    7\n";
        assert_eq!(
            abi_summary(report),
            "PluginDescriptor: incompatible type size (expected 192, found 200); too many fields (expected 6, found 7)"
        );
        assert_eq!(
            abi_summary("something\nelse\nentirely\nhere"),
            "something else entirely"
        );
    }
}
