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
    environment_changes_reach_the_next_child(&runtime, &cwd);
    the_childs_environment_is_what_child_env_builds(&runtime, &cwd);
    assert_eq!(
        FORKS.load(Ordering::SeqCst),
        0,
        "the runner forked instead of using posix_spawn"
    );
    println!("spawn_path: every runner spawn took posix_spawn");
}

/// What `sh` prints of `$DSH_SPAWN_PROBE`, run as a hook is (everything
/// inherited) and as `Bash` is (scrubbed).
fn probe(runtime: &tokio::runtime::Runtime, cwd: &std::path::Path) -> [String; 2] {
    let program = vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        "printf %s \"${DSH_SPAWN_PROBE-unset}\"".to_string(),
    ];
    let mut hook = RunRequest::new(program.clone(), cwd).without_env_prefix("OTEL_");
    hook.scrub_credentials = false;
    let tool = RunRequest::new(program, cwd);
    [hook, tool].map(|request| {
        let answer = runtime.block_on(run(request));
        assert_eq!(answer.exit_code, Some(0), "{answer:?}");
        answer.stdout
    })
}

/// The runner keeps a copy of dsh's environment between spawns: a
/// variable set, changed or removed after a spawn reaches the next child
/// as it is now.
fn environment_changes_reach_the_next_child(
    runtime: &tokio::runtime::Runtime,
    cwd: &std::path::Path,
) {
    assert_eq!(probe(runtime, cwd), ["unset", "unset"]);
    for value in ["one", "two, longer than one", ""] {
        // SAFETY: this test's own process; the runtime's threads are idle
        // and read no environment.
        unsafe { std::env::set_var("DSH_SPAWN_PROBE", value) };
        assert_eq!(probe(runtime, cwd), [value, value]);
    }
    // SAFETY: as above.
    unsafe { std::env::remove_var("DSH_SPAWN_PROBE") };
    assert_eq!(probe(runtime, cwd), ["unset", "unset"]);
}

/// A child's whole environment, in its order, is exactly what
/// `child_env` builds from dsh's (the list std was handed before the
/// runner built `envp` itself), for a scrubbed run with variables of its
/// own and a removed prefix.
fn the_childs_environment_is_what_child_env_builds(
    runtime: &tokio::runtime::Runtime,
    cwd: &std::path::Path,
) {
    // SAFETY: as in `environment_changes_reach_the_next_child`.
    unsafe {
        std::env::set_var("DSH_SPAWN_PROBE_TOKEN", "a credential");
        std::env::set_var("DSH_SPAWN_PROBE_KEPT", "kept");
        std::env::set_var("OTEL_SPAWN_PROBE", "removed");
    }
    let mut request = RunRequest::new(vec!["/usr/bin/env".into(), "-0".into()], cwd)
        .with_env("AAA_FIRST", "1")
        .with_env("DSH_SPAWN_PROBE_KEPT", "replaced")
        .with_env("ZZZ_LAST", "2")
        .without_env_prefix("OTEL_");
    request.allow_env = vec!["HOME".into()];
    let want: Vec<String> = dsh_bash_local::runner::env::child_env(
        std::env::vars_os(),
        request.inherit_env,
        request.scrub_credentials,
        &request.allow_env,
        &request.env_remove_prefixes,
        &request.env,
    )
    .into_iter()
    .map(|(n, v)| format!("{}={}", n.to_string_lossy(), v.to_string_lossy()))
    .collect();
    let answer = runtime.block_on(run(request));
    assert_eq!(answer.exit_code, Some(0), "{answer:?}");
    let got: Vec<&str> = answer.stdout.split_terminator('\0').collect();
    assert_eq!(got, want);
    assert!(got.contains(&"DSH_SPAWN_PROBE_KEPT=replaced"));
    assert!(!got.iter().any(|l| l.starts_with("DSH_SPAWN_PROBE_TOKEN=")));
    assert!(!got.iter().any(|l| l.starts_with("OTEL_")));
}
