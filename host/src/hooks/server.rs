//! Hook servers dsh starts: `{"type": "socket", "command": ...}`.
//!
//! The first call of a hook starts its server (`/bin/sh -c <command>` in
//! that call's cwd, with the variables a command hook gets plus
//! `DSH_HOOK_SOCKET`, the socket to listen on) through `bash-local`'s
//! [`dsh_bash_local::spawn_server`], so the server runs with the same
//! hygiene as any hook process. A task supervises it for the host's life:
//! when the server exits it is started again, at once the first time, then
//! after 100 ms, 200 ms, … up to 5 s between tries; a server that stays up
//! for 10 s is healthy again. While it waits out a backoff the server is
//! down, and its hooks answer at once as hooks that could not start (they
//! fail open). Its stdout and stderr go to dsh's log. Dropping the
//! [`Supervisor`] (the host going away) kills the server's process group.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::socket_call::SocketCall;
use dsh_bash_local::{ServerSpec, spawn_server};
use dsh_hook_protocol::transport::SOCKET_ENV;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A server that stayed up this long starts its backoff over.
const HEALTHY_AFTER: Duration = Duration::from_secs(10);
/// The first delay before a restart that is not the first.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest delay between restarts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Where a supervised server is.
#[derive(Clone, Debug)]
enum Phase {
    /// Never asked for yet.
    Idle,
    /// Started (maybe not listening yet).
    Running,
    /// Exited; started again at `until`.
    Waiting {
        /// When the next start is due.
        until: Instant,
        /// How it ended.
        why: String,
    },
}

/// Whether a call should wait for the server to listen.
pub enum Availability {
    /// Running or about to be: keep trying to connect.
    Up,
    /// Down for a while: answer at once.
    Down(String),
}

struct Shared {
    phase: Mutex<Phase>,
    /// How many times it has been started.
    starts: Mutex<u64>,
}

/// One supervised server.
pub struct Supervisor {
    command: String,
    socket: PathBuf,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl Supervisor {
    /// A supervisor for `command`, listening on `socket`; nothing starts
    /// until the first call.
    pub fn new(command: String, socket: PathBuf) -> Supervisor {
        Supervisor {
            command,
            socket,
            shared: Arc::new(Shared {
                phase: Mutex::new(Phase::Idle),
                starts: Mutex::new(0),
            }),
            stop: CancellationToken::new(),
        }
    }

    /// Starts the server on the first call; says whether it is up.
    pub fn ensure_running(&self, run: &SocketCall<'_>) -> Result<Availability, String> {
        let mut phase = self.shared.phase.lock().unwrap_or_else(|p| p.into_inner());
        match &*phase {
            Phase::Running => Ok(Availability::Up),
            Phase::Waiting { until, .. } if *until <= Instant::now() => Ok(Availability::Up),
            Phase::Waiting { until, why } => Ok(Availability::Down(format!(
                "hook server `{}` is down ({why}); it restarts in {} ms",
                self.command,
                until.saturating_duration_since(Instant::now()).as_millis()
            ))),
            Phase::Idle => {
                if let Some(dir) = self.socket.parent() {
                    make_private_dir(dir)?;
                }
                let mut env: BTreeMap<String, String> = run.env().into_owned();
                env.insert(
                    SOCKET_ENV.into(),
                    self.socket.to_string_lossy().into_owned(),
                );
                let spec = ServerSpec {
                    program: vec!["/bin/sh".into(), "-c".into(), self.command.clone()],
                    cwd: PathBuf::from(run.cwd.as_ref()),
                    env,
                    env_remove_prefixes: run.env_remove_prefixes.to_vec(),
                };
                *phase = Phase::Running;
                tokio::spawn(supervise(
                    spec,
                    self.command.clone(),
                    self.socket.clone(),
                    self.shared.clone(),
                    self.stop.clone(),
                ));
                Ok(Availability::Up)
            }
        }
    }

    /// How many times the server has been started.
    pub fn starts(&self) -> u64 {
        *self.shared.starts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn make_private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// Removes a socket left at `path` by a previous server (only a socket:
/// anything else there is left alone, and the server will say so).
fn remove_stale_socket(path: &Path) {
    use std::os::unix::fs::FileTypeExt as _;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        let _ = std::fs::remove_file(path);
    }
}

async fn supervise(
    spec: ServerSpec,
    command: String,
    socket: PathBuf,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let mut failures: u32 = 0;
    loop {
        remove_stale_socket(&socket);
        *shared.starts.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let started = Instant::now();
        let why = match spawn_server(&spec) {
            Ok(mut server) => {
                *shared.phase.lock().unwrap_or_else(|p| p.into_inner()) = Phase::Running;
                tracing::info!(server = %command, pid = server.pid(), socket = %socket.display(), "hook server started");
                forward_output(&mut server.child, &command);
                tokio::select! {
                    status = server.child.wait() => match status {
                        Ok(s) => format!("exited: {s}"),
                        Err(e) => format!("cannot be waited for: {e}"),
                    },
                    () = stop.cancelled() => {
                        server.terminate();
                        return;
                    }
                }
            }
            Err(e) => e,
        };
        if started.elapsed() >= HEALTHY_AFTER {
            failures = 0;
        }
        let delay = backoff(failures);
        failures = failures.saturating_add(1);
        tracing::warn!(server = %command, "hook server {why}; restarting in {} ms", delay.as_millis());
        *shared.phase.lock().unwrap_or_else(|p| p.into_inner()) = Phase::Waiting {
            until: Instant::now() + delay,
            why,
        };
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stop.cancelled() => return,
        }
    }
}

/// The wait before the next start after `failures` exits in a row: none
/// for the first, then 100 ms doubling up to [`MAX_BACKOFF`].
fn backoff(failures: u32) -> Duration {
    match failures {
        0 => Duration::ZERO,
        n => FIRST_BACKOFF
            .saturating_mul(1u32 << (n - 1).min(16))
            .min(MAX_BACKOFF),
    }
}

/// Sends the server's stdout and stderr lines to the log.
fn forward_output(child: &mut tokio::process::Child, command: &str) {
    fn pump<R>(stream: Option<R>, command: String, which: &'static str)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
    {
        let Some(stream) = stream else { return };
        tokio::spawn(async move {
            let mut lines = BufReader::new(stream).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(server = %command, stream = which, "{line}");
            }
        });
    }
    pump(child.stdout.take(), command.to_string(), "stdout");
    pump(child.stderr.take(), command.to_string(), "stderr");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_back_off_from_at_once_to_five_seconds() {
        let ms: Vec<u128> = (0..9).map(|n| backoff(n).as_millis()).collect();
        assert_eq!(ms, [0, 100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
