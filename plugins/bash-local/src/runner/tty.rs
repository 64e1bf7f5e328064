//! A run on a terminal of its own (Codex's `exec_command` with `tty:
//! true`): the child gets a new pseudo-terminal (24 rows, 80 columns, as
//! Codex's) as stdin, stdout and stderr and its own session, of which the
//! terminal is the controlling one, so the line discipline echoes what is
//! written, ends lines in `\r\n`, and turns Ctrl-C into SIGINT for the
//! foreground group.
//!
//! It is tapped like [`super::start_tapped`]: every chunk read from the
//! terminal and the exit go to the tap. The caller writes to the terminal
//! through the handle it gets. This path forks (`pre_exec` must make the
//! session and take the terminal): a terminal is asked for rarely.

use std::future::Future;
use std::io::Read as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::process::Stdio;

use tokio::time::Instant;

use super::group::ProcessGroup;
use super::spec::{elapsed_ms, spawn_failure};
use super::{RunAnswer, RunRequest, Tap, Tapped, caps};

/// Rows and columns of the terminal (portable-pty's default size, which
/// Codex uses).
const SIZE: (u16, u16) = (24, 80);

/// Starts `spec` on a new terminal: the group's id and the terminal to
/// write to, or why nothing started; and the future that supervises the
/// run to its end (`cancel` kills the group).
pub fn start_tapped_tty(
    spec: RunRequest,
    cancel: impl Future<Output = ()> + Send + 'static,
    tap: Tap,
) -> (
    Result<(i32, std::fs::File), String>,
    impl Future<Output = RunAnswer> + Send + 'static,
) {
    let started = Instant::now();
    let spawned = spawn(&spec);
    let handle = match &spawned {
        Ok(s) => s
            .master
            .try_clone()
            .map(|m| (s.group.id(), std::fs::File::from(m)))
            .map_err(|e| format!("cannot run `{}`: {e}", spec.program.join(" "))),
        Err(e) => Err(e.clone()),
    };
    (handle, async move {
        match spawned {
            Ok(s) => supervise(s, cancel, tap, started).await,
            Err(message) => spawn_failure(message, started),
        }
    })
}

struct Spawned {
    child: tokio::process::Child,
    group: ProcessGroup,
    master: OwnedFd,
}

fn spawn(spec: &RunRequest) -> Result<Spawned, String> {
    let Some((program, args)) = spec.program.split_first() else {
        return Err("no program given: `program` is empty".to_string());
    };
    let cannot = |e: std::io::Error| format!("cannot run `{program}`: {e}");
    let envp = super::envp_of(spec).map_err(cannot)?;
    let (master, slave) = open_pty().map_err(cannot)?;
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(envp.vars())
        .stdin(Stdio::from(slave.try_clone().map_err(cannot)?))
        .stdout(Stdio::from(slave.try_clone().map_err(cannot)?))
        .stderr(Stdio::from(slave));
    let drop_caps = caps::must_drop();
    // SAFETY: the hook runs in the child between fork and exec and makes
    // only async-signal-safe system calls: setsid, ioctl, prctl.
    unsafe {
        use std::os::unix::process::CommandExt as _;
        command.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The terminal (now on fd 0) becomes the session's.
            if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if drop_caps {
                caps::drop_capabilities()?;
            }
            Ok(())
        });
    }
    let child = tokio::process::Command::from(command)
        .spawn()
        .map_err(|e| {
            super::check_cwd(&spec.cwd)
                .err()
                .unwrap_or_else(|| cannot(e))
        })?;
    let Some(group) = child.id().and_then(ProcessGroup::led_by) else {
        return Err(format!("cannot run `{program}`: no usable process id"));
    };
    Ok(Spawned {
        child,
        group,
        master,
    })
}

/// A new terminal: its master end (close-on-exec) and its slave end.
fn open_pty() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = libc::winsize {
        ws_row: SIZE.0,
        ws_col: SIZE.1,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes the two descriptors it opens into the ints
    // given; the name buffer and terminal settings may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened for us and are owned here.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    for fd in [&master, &slave] {
        // SAFETY: fcntl on a descriptor we own.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((master, slave))
}

async fn supervise(
    s: Spawned,
    cancel: impl Future<Output = ()>,
    tap: Tap,
    started: Instant,
) -> RunAnswer {
    let Spawned {
        mut child,
        mut group,
        master,
    } = s;
    // The terminal is read on a thread of its own: a read returns at once
    // with what is there, and fails (EIO) once no process holds the other
    // end.
    let (read_done, reading) = tokio::sync::oneshot::channel::<()>();
    let reader_tap = tap.clone();
    let mut reader = std::fs::File::from(master);
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if reader_tap.send(Tapped::Output(buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = read_done.send(());
    });
    let mut cancel = std::pin::pin!(cancel);
    let mut interrupted = false;
    let status = tokio::select! {
        status = child.wait() => status.ok(),
        () = &mut cancel => {
            interrupted = true;
            group.signal_logged(libc::SIGKILL);
            child.wait().await.ok()
        }
    };
    if let Some(status) = status {
        let _ = tap.send(Tapped::Exited(status));
    }
    // What the terminal still holds, until its last holder is gone (or
    // the group is killed with the session).
    tokio::select! {
        _ = reading => {}
        () = &mut cancel, if !interrupted => group.signal_logged(libc::SIGKILL),
    }
    group.disarm();
    let (exit_code, signal) = match status {
        Some(s) => (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)),
        None => (None, None),
    };
    RunAnswer {
        exit_code,
        signal,
        duration_ms: elapsed_ms(started),
        interrupted,
        ..RunAnswer::default()
    }
}
