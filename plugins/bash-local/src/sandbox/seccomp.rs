//! The network rule of Codex's sandbox, as its runs show it: without
//! `network_access`, creating a socket of any family but `AF_UNIX` fails
//! `EPERM` ("socket: Operation not permitted", C110c), from a seccomp
//! filter installed just before the command runs. Local sockets (a
//! `cargo` child's socketpair, an agent's Unix socket) keep working; the
//! empty network namespace `mount.rs` enters stays behind it for what
//! the filter does not see (another ABI's system call numbers).

use std::io;
use std::path::{Path, PathBuf};

use super::SandboxError;

// Classic BPF opcodes (linux/bpf_common.h): `BPF_LD | BPF_W | BPF_ABS`,
// `BPF_JMP | BPF_JEQ | BPF_K`, `BPF_RET | BPF_K` (`BPF_LD`, `BPF_W` and
// `BPF_K` are 0).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_RET_K: u16 = 0x06;

/// `seccomp_data` offsets: the system call number, the architecture, the
/// low half of the first argument (little-endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0: u32 = 16;

#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: BPF_JEQ_K,
        jt,
        jf,
        k,
    }
}

/// The filter: `socket` and `socketpair` with a family other than
/// `AF_UNIX` return `EPERM`; everything else is allowed.
fn program() -> Vec<libc::sock_filter> {
    let allow = stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW);
    let eperm = stmt(
        BPF_RET_K,
        libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32 & 0xffff),
    );
    vec![
        stmt(BPF_LD_W_ABS, ARCH),
        jump(NATIVE_ARCH, 1, 0),
        allow,
        stmt(BPF_LD_W_ABS, NR),
        jump(libc::SYS_socket as u32, 2, 0),
        jump(libc::SYS_socketpair as u32, 1, 0),
        allow,
        stmt(BPF_LD_W_ABS, ARG0),
        jump(libc::AF_UNIX as u32, 0, 1),
        allow,
        eperm,
    ]
}

/// Installs the filter on this process (after `no_new_privs`); what it
/// `exec`s inherits it and cannot remove it.
pub(crate) fn deny_network_sockets() -> Result<(), SandboxError> {
    let mut filter = program();
    let prog = libc::sock_fprog {
        len: filter.len() as libc::c_ushort,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: `prog` points at `filter`, which outlives the call; the
    // kernel copies the program.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog,
            0,
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(SandboxError::Setup {
            step: "install the network filter (seccomp) for",
            path: PathBuf::from(Path::new("/")),
            source: io::Error::last_os_error(),
        })
    }
}
