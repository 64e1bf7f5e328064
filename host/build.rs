//! Build-time facts for dsh-host:
//!
//! - `cfg(dsh_test_as_root)` is set when the build runs as root (effective
//!   uid 0), so a test that can only run as root is marked `#[ignore]`
//!   otherwise and shows as *ignored* in the test summary instead of passing
//!   without testing anything.
//! - A release `dsh` is linked with its start-up functions first
//!   (`startup-order.txt`, see `tools/startup-order/generate.py`): an idle
//!   daemon then keeps about 2.5 MB of contiguous text resident instead of
//!   pages all over its 21 MB `.text` (issue 15). Only where the linker is
//!   known to be lld (rustc 1.90 and later on x86_64 Linux, no linker chosen
//!   in the flags), with its relative relocations packed (DT_RELR) when
//!   glibc is 2.36 or later; anywhere else the binary is linked as before.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(dsh_test_as_root)");
    println!("cargo::rerun-if-changed=build.rs");
    // `sudo` changes these; a build reused across users is rebuilt.
    println!("cargo::rerun-if-env-changed=USER");
    println!("cargo::rerun-if-env-changed=SUDO_UID");
    if effective_uid() == Some(0) {
        println!("cargo::rustc-cfg=dsh_test_as_root");
    }
    startup_order();
}

/// The effective uid from `/proc/self/status` (`Uid: real effective ...`).
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uids = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    uids.split_whitespace().nth(1)?.parse().ok()
}

/// Links a release `dsh` with lld's `--symbol-ordering-file`. Names the
/// build does not have are skipped by the linker (a stale list only costs
/// memory), hence `--no-warn-symbol-ordering`.
fn startup_order() {
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("startup-order.txt");
    println!("cargo::rerun-if-changed={}", order.display());
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if !release
        || target != "x86_64-unknown-linux-gnu"
        || flags.contains("linker")
        || !order.is_file()
        || rustc_minor().is_none_or(|minor| minor < 90)
    {
        return;
    }
    println!(
        "cargo::rustc-link-arg-bin=dsh=-Wl,--symbol-ordering-file={}",
        order.display()
    );
    println!("cargo::rustc-link-arg-bin=dsh=-Wl,--no-warn-symbol-ordering");
    // Relative relocations packed (DT_RELR): the loader reads about 20 KB
    // instead of the 1.4 MB `.rela.dyn` at every start, and it stays out
    // of the resident set. lld then makes the binary need glibc's
    // `GLIBC_ABI_DT_RELR` (2.36), so only when the glibc linked against
    // has it.
    if glibc_at_least(2, 36) {
        println!("cargo::rustc-link-arg-bin=dsh=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc (`getconf GNU_LIBC_VERSION`: `glibc 2.36`)
/// is at least `major.minor`.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.split_whitespace().nth(1) else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

/// The minor version of the rustc doing this build (`rustc 1.95.0 ...`).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}
