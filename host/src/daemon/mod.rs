//! `dsh serve`: the long-running host.
//!
//! Loads the manifest, applies every plugin, then accepts connections on a
//! Unix socket that only its owner may use, handing each to a
//! [`ConnectionHandler`] (the ACP server). It talks to systemd
//! (`READY=1`, `STATUS=`, `RELOADING=1`, `STOPPING=1`), re-applies the
//! manifest on SIGHUP on a task of its own (a bad manifest is rejected, the
//! old one keeps running and `STATUS=` says so), backs off when `accept()`
//! fails (out of file descriptors) instead of spinning, and on SIGTERM stops
//! accepting, lets running turns finish within a grace period, aborts the
//! rest, and exits cleanly.
//!
//! It may call: the config, plugins and agent subsystems, and the handler.

mod backoff;
mod notify;
mod reload;
mod shutdown;
mod socket;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::net::UnixStream;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::agent::Agent;
use crate::plugins::PluginHost;
use backoff::AcceptBackoff;
use reload::{Reloader, Summary};

pub use socket::{SocketError, bind_socket};

/// Serves one accepted connection until it ends.
pub trait ConnectionHandler: Send + Sync + 'static {
    /// Serves `stream`; must not panic and should return when the peer leaves.
    fn serve(&self, stream: UnixStream) -> BoxFuture<'static, ()>;
}

/// Daemon settings (from the manifest's host settings).
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// How long running turns may take to finish after SIGTERM.
    pub shutdown_grace: Duration,
}

/// Why the daemon could not run.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The socket could not be served.
    #[error(transparent)]
    Socket(#[from] SocketError),
    /// Signal handlers could not be installed.
    #[error("cannot install signal handlers: {0}")]
    Signals(std::io::Error),
}

/// A running daemon's moving parts.
pub struct Daemon {
    /// Where the manifest lives (re-read on SIGHUP).
    pub manifest_path: PathBuf,
    /// The socket it serves.
    pub socket: PathBuf,
    /// Loaded plugins.
    pub host: PluginHost,
    /// Live sessions.
    pub agent: Arc<Agent>,
    /// Settings.
    pub options: DaemonOptions,
}

impl Daemon {
    /// Serves until SIGTERM or SIGINT, then shuts down cleanly.
    pub async fn run(self, handler: Arc<dyn ConnectionHandler>) -> Result<(), DaemonError> {
        let listener = bind_socket(&self.socket)?;
        let hangup = signal(SignalKind::hangup()).map_err(DaemonError::Signals)?;
        let mut terminate = signal(SignalKind::terminate()).map_err(DaemonError::Signals)?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(DaemonError::Signals)?;
        let (summary_tx, summary) = watch::channel(Summary::of(&self.host));
        let (done_tx, mut reloaded) = mpsc::unbounded_channel();
        let host = Arc::new(Mutex::new(self.host));
        let reloader = Reloader {
            manifest_path: self.manifest_path,
            socket: self.socket.clone(),
            host: host.clone(),
            agent: self.agent.clone(),
            summary: summary_tx,
            done: done_tx,
        }
        .spawn(hangup);
        let status = |connections: usize| status_line(&summary.borrow(), &self.agent, connections);
        let mut connections: JoinSet<()> = JoinSet::new();
        let mut backoff = AcceptBackoff::default();
        let pause = tokio::time::sleep(Duration::ZERO);
        tokio::pin!(pause);
        let mut paused = false;
        tracing::info!(socket = %self.socket.display(), "dsh is serving");
        notify::ready(&status(0));
        loop {
            tokio::select! {
                accepted = listener.accept(), if !paused => match accepted {
                    Ok((stream, _)) => {
                        backoff.succeeded();
                        if let Some(stream) = socket::admit(stream) {
                            let handler = handler.clone();
                            connections.spawn(async move { handler.serve(stream).await });
                        }
                    }
                    Err(e) => {
                        let wait = backoff.failed(&e);
                        pause.as_mut().reset(tokio::time::Instant::now() + wait);
                        paused = true;
                    }
                },
                () = &mut pause, if paused => paused = false,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                Some(()) = reloaded.recv() => notify::ready(&status(connections.len())),
                _ = terminate.recv() => break,
                _ = interrupt.recv() => break,
            }
            notify::status(&status(connections.len()));
        }
        notify::stopping();
        reloader.abort();
        drop(listener);
        socket::remove(&self.socket);
        shutdown::finish_turns(&self.agent, self.options.shutdown_grace).await;
        connections.shutdown().await;
        // The plugins go last: running turns needed them until now.
        drop(host);
        tracing::info!("dsh stopped");
        Ok(())
    }
}

/// What `STATUS=` says: plugin, session and connection counts, and a
/// rejected reload until the next one succeeds.
fn status_line(summary: &Summary, agent: &Agent, connections: usize) -> String {
    let mut line = format!(
        "{}/{} plugins applied, {} sessions, {connections} connections",
        summary.applied,
        summary.total,
        agent.live_sessions().len()
    );
    if let Some(error) = &summary.reload_failed {
        // STATUS= is one line of the notify datagram.
        let error = error.replace(['\n', '\r'], " ");
        line.push_str(&format!("; reload failed, previous manifest kept: {error}"));
    }
    if !summary.kept.is_empty() {
        line.push_str(&format!(
            "; new config failed, previous instance kept: {}",
            summary.kept.join(", ")
        ));
    }
    line
}
