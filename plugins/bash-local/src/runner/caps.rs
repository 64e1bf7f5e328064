//! Children cannot read dsh's memory: no `CAP_SYS_PTRACE`, `CAP_SYS_ADMIN`
//! or `CAP_PERFMON` for them.
//!
//! `dsh` makes itself non-dumpable at startup, so a process of the same
//! user cannot read `/proc/<dsh pid>/environ` (its API keys), `mem` or
//! `fd/`. A process holding one of these capabilities still can (each one
//! passes the kernel's `PTRACE_MODE_READ` check on a non-dumpable
//! process): typically dsh run as root, whose children would inherit them
//! all. So when dsh may drop capabilities (`CAP_SETPCAP`), every child
//! drops these three from its bounding set between fork and exec; a root
//! child then runs without them, and so does everything it starts. A root
//! `Bash` command can therefore not `strace`, `gdb`, `perf` other processes
//! or `mount`. Without `CAP_SETPCAP` dsh's children cannot gain them, and
//! they spawn as before.
//!
//! The `dsh` binary drops them from its own bounding set once at startup
//! ([`drop_at_startup`], before any other thread exists, so every thread
//! inherits it); its children then cannot gain them on exec, and no spawn
//! needs a `pre_exec` hook, which would force `fork` instead of
//! `posix_spawn`. A process that did not (a test embedding the runner)
//! still gets the per-child drop.

use std::io;
use std::sync::OnceLock;

/// `CAP_SYS_PTRACE`, `CAP_SYS_ADMIN`, `CAP_PERFMON` (linux/capability.h).
const DROPPED: [u32; 3] = [19, 21, 38];
/// `CAP_SETPCAP` (linux/capability.h).
const CAP_SETPCAP: u32 = 8;

/// Whether children must drop [`DROPPED`] (read once, from
/// `/proc/self/status`).
pub(crate) fn must_drop() -> bool {
    static MUST: OnceLock<bool> = OnceLock::new();
    *MUST.get_or_init(holds_droppable)
}

/// Whether this process may drop capabilities and its bounding set still
/// holds one of [`DROPPED`].
fn holds_droppable() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mask = |field: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0)
    };
    let bounding = mask("CapBnd:");
    mask("CapEff:") & (1 << CAP_SETPCAP) != 0
        && DROPPED.iter().any(|cap| bounding & (1 << cap) != 0)
}

/// Drops [`DROPPED`] from the bounding set of the calling thread, and so of
/// every thread and child it creates later: call it first thing in `main`,
/// before any thread starts. The process keeps its own effective
/// capabilities; only what its children can hold on exec is narrowed.
/// Does nothing when the capabilities are not there to drop.
pub fn drop_at_startup() -> io::Result<()> {
    if !holds_droppable() {
        return Ok(());
    }
    drop_capabilities()
}

/// Drops [`DROPPED`] from the calling process's bounding set. Meant for
/// `pre_exec`: plain system calls, async-signal-safe. A capability the
/// kernel does not know (`EINVAL`) is not an error.
pub(crate) fn drop_capabilities() -> io::Result<()> {
    for cap in DROPPED {
        // SAFETY: prctl(PR_CAPBSET_DROP) takes plain integers and touches
        // no memory of ours.
        let rc = unsafe {
            libc::prctl(
                libc::PR_CAPBSET_DROP,
                libc::c_ulong::from(cap),
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        if rc != 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINVAL) {
                return Err(err);
            }
        }
    }
    Ok(())
}
