//! The process runner: run one program to completion, safely.
//!
//! This is the plain async API behind the `process-runner` service and the
//! `Bash` tool. [`run`] (or [`run_cancellable`]) spawns the program as the
//! leader of a new process group (without the capabilities that read
//! other processes' memory: see `caps.rs`) on the calling thread, then
//! hands it to a thread of the runtime's blocking pool (`supervise.rs`),
//! which writes `stdin` fully and closes it, reads stdout and stderr as
//! they come (so a chatty child can never deadlock on a full pipe), keeps
//! the tail of each stream up to a cap, and answers with a [`RunAnswer`]:
//! one `poll(2)` loop per run, and one wake-up of the caller. It never fails for process problems: a program that
//! cannot be started is a [`RunAnswer::spawn_error`], not an `Err`.
//! [`run_started`] spawns before it returns, for a run nobody awaits.
//!
//! Termination: on timeout the group gets SIGTERM, then SIGKILL after
//! `kill_grace_ms`; on cancellation it gets SIGKILL at once; with
//! [`Overflow::Kill`], a stream passing `max_output_bytes` SIGKILLs it at
//! once (memory stays bounded by the cap); if the future
//! is dropped, the supervisor SIGKILLs it (and if the runtime shuts down
//! before a supervisor ran, the [`group::ProcessGroup`] guard does). Either way
//! grandchildren die with the shell. A run that ends on its own leaves the
//! group alone. Without a timeout the runner waits until the child exits
//! *and* both pipes close, as a Node `close` event would: a background job
//! still holding stdout keeps the run open.

mod caps;
mod capture;
pub mod env;
mod group;
mod program;
pub mod server;
mod spec;
mod supervise;

use std::future::Future;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

pub use caps::drop_at_startup as drop_capabilities_at_startup;
use group::ProcessGroup;
pub use spec::{DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_OUTPUT_BYTES, Overflow, RunAnswer, RunRequest};
use spec::spawn_failure;
use supervise::{Control, Supervision};

/// Runs `spec` to completion (or timeout).
pub async fn run(spec: RunRequest) -> RunAnswer {
    run_cancellable(spec, std::future::pending()).await
}

/// Runs `spec`; when `cancel` resolves first, the group is SIGKILLed and
/// the outcome (with the output read so far) has `interrupted: true`.
pub async fn run_cancellable(spec: RunRequest, cancel: impl Future<Output = ()>) -> RunAnswer {
    let started = Instant::now();
    let spawned = spawn(&spec);
    finish(spec, spawned, cancel, started).await
}

/// Starts `spec` at once, on the calling thread, and returns the future
/// that supervises it to its end: for a run nobody waits on (a background
/// hook), whose process must have started when the caller goes on.
pub fn run_started(spec: RunRequest) -> impl Future<Output = RunAnswer> + Send + 'static {
    let started = Instant::now();
    let spawned = spawn(&spec);
    async move { finish(spec, spawned, std::future::pending(), started).await }
}

/// A spawned child, its group and the line to its supervisor.
struct Spawned {
    child: Child,
    group: ProcessGroup,
    control: Arc<Control>,
}

/// Hands a spawned run to a thread of the runtime's blocking pool
/// (`supervise`) and waits for its answer, or for `cancel`.
async fn finish(
    spec: RunRequest,
    spawned: Result<Spawned, String>,
    cancel: impl Future<Output = ()>,
    started: Instant,
) -> RunAnswer {
    let Spawned {
        child,
        group,
        control,
    } = match spawned {
        Ok(spawned) => spawned,
        Err(message) => return spawn_failure(message, started),
    };
    tracing::debug!(pgid = group.id(), program = ?spec.program, cwd = %spec.cwd.display(), "process-runner: spawned");
    let (reply, answer) = tokio::sync::oneshot::channel();
    let supervision = Supervision {
        spec,
        child,
        group,
        control: control.clone(),
        started,
    };
    // Dropped before it ran (the runtime is shutting down), the
    // supervision's group guard SIGKILLs the group, and `answer` says so.
    drop(tokio::task::spawn_blocking(move || {
        supervision.run(|answer| {
            let _ = reply.send(answer);
        });
    }));
    // Dropped while the run is live (the caller gave up, the plugin was
    // disposed), this future cancels it: the group is SIGKILLed.
    let mut cancel_on_drop = CancelOnDrop(Some(control));
    let mut answer = std::pin::pin!(answer);
    let mut cancel = std::pin::pin!(cancel);
    let answer = tokio::select! {
        biased;
        answer = &mut answer => answer,
        () = &mut cancel => {
            cancel_on_drop.cancel();
            answer.await
        }
    };
    // Answered: nothing left to cancel.
    cancel_on_drop.0 = None;
    answer.unwrap_or_else(|_| RunAnswer {
        interrupted: true,
        ..spawn_failure(
            "the process was killed: the runtime shut down before it could be supervised"
                .to_string(),
            started,
        )
    })
}

/// Cancels a run whose waiting future is dropped.
struct CancelOnDrop(Option<Arc<Control>>);

impl CancelOnDrop {
    fn cancel(&self) {
        if let Some(control) = &self.0 {
            control.cancel();
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Spawns the child as the leader of a new process group.
fn spawn(spec: &RunRequest) -> Result<Spawned, String> {
    let Some((program, args)) = spec.program.split_first() else {
        return Err("no program given: `program` is empty".to_string());
    };
    let control = Control::new()
        .map_err(|e| format!("cannot run `{program}`: no descriptor to supervise it: {e}"))?;
    // A child that inherits everything (the hooks: nothing scrubbed,
    // nothing removed) gets the host's environment plus the request's own
    // variables from std, which builds it once, at spawn; only a filtered
    // environment is built here first (`env`).
    let inherits_all =
        spec.inherit_env && !spec.scrub_credentials && spec.env_remove_prefixes.is_empty();
    let env = (!inherits_all).then(|| {
        env::child_env(
            std::env::vars_os(),
            spec.inherit_env,
            spec.scrub_credentials,
            &spec.allow_env,
            &spec.env_remove_prefixes,
            &spec.env,
        )
    });
    // By absolute path, so that std spawns with `posix_spawn` rather than
    // forking the daemon (see `program`).
    let child_path: Option<std::ffi::OsString> = match &env {
        Some(env) => env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone()),
        None => spec
            .env
            .get("PATH")
            .map(std::ffi::OsString::from)
            .or_else(|| std::env::var_os("PATH")),
    };
    let resolved = program::resolve(program, child_path.as_deref(), &spec.cwd);
    let mut command = match &resolved {
        Some(path) => Command::new(path),
        None => Command::new(program),
    };
    // The program still sees the name it was given as `$0`.
    command.arg0(program);
    command
        .args(args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    match env {
        Some(env) => command.env_clear().envs(env),
        None => command.envs(&spec.env),
    };
    if caps::must_drop() {
        // Only when the process did not drop them at startup (see
        // `drop_capabilities_at_startup`): a `pre_exec` hook forces a fork.
        // SAFETY: the hook runs in the child between fork and exec and only
        // makes async-signal-safe system calls (see `caps`).
        unsafe {
            command.pre_exec(caps::drop_capabilities);
        }
    }
    let mut child = command.spawn().map_err(|e| {
        // The working directory is checked only when the spawn failed (a
        // `stat` per run otherwise), to name it when it is the reason.
        check_cwd(&spec.cwd)
            .err()
            .unwrap_or_else(|| format!("cannot run `{program}`: {e}"))
    })?;
    let Some(group) = ProcessGroup::led_by(child.id()) else {
        // Unreachable in practice (a just-spawned child has a pid > 1), but
        // without a group we could not contain it: refuse to go on.
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("cannot run `{program}`: no usable process id"));
    };
    Ok(Spawned {
        child,
        group,
        control,
    })
}

fn check_cwd(cwd: &Path) -> Result<(), String> {
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "working directory `{}` is not a directory",
            cwd.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "working directory `{}` does not exist",
            cwd.display()
        )),
        Err(e) => Err(format!(
            "working directory `{}` is not usable: {e}",
            cwd.display()
        )),
    }
}
