//! A foreground `Bash` command that may become a job: Claude Code moves a
//! command that printed something before its timeout to the background
//! (recorded `S186-timeout-output`, `S260-timeout-output`); one that
//! printed nothing times out as before.

use std::sync::Arc;

use dsh_plugin_api::Host;
use tokio::sync::oneshot;

use super::{Job, Jobs, Meta, new_id};
use crate::runner::{self, RunAnswer, RunRequest};

/// How a foreground command ended ([`Jobs::run_foreground`]).
#[derive(Debug)]
pub enum Foreground {
    /// As any run: on its own, killed at its timeout (it had printed
    /// nothing), or cancelled.
    Done(RunAnswer),
    /// It timed out after printing something and goes on as this job.
    Detached(Arc<Job>),
}

/// Stops a run when dropped, unless its sender was taken.
struct StopOnDrop(Option<oneshot::Sender<()>>);

impl StopOnDrop {
    fn fire(&mut self) {
        if let Some(stop) = self.0.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.fire();
    }
}

impl Jobs {
    /// Runs a foreground `Bash` command (`spec`, its timeout set) that
    /// moves to the background, as Claude Code's does, when it times out
    /// after printing something (recorded `S260-timeout-output`): then it
    /// becomes a job whose output file starts with what it printed so far.
    /// `cancel` resolving before that kills it, as in the foreground.
    pub async fn run_foreground(
        self: &Arc<Self>,
        host: &Host,
        meta: Meta,
        spec: RunRequest,
        cancel: impl std::future::Future<Output = ()>,
    ) -> Foreground {
        let id = new_id();
        let output = self.output_path(&meta.cwd, &meta.session_id, &id);
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (detach_tx, detach_rx) = oneshot::channel();
        let detach = runner::Detach {
            answer: detach_tx,
            path: output.clone(),
            root: self.root.clone(),
        };
        let (pgid, run) = runner::start_merged_detachable(
            spec,
            async move {
                let _ = stop_rx.await;
            },
            detach,
        );
        // Dropped before it detached (the call's future dropped): the run
        // is killed, as a foreground run's is.
        let mut stop = StopOnDrop(Some(stop_tx));
        let mut run = tokio::spawn(run);
        tokio::pin!(cancel);
        let joined = |r: Result<RunAnswer, tokio::task::JoinError>| {
            r.unwrap_or_else(|e| RunAnswer {
                spawn_error: Some(format!("the command's supervisor failed: {e}")),
                ..RunAnswer::default()
            })
        };
        tokio::select! {
            answer = &mut run => Foreground::Done(joined(answer)),
            detached = detach_rx => match (detached, pgid, stop.0.take()) {
                (Ok(_), Ok(pgid), Some(stop_tx)) => {
                    let job = Job::new(&meta, id, output, pgid, stop_tx);
                    let handle = async move { joined(run.await) };
                    Foreground::Detached(self.track(host, job, handle))
                }
                // The run ended without detaching.
                (_, _, stop_tx) => {
                    stop.0 = stop_tx;
                    Foreground::Done(joined(run.await))
                }
            },
            () = &mut cancel => {
                stop.fire();
                Foreground::Done(joined(run.await))
            }
        }
    }
}
