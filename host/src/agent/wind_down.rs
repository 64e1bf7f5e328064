//! The wind-down of a headless run (`dsh prompt`): what `claude -p` does
//! after its last turn while background jobs still run, recorded with
//! Claude Code 2.1.197 (`S262-ends-in-grace`, `S262-two-jobs`,
//! `S260-left-running`; `tools/recorder-scenarios/FINDINGS-wind.md`).
//!
//! The run waits up to a grace (Claude Code's is 5 s) for the session's
//! running jobs, asking the `background-tasks` service (`bash-local`).
//! The session of a headless run ([`Session::run_headless`]) takes turns a
//! plugin opens ([`Session::open_turn`], plugin API 1.11): a job that ends
//! reports itself by opening one, whose prompt is its bare
//! `<task-notification>`, and the run re-invokes the model with it, as
//! Claude Code does. One opened while a turn runs is held: if that turn
//! asks the model again, the plugin's system context reaches the request
//! instead (a notification mid-turn, `S260-finishes-during-turn`); if the
//! turn ends first, the turn follows it (`S262-ends-during-stop`). After
//! such a turn the run waits for the rest of the same grace: one grace for
//! the whole wind-down, from the end of the last turn the run was asked
//! for (`S262-two-jobs`: a second job is killed 5 s after the first
//! result, although the first job's turn ran meanwhile). When the grace
//! runs out with jobs still running, the run ends
//! [`WindDownEnd::Killed`]: closing the session with
//! [`dsh_plugin_api::SESSION_END_WIND_DOWN_KILLED`] kills them
//! (`bash-local` kills a session's jobs when it ends) and the Claude bridge
//! runs no SessionEnd hook, as recorded.
//!
//! Only a headless run winds down. An ACP or daemon session never does and
//! never takes a plugin-opened turn: a job that ends there is reported as
//! context the model reads with the next prompt, the editor's session being
//! no `claude -p` that is about to exit.

use std::sync::Arc;
use std::time::Duration;

use abi_stable::std_types::RString;
use dsh_plugin_api::services::background_tasks::{
    ListAnswer, METHOD_WAIT, SERVICE, Task, WaitRequest,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::session::{Buffered, Phase, Prompt, Session, TurnOutcome};

/// Claude Code's grace for background jobs at the end of `claude -p`
/// ("print wind-down: killing background shell … after 5000ms grace").
pub const DEFAULT_GRACE: Duration = Duration::from_millis(5000);

/// How a wind-down ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindDownEnd {
    /// No job was left running (or nobody runs jobs).
    Settled,
    /// The run was interrupted (SIGINT, SIGTERM) before the jobs ended:
    /// the session closes as usual, which kills them.
    Interrupted,
    /// The grace ran out with these jobs still running: the session is to
    /// be closed with [`dsh_plugin_api::SESSION_END_WIND_DOWN_KILLED`].
    Killed {
        /// The jobs still running, as `background-tasks` lists them.
        tasks: Vec<Task>,
    },
}

/// What a wind-down did.
#[derive(Debug, Clone)]
pub struct WindDown {
    /// The turns plugins opened meanwhile, in order.
    pub turns: Vec<TurnOutcome>,
    /// How it ended.
    pub end: WindDownEnd,
}

impl WindDown {
    /// The `agent/session-end` reason to close the session with: `other`
    /// (what `claude -p` reports), or the killed reason.
    pub fn end_reason(&self) -> &'static str {
        match self.end {
            WindDownEnd::Settled | WindDownEnd::Interrupted => "other",
            WindDownEnd::Killed { .. } => dsh_plugin_api::SESSION_END_WIND_DOWN_KILLED,
        }
    }
}

impl Session {
    /// Marks the session as a headless run's (`dsh prompt`): from now on
    /// it takes turns plugins open (`Session::open_turn`), which its
    /// wind-down runs ([`Session::wind_down`]).
    pub fn run_headless(&self) {
        let mut state = self.state();
        if state.opener.is_none() {
            let (opener, opened) = mpsc::unbounded_channel();
            state.opener = Some(opener);
            state.opened = Some(opened);
        }
    }

    /// Takes a turn `plugin` opens with `text` as its one prompt (plugin
    /// API 1.11), in a headless run's session ([`Session::run_headless`]):
    /// with no turn open, for the wind-down to run; while one runs, held:
    /// `context` reaches its next request as system context if it makes
    /// one, else the turn follows it. Refused in any other session (the
    /// plugin then injects its text as context).
    pub(crate) fn open_turn(
        &self,
        plugin: &str,
        text: String,
        context: String,
    ) -> Result<(), String> {
        let mut state = self.state();
        let Some(opener) = &state.opener else {
            return Err(format!(
                "session `{}` takes no plugin-opened turn (only a headless run's does)",
                self.id
            ));
        };
        if state.phase == Phase::Idle {
            return opener
                .send(Prompt::opened_by(plugin, text))
                .map_err(|_| format!("session `{}` no longer takes plugin-opened turns", self.id));
        }
        state.buffered.push(Buffered::Opened {
            plugin: plugin.to_string(),
            text,
            context,
        });
        Ok(())
    }

    /// Sends the turns plugins opened while a turn ran (or session-start),
    /// and that no flush point has delivered as context, to the wind-down.
    pub(crate) fn open_held_turns(&self) {
        let mut state = self.state();
        let Some(opener) = state.opener.clone() else {
            return;
        };
        if !state
            .buffered
            .iter()
            .any(|b| matches!(b, Buffered::Opened { .. }))
        {
            return;
        }
        let items = std::mem::take(&mut state.buffered);
        for item in items {
            match item {
                Buffered::Opened { plugin, text, .. } => {
                    let _ = opener.send(Prompt::opened_by(&plugin, text));
                }
                other => state.buffered.push(other),
            }
        }
    }

    /// Winds the session down after a headless run's last turn: waits up
    /// to `grace` in all for its background jobs, running the turns they
    /// open as they end (see the module's docs); `stop` ends it early (a
    /// turn it runs then is the caller's to cancel, [`Session::cancel`]).
    /// The caller closes the session with [`WindDown::end_reason`].
    pub async fn wind_down(self: &Arc<Self>, grace: Duration, stop: CancellationToken) -> WindDown {
        let deadline = tokio::time::Instant::now() + grace;
        self.run_headless();
        let Some(mut opened) = self.state().opened.take() else {
            // Another wind-down of this session runs: nothing to do here.
            return WindDown {
                turns: Vec::new(),
                end: WindDownEnd::Settled,
            };
        };
        let mut turns = Vec::new();
        let end = loop {
            if stop.is_cancelled() {
                break WindDownEnd::Interrupted;
            }
            if self.take_opened(&mut opened) {
                turns.push(self.run_turn().await);
                continue;
            }
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            tracing::debug!(session = %self.id, remaining_ms = remaining.as_millis(), "winding down: waiting for background jobs");
            let left = tokio::select! {
                biased;
                _ = stop.cancelled() => break WindDownEnd::Interrupted,
                Some(prompt) = opened.recv() => {
                    self.enqueue(prompt);
                    self.take_opened(&mut opened);
                    turns.push(self.run_turn().await);
                    continue;
                }
                left = self.wait_for_jobs(remaining) => left,
            };
            // A job that ended opened its turn before its end could be seen.
            if self.take_opened(&mut opened) {
                turns.push(self.run_turn().await);
                continue;
            }
            break match left {
                Some(tasks) if !tasks.is_empty() => WindDownEnd::Killed { tasks },
                _ => WindDownEnd::Settled,
            };
        };
        {
            let mut state = self.state();
            state.opener = None;
            state.opened = None;
        }
        WindDown { turns, end }
    }

    /// Whether the session takes plugin-opened turns: a headless run's,
    /// from [`Session::run_headless`] (or the start of its wind-down) to the
    /// end of its wind-down.
    pub fn winds_down(&self) -> bool {
        self.state().opener.is_some()
    }

    /// Queues every turn opened so far; whether there was one.
    fn take_opened(&self, opened: &mut mpsc::UnboundedReceiver<Prompt>) -> bool {
        let mut any = false;
        while let Ok(prompt) = opened.try_recv() {
            self.enqueue(prompt);
            any = true;
        }
        any
    }

    /// Waits up to `wait` for the session's background jobs; the jobs
    /// still running then. `None` when nobody runs jobs (no
    /// `background-tasks` service, or one without `wait`), or its answer
    /// could not be read (logged): nothing to wait for.
    async fn wait_for_jobs(&self, wait: Duration) -> Option<Vec<Task>> {
        let service = self.core.view().services.get(SERVICE)?;
        let request = WaitRequest {
            session_id: self.id.clone(),
            timeout_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        };
        let args = serde_json::to_string(&request).unwrap_or_default();
        let answer = service
            .call(RString::from(METHOD_WAIT), RString::from(args))
            .await
            .into_result()
            .map_err(String::from)
            .and_then(|a| {
                serde_json::from_str::<ListAnswer>(&a).map_err(|e| format!("bad answer: {e}"))
            });
        match answer {
            Ok(answer) => Some(answer.tasks),
            Err(e) => {
                tracing::warn!(session = %self.id, "{SERVICE}: cannot wait for background jobs: {e}");
                None
            }
        }
    }
}
