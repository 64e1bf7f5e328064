//! Processes that keep running while a test acts on them (a `dsh prompt`
//! held mid-tool, to signal, kill or race against), and waiting for what
//! they do: a pid file filling in, a process going away. Every wait has a
//! timeout; a process still running when its [`Background`] is dropped is
//! killed with its whole process group.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt as _;

use crate::process::Outcome;

/// How often the waits below look again.
const POLL: Duration = Duration::from_millis(10);

/// A child process in its own process group, its output collected.
pub struct Background {
    child: Option<Child>,
    pid: i32,
    shown: String,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
}

fn collect(mut from: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

impl Background {
    /// Starts `command` (stdin closed, stdout and stderr collected) as the
    /// leader of a new process group.
    pub fn start(mut command: Command) -> Background {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let shown = format!("{command:?}");
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {shown}: {e}"));
        let stdout = child.stdout.take().map(collect);
        let stderr = child.stderr.take().map(collect);
        Background {
            pid: child.id() as i32,
            child: Some(child),
            shown,
            stdout,
            stderr,
        }
    }

    /// Its process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Sends `signal` to the process itself (as a terminal's Ctrl-C reaches
    /// dsh: its tools and hooks run in process groups of their own).
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) has no memory-safety preconditions; the child is
        // not yet reaped, so its pid is still ours.
        let rc = unsafe { libc::kill(self.pid, signal) };
        assert_eq!(rc, 0, "kill({}, {signal}) failed", self.pid);
    }

    /// Waits for it to exit (killing its group and panicking after
    /// `timeout`) and returns what it did.
    pub fn wait(mut self, timeout: Duration) -> Outcome {
        let mut child = self.child.take().expect("waited once");
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                break status;
            }
            if start.elapsed() > timeout {
                kill_group(self.pid);
                let _ = child.wait();
                panic!("{} did not exit within {timeout:?}; killed it", self.shown);
            }
            std::thread::sleep(POLL);
        };
        let text = |h: Option<JoinHandle<String>>| h.map(|h| h.join().unwrap_or_default());
        Outcome {
            code: status.code(),
            stdout: text(self.stdout.take()).unwrap_or_default(),
            stderr: text(self.stderr.take()).unwrap_or_default(),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(self.pid);
            let _ = child.wait();
        }
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: kill(2) on a group this module created (process_group(0));
    // the leader is not yet reaped, so the id cannot have been reused.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

/// Waits until `done()` holds; panics naming `what` after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(POLL);
    }
}

/// The pid a script wrote to `path` (`echo $$ > path`), once the line is whole.
pub fn read_pid(path: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(path).ok()?;
    text.strip_suffix('\n')?.trim().parse().ok()
}

/// Waits for a script to write its pid to `path`.
pub fn wait_for_pid(path: &Path, timeout: Duration) -> i32 {
    let mut pid = None;
    wait_until(&format!("a pid in {}", path.display()), timeout, || {
        pid = read_pid(path);
        pid.is_some()
    });
    pid.unwrap_or_default()
}

/// Whether `pid` is a running process (a zombie waiting to be reaped by
/// someone else counts as gone: it runs nothing).
pub fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // `pid (comm) S ...`: the state follows the last `)`.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some('Z') | Some('X') | None)
}

/// Kills `pid` if it still runs (cleanup after a test that let it live).
pub fn kill_if_alive(pid: i32) {
    if pid > 1 && alive(pid) {
        // SAFETY: kill(2) has no memory-safety preconditions; `pid` is one
        // this test's own script reported.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}
