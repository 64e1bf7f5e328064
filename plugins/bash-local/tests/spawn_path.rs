//! Every spawn of the runner takes the `posix_spawn` path, never `fork`.
//!
//! Forking the daemon for each `Bash` call or hook copies its page tables
//! (tens of MB for a loaded host) where `posix_spawn` (`clone(CLONE_VM |
//! CLONE_VFORK)`) copies nothing. glibc runs `pthread_atfork` handlers on
//! `fork()` and not on `posix_spawn`, so a prepare handler that counts
//! tells the two apart. Its own process (`harness = false`): the handler is
//! process-wide and no other test may spawn meanwhile, and the capability
//! drop must happen before any thread exists, as the `dsh` binary does it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // a test fails loudly by design

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_bash_local::runner::drop_capabilities_at_startup;
use dsh_bash_local::{RunRequest, run};

static FORKS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count_fork() {
    FORKS.fetch_add(1, Ordering::SeqCst);
}

fn main() {
    drop_capabilities_at_startup().expect("drop capabilities at startup");
    // SAFETY: registers a handler that only bumps an atomic.
    let rc = unsafe { libc::pthread_atfork(Some(count_fork), None, None) };
    assert_eq!(rc, 0, "pthread_atfork");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let cwd = std::env::temp_dir();

    // The probe sees a fork: a `pre_exec` hook forces std onto `fork`.
    let mut forked = std::process::Command::new("/bin/true");
    // SAFETY: the hook does nothing.
    unsafe { forked.pre_exec(|| Ok(())) };
    forked.status().expect("run /bin/true");
    assert_eq!(FORKS.swap(0, Ordering::SeqCst), 1, "the fork probe works");

    let cases: [(&str, Vec<String>, BTreeMap<String, String>); 3] = [
        // The `Bash` tool's shape: a bare program name, a rebuilt env.
        (
            "bare `bash`",
            vec!["bash".into(), "-c".into(), "echo $X".into()],
            BTreeMap::from([("X".to_string(), "x".to_string())]),
        ),
        // A hook's shape.
        (
            "`/bin/sh -c`",
            vec!["/bin/sh".into(), "-c".into(), "cat".into()],
            BTreeMap::new(),
        ),
        // A PATH of the child's own.
        (
            "bare `sh` with the child's PATH",
            vec!["sh".into(), "-c".into(), "echo ok".into()],
            BTreeMap::from([("PATH".to_string(), "/nonexistent:/bin".to_string())]),
        ),
    ];
    for (label, program, env) in cases {
        let mut request = RunRequest::new(program, &cwd);
        request.stdin = "in".into();
        request.env = env;
        let answer = runtime.block_on(run(request));
        assert_eq!(answer.exit_code, Some(0), "{label}: {answer:?}");
        assert_eq!(
            FORKS.load(Ordering::SeqCst),
            0,
            "{label}: the runner forked instead of using posix_spawn"
        );
    }
    println!("spawn_path: every runner spawn took posix_spawn");
}
