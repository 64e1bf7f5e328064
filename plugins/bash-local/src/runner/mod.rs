//! The process runner: run one program to completion, safely.
//!
//! This is the plain async API behind the `process-runner` service and the
//! `Bash` tool. [`run`] (or [`run_cancellable`]) spawns the program as the
//! leader of a new process group (without the capabilities that read
//! other processes' memory: see `caps.rs`), writes `stdin` fully and closes it, reads
//! stdout and stderr concurrently (so a chatty child can never deadlock on
//! a full pipe), keeps the tail of each stream up to a cap, and returns a
//! [`RunAnswer`]. It never fails for process problems: a program that
//! cannot be started is a [`RunAnswer::spawn_error`], not an `Err`.
//! [`run_started`] spawns before it returns, for a run nobody awaits.
//! [`run_merged`] gives the child one pipe for stdout and stderr, so the
//! answer's `stdout` holds both as the child interleaved them (Claude Code's
//! `Bash` reads its commands that way) and `stderr` stays empty.
//! [`start_tapped`] hands that one stream out as it comes, and the exit as
//! soon as it happens (Codex's exec sessions: [`crate::exec`]).
//!
//! Termination: on timeout the group gets SIGTERM, then SIGKILL after
//! `kill_grace_ms`; on cancellation it gets SIGKILL at once; with
//! [`Overflow::Kill`], a stream passing `max_output_bytes` SIGKILLs it at
//! once (memory stays bounded by the cap); if the future
//! is dropped, the [`group::ProcessGroup`] guard SIGKILLs it. Either way
//! grandchildren die with the shell. A run that ends on its own leaves the
//! group alone. Without a timeout the runner waits until the child exits
//! *and* both pipes close, as a Node `close` event would: a background job
//! still holding stdout keeps the run open.

mod caps;
mod capture;
pub mod env;
pub(crate) mod environ;
pub(crate) mod group;
mod posix;
mod program;
pub mod server;
mod spec;
mod tty;

use std::future::Future;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe::{Receiver, Sender};
use tokio::process::{Child, Command};
use tokio::time::Instant;

pub use caps::drop_at_startup as drop_capabilities_at_startup;
use capture::TailBuffer;
use group::ProcessGroup;
pub use spec::{DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_OUTPUT_BYTES, Overflow, RunAnswer, RunRequest};
use spec::{elapsed_ms, spawn_failure};
pub use tty::start_tapped_tty;

/// How long to keep draining pipes after the group was SIGKILLed. Only a
/// process that escaped the group (its own `setsid`) can hold them longer;
/// we stop waiting for it rather than hang.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(2000);
const READ_CHUNK: usize = 32 * 1024;

/// Runs `spec` to completion (or timeout).
pub async fn run(spec: RunRequest) -> RunAnswer {
    run_cancellable(spec, std::future::pending()).await
}

/// Runs `spec`; when `cancel` resolves first, the group is SIGKILLed and
/// the outcome (with the output read so far) has `interrupted: true`.
pub async fn run_cancellable(spec: RunRequest, cancel: impl Future<Output = ()>) -> RunAnswer {
    let started = Instant::now();
    let spawned = spawn(&spec, false);
    finish(spec, spawned, cancel, started, None, None).await.0
}

/// [`run`], also giving how many bytes of stdout the answer holds before
/// decoding (its `stdout` is decoded lossily, so bytes that are not UTF-8
/// grow): Codex counts an output's tokens on its bytes (vector
/// `C199-non-utf8`).
pub async fn run_counted(spec: RunRequest) -> (RunAnswer, usize) {
    let started = Instant::now();
    let spawned = spawn(&spec, false);
    finish(spec, spawned, std::future::pending(), started, None, None).await
}

/// [`run_cancellable`] with stdout and stderr on one pipe: the answer's
/// `stdout` is everything the child wrote, in the order it wrote it, and
/// its `stderr` is empty. The cap applies to the one stream.
pub async fn run_merged(spec: RunRequest, cancel: impl Future<Output = ()>) -> RunAnswer {
    let started = Instant::now();
    let spawned = spawn(&spec, true);
    finish(spec, spawned, cancel, started, None, None).await.0
}

/// Starts `spec` at once, on the calling thread, and returns the future
/// that supervises it to its end: for a run nobody waits on (a background
/// hook), whose process must have started when the caller goes on.
pub fn run_started(spec: RunRequest) -> impl Future<Output = RunAnswer> + Send + 'static {
    let started = Instant::now();
    let spawned = spawn(&spec, false);
    async move {
        finish(spec, spawned, std::future::pending(), started, None, None)
            .await
            .0
    }
}

/// [`run_merged`] started at once, on the calling thread: the id of the
/// run's process group (or why nothing started) and the future that
/// supervises it to its end, `cancel` killing the group (a background
/// `Bash` job: [`crate::background`]).
pub fn start_merged(
    spec: RunRequest,
    cancel: impl Future<Output = ()> + Send + 'static,
) -> (
    Result<i32, String>,
    impl Future<Output = RunAnswer> + Send + 'static,
) {
    start(spec, cancel, None, None)
}

/// What a tapped run ([`start_tapped`]) reports while it goes.
#[derive(Debug)]
pub enum Tapped {
    /// Bytes the child wrote (stdout and stderr on one pipe), as read.
    Output(Vec<u8>),
    /// The child exited (its output may still be draining).
    Exited(ExitStatus),
}

/// [`start_merged`] whose output is not kept: every chunk goes to `tap` as
/// it is read, and the exit as soon as it is seen; the future's answer
/// then has only the ending (an empty `stdout`).
pub fn start_tapped(
    spec: RunRequest,
    cancel: impl Future<Output = ()> + Send + 'static,
    tap: tokio::sync::mpsc::UnboundedSender<Tapped>,
) -> (
    Result<i32, String>,
    impl Future<Output = RunAnswer> + Send + 'static,
) {
    start(spec, cancel, None, Some(tap))
}

/// Spawns `spec` (stdout and stderr on one pipe) now: its group's id and
/// the future supervising it, which detaches per `detach`.
fn start(
    spec: RunRequest,
    cancel: impl Future<Output = ()> + Send + 'static,
    detach: Option<Detach>,
    tap: Option<Tap>,
) -> (
    Result<i32, String>,
    impl Future<Output = RunAnswer> + Send + 'static,
) {
    let started = Instant::now();
    let spawned = spawn(&spec, true);
    let pgid = match &spawned {
        Ok(s) => Ok(s.group.id()),
        Err(e) => Err(e.clone()),
    };
    (pgid, async move {
        finish(spec, spawned, cancel, started, detach, tap).await.0
    })
}

type Tap = tokio::sync::mpsc::UnboundedSender<Tapped>;

/// A run that goes on in the background when it times out after printing
/// something, as Claude Code's `Bash` moves such a command (recorded
/// `S186-timeout-output`, `S260-timeout-output`).
#[derive(Debug)]
pub struct Detach {
    /// Told, with the output so far and `timed_out`, when the run detached.
    pub answer: tokio::sync::oneshot::Sender<RunAnswer>,
    /// The file that gets the output so far, then everything the run
    /// writes until it ends (created, mode 0600, in a folder of mode 0700).
    pub path: std::path::PathBuf,
    /// The folder above it that must be this user's only.
    pub root: std::path::PathBuf,
}

/// [`start_merged`] whose timeout, once the run has printed something,
/// does not kill it: the run detaches ([`Detach`]) and its future goes on
/// until it ends on its own or `cancel` resolves. A run that printed
/// nothing times out as any other.
pub fn start_merged_detachable(
    spec: RunRequest,
    cancel: impl Future<Output = ()> + Send + 'static,
    detach: Detach,
) -> (
    Result<i32, String>,
    impl Future<Output = RunAnswer> + Send + 'static,
) {
    start(spec, cancel, Some(detach), None)
}

/// Makes `root` (mode 0700) unless it exists, and checks that it is a
/// folder of this user only, not a symlink: job output under a shared
/// temp folder must not land where someone else points it.
pub(crate) fn private_root(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
    if let Some(parent) = root.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(root) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(root)?;
    // SAFETY: geteuid never fails.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != me || meta.permissions().mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not a private folder of this user (a symlink, another user's, or open to \
             others)",
            root.display()
        )));
    }
    Ok(())
}

/// Opens `path` for the output of a detached run (its folder made, mode
/// 0700, under the private `root`) and writes `so_far` to it.
fn open_detached(root: &Path, path: &Path, so_far: &[u8]) -> std::io::Result<std::fs::File> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    private_root(root)?;
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    file.write_all(so_far)?;
    Ok(file)
}

/// Supervises a spawned run to its end.
async fn finish(
    spec: RunRequest,
    spawned: Result<Spawned, String>,
    cancel: impl Future<Output = ()>,
    started: Instant,
    detach: Option<Detach>,
    tap: Option<Tap>,
) -> (RunAnswer, usize) {
    let Spawned {
        child,
        group,
        stdin,
        stdout,
        stderr,
    } = match spawned {
        Ok(spawned) => spawned,
        Err(message) => return (spawn_failure(message, started), 0),
    };
    tracing::debug!(pgid = group.id(), program = ?spec.program, cwd = %spec.cwd.display(), "process-runner: spawned");
    let pipes = Pipes {
        stdin: feed_stdin(stdin, spec.stdin.as_bytes()),
        stdout,
        stderr,
    };
    supervise(&spec, child, group, pipes, cancel, started, (detach, tap)).await
}

/// A spawned child: its process, its group, the writing end of its stdin
/// (the runner's own pipe, not the runtime's: see [`feed_stdin`]) and the
/// reading ends of its output.
struct Spawned {
    child: Proc,
    group: ProcessGroup,
    stdin: std::io::PipeWriter,
    stdout: Option<Receiver>,
    stderr: Option<Receiver>,
}

/// The child's process: spawned by the runner itself ([`posix`]), or by
/// tokio where that cannot be done (see [`spawn`]).
enum Proc {
    Raw(posix::RawChild),
    Tokio(Child),
}

impl Proc {
    async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match self {
            Proc::Raw(child) => child.wait().await,
            Proc::Tokio(child) => child.wait().await,
        }
    }

    fn id(&self) -> Option<u32> {
        match self {
            Proc::Raw(child) => Some(child.id()),
            Proc::Tokio(child) => child.id(),
        }
    }

    fn start_kill(&mut self) {
        match self {
            Proc::Raw(child) => child.start_kill(),
            Proc::Tokio(child) => {
                let _ = child.start_kill();
            }
        }
    }
}

/// Writes `input` to the child's stdin and closes it, or hands back the
/// pipe, made asynchronous, when `input` is too large to write at once.
///
/// An input of at most `PIPE_BUF` bytes (a hook's payload, usually) fits
/// a fresh pipe whole, so one blocking `write` never waits for the child
/// (a child that already exited makes it fail with `EPIPE`, which is
/// fine: it wanted no input). Such a pipe never meets the reactor: no
/// registration, and no wake-up of the worker parked on the reactor for
/// the writable event a new pipe raises at once. A larger input is
/// written asynchronously, alongside the reads, as before.
fn feed_stdin(mut pipe: std::io::PipeWriter, input: &[u8]) -> Option<Sender> {
    use std::io::Write as _;
    if input.is_empty() {
        return None; // dropping closes it: EOF for the child
    }
    if input.len() <= libc::PIPE_BUF {
        if let Err(e) = pipe.write_all(input) {
            tracing::debug!(error = %e, "process-runner: child did not take its stdin");
        }
        return None;
    }
    match Sender::from_owned_fd(std::os::fd::OwnedFd::from(pipe)) {
        Ok(sender) => Some(sender),
        Err(e) => {
            // Not expected for a pipe we just made; the child sees EOF.
            tracing::warn!(error = %e, "process-runner: cannot write the child's stdin");
            None
        }
    }
}

/// Spawns the child as the leader of a new process group.
///
/// The child's environment is built from a cached copy of dsh's
/// ([`environ`]) and handed to `posix_spawn` as it is ([`posix`]). Only
/// where that cannot be done, std's `Command` (through tokio) spawns it as
/// before: a program name found in no `PATH` entry (the system's own error
/// is then reported), or capabilities that must be dropped in the child
/// (a `pre_exec` hook, which forks). With `merge`, stdout and stderr are
/// one pipe (read as stdout).
fn spawn(spec: &RunRequest, merge: bool) -> Result<Spawned, String> {
    let Some((program, args)) = spec.program.split_first() else {
        return Err("no program given: `program` is empty".to_string());
    };
    let envp = envp_of(spec).map_err(|e| format!("cannot run `{program}`: {e}"))?;
    // By absolute path, so that the spawn need not search (see `program`).
    let resolved = program::resolve(program, envp.path(), &spec.cwd);
    // The runner's own pipe for stdin (see `feed_stdin`).
    let (stdin_read, stdin_write) =
        std::io::pipe().map_err(|e| format!("cannot run `{program}`: no pipe for stdin: {e}"))?;
    // A working directory that is not one makes the spawn fail (the child
    // changes into it before `exec`): only then is it looked at, to say
    // what is wrong with it rather than the bare error (one `statx` less
    // per run).
    let failed = |e: std::io::Error| match check_cwd(&spec.cwd) {
        Err(cwd) => cwd,
        Ok(()) => format!("cannot run `{program}`: {e}"),
    };
    let (child, stdout, stderr) = match resolved {
        Some(path) if !caps::must_drop() => {
            let stdin_read = std::os::fd::OwnedFd::from(stdin_read);
            let mut argv: Vec<&str> = Vec::with_capacity(spec.program.len());
            argv.push(program);
            argv.extend(args.iter().map(String::as_str));
            let started = posix::spawn(&path, &argv, &spec.cwd, &envp, &stdin_read, merge);
            // The child's end of stdin closes here, so a child that exits
            // unread makes writing fail instead of block.
            drop(stdin_read);
            let started = started.map_err(failed)?;
            (
                Proc::Raw(started.child),
                Some(started.stdout),
                started.stderr,
            )
        }
        resolved => spawn_std(
            spec,
            program,
            args,
            resolved.as_deref(),
            &envp,
            stdin_read,
            merge,
        )
        .map_err(failed)?,
    };
    drop(envp);
    let Some(group) = child.id().and_then(ProcessGroup::led_by) else {
        // Unreachable in practice (a just-spawned child has a pid > 1), but
        // without a group we could not contain it: refuse to go on.
        let mut child = child;
        child.start_kill();
        return Err(format!("cannot run `{program}`: no usable process id"));
    };
    Ok(Spawned {
        child,
        group,
        stdin: stdin_write,
        stdout,
        stderr,
    })
}

/// The environment `spec` asks for its child, from the cached copy of
/// dsh's ([`environ`]).
fn envp_of(spec: &RunRequest) -> std::io::Result<environ::Envp> {
    let shape = environ::Shape {
        inherit: spec.inherit_env,
        scrub: spec.scrub_credentials,
        allow: &spec.allow_env,
        remove_prefixes: &spec.env_remove_prefixes,
        explicit: &spec.env,
    };
    environ::child_envp(environ::snapshot(), &shape)
}

/// [`spawn`] through std's `Command` (tokio's), on the environment `envp`
/// holds.
fn spawn_std(
    spec: &RunRequest,
    program: &str,
    args: &[String],
    resolved: Option<&Path>,
    envp: &environ::Envp,
    stdin_read: std::io::PipeReader,
    merge: bool,
) -> std::io::Result<(Proc, Option<Receiver>, Option<Receiver>)> {
    let mut command = match resolved {
        Some(path) => Command::new(path),
        None => Command::new(program),
    };
    // The program still sees the name it was given as `$0`.
    command.arg0(program);
    command
        .args(args)
        .current_dir(&spec.cwd)
        .stdin(stdin_read)
        .process_group(0);
    // Merged: both ends the child gets are `command`'s, closed with it.
    let merged = if merge {
        let (read, write) = std::io::pipe()?;
        command.stdout(write.try_clone()?).stderr(write);
        Some(read)
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        None
    };
    command.env_clear().envs(envp.vars());
    if caps::must_drop() {
        // Only when the process did not drop them at startup (see
        // `drop_capabilities_at_startup`): a `pre_exec` hook forces a fork.
        // SAFETY: the hook runs in the child between fork and exec and only
        // makes async-signal-safe system calls (see `caps`).
        unsafe {
            command.pre_exec(caps::drop_capabilities);
        }
    }
    let mut child = command.spawn()?;
    // The child's end of stdin, which `command` holds, closes here.
    drop(command);
    // (`into_owned_fd` makes the descriptor blocking again: the checked
    // conversion makes it non-blocking.)
    let receiver = |fd: std::io::Result<std::os::fd::OwnedFd>| fd.and_then(Receiver::from_owned_fd);
    if let Some(read) = merged {
        let stdout = receiver(Ok(std::os::fd::OwnedFd::from(read)))?;
        return Ok((Proc::Tokio(child), Some(stdout), None));
    }
    let stdout = child
        .stdout
        .take()
        .map(|o| receiver(o.into_owned_fd()))
        .transpose()?;
    let stderr = child
        .stderr
        .take()
        .map(|e| receiver(e.into_owned_fd()))
        .transpose()?;
    Ok((Proc::Tokio(child), stdout, stderr))
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

struct Pipes {
    stdin: Option<Sender>,
    stdout: Option<Receiver>,
    stderr: Option<Receiver>,
}

/// Where the run is on its way to the end.
#[derive(Clone, Copy)]
enum Phase {
    /// Running normally.
    Running,
    /// Timed out, SIGTERM sent; SIGKILL at `kill_at`.
    Terminating { kill_at: Instant },
    /// SIGKILL sent; stop draining at `abandon_at`.
    Killed { abandon_at: Instant },
}

async fn supervise(
    spec: &RunRequest,
    mut child: Proc,
    mut group: ProcessGroup,
    mut pipes: Pipes,
    cancel: impl Future<Output = ()>,
    started: Instant,
    (mut detach, tap): (Option<Detach>, Option<Tap>),
) -> (RunAnswer, usize) {
    // Where the output goes once the run detached (`detach`).
    let mut tee: Option<std::fs::File> = None;
    // A cap past the address space is no cap at all.
    let cap = usize::try_from(spec.max_output_bytes).unwrap_or(usize::MAX);
    let mut out = TailBuffer::new(cap);
    let mut err = TailBuffer::new(cap);
    // Read into spare capacity: no zeroing of two chunks per run (most
    // hooks write nothing).
    let mut out_chunk = Vec::with_capacity(READ_CHUNK);
    let mut err_chunk = Vec::with_capacity(READ_CHUNK);
    let input = spec.stdin.as_bytes();
    let mut written = 0usize;
    let mut status: Option<ExitStatus> = None;
    let deadline = spec
        .timeout_ms
        .map(|ms| started + Duration::from_millis(ms));
    let grace = Duration::from_millis(spec.kill_grace_ms);
    let mut phase = Phase::Running;
    let mut timed_out = false;
    let mut interrupted = false;
    let mut over_limit = false;
    let hard_limit = spec.on_overflow == Overflow::Kill;
    let mut cancel = std::pin::pin!(cancel);

    loop {
        if status.is_some() && pipes.stdout.is_none() && pipes.stderr.is_none() {
            break;
        }
        let (timer, running) = match phase {
            Phase::Running => (deadline, true),
            Phase::Terminating { kill_at } => (Some(kill_at), false),
            Phase::Killed { abandon_at } => (Some(abandon_at), false),
        };
        let mut overflowed = false;
        let timer = if tee.is_some() { None } else { timer };
        tokio::select! {
            read = read_from(&mut pipes.stdout, &mut out_chunk) => match read {
                Some(n) if tee.is_some() => tee_write(&mut tee, &out_chunk[..n]),
                Some(n) if let Some(tap) = &tap => {
                    let _ = tap.send(Tapped::Output(out_chunk[..n].to_vec()));
                }
                Some(n) if hard_limit => if !out.push_within_cap(&out_chunk[..n]) {
                    overflowed = true;
                },
                Some(n) => out.push(&out_chunk[..n]),
                None => pipes.stdout = None,
            },
            read = read_from(&mut pipes.stderr, &mut err_chunk) => match read {
                Some(n) if tee.is_some() => tee_write(&mut tee, &err_chunk[..n]),
                Some(n) if hard_limit => if !err.push_within_cap(&err_chunk[..n]) {
                    overflowed = true;
                },
                Some(n) => err.push(&err_chunk[..n]),
                None => pipes.stderr = None,
            },
            wrote = write_to(&mut pipes.stdin, &input[written..]) => match wrote {
                Some(n) => {
                    written += n;
                    if written >= input.len() {
                        pipes.stdin = None; // dropping closes it: EOF for the child
                    }
                }
                // EPIPE and friends: the child does not want (more) input.
                None => pipes.stdin = None,
            },
            exited = child.wait(), if status.is_none() => match exited {
                Ok(s) => {
                    status = Some(s);
                    if let Some(tap) = &tap {
                        let _ = tap.send(Tapped::Exited(s));
                    }
                }
                Err(e) => {
                    // Cannot happen for a child we spawned; if it does, do
                    // not leave a group we can no longer supervise.
                    tracing::warn!(pgid = group.id(), error = %e, "process-runner: cannot wait for child, killing its group");
                    group.signal_logged(libc::SIGKILL);
                    break;
                }
            },
            () = &mut cancel, if running => {
                tracing::debug!(pgid = group.id(), "process-runner: cancelled, killing group");
                interrupted = true;
                group.signal_logged(libc::SIGKILL);
                phase = Phase::Killed { abandon_at: Instant::now() + DRAIN_AFTER_KILL };
            },
            () = sleep_until(timer) => match phase {
                Phase::Running if !out.is_empty() && detach.is_some() => {
                    let Some(Detach { answer, path, root }) = detach.take() else { continue };
                    match open_detached(&root, &path, out.bytes()) {
                        Ok(file) => {
                            tracing::info!(pgid = group.id(), timeout_ms = ?spec.timeout_ms, path = %path.display(), "process-runner: timed out after output, going on in the background");
                            let (stdout, stdout_truncated) = std::mem::replace(&mut out, TailBuffer::new(cap)).finish();
                            let _ = answer.send(RunAnswer {
                                exit_code: None,
                                signal: None,
                                stdout,
                                stderr: String::new(),
                                stdout_truncated,
                                stderr_truncated: false,
                                timed_out: true,
                                spawn_error: None,
                                duration_ms: elapsed_ms(started),
                                interrupted: false,
                                output_limit_exceeded: false,
                            });
                            tee = Some(file);
                        }
                        Err(e) => {
                            tracing::warn!(pgid = group.id(), path = %path.display(), "process-runner: cannot keep a timed-out run's output, killing it: {e}");
                            timed_out = true;
                            group.signal_logged(libc::SIGTERM);
                            phase = Phase::Terminating { kill_at: Instant::now() + grace };
                        }
                    }
                }
                Phase::Running => {
                    tracing::info!(pgid = group.id(), timeout_ms = ?spec.timeout_ms, "process-runner: timed out, sending SIGTERM to group");
                    timed_out = true;
                    group.signal_logged(libc::SIGTERM);
                    phase = Phase::Terminating { kill_at: Instant::now() + grace };
                }
                Phase::Terminating { .. } => {
                    tracing::debug!(pgid = group.id(), "process-runner: grace over, sending SIGKILL to group");
                    group.signal_logged(libc::SIGKILL);
                    phase = Phase::Killed { abandon_at: Instant::now() + DRAIN_AFTER_KILL };
                }
                Phase::Killed { .. } => {
                    tracing::warn!(pgid = group.id(), "process-runner: output pipes still open after SIGKILL (a process left the group?); giving up on them");
                    break;
                }
            },
        }
        if overflowed && !over_limit {
            tracing::info!(
                pgid = group.id(),
                limit = spec.max_output_bytes,
                "process-runner: output passed its hard limit, killing group"
            );
            over_limit = true;
            group.signal_logged(libc::SIGKILL);
            // Closed only after the kill: closed first, a writer could die
            // of SIGPIPE before the SIGKILL lands.
            pipes.stdout = None;
            pipes.stderr = None;
            if !matches!(phase, Phase::Killed { .. }) {
                phase = Phase::Killed {
                    abandon_at: Instant::now() + DRAIN_AFTER_KILL,
                };
            }
        }
    }

    match phase {
        Phase::Running => {}
        // A timed-out group whose leader exited on SIGTERM may still hold
        // stragglers that ignore it (with their output redirected): the
        // contract is that a timeout kills the whole group.
        Phase::Terminating { .. } => group.signal_logged(libc::SIGKILL),
        Phase::Killed { .. } => {}
    }
    if status.is_none() {
        // The leader was SIGKILLed; reaping it is prompt.
        status = tokio::time::timeout(DRAIN_AFTER_KILL, child.wait())
            .await
            .ok()
            .and_then(Result::ok);
    }
    group.disarm();

    let (stdout, stdout_truncated, stdout_bytes) = out.finish_counted();
    let (stderr, stderr_truncated) = err.finish();
    let (exit_code, signal) = match status {
        Some(s) => (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)),
        None => (None, None),
    };
    let answer = RunAnswer {
        exit_code,
        signal,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        timed_out,
        spawn_error: None,
        duration_ms: elapsed_ms(started),
        interrupted,
        output_limit_exceeded: over_limit,
    };
    (answer, stdout_bytes)
}

/// Appends a detached run's output to its file; a write that fails stops
/// the copying (the run goes on, its output is dropped).
fn tee_write(tee: &mut Option<std::fs::File>, bytes: &[u8]) {
    use std::io::Write as _;
    if let Some(file) = tee.as_mut()
        && let Err(e) = file.write_all(bytes)
    {
        tracing::warn!("process-runner: cannot write a detached run's output: {e}");
    }
}

/// Reads one chunk; `None` at EOF or on error. Pending forever once the
/// pipe is gone, so a closed pipe's `select!` branch simply never fires.
async fn read_from<R: AsyncReadExt + Unpin>(
    pipe: &mut Option<R>,
    chunk: &mut Vec<u8>,
) -> Option<usize> {
    let Some(reader) = pipe.as_mut() else {
        return std::future::pending().await;
    };
    chunk.clear();
    match reader.read_buf(chunk).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// Writes some of `data`; `None` on error (EPIPE when the child exited or
/// closed stdin). Pending forever once stdin is closed.
async fn write_to(pipe: &mut Option<Sender>, data: &[u8]) -> Option<usize> {
    let Some(writer) = pipe.as_mut() else {
        return std::future::pending().await;
    };
    match writer.write(data).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
