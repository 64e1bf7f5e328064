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
    *MUST.get_or_init(|| {
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
    })
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
