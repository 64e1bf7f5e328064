//! `dsh serve`: the long-running host.
//!
//! Loads the manifest, applies every plugin, then accepts connections on a
//! Unix socket that only its owner may use, handing each to a
//! [`ConnectionHandler`] (the ACP server). It talks to systemd
//! (`READY=1`, `STATUS=`, `RELOADING=1`, `STOPPING=1`), re-applies the
//! manifest on SIGHUP (a bad manifest is rejected and the old one keeps
//! running) and on SIGTERM stops accepting, lets running turns finish within
//! a grace period, aborts the rest, and exits cleanly.
//!
//! It may call: the config, plugins and agent subsystems, and the handler.

mod notify;
mod shutdown;
mod socket;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::net::UnixStream;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinSet;

use crate::agent::Agent;
use crate::config::Manifest;
use crate::plugins::PluginHost;

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
    fn status(&self, connections: usize) -> String {
        let applied = self
            .host
            .records()
            .iter()
            .filter(|r| r.status == crate::plugins::PluginStatus::Applied)
            .count();
        format!(
            "{applied}/{} plugins applied, {} sessions, {connections} connections",
            self.host.records().len(),
            self.agent.live_sessions().len()
        )
    }

    fn reload(&mut self) {
        notify::reloading();
        match Manifest::load(&self.manifest_path) {
            Ok(manifest) => {
                if manifest.socket != self.socket {
                    tracing::warn!(
                        socket = %manifest.socket.display(),
                        "the socket path changed; it takes effect at the next restart"
                    );
                }
                let report = self.host.reload(&manifest);
                tracing::info!(
                    added = ?report.added,
                    changed = ?report.changed,
                    removed = ?report.removed,
                    "manifest reloaded"
                );
                for problem in self.host.problems() {
                    tracing::warn!("{problem}");
                }
            }
            Err(e) => tracing::error!("reload rejected, the running manifest stays: {e}"),
        }
    }

    /// Serves until SIGTERM or SIGINT, then shuts down cleanly.
    pub async fn run(mut self, handler: Arc<dyn ConnectionHandler>) -> Result<(), DaemonError> {
        let listener = bind_socket(&self.socket)?;
        let mut hangup = signal(SignalKind::hangup()).map_err(DaemonError::Signals)?;
        let mut terminate = signal(SignalKind::terminate()).map_err(DaemonError::Signals)?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(DaemonError::Signals)?;
        let mut connections: JoinSet<()> = JoinSet::new();
        tracing::info!(socket = %self.socket.display(), "dsh is serving");
        notify::ready(&self.status(0));
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        if let Some(stream) = socket::admit(stream) {
                            let handler = handler.clone();
                            connections.spawn(async move { handler.serve(stream).await });
                        }
                    }
                    Err(e) => tracing::warn!("accept failed: {e}"),
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                _ = hangup.recv() => {
                    self.reload();
                    notify::ready(&self.status(connections.len()));
                }
                _ = terminate.recv() => break,
                _ = interrupt.recv() => break,
            }
            notify::status(&self.status(connections.len()));
        }
        notify::stopping();
        drop(listener);
        socket::remove(&self.socket);
        shutdown::finish_turns(&self.agent, self.options.shutdown_grace).await;
        connections.shutdown().await;
        tracing::info!("dsh stopped");
        Ok(())
    }
}
