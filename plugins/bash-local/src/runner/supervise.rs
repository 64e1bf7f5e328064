//! Supervising one spawned child to its end, from a thread of the
//! runtime's blocking pool: one `poll(2)` loop over its stdin, stdout,
//! stderr, a pidfd for its exit and a wake-up descriptor for cancellation,
//! as a bare spawn blocks its own thread in `poll` and `waitpid`.
//!
//! Why not the runtime's process machinery: per run it made every pipe
//! nonblocking and registered it (and a pidfd) with the reactor, armed a
//! runtime timer for the timeout (which woke the thread parked on the
//! reactor to re-arm it), and the exit then woke a worker through the
//! reactor. Measured on 2 cores (issue 15, README "Benchmarks"), that made
//! a `/bin/sh -c 'exit 0'` run cost about 1.6× its bare spawn; supervised
//! here, the run's one cross-thread wake-up is its answer.
//!
//! The loop keeps the runner's contract (`mod.rs`): stdin written fully
//! then closed (EPIPE ends it), stdout and stderr read as they come into
//! [`TailBuffer`]s, SIGTERM to the group at the deadline then SIGKILL after
//! the grace, SIGKILL at once on cancellation or past a hard output limit,
//! and the pipes drained for at most [`DRAIN_AFTER_KILL`] after a SIGKILL.

use std::io::{self, Write as _};
use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd, RawFd};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::capture::TailBuffer;
use super::group::ProcessGroup;
use super::spec::{Overflow, RunAnswer, RunRequest};

/// How long to keep draining pipes after the group was SIGKILLed. Only a
/// process that escaped the group (its own `setsid`) can hold them longer;
/// we stop waiting for it rather than hang.
pub(crate) const DRAIN_AFTER_KILL: Duration = Duration::from_millis(2000);
const READ_CHUNK: usize = 32 * 1024;
/// Without a pidfd (a kernel before 5.3), how often the loop looks for the
/// child's exit once nothing else wakes it.
const EXIT_CHECK: Duration = Duration::from_millis(10);

/// The async side's line to a supervising thread: cancel the run.
#[derive(Debug)]
pub(crate) struct Control {
    cancelled: AtomicBool,
    /// An eventfd the loop polls; written to wake it.
    wake: OwnedFd,
}

impl Control {
    /// A control with its own wake-up descriptor.
    pub(crate) fn new() -> io::Result<Arc<Self>> {
        // SAFETY: eventfd(2) takes plain integers; on success the returned
        // descriptor is new and owned by nobody else.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by eventfd and is owned here only.
        let wake = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Arc::new(Control {
            cancelled: AtomicBool::new(false),
            wake,
        }))
    }

    /// Asks the loop to SIGKILL the group and finish (`interrupted`).
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to a descriptor we own.
        // An eventfd write only fails when the counter would overflow,
        // and then the loop is already woken.
        let _ = unsafe {
            libc::write(
                self.wake.as_raw_fd(),
                (&raw const one).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    fn drain(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads at most 8 bytes into a live u64; nonblocking.
        let _ = unsafe {
            libc::read(
                self.wake.as_raw_fd(),
                (&raw mut count).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }
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

/// One spawned child, everything needed to see it to its end. Dropped
/// without running (the runtime shut down first), its group guard
/// SIGKILLs the group.
pub(crate) struct Supervision {
    pub(crate) spec: RunRequest,
    pub(crate) child: Child,
    pub(crate) group: ProcessGroup,
    pub(crate) control: Arc<Control>,
    pub(crate) started: Instant,
}

impl Supervision {
    /// Supervises the child to its end and returns the answer; `reply`
    /// gets it as soon as it is known (before a leader that would not die
    /// is waited for).
    pub(crate) fn run(mut self, reply: impl FnOnce(RunAnswer)) {
        let (answer, reaped) = self.supervise();
        reply(answer);
        if !reaped {
            // SIGKILLed but still not gone after the drain: reap it on
            // this thread, whenever the kernel lets go of it, rather than
            // leave a zombie.
            let _ = self.child.wait();
        }
    }

    fn supervise(&mut self) -> (RunAnswer, bool) {
        let spec = &self.spec;
        let child = &mut self.child;
        // A cap past the address space is no cap at all.
        let cap = usize::try_from(spec.max_output_bytes).unwrap_or(usize::MAX);
        let mut out = TailBuffer::new(cap);
        let mut err = TailBuffer::new(cap);
        let mut chunk = vec![0u8; READ_CHUNK];
        let input = spec.stdin.as_bytes();
        let mut written = 0usize;
        let mut stdin: Option<ChildStdin> = child.stdin.take();
        if input.is_empty() || stdin.as_ref().is_some_and(|s| set_nonblocking(s).is_err()) {
            // Nothing to write, or no way to write it without risking a
            // blocked thread: closing it is EOF for the child.
            stdin = None;
        }
        let mut stdout: Option<ChildStdout> = child.stdout.take();
        let mut stderr: Option<ChildStderr> = child.stderr.take();
        let pidfd = pidfd_open(child.id());
        let mut status: Option<ExitStatus> = None;
        let deadline = spec
            .timeout_ms
            .map(|ms| self.started + Duration::from_millis(ms));
        let grace = Duration::from_millis(spec.kill_grace_ms);
        let mut phase = Phase::Running;
        let mut timed_out = false;
        let mut interrupted = false;
        let mut over_limit = false;
        let hard_limit = spec.on_overflow == Overflow::Kill;
        let group = &self.group;

        loop {
            if status.is_none() && pidfd.is_none() {
                status = try_reap(child);
            }
            if status.is_some() && stdout.is_none() && stderr.is_none() {
                break;
            }
            if matches!(phase, Phase::Running) && self.control.is_cancelled() {
                tracing::debug!(pgid = group.id(), "process-runner: cancelled, killing group");
                interrupted = true;
                group.signal_logged(libc::SIGKILL);
                phase = Phase::Killed {
                    abandon_at: Instant::now() + DRAIN_AFTER_KILL,
                };
            }
            let timer = match phase {
                Phase::Running => deadline,
                Phase::Terminating { kill_at } => Some(kill_at),
                Phase::Killed { abandon_at } => Some(abandon_at),
            };
            let now = Instant::now();
            if timer.is_some_and(|at| at <= now) {
                match phase {
                    Phase::Running => {
                        tracing::info!(pgid = group.id(), timeout_ms = ?spec.timeout_ms, "process-runner: timed out, sending SIGTERM to group");
                        timed_out = true;
                        group.signal_logged(libc::SIGTERM);
                        phase = Phase::Terminating {
                            kill_at: Instant::now() + grace,
                        };
                    }
                    Phase::Terminating { .. } => {
                        tracing::debug!(pgid = group.id(), "process-runner: grace over, sending SIGKILL to group");
                        group.signal_logged(libc::SIGKILL);
                        phase = Phase::Killed {
                            abandon_at: Instant::now() + DRAIN_AFTER_KILL,
                        };
                    }
                    Phase::Killed { .. } => {
                        tracing::warn!(pgid = group.id(), "process-runner: output pipes still open after SIGKILL (a process left the group?); giving up on them");
                        break;
                    }
                }
                continue;
            }
            let mut wait = timer.map(|at| at.saturating_duration_since(now));
            if status.is_none() && pidfd.is_none() {
                wait = Some(wait.map_or(EXIT_CHECK, |w| w.min(EXIT_CHECK)));
            }

            // Slots: wake-up, stdout, stderr, stdin, exit. An absent one
            // has fd -1, which poll(2) skips.
            let mut fds = [
                pollfd(Some(self.control.wake.as_raw_fd()), libc::POLLIN),
                pollfd(stdout.as_ref().map(AsRawFd::as_raw_fd), libc::POLLIN),
                pollfd(stderr.as_ref().map(AsRawFd::as_raw_fd), libc::POLLIN),
                pollfd(stdin.as_ref().map(AsRawFd::as_raw_fd), libc::POLLOUT),
                pollfd(
                    pidfd
                        .as_ref()
                        .filter(|_| status.is_none())
                        .map(AsRawFd::as_raw_fd),
                    libc::POLLIN,
                ),
            ];
            if let Err(e) = poll(&mut fds, wait) {
                // Cannot happen with valid descriptors; if it does, do not
                // leave a group we can no longer supervise.
                tracing::warn!(pgid = group.id(), error = %e, "process-runner: cannot poll the child's pipes, killing its group");
                group.signal_logged(libc::SIGKILL);
                break;
            }
            let [wake, out_fd, err_fd, in_fd, exit_fd] = fds.map(|f| f.revents);
            if wake != 0 {
                self.control.drain();
            }
            let mut overflowed = false;
            if out_fd != 0 {
                match read_some(stdout.as_mut(), &mut chunk) {
                    Some(n) if hard_limit => overflowed |= !out.push_within_cap(&chunk[..n]),
                    Some(n) => out.push(&chunk[..n]),
                    None => stdout = None,
                }
            }
            if err_fd != 0 {
                match read_some(stderr.as_mut(), &mut chunk) {
                    Some(n) if hard_limit => overflowed |= !err.push_within_cap(&chunk[..n]),
                    Some(n) => err.push(&chunk[..n]),
                    None => stderr = None,
                }
            }
            if in_fd != 0 {
                match write_some(stdin.as_mut(), &input[written..]) {
                    Some(n) => {
                        written += n;
                        if written >= input.len() {
                            stdin = None; // dropping closes it: EOF for the child
                        }
                    }
                    // EPIPE and friends: the child does not want (more) input.
                    None => stdin = None,
                }
            }
            if exit_fd != 0 {
                match child.try_wait() {
                    Ok(s) => status = s,
                    Err(e) => {
                        // Cannot happen for a child we spawned; if it does,
                        // do not leave a group we can no longer supervise.
                        tracing::warn!(pgid = group.id(), error = %e, "process-runner: cannot wait for child, killing its group");
                        group.signal_logged(libc::SIGKILL);
                        break;
                    }
                }
            }
            if overflowed && !over_limit {
                tracing::info!(
                    pgid = group.id(),
                    limit = spec.max_output_bytes,
                    "process-runner: output passed its hard limit, killing group"
                );
                over_limit = true;
                group.signal_logged(libc::SIGKILL);
                // Closed only after the kill: closed first, a writer could
                // die of SIGPIPE before the SIGKILL lands.
                stdout = None;
                stderr = None;
                if !matches!(phase, Phase::Killed { .. }) {
                    phase = Phase::Killed {
                        abandon_at: Instant::now() + DRAIN_AFTER_KILL,
                    };
                }
            }
        }
        drop(stdin);

        match phase {
            Phase::Running => {}
            // A timed-out group whose leader exited on SIGTERM may still
            // hold stragglers that ignore it (with their output
            // redirected): the contract is that a timeout kills the group.
            Phase::Terminating { .. } => group.signal_logged(libc::SIGKILL),
            Phase::Killed { .. } => {}
        }
        if status.is_none() {
            // The leader was SIGKILLed; reaping it is prompt.
            status = reap_within(child, pidfd.as_ref(), DRAIN_AFTER_KILL);
        }
        self.group.disarm();

        let (stdout, stdout_truncated) = out.finish();
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
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            interrupted,
            output_limit_exceeded: over_limit,
        };
        (answer, status.is_some())
    }
}

fn try_reap(child: &mut Child) -> Option<ExitStatus> {
    child.try_wait().ok().flatten()
}

/// Waits at most `limit` for the child's exit.
fn reap_within(child: &mut Child, pidfd: Option<&OwnedFd>, limit: Duration) -> Option<ExitStatus> {
    let until = Instant::now() + limit;
    loop {
        if let Some(status) = try_reap(child) {
            return Some(status);
        }
        let now = Instant::now();
        if now >= until {
            return None;
        }
        let left = until - now;
        match pidfd {
            Some(fd) => {
                let mut fds = [pollfd(Some(fd.as_raw_fd()), libc::POLLIN)];
                if poll(&mut fds, Some(left)).is_err() {
                    return try_reap(child);
                }
            }
            None => std::thread::sleep(left.min(EXIT_CHECK)),
        }
    }
}

fn pollfd(fd: Option<RawFd>, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd: fd.unwrap_or(-1),
        events,
        revents: 0,
    }
}

/// poll(2) for at most `wait` (forever when `None`); EINTR is a return
/// with nothing ready.
fn poll(fds: &mut [libc::pollfd], wait: Option<Duration>) -> io::Result<()> {
    let timeout = match wait {
        // Rounded up, so the loop never spins on a sub-millisecond rest.
        Some(w) => i32::try_from(w.as_micros().div_ceil(1000)).unwrap_or(i32::MAX),
        None => -1,
    };
    let count = libc::nfds_t::try_from(fds.len()).unwrap_or(libc::nfds_t::MAX);
    // SAFETY: `fds` is a live, writable array of `count` pollfds.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), count, timeout) };
    if rc >= 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.kind() == io::ErrorKind::Interrupted {
        for f in fds.iter_mut() {
            f.revents = 0;
        }
        return Ok(());
    }
    Err(err)
}

/// Reads one chunk of a pipe poll(2) found ready; `None` at EOF or on
/// error. EINTR and EAGAIN read nothing and keep the pipe.
fn read_some<R: std::io::Read>(pipe: Option<&mut R>, chunk: &mut [u8]) -> Option<usize> {
    let reader = pipe?;
    match reader.read(chunk) {
        Ok(0) => None,
        Ok(n) => Some(n),
        Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) => {
            Some(0)
        }
        Err(_) => None,
    }
}

/// Writes some of `data` to the (nonblocking) stdin; `None` on error
/// (EPIPE when the child exited or closed stdin).
fn write_some(pipe: Option<&mut ChildStdin>, data: &[u8]) -> Option<usize> {
    let writer = pipe?;
    match writer.write(data) {
        Ok(0) => None,
        Ok(n) => Some(n),
        Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) => {
            Some(0)
        }
        Err(_) => None,
    }
}

fn set_nonblocking(fd: &impl AsRawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: FIONBIO reads one int from a live local.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONBIO, &on) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A pidfd for `pid`, readable once it exits; `None` where the kernel has
/// none (the loop then looks for the exit every [`EXIT_CHECK`]).
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open(2) takes plain integers; on success the returned
    // descriptor is new and owned by nobody else.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::c_long::from(pid), 0) };
    let fd = RawFd::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: `fd` was just returned by pidfd_open and is owned here only.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}
