//! The system calls that build the sandbox, in the helper process only
//! (`dsh sandbox-exec`, single-threaded, about to `exec`): a new user and
//! mount namespace (and network namespace when the network is off), the
//! caller's own uid and gid mapped to themselves, every mount made
//! read-only, the writable roots bound back read-write, the protected
//! subpaths bound read-only again, and every capability given up before
//! the command runs.
//!
//! Read-only is a read-only mount, as Codex's bubblewrap sandbox makes it
//! (`--ro-bind / /`), so a write fails with `EROFS` ("Read-only file
//! system"), the text Codex's runs recorded (C101), not Landlock's
//! `EACCES`. Inside the namespace the helper holds every capability, so
//! it could undo a read-only mount; the command it runs cannot: the
//! helper drops its whole bounding set and sets `no_new_privs` first, so
//! nothing it `exec`s (root included) holds a capability again, and a
//! user namespace the command makes itself gets copies of these mounts
//! that the kernel locks read-only.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use super::SandboxError;

/// `mount_setattr(2)`'s argument (linux/mount.h).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_uint = 0x8000;

fn c_path(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SandboxError::Setup {
        step: "use a path with a NUL byte",
        path: path.to_path_buf(),
        source: io::Error::from(io::ErrorKind::InvalidInput),
    })
}

fn check(rc: libc::c_int, step: &'static str, path: &Path) -> Result<(), SandboxError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(SandboxError::Setup {
            step,
            path: path.to_path_buf(),
            source: io::Error::last_os_error(),
        })
    }
}

/// Enters new user and mount namespaces (and a network namespace without
/// any interface up when `network` is false), the caller's uid and gid
/// mapped to themselves, every mount private to it.
pub(crate) fn enter_namespaces(network: bool) -> Result<(), SandboxError> {
    // SAFETY: getuid/getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
    if !network {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare takes plain flags; the helper has one thread.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(SandboxError::UserNamespace(io::Error::last_os_error()));
    }
    write_proc("/proc/self/setgroups", "deny")?;
    write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1"))?;
    write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1"))?;
    let root = Path::new("/");
    let target = c_path(root)?;
    // SAFETY: valid NUL-terminated strings; null source, type and data are
    // allowed for a propagation change.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    check(rc, "make the mounts private", root)
}

fn write_proc(path: &str, text: &str) -> Result<(), SandboxError> {
    std::fs::write(path, text).map_err(|source| SandboxError::Setup {
        step: "write the id map",
        path: PathBuf::from(path),
        source,
    })
}

/// Makes every mount read-only: one `mount_setattr(AT_RECURSIVE)` on `/`,
/// or, on kernels before 5.12, a bind remount of each mount point.
pub(crate) fn everything_read_only() -> Result<(), SandboxError> {
    let root = c_path(Path::new("/"))?;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `attr` outlives the call and its size is passed with it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            root.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::ENOSYS) {
        return Err(SandboxError::Setup {
            step: "make every mount read-only",
            path: PathBuf::from("/"),
            source: err,
        });
    }
    let table = std::fs::read("/proc/self/mountinfo").map_err(|source| SandboxError::Setup {
        step: "read the mount table",
        path: PathBuf::from("/proc/self/mountinfo"),
        source,
    })?;
    for point in mount_points(&table) {
        match remount(&point, true) {
            Ok(()) => {}
            // A mount point the command cannot reach either (a folder it
            // may not search, a mount hidden under another).
            Err(SandboxError::Setup { source, .. })
                if matches!(
                    source.raw_os_error(),
                    Some(libc::ENOENT | libc::EACCES | libc::ENOTDIR)
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The mount points of `/proc/self/mountinfo` (field 5, octal escapes
/// decoded), in the table's order.
fn mount_points(table: &[u8]) -> Vec<PathBuf> {
    table
        .split(|b| *b == b'\n')
        .filter_map(|line| line.split(|b| *b == b' ').nth(4))
        .map(|field| PathBuf::from(OsStr::from_bytes(&unescape(field))))
        .collect()
}

fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

/// The per-mount flags a bind remount must keep (a mount inherited into a
/// user namespace is locked with them): `nosuid`, `nodev`, `noexec` and
/// the atime mode, read with `statvfs`.
fn kept_flags(path: &Path) -> Result<libc::c_ulong, SandboxError> {
    let target = c_path(path)?;
    // SAFETY: statvfs fills the zeroed struct it is handed.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid path and a struct of the right type.
    let rc = unsafe { libc::statvfs(target.as_ptr(), &mut st) };
    check(rc, "read the mount flags of", path)?;
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & *st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | *ms))
}

/// Remounts the mount at `path` read-only or read-write, keeping its
/// other flags.
fn remount(path: &Path, read_only: bool) -> Result<(), SandboxError> {
    let mut flags = libc::MS_BIND | libc::MS_REMOUNT | kept_flags(path)?;
    if read_only {
        flags |= libc::MS_RDONLY;
    }
    let target = c_path(path)?;
    // SAFETY: valid NUL-terminated target; a remount takes no source.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    check(
        rc,
        if read_only {
            "remount read-only"
        } else {
            "remount read-write"
        },
        path,
    )
}

/// Binds `path` (and the mounts under it) onto itself, so it has a mount
/// of its own, then sets that mount read-only or read-write.
pub(crate) fn bind(path: &Path, read_only: bool) -> Result<(), SandboxError> {
    let target = c_path(path)?;
    // SAFETY: valid NUL-terminated source and target.
    let rc = unsafe {
        libc::mount(
            target.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    check(rc, "bind", path)?;
    remount(path, read_only)
}

/// A fresh writable tmpfs at `path`, private to the sandbox (Codex's
/// sandbox has a `/dev` of its own, whose `shm` is writable).
pub(crate) fn fresh_tmpfs(path: &Path) -> Result<(), SandboxError> {
    tmpfs(path, c"mode=1777", "mount a private tmpfs on")
}

/// An empty tmpfs on `path` (an empty folder made for it), mode 555 and
/// read-only: Codex's mask for a protected folder a writable root lacks
/// (C140a: `ro,nosuid,nodev,relatime`, its superblock `rw,mode=555`, as
/// a tmpfs mounted and then bound read-only).
pub(crate) fn read_only_tmpfs(path: &Path) -> Result<(), SandboxError> {
    tmpfs(path, c"mode=555", "mount an empty read-only folder on")?;
    remount(path, true)
}

/// A tmpfs with mount options `data` on `path` (`nosuid`, `nodev`); `what`
/// names the step in its error.
fn tmpfs(path: &Path, data: &std::ffi::CStr, what: &'static str) -> Result<(), SandboxError> {
    let target = c_path(path)?;
    let fstype = c"tmpfs";
    // SAFETY: valid NUL-terminated strings.
    let rc = unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            data.as_ptr().cast(),
        )
    };
    check(rc, what, path)
}

/// Gives up every capability for good: the bounding set emptied (so no
/// `exec`, root's included, regains one), the ambient set cleared, and
/// `no_new_privs` set (no set-uid or file capability either).
pub(crate) fn drop_privileges() -> Result<(), SandboxError> {
    let last: libc::c_ulong = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(63);
    let proc_path = Path::new("/proc/sys/kernel/cap_last_cap");
    for cap in 0..=last {
        // SAFETY: prctl with plain integers.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return check(rc, "drop the capabilities up to", proc_path);
        }
    }
    // SAFETY: prctl with plain integers.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return check(rc, "clear the ambient capabilities", proc_path);
    }
    // SAFETY: prctl with plain integers.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    check(rc, "set no_new_privs", Path::new("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_decode_octal_escapes() {
        let table = b"22 27 0:21 / /proc rw,relatime - proc proc rw\n\
            40 27 0:40 / /mnt/a\\040b rw - tmpfs x rw\n";
        assert_eq!(
            mount_points(table),
            vec![PathBuf::from("/proc"), PathBuf::from("/mnt/a b")]
        );
    }
}
