//! The runner against real processes: exit codes, stdin, cwd, env,
//! timeouts, cancellation, drop, output caps and spawn errors.

use std::collections::BTreeMap;
use std::time::Duration;

use dsh_bash_local::run_cancellable;

use super::support::*;

#[tokio::test(flavor = "multi_thread")]
async fn exit_code_and_both_streams_are_reported() {
    let (_d, dir) = temp_dir();
    let out = run(sh("echo out; echo err >&2; exit 3", &dir)).await;
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.signal, None);
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str()),
        ("out\n", "err\n")
    );
    assert!(!out.timed_out && !out.interrupted && out.spawn_error.is_none());
    assert!(!out.stdout_truncated && !out.stderr_truncated);
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_exit_127_is_just_an_exit_code() {
    let (_d, dir) = temp_dir();
    let out = run(sh("definitely_not_a_command_dsh", &dir)).await;
    assert_eq!(out.exit_code, Some(127));
    assert!(out.spawn_error.is_none());
    assert!(
        out.stderr.contains("definitely_not_a_command_dsh"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn death_by_signal_is_reported_as_a_signal() {
    let (_d, dir) = temp_dir();
    let out = run(sh("kill -9 $$", &dir)).await;
    assert_eq!((out.exit_code, out.signal), (None, Some(9)));
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_is_delivered_then_closed() {
    let (_d, dir) = temp_dir();
    let mut spec = sh("cat; echo '<eof>'", &dir);
    spec.stdin = "{\"hook\": true}\n".into();
    let out = run(spec).await;
    assert_eq!(out.stdout, "{\"hook\": true}\n<eof>\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_that_ignores_stdin_neither_hangs_nor_fails() {
    let (_d, dir) = temp_dir();
    let mut spec = sh("echo ignored", &dir);
    spec.stdin = "x".repeat(4 * 1024 * 1024); // far more than a pipe buffer
    let out = run(spec).await;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout, "ignored\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn large_stdin_and_stdout_flow_at_the_same_time() {
    let (_d, dir) = temp_dir();
    let mut spec = sh("cat", &dir);
    let input: String = (0..300_000).map(|i| format!("{i}\n")).collect(); // ~2 MB
    spec.stdin = input.clone();
    spec.max_output_bytes = 8 * 1024 * 1024;
    let out = run(spec).await;
    assert_eq!(out.exit_code, Some(0));
    assert!(
        out.stdout == input,
        "echoed {} of {} bytes",
        out.stdout.len(),
        input.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cwd_is_honoured() {
    let (_d, dir) = temp_dir();
    let out = run(sh("pwd", &dir)).await;
    assert_eq!(out.stdout.trim_end(), dir.to_string_lossy());
}

#[tokio::test(flavor = "multi_thread")]
async fn env_is_added_and_overrides_inherited_values() {
    let (_d, dir) = temp_dir();
    let mut spec = sh("printf '%s|%s' \"$DSH_ADDED\" \"$HOME\"", &dir);
    spec.env = BTreeMap::from([
        ("DSH_ADDED".to_string(), "yes".to_string()),
        ("HOME".to_string(), "/custom/home".to_string()),
    ]);
    assert_eq!(run(spec).await.stdout, "yes|/custom/home");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_inherit_env_only_explicit_variables_exist() {
    let (_d, dir) = temp_dir();
    let mut spec = sh("env", &dir);
    spec.inherit_env = false;
    spec.env = BTreeMap::from([("ONLY".to_string(), "1".to_string())]);
    let out = run(spec).await;
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    // sh may export PWD (and SHLVL, _) on its own; nothing inherited leaks.
    assert!(names.contains(&"ONLY"), "{names:?}");
    assert!(
        !names.contains(&"PATH") && !names.contains(&"HOME"),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn removed_prefixes_drop_inherited_names_and_keep_the_rest_and_explicit_ones() {
    // The hooks' case: inherited, unscrubbed, some prefixes removed.
    // `cargo test` runs this binary with `CARGO_*` variables set.
    let inherited_cargo = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("CARGO"))
        .count();
    assert!(inherited_cargo > 0, "cargo sets CARGO_* for its tests");
    let (_d, dir) = temp_dir();
    let mut spec = sh("env", &dir);
    spec.scrub_credentials = false;
    spec.env_remove_prefixes = vec!["CARGO".into(), "DSH_NOT_SET_".into()];
    spec.env = BTreeMap::from([
        ("CARGO_KEPT".to_string(), "1".to_string()),
        ("DSH_ADDED".to_string(), "2".to_string()),
    ]);
    let out = run(spec).await;
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    assert!(
        names.contains(&"CARGO_KEPT") && names.contains(&"DSH_ADDED"),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("CARGO") && *n != "CARGO_KEPT"),
        "{names:?}"
    );
    assert!(names.contains(&"PATH"), "the rest is inherited: {names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_kills_the_whole_group_including_grandchildren() {
    let (_d, dir) = temp_dir();
    let script = "sleep 30 & echo $! > grandchild.pid; sleep 30; wait";
    let mut spec = sh(script, &dir);
    spec.timeout_ms = Some(300);
    spec.kill_grace_ms = 300;
    let out = run(spec).await;
    assert!(out.timed_out);
    assert_eq!((out.exit_code, out.signal), (None, Some(15)));
    assert_dies(read_pid(&dir.join("grandchild.pid")).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_escalates_to_sigkill_when_sigterm_is_ignored() {
    let (_d, dir) = temp_dir();
    let script = "trap '' TERM; sleep 30 & echo $! > grandchild.pid; sleep 30; wait";
    let mut spec = sh(script, &dir);
    spec.timeout_ms = Some(200);
    spec.kill_grace_ms = 200;
    let out = run(spec).await;
    assert!(out.timed_out);
    assert_eq!((out.exit_code, out.signal), (None, Some(9)));
    assert_dies(read_pid(&dir.join("grandchild.pid")).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_job_holding_stdout_keeps_the_run_open_until_it_exits() {
    let (_d, dir) = temp_dir();
    let out = run(sh("(sleep 0.3; echo late) & echo early", &dir)).await;
    assert_eq!(out.stdout, "early\nlate\n");
    assert_eq!(out.exit_code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_run_kills_the_group_at_once() {
    let (_d, dir) = temp_dir();
    let script = "echo $$ > shell.pid; sleep 30 & echo $! > grandchild.pid; wait";
    let task = tokio::spawn(dsh_bash_local::run(sh(script, &dir)));
    let shell = read_pid(&dir.join("shell.pid")).await;
    let grandchild = read_pid(&dir.join("grandchild.pid")).await;
    assert!(pid_alive(shell) && pid_alive(grandchild));
    task.abort(); // drops the future
    assert!(task.await.expect_err("aborted").is_cancelled());
    assert_dies(shell).await;
    assert_dies(grandchild).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_kills_the_group_and_keeps_output_so_far() {
    let (_d, dir) = temp_dir();
    let script = "echo started; sleep 30 & echo $! > grandchild.pid; wait";
    let pid_file = dir.join("grandchild.pid");
    let cancel = {
        let pid_file = pid_file.clone();
        async move {
            wait_for_file(&pid_file).await;
        }
    };
    let out = tokio::time::timeout(FINISH, run_cancellable(sh(script, &dir), cancel))
        .await
        .expect("finished");
    assert!(out.interrupted && !out.timed_out);
    assert_eq!((out.exit_code, out.signal), (None, Some(9)));
    assert_eq!(out.stdout, "started\n");
    assert_dies(read_pid(&pid_file).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn truncation_keeps_the_tail_on_a_utf8_boundary() {
    let (_d, dir) = temp_dir();
    // "xéééé" is 9 bytes; the last 5 start with the second byte of an "é".
    let mut spec = sh("printf '%s' \"$1\"; printf '%s' \"$1\" >&2", &dir);
    spec.program.extend(["sh".to_string(), "xéééé".to_string()]);
    spec.max_output_bytes = 5;
    let out = run(spec).await;
    assert_eq!((out.stdout.as_str(), out.stdout_truncated), ("éé", true));
    assert_eq!((out.stderr.as_str(), out.stderr_truncated), ("éé", true));
}

#[tokio::test(flavor = "multi_thread")]
async fn several_megabytes_on_both_streams_do_not_deadlock() {
    let (_d, dir) = temp_dir();
    let script = "yes out | head -c 5000000 & yes err | head -c 5000000 >&2; wait";
    let mut spec = sh(script, &dir);
    spec.max_output_bytes = 16 * 1024 * 1024;
    let out = run(spec.clone()).await;
    assert_eq!((out.stdout.len(), out.stderr.len()), (5_000_000, 5_000_000));
    assert!(!out.stdout_truncated && !out.stderr_truncated);

    spec.max_output_bytes = 1024 * 1024;
    let out = run(spec).await;
    assert!(out.stdout_truncated && out.stderr_truncated);
    assert_eq!(
        (out.stdout.len(), out.stderr.len()),
        (1024 * 1024, 1024 * 1024)
    );
    assert!(out.stdout.ends_with("out\n") && out.stderr.ends_with("err\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_program_is_a_spawn_error() {
    let (_d, dir) = temp_dir();
    let spec = dsh_bash_local::RunRequest::new(vec!["/nonexistent/dsh-prog".into()], &dir);
    let out = run(spec).await;
    assert_eq!(out.exit_code, None);
    let err = out.spawn_error.expect("spawn error");
    assert!(
        err.contains("/nonexistent/dsh-prog") && err.contains("No such file"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_cwd_is_a_spawn_error() {
    let (_d, dir) = temp_dir();
    let missing = dir.join("gone");
    let out = run(sh("true", &missing)).await;
    assert_eq!(out.exit_code, None);
    let err = out.spawn_error.expect("spawn error");
    assert!(
        err.contains("does not exist") && err.contains("gone"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_as_cwd_is_a_spawn_error() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("f"), "").expect("write");
    let out = run(sh("true", &dir.join("f"))).await;
    assert!(
        out.spawn_error
            .expect("spawn error")
            .contains("not a directory")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_already_finished_run_leaves_detached_processes_alone() {
    // A command may start a server with its output redirected; a run that
    // ended on its own must not kill it.
    let (_d, dir) = temp_dir();
    let out = run(sh("sleep 30 >/dev/null 2>&1 & echo $! > bg.pid", &dir)).await;
    assert_eq!(out.exit_code, Some(0));
    let pid = read_pid(&dir.join("bg.pid")).await;
    // Proving a negative: give a (wrongly) sent SIGKILL time to land.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(pid_alive(pid), "background job was killed");
    let _ = std::process::Command::new("kill")
        .arg(pid.to_string())
        .status();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hard_limit_kills_the_group_and_keeps_the_head() {
    let (_d, dir) = temp_dir();
    // An endless writer (and a background sleeper holding both pipes):
    // without the kill this run would not end before its timeout, and
    // memory would grow all the while.
    let mut spec = sh("sleep 60 & yes head", &dir);
    spec.max_output_bytes = 64 * 1024;
    spec.on_overflow = dsh_bash_local::runner::Overflow::Kill;
    spec.timeout_ms = Some(60_000);
    let out = run(spec).await;
    assert!(out.output_limit_exceeded, "{out:?}");
    assert!(!out.timed_out);
    assert_eq!(out.signal, Some(libc::SIGKILL));
    assert!(out.stdout_truncated);
    assert!(out.stdout.len() <= 64 * 1024 && out.stderr.len() <= 64 * 1024);
    assert!(
        out.stdout.starts_with("head\nhead\n"),
        "{:?}",
        &out.stdout[..20]
    );

    // Under the limit nothing changes: whole output, no flag.
    let mut spec = sh("printf 'exact'", &dir);
    spec.max_output_bytes = 5;
    spec.on_overflow = dsh_bash_local::runner::Overflow::Kill;
    let out = run(spec).await;
    assert_eq!(
        (out.stdout.as_str(), out.stdout_truncated),
        ("exact", false)
    );
    assert!(!out.output_limit_exceeded && out.exit_code == Some(0));
}
