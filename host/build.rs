//! Build-time facts for dsh-host's own tests, nothing the library uses:
//! `cfg(dsh_test_as_root)` is set when the build runs as root (effective
//! uid 0), so a test that can only run as root is marked `#[ignore]`
//! otherwise and shows as *ignored* in the test summary instead of passing
//! without testing anything.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(dsh_test_as_root)");
    println!("cargo::rerun-if-changed=build.rs");
    // `sudo` changes these; a build reused across users is rebuilt.
    println!("cargo::rerun-if-env-changed=USER");
    println!("cargo::rerun-if-env-changed=SUDO_UID");
    if effective_uid() == Some(0) {
        println!("cargo::rustc-cfg=dsh_test_as_root");
    }
}

/// The effective uid from `/proc/self/status` (`Uid: real effective ...`).
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uids = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    uids.split_whitespace().nth(1)?.parse().ok()
}
