//! Long-lived processes: the hook servers dsh starts and supervises
//! (`{"type": "socket", "command": ...}` hooks).
//!
//! Same hygiene as [`super::run`]: the leader of a new process group, the
//! capabilities that read other processes' memory dropped when dsh runs as
//! root, the environment built by [`super::env::child_env`]. Unlike a run,
//! the process is not waited for here: [`Server`] hands back the child, and
//! dropping the [`Server`] SIGKILLs its whole group, so a server never
//! outlives the supervisor that owns it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;

use tokio::process::{Child, Command};

use super::caps;
use super::group::ProcessGroup;

/// What to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// argv; the first is the program.
    pub program: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to the inherited environment (which keeps its
    /// credentials, as hooks do).
    pub env: BTreeMap<String, String>,
    /// Inherited names starting with any of these are dropped.
    pub env_remove_prefixes: Vec<String>,
}

/// A running server: its child (stdout and stderr piped, for the owner to
/// read or drop) and the guard that kills its group when dropped.
#[derive(Debug)]
pub struct Server {
    /// The child process.
    pub child: Child,
    group: ProcessGroup,
}

impl Server {
    /// The server's process id (and process group id).
    pub fn pid(&self) -> i32 {
        self.group.id()
    }

    /// Sends SIGTERM to the server's whole group.
    pub fn terminate(&self) {
        self.group.signal_logged(libc::SIGTERM);
    }
}

/// Starts `spec` as the leader of a new process group.
pub fn spawn_server(spec: &ServerSpec) -> Result<Server, String> {
    let Some((program, args)) = spec.program.split_first() else {
        return Err("no program given".to_string());
    };
    let env = super::env::child_env(
        std::env::vars_os(),
        true,
        false,
        &[],
        &spec.env_remove_prefixes,
        &spec.env,
    );
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    if caps::must_drop() {
        // SAFETY: the hook runs in the child between fork and exec and only
        // makes async-signal-safe system calls (see `caps`).
        unsafe {
            command.pre_exec(caps::drop_capabilities);
        }
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    let Some(group) = child.id().and_then(ProcessGroup::led_by) else {
        let _ = child.start_kill();
        return Err(format!("cannot start `{program}`: no usable process id"));
    };
    Ok(Server { child, group })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn dropping_the_server_kills_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let spec = ServerSpec {
            program: vec![
                "/bin/sh".into(),
                "-c".into(),
                format!("sleep 300 & echo $! > {}; wait", pidfile.display()),
            ],
            cwd: dir.path().into(),
            env: BTreeMap::new(),
            env_remove_prefixes: vec![],
        };
        let server = spawn_server(&spec).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let grandchild: i32 = loop {
            if let Some(pid) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break pid;
            }
            assert!(std::time::Instant::now() < deadline, "server never started");
            tokio::task::yield_now().await;
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        drop(server);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // SAFETY: signal 0 only checks whether the process exists.
        while unsafe { libc::kill(grandchild, 0) } == 0 {
            let stat =
                std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
            if stat.split_whitespace().nth(2) == Some("Z") || stat.is_empty() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "grandchild survived");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
