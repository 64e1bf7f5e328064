//! A child spawned with `posix_spawn` on an `envp` the runner built
//! ([`super::environ`]), and waited on through a pidfd on the runtime's
//! reactor.
//!
//! std's `Command` would copy dsh's whole environment into a map and new C
//! strings per spawn (issue 15); everything else here is what std does on
//! its `posix_spawn` path, so the child starts as it did: its stdio
//! `dup2`ed from the runner's pipes, its cwd changed to before `exec`
//! (`posix_spawn_file_actions_addchdir_np`), `SIGPIPE` back to its
//! default, the signal mask inherited, and the leader of a new process
//! group. glibc's `posix_spawn` is `clone(CLONE_VM | CLONE_VFORK)`: the
//! daemon is never forked. The exit is awaited as tokio awaits its own
//! children (a pidfd turns readable, then `waitpid`); where a pidfd cannot
//! be had, a thread waits instead. A child dropped before it was reaped is
//! reaped in the background, as tokio does with its orphans.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::ExitStatus;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe::Receiver;
use tokio::sync::oneshot;

use super::environ::Envp;

/// A spawned child: its process and the reading ends of its output.
pub(crate) struct Started {
    pub(crate) child: RawChild,
    pub(crate) stdout: Receiver,
    /// `None` when stderr is stdout's pipe (a merged run).
    pub(crate) stderr: Option<Receiver>,
}

/// Spawns `path` (a path, never searched) with `argv`, in `cwd`, on
/// `envp`, with `stdin` as its standard input; with `merge`, its stdout
/// and stderr are one pipe.
pub(crate) fn spawn(
    path: &Path,
    argv: &[&str],
    cwd: &Path,
    envp: &Envp,
    stdin: &OwnedFd,
    merge: bool,
) -> io::Result<Started> {
    let path = c_string(path.as_os_str().as_bytes())?;
    let cwd = c_string(cwd.as_os_str().as_bytes())?;
    let args: Vec<CString> = argv
        .iter()
        .map(|a| c_string(a.as_bytes()))
        .collect::<io::Result<_>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    let (out_read, out_write) = pipe()?;
    let err = if merge { None } else { Some(pipe()?) };
    let pid = {
        let actions = FileActions::new()?;
        actions.dup2(stdin, libc::STDIN_FILENO)?;
        actions.dup2(&out_write, libc::STDOUT_FILENO)?;
        match &err {
            Some((_, err_write)) => actions.dup2(err_write, libc::STDERR_FILENO)?,
            None => actions.dup2(&out_write, libc::STDERR_FILENO)?,
        }
        actions.chdir(&cwd)?;
        let attrs = Attrs::new()?;
        let mut pid: libc::pid_t = 0;
        // SAFETY: every pointer is valid for the call: the C strings and
        // pointer arrays (null-terminated) live until it returns, which
        // with glibc's `posix_spawn` is after the child's `exec` or its
        // failure.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                actions.as_ptr(),
                attrs.as_ptr(),
                arg_ptrs.as_ptr().cast::<*mut libc::c_char>(),
                envp.as_ptr().cast::<*mut libc::c_char>(),
            )
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        pid
    };
    // The child holds its own copies of the writing ends now.
    drop(out_write);
    let err_read = err.map(|(read, write)| {
        drop(write);
        read
    });
    let child = RawChild::new(pid);
    Ok(Started {
        child,
        stdout: receiver(out_read)?,
        stderr: err_read.map(receiver).transpose()?,
    })
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        )
    })
}

/// A pipe whose ends close on `exec` (the child gets its end by `dup2`).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both are new descriptors nobody else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A reading end, non-blocking (only ours: the child's end stays
/// blocking), on the reactor.
fn receiver(fd: OwnedFd) -> io::Result<Receiver> {
    // SAFETY: plain `fcntl` on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0
        || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return Err(io::Error::last_os_error());
    }
    Receiver::from_owned_fd_unchecked(fd)
}

struct FileActions(Box<libc::posix_spawn_file_actions_t>);

impl FileActions {
    fn new() -> io::Result<FileActions> {
        // SAFETY: an all-zero value is a valid place for `init` to write.
        let mut actions =
            Box::new(unsafe { std::mem::zeroed::<libc::posix_spawn_file_actions_t>() });
        // SAFETY: initializes the value in place.
        check(unsafe { libc::posix_spawn_file_actions_init(&mut *actions) })?;
        Ok(FileActions(actions))
    }

    fn dup2(&self, fd: &OwnedFd, to: libc::c_int) -> io::Result<()> {
        // SAFETY: an initialized value; glibc copies what it needs.
        check(unsafe {
            libc::posix_spawn_file_actions_adddup2(self.as_ptr().cast_mut(), fd.as_raw_fd(), to)
        })
    }

    fn chdir(&self, dir: &CString) -> io::Result<()> {
        // SAFETY: as above; glibc copies the path.
        check(unsafe {
            libc::posix_spawn_file_actions_addchdir_np(self.as_ptr().cast_mut(), dir.as_ptr())
        })
    }

    fn as_ptr(&self) -> *const libc::posix_spawn_file_actions_t {
        &*self.0
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, destroyed once.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut *self.0) };
    }
}

struct Attrs(Box<libc::posix_spawnattr_t>);

impl Attrs {
    /// A new process group; `SIGPIPE` back to its default (dsh ignores
    /// it, as every Rust program does); the signal mask inherited. What
    /// std sets.
    fn new() -> io::Result<Attrs> {
        // SAFETY: an all-zero value is a valid place for `init` to write.
        let mut attrs = Box::new(unsafe { std::mem::zeroed::<libc::posix_spawnattr_t>() });
        // SAFETY: initializes the value in place.
        check(unsafe { libc::posix_spawnattr_init(&mut *attrs) })?;
        let attrs = Attrs(attrs);
        // SAFETY: a local signal set, filled before use; the attribute
        // calls take an initialized value.
        unsafe {
            let mut default: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut default);
            libc::sigaddset(&mut default, libc::SIGPIPE);
            let raw = attrs.as_ptr().cast_mut();
            check(libc::posix_spawnattr_setsigdefault(raw, &default))?;
            check(libc::posix_spawnattr_setpgroup(raw, 0))?;
            let flags = libc::POSIX_SPAWN_SETPGROUP | libc::POSIX_SPAWN_SETSIGDEF;
            check(libc::posix_spawnattr_setflags(raw, flags as libc::c_short))?;
        }
        Ok(attrs)
    }

    fn as_ptr(&self) -> *const libc::posix_spawnattr_t {
        &*self.0
    }
}

impl Drop for Attrs {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, destroyed once.
        unsafe { libc::posix_spawnattr_destroy(&mut *self.0) };
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// How the exit is awaited.
enum Waiter {
    /// The child's pidfd, readable once it exited.
    Pidfd(AsyncFd<OwnedFd>),
    /// A thread blocked in `waitpid` (no pidfd could be had).
    Thread(oneshot::Receiver<io::Result<ExitStatus>>),
}

/// A child this runner spawned and must reap.
pub(crate) struct RawChild {
    pid: libc::pid_t,
    waiter: Option<Waiter>,
    status: Option<ExitStatus>,
}

impl RawChild {
    fn new(pid: libc::pid_t) -> RawChild {
        let waiter = match pidfd(pid) {
            Ok(fd) => Waiter::Pidfd(fd),
            Err(e) => {
                tracing::debug!(pid, error = %e, "process-runner: no pidfd, a thread waits for the child");
                Waiter::Thread(wait_on_thread(pid))
            }
        };
        RawChild {
            pid,
            waiter: Some(waiter),
            status: None,
        }
    }

    pub(crate) fn id(&self) -> u32 {
        u32::try_from(self.pid).unwrap_or(0)
    }

    /// Waits for the exit (cancel-safe: the status is kept once reaped).
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = match self.waiter.as_mut() {
            Some(Waiter::Pidfd(fd)) => loop {
                let mut ready = fd.readable().await?;
                if let Some(status) = try_wait(self.pid)? {
                    break status;
                }
                ready.clear_ready();
            },
            Some(Waiter::Thread(rx)) => rx
                .await
                .unwrap_or_else(|_| Err(io::Error::other("the waiting thread ended")))?,
            None => return Err(io::Error::other("the child was already reaped")),
        };
        self.status = Some(status);
        self.waiter = None;
        Ok(status)
    }

    /// SIGKILLs the child itself (its group is the runner's business).
    pub(crate) fn start_kill(&self) {
        if self.status.is_none() {
            // SAFETY: a signal to a child we have not reaped: the pid is
            // still ours.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
    }
}

impl Drop for RawChild {
    fn drop(&mut self) {
        let Some(waiter) = self.waiter.take() else {
            return;
        };
        if let Ok(Some(_)) = try_wait(self.pid) {
            return;
        }
        // Still running (its group is being killed, or it was left to run
        // on): reaped when it exits.
        let pid = self.pid;
        match waiter {
            Waiter::Pidfd(fd) => match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(async move {
                        loop {
                            let Ok(mut ready) = fd.readable().await else {
                                break;
                            };
                            if !matches!(try_wait(pid), Ok(None)) {
                                return;
                            }
                            ready.clear_ready();
                        }
                        drop(wait_on_thread(pid));
                    });
                }
                Err(_) => drop(wait_on_thread(pid)),
            },
            // The thread reaps it.
            Waiter::Thread(_) => {}
        }
    }
}

/// `pidfd_open`, on the reactor.
fn pidfd(pid: libc::pid_t) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the system call takes a pid and flags and returns a new
    // descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = libc::c_int::try_from(fd).map_err(io::Error::other)?;
    // SAFETY: a new descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the descriptor is owned by the `AsyncFd`, so it stays open
    // (and the same file) for as long as it is registered.
    Ok(unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?)
}

/// Reaps `pid` if it exited; `None` while it runs.
fn try_wait(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waits on our own child, writing into a local.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc == pid {
            return Ok(Some(ExitStatus::from_raw(status)));
        }
        if rc == 0 {
            return Ok(None);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A thread that blocks in `waitpid` until `pid` exits.
fn wait_on_thread(pid: libc::pid_t) -> oneshot::Receiver<io::Result<ExitStatus>> {
    let (tx, rx) = oneshot::channel();
    let waited = std::thread::Builder::new()
        .name("dsh-reap".into())
        .spawn(move || {
            let result = loop {
                let mut status: libc::c_int = 0;
                // SAFETY: as in `try_wait`, blocking.
                let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
                if rc == pid {
                    break Ok(ExitStatus::from_raw(status));
                }
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    break Err(e);
                }
            };
            let _ = tx.send(result);
        });
    if let Err(e) = waited {
        tracing::warn!(pid, error = %e, "process-runner: cannot start a thread to reap a child");
    }
    rx
}
