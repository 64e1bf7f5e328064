//! A [`HookHost`] that runs hooks in-process with tokio (feature `local-runner`).
//!
//! For tests only: the bridges' tests drive real `/bin/sh` processes through
//! it while the host's `process-runner` service is built elsewhere. It
//! follows the same contract as that service: the command in its own
//! process group, stdin written then closed, both streams captured up to
//! the limit (past it, `on_overflow: kill` SIGKILLs the group), SIGTERM to
//! the group on timeout and SIGKILL after the grace,
//! credential-like variables scrubbed unless allowed, and no error ever
//! escapes (a spawn failure is an answer). It also records every context,
//! record, halt and warning the bridge produces so tests can assert on them.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;

use crate::runner::{BoxFuture, HookHost, RunAnswer, RunRequest};

/// Everything a bridge did through the host, in order.
#[derive(Debug, Default)]
pub struct Effects {
    /// `(session_id, text)` of every injected context.
    pub contexts: Vec<(String, String)>,
    /// `(session_id, record)` of every appended record.
    pub records: Vec<(String, Value)>,
    /// `(session_id, reason)` of every halted turn.
    pub halts: Vec<(String, String)>,
    /// Every warning.
    pub warnings: Vec<String>,
    /// Every config problem reported.
    pub problems: Vec<dsh_plugin_api::ConfigProblem>,
    /// Every process request, in start order.
    pub requests: Vec<RunRequest>,
}

/// The local, recording host.
#[derive(Debug, Default)]
pub struct LocalHost {
    effects: Mutex<Effects>,
}

impl LocalHost {
    /// A host with nothing recorded yet.
    pub fn new() -> Self {
        LocalHost::default()
    }

    /// Runs `f` on the recorded effects.
    pub fn with_effects<R>(&self, f: impl FnOnce(&mut Effects) -> R) -> R {
        let mut guard = self.effects.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Takes and clears the recorded effects.
    pub fn take(&self) -> Effects {
        self.with_effects(std::mem::take)
    }
}

impl HookHost for LocalHost {
    fn run(&self, request: RunRequest) -> BoxFuture<RunAnswer> {
        self.with_effects(|e| e.requests.push(request.clone()));
        Box::pin(run_local(request))
    }

    fn inject_context(&self, session_id: &str, text: &str) -> Result<(), String> {
        self.with_effects(|e| e.contexts.push((session_id.into(), text.into())));
        Ok(())
    }

    fn append_record(&self, session_id: &str, record: &Value) -> Result<(), String> {
        self.with_effects(|e| e.records.push((session_id.into(), record.clone())));
        Ok(())
    }

    fn halt_turn(&self, session_id: &str, reason: &str) -> Result<(), String> {
        self.with_effects(|e| e.halts.push((session_id.into(), reason.into())));
        Ok(())
    }

    fn warn(&self, message: &str) {
        self.with_effects(|e| e.warnings.push(message.into()));
    }

    fn report_problem(&self, problem: dsh_plugin_api::ConfigProblem) {
        self.with_effects(|e| e.problems.push(problem));
    }
}

/// Kills the whole process group when dropped while armed, so a dropped
/// call (or a panic) never leaves a hook running.
struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    fn signal(&self, sig: i32) {
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg only sends a signal; a stale or foreign pgid makes
            // it fail with ESRCH/EPERM, which we ignore.
            unsafe {
                libc::killpg(pgid, sig);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

/// Runs one request to completion, following the process-runner contract.
pub async fn run_local(request: RunRequest) -> RunAnswer {
    let started = Instant::now();
    let Some((program, args)) = request.program.split_first() else {
        return RunAnswer::spawn_failure("empty program");
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(&request.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if request.inherit_env {
        for (name, value) in std::env::vars_os() {
            let Some(name) = name.to_str() else { continue };
            let scrubbed =
                dsh_plugin_api::credentials::is_credential(name, &value.to_string_lossy())
                    && !request.allow_env.iter().any(|a| a == name);
            let removed = request
                .env_remove_prefixes
                .iter()
                .any(|p| name.starts_with(p.as_str()));
            if scrubbed || removed {
                cmd.env_remove(name);
            }
        }
    } else {
        cmd.env_clear();
    }
    for (k, v) in &request.env {
        cmd.env(
            k,
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string()),
        );
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return RunAnswer::spawn_failure(format!(
                "cannot start {program} in {}: {e}",
                request.cwd
            ));
        }
    };
    let mut guard = GroupGuard {
        pgid: child.id().map(|id| id as i32),
    };
    let cap = usize::try_from(request.max_output_bytes).unwrap_or(usize::MAX);
    let kill_at_cap = (request.on_overflow == "kill")
        .then_some(guard.pgid)
        .flatten();
    let stdout = tokio::spawn(read_capped(child.stdout.take(), cap, kill_at_cap));
    let stderr = tokio::spawn(read_capped(child.stderr.take(), cap, kill_at_cap));
    if let Some(mut stdin) = child.stdin.take() {
        let bytes = request.stdin.clone().into_bytes();
        // A hook that never reads stdin closes the pipe: not an error.
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        });
    }
    let mut timed_out = false;
    let status = match tokio::time::timeout(Duration::from_millis(request.timeout_ms), child.wait())
        .await
    {
        Ok(status) => status,
        Err(_) => {
            timed_out = true;
            guard.signal(libc::SIGTERM);
            match tokio::time::timeout(Duration::from_millis(request.kill_grace_ms), child.wait())
                .await
            {
                Ok(status) => status,
                Err(_) => {
                    guard.signal(libc::SIGKILL);
                    child.wait().await
                }
            }
        }
    };
    // The leader is gone; whatever it left in its group goes too, so the
    // pipes close and the readers finish.
    guard.signal(libc::SIGKILL);
    guard.pgid = None;
    let (out, out_cut, out_over) = stdout.await.unwrap_or_default();
    let (err, err_cut, err_over) = stderr.await.unwrap_or_default();
    let (exit_code, signal) = match &status {
        Ok(s) => (s.code(), s.signal()),
        Err(_) => (None, None),
    };
    RunAnswer {
        exit_code,
        signal,
        stdout: out,
        stderr: err,
        stdout_truncated: out_cut,
        stderr_truncated: err_cut,
        output_limit_exceeded: out_over || err_over,
        timed_out,
        spawn_error: status
            .err()
            .map(|e| format!("waiting for the hook failed: {e}")),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// Reads a stream keeping at most `cap` bytes: `(text, cut, killed)`.
/// With `kill` (a process group), passing the cap SIGKILLs the group and
/// stops reading.
async fn read_capped<R: AsyncRead + Unpin>(
    reader: Option<R>,
    cap: usize,
    kill: Option<i32>,
) -> (String, bool, bool) {
    let Some(mut reader) = reader else {
        return (String::new(), false, false);
    };
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut truncated = false;
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&chunk[..n.min(room)]);
                if let (true, Some(pgid)) = (truncated, kill) {
                    // SAFETY: killpg only sends a signal to the group this
                    // run created; a stale id fails with ESRCH, ignored.
                    unsafe {
                        libc::killpg(pgid, libc::SIGKILL);
                    }
                    return (String::from_utf8_lossy(&kept).into_owned(), true, true);
                }
            }
        }
    }
    (
        String::from_utf8_lossy(&kept).into_owned(),
        truncated,
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::point::{Invocation, run_all};

    fn sh(cmd: &str, cwd: &str, stdin: &str, timeout_s: u64) -> RunRequest {
        RunRequest::new(
            vec!["/bin/sh".into(), "-c".into(), cmd.into()],
            cwd,
            stdin.into(),
            timeout_s,
        )
    }

    #[tokio::test]
    async fn stdin_env_cwd_and_streams() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_str().unwrap();
        let req = sh(
            "cat; printf 'E' >&2; pwd >&2; printf \"$HOOK_X\"; exit 3",
            cwd,
            "{\"a\":1}\n",
            5,
        )
        .with_env("HOOK_X", "x!");
        let a = run_local(req).await;
        assert_eq!(a.exit_code, Some(3));
        assert_eq!(a.stdout, "{\"a\":1}\nx!");
        assert_eq!(
            a.stderr,
            format!("E{}\n", dir.path().canonicalize().unwrap().display())
        );
        assert!(!a.timed_out && a.spawn_error.is_none());
    }

    #[tokio::test]
    async fn timeout_kills_the_group_and_fails_open() {
        let mut req = sh("trap '' TERM; sleep 30 & sleep 30; wait", "/", "", 1);
        req.timeout_ms = 200;
        req.kill_grace_ms = 100;
        let a = run_local(req).await;
        assert!(a.timed_out);
        assert_eq!(a.exit_code, None);
        assert_eq!(a.signal, Some(libc::SIGKILL));
    }

    #[tokio::test]
    async fn spawn_failures_are_answers() {
        let a = run_local(sh("true", "/definitely/not/here", "", 1)).await;
        assert!(a.spawn_error.unwrap().contains("/definitely/not/here"));
        let mut missing = sh("true", "/", "", 1);
        missing.program[0] = "/no/such/shell".into();
        assert!(run_local(missing).await.spawn_error.is_some());
        let a = run_local(sh("no_such_command_xyz", "/", "", 1)).await;
        assert_eq!(a.exit_code, Some(127));
    }

    #[tokio::test]
    async fn output_past_the_limit_kills_the_hook() {
        let mut req = sh("sleep 30 & yes a", "/", "", 60);
        req.max_output_bytes = 100;
        let a = run_local(req.clone()).await;
        assert_eq!(a.stdout.len(), 100);
        assert!(a.stdout_truncated && a.output_limit_exceeded && !a.timed_out);
        req.on_overflow = "keep".into();
        req.program[2] = "head -c 5000 /dev/zero | tr '\\0' a".into();
        let a = run_local(req).await;
        assert!(a.stdout_truncated && !a.output_limit_exceeded);
    }

    #[tokio::test]
    async fn credentials_are_scrubbed_unless_allowed() {
        // SAFETY: set_var is unsound only with concurrent readers of the
        // environment in other threads; this test's name is unique and the
        // variable is read only by the child processes below.
        unsafe { std::env::set_var("DSH_TEST_SECRET_VALUE", "s3") };
        let mut req = sh("printf \"[$DSH_TEST_SECRET_VALUE]\"", "/", "", 5);
        req.allow_env.clear();
        assert_eq!(run_local(req.clone()).await.stdout, "[]");
        req.allow_env = vec!["DSH_TEST_SECRET_VALUE".into()];
        assert_eq!(run_local(req).await.stdout, "[s3]");
    }

    #[tokio::test]
    async fn hooks_of_one_point_run_concurrently() {
        // `a` waits for a file only `b` creates; run one after the other,
        // `a` would time out instead of exiting 0.
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_str().unwrap();
        let inv = |index, cmd: &str| Invocation {
            index,
            command: cmd.into(),
            matcher: None,
            source: "t".into(),
            request: Ok(sh(cmd, cwd, "", 10)),
        };
        let host = LocalHost::new();
        let runs = run_all(
            &host,
            vec![
                inv(0, "i=0; while [ ! -e flag ]; do sleep 0.05; i=$((i+1)); [ $i -gt 100 ] && exit 9; done; exit 0"),
                inv(1, "touch flag"),
            ],
        )
        .await;
        assert_eq!(runs[0].answer.exit_code, Some(0));
        assert_eq!(runs[1].answer.exit_code, Some(0));
    }
}
