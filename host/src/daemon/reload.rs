//! SIGHUP: re-reading the manifest off the accept loop.
//!
//! A reload reads a file and may map libraries and apply plugins, which
//! takes as long as the slowest plugin's `apply`. It runs on a task of its
//! own (the blocking part on tokio's blocking pool), so connections keep
//! being accepted meanwhile. The accept loop learns the outcome through a
//! [`Summary`] (what `STATUS=` shows) and a wake-up to send `READY=1`.
//!
//! A SIGHUP also makes the hook bridges read every hook and settings file
//! again at its next use ([`dsh_hook_protocol::discovery::request_reread`]).
//!
//! A manifest that cannot be loaded (unreadable, too large, empty, a
//! duplicate key, a bad entry) is rejected as a whole: the running plugins
//! stay, the error is logged, and `STATUS=` says the reload failed until a
//! later one succeeds. A manifest that loads is applied as one atomic swap
//! of the plugin registry; a changed plugin whose new entry fails to apply
//! keeps its previous instance, which is logged at warn and named in
//! `STATUS=` until a later reload applies it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::signal::unix::Signal;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::config::Manifest;
use crate::plugins::{PluginHost, PluginStatus};

/// What the accept loop shows of the plugins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Plugins applied.
    pub(crate) applied: usize,
    /// Plugins listed.
    pub(crate) total: usize,
    /// Why the last reload was rejected, until one succeeds.
    pub(crate) reload_failed: Option<String>,
    /// Plugins whose new entry failed at the last reload and that run on
    /// with their previous instance.
    pub(crate) kept: Vec<String>,
}

impl Summary {
    pub(crate) fn of(host: &PluginHost) -> Summary {
        Summary {
            applied: host
                .records()
                .iter()
                .filter(|r| r.status.is_running())
                .count(),
            total: host.records().len(),
            reload_failed: None,
            kept: host
                .records()
                .iter()
                .filter(|r| matches!(r.status, PluginStatus::Kept(_)))
                .map(|r| r.id.clone())
                .collect(),
        }
    }
}

/// The reload task's inputs.
pub(crate) struct Reloader {
    pub(crate) manifest_path: PathBuf,
    pub(crate) socket: PathBuf,
    pub(crate) host: Arc<Mutex<PluginHost>>,
    /// Whose new sessions start with the reloaded `permissions:`.
    pub(crate) agent: Arc<crate::agent::Agent>,
    pub(crate) summary: watch::Sender<Summary>,
    /// Told after every reload, applied or rejected.
    pub(crate) done: mpsc::UnboundedSender<()>,
}

impl Reloader {
    /// Reloads on every SIGHUP until the daemon stops (it aborts the task).
    pub(crate) fn spawn(self, mut hangup: Signal) -> JoinHandle<()> {
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                super::notify::reloading();
                let (path, socket, host, agent) = (
                    self.manifest_path.clone(),
                    self.socket.clone(),
                    self.host.clone(),
                    self.agent.clone(),
                );
                let outcome =
                    tokio::task::spawn_blocking(move || reload(&path, &socket, &host, &agent))
                        .await;
                let summary = match outcome {
                    Ok(summary) => summary,
                    Err(e) => {
                        tracing::error!("the reload panicked: {e}");
                        let mut last = self.summary.borrow().clone();
                        last.reload_failed = Some(format!("the reload panicked: {e}"));
                        last
                    }
                };
                self.summary.send_replace(summary);
                if self.done.send(()).is_err() {
                    break;
                }
            }
        })
    }
}

/// Loads the manifest and applies it, or rejects it whole.
fn reload(
    path: &Path,
    socket: &Path,
    host: &Mutex<PluginHost>,
    agent: &crate::agent::Agent,
) -> Summary {
    // A poisoned lock means a reload panicked halfway; the host is still
    // the one running, so carry on with it.
    let mut host = host.lock().unwrap_or_else(PoisonError::into_inner);
    // Every hook and settings file the bridges read is read again at its
    // next use, changed or not (the bridges kept by this reload included).
    dsh_hook_protocol::discovery::request_reread();
    match Manifest::load(path) {
        Ok(manifest) => {
            if manifest.socket != socket {
                tracing::warn!(
                    socket = %manifest.socket.display(),
                    "the socket path changed; it takes effect at the next restart"
                );
            }
            let report = host.reload(&manifest);
            // Sessions opened from now on start with the new block; open
            // ones keep theirs (a mode an editor set stays set).
            agent.set_default_permissions(
                manifest
                    .permissions
                    .as_ref()
                    .map(|p| p.state())
                    .unwrap_or_default(),
            );
            tracing::info!(
                added = ?report.added,
                changed = ?report.changed,
                removed = ?report.removed,
                kept = ?report.kept,
                "manifest reloaded"
            );
            if !report.kept.is_empty() {
                tracing::warn!(
                    kept = ?report.kept,
                    "the new entries of these plugins did not apply; their previous instances keep running"
                );
            }
            for problem in host.problems() {
                tracing::warn!("{problem}");
            }
            Summary::of(&host)
        }
        Err(e) => {
            tracing::error!("reload rejected, the running manifest stays: {e}");
            Summary {
                reload_failed: Some(e.to_string()),
                ..Summary::of(&host)
            }
        }
    }
}
