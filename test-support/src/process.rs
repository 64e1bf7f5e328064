//! Running commands with a timeout: cargo builds and the `dsh` binary.
//!
//! A child runs in its own process group; a thread waits for it and reports
//! over a channel, so the caller waits with `recv_timeout` and, past the
//! deadline, kills the whole group (cargo's rustc children included).

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// What a finished command did.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr.
    pub stderr: String,
}

impl Outcome {
    /// stdout's non-empty lines.
    pub fn stdout_lines(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect()
    }
}

/// Runs `command` to completion, or kills it after `timeout` and panics.
pub fn run(mut command: Command, timeout: Duration) -> Outcome {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let shown = format!("{command:?}");
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {shown}: {e}"));
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(timeout) {
        Ok(output) => output,
        Err(_) => {
            // SAFETY: plain syscall; the group is ours (process_group(0)
            // above) and not yet reaped, so the id cannot have been reused.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            panic!("{shown} did not finish within {timeout:?}; killed it");
        }
    };
    let output = output.unwrap_or_else(|e| panic!("wait for {shown}: {e}"));
    Outcome {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A command for the real `dsh` binary with `args` in `cwd`, with no
/// `DSH_*` variables inherited from the caller's environment.
pub fn dsh_command<I, S>(args: I, cwd: &Path) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(&crate::artifacts::workspace().dsh);
    command.args(args).current_dir(cwd);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DSH_") {
            command.env_remove(key);
        }
    }
    command
}

/// Runs the real `dsh` binary with `args` in `cwd`, with no `DSH_*`
/// variables inherited from the caller's environment.
pub fn run_dsh<I, S>(args: I, cwd: &Path) -> Outcome
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run(dsh_command(args, cwd), Duration::from_secs(60))
}
