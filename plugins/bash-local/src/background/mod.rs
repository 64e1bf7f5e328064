//! Background shells: `Bash` with `run_in_background: true`, and the
//! `TaskOutput` / `TaskStop` tools that read and stop them, as Claude Code
//! 2.1.197 has them (recorded `S260-*`, `tools/recorder-scenarios/
//! FINDINGS-bgbash.md`).
//!
//! A job is `<shell> -c 'exec >><file> 2>&1; <command>'` run through
//! [`crate::runner::start_merged`] on a task of its own: the shell's
//! stdout and stderr go to the job's output file (`<root>/<project
//! slug>/<session>/tasks/<id>.output`, Claude Code's layout under its temp
//! folder), which the model may read while it runs. The call answers at
//! once with Claude Code's `Command running in background with ID: …`.
//! When the shell exits, whatever it left in its process group is killed,
//! the exit is recorded and Claude Code's `<task-notification>` is added to
//! the session as system context (it reaches the model after the results
//! of the step that was running, or with the next prompt); in a `dsh
//! prompt` run winding down after its last turn it instead opens a turn
//! whose one prompt is the bare `<task-notification>` (plugin API 1.11,
//! `Host::open_turn`; recorded `S262-ends-in-grace`), and the
//! `background-tasks` service's `wait` is how that run waits for the jobs
//! (Claude Code's grace). Once a model request has gone out with a
//! notification, the job is forgotten (`No task found with ID: …`, as in Claude
//! Code). `TaskStop` kills the job's group at once and forgets it, with no
//! notification. When the session ends, or the plugin is disposed (the
//! daemon stops), every job still running is killed and reaped: no
//! process, zombie or descriptor outlives its session. A foreground
//! command that times out after printing something becomes a job the same
//! way ([`Jobs::run_foreground`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use dsh_plugin_api::Host;
use tokio::sync::{oneshot, watch};

use crate::runner::{self, RunAnswer, RunRequest};

mod foreground;
mod texts;
pub use foreground::Foreground;
pub use texts::{
    OutputResponse, StopResponse, TaskView, not_found, notification, output_answer, started_text,
    stop_answer, task_notification,
};

/// How long ending a session waits for a killed job to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// What a job is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Its shell has not exited.
    Running,
    /// Its shell exited with this status (128 + signal when a signal
    /// ended it).
    Exited(i32),
    /// `TaskStop` or the end of its session killed it.
    Killed,
}

/// Why a background command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The output file or its folder could not be made.
    #[error("Bash: cannot create the background output file {path}: {source}")]
    OutputFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The shell could not be started.
    #[error("Bash: cannot start the background command: {0}")]
    Spawn(String),
}

/// One background command.
#[derive(Debug)]
pub struct Job {
    /// Its id: `b` and eight base-36 characters, as Claude Code's.
    pub id: String,
    /// The session that started it.
    pub session_id: String,
    /// The command as the model gave it.
    pub command: String,
    /// The model's description, else the command.
    pub description: String,
    /// The id of the `Bash` call that started it.
    pub tool_use_id: String,
    /// Where its output goes.
    pub output: PathBuf,
    pgid: AtomicI32,
    state: watch::Sender<JobState>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    stopping: AtomicBool,
    /// Its notification was added to the session (forgotten at the next
    /// model request).
    notified: AtomicBool,
    started: std::time::Instant,
}

impl Job {
    /// What it is doing now.
    pub fn state(&self) -> JobState {
        *self.state.borrow()
    }

    /// Its output so far, invalid UTF-8 replaced.
    pub fn output_text(&self) -> String {
        match std::fs::read(&self.output) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                tracing::warn!(path = %self.output.display(), "Bash: cannot read background output: {e}");
                String::new()
            }
        }
    }

    /// Waits until the job is no longer running, at most `wait`; the state
    /// then.
    pub async fn wait(&self, wait: Duration) -> JobState {
        let mut rx = self.state.subscribe();
        let done = rx.wait_for(|s| *s != JobState::Running);
        match tokio::time::timeout(wait, done).await {
            Ok(Ok(state)) => *state,
            _ => self.state(),
        }
    }

    /// Kills its process group (`SIGKILL`) and tells its supervisor.
    fn kill(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        kill_group(self.pgid.load(Ordering::SeqCst));
        if let Some(stop) = lock(&self.stop).take() {
            let _ = stop.send(());
        }
    }

    /// Kills it and waits (bounded) until its shell was reaped.
    async fn kill_and_reap(&self) {
        self.kill();
        let handle = lock(&self.supervisor).take();
        if let Some(handle) = handle
            && tokio::time::timeout(REAP_WAIT, handle).await.is_err()
        {
            tracing::warn!(job = %self.id, "Bash: a killed background job was not reaped in time");
        }
    }
}

impl Job {
    fn new(
        meta: &Meta,
        id: String,
        output: PathBuf,
        pgid: i32,
        stop: oneshot::Sender<()>,
    ) -> Arc<Job> {
        let (state, _) = watch::channel(JobState::Running);
        Arc::new(Job {
            id,
            session_id: meta.session_id.clone(),
            command: meta.command.clone(),
            description: meta
                .description
                .clone()
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| meta.command.clone()),
            tool_use_id: meta.tool_use_id.clone(),
            output,
            pgid: AtomicI32::new(pgid),
            state,
            stop: Mutex::new(Some(stop)),
            supervisor: Mutex::new(None),
            stopping: AtomicBool::new(false),
            notified: AtomicBool::new(false),
            started: std::time::Instant::now(),
        })
    }
}

/// Who a job is for and what it runs.
#[derive(Debug, Clone)]
pub struct Meta {
    /// The session.
    pub session_id: String,
    /// The `Bash` call's id.
    pub tool_use_id: String,
    /// Where it runs.
    pub cwd: PathBuf,
    /// The model's command.
    pub command: String,
    /// The model's description.
    pub description: Option<String>,
}

impl Meta {
    fn of(start: &Start<'_>) -> Meta {
        Meta {
            session_id: start.session_id.to_string(),
            tool_use_id: start.tool_use_id.to_string(),
            cwd: start.cwd.to_path_buf(),
            command: start.command.to_string(),
            description: start.description.map(str::to_string),
        }
    }
}

/// Sends `SIGKILL` to process group `pgid` (nothing for ids that would hit
/// other processes, nothing when the group is gone).
fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative id signals that group only.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every background job of the plugin, by id.
#[derive(Debug)]
pub struct Jobs {
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    root: PathBuf,
}

/// What starting a job needs besides the command.
#[derive(Debug)]
pub struct Start<'a> {
    /// The session.
    pub session_id: &'a str,
    /// The `Bash` call's id.
    pub tool_use_id: &'a str,
    /// The session's folder: where the command runs.
    pub cwd: &'a Path,
    /// The model's command.
    pub command: &'a str,
    /// The model's description.
    pub description: Option<&'a str>,
    /// The session's shell prelude ([`crate::prelude`]).
    pub prelude: Option<&'a str>,
    /// The session's environment (plugin API 1.9).
    pub session_env: &'a [(String, String)],
}

impl Jobs {
    /// No jobs; output files go under `root`.
    pub fn new(root: PathBuf) -> Self {
        Jobs {
            jobs: Mutex::new(HashMap::new()),
            root,
        }
    }

    /// The default root: `<temp dir>/dsh-<uid>`.
    pub fn default_root() -> PathBuf {
        // SAFETY: getuid never fails.
        let uid = unsafe { libc::getuid() };
        std::env::temp_dir().join(format!("dsh-{uid}"))
    }

    /// The job `id` of `session_id`, while it is known.
    pub fn get(&self, session_id: &str, id: &str) -> Option<Arc<Job>> {
        lock(&self.jobs)
            .get(id)
            .filter(|j| j.session_id == session_id)
            .cloned()
    }

    /// The jobs of `session_id` still running, oldest first.
    pub fn running(&self, session_id: &str) -> Vec<Arc<Job>> {
        let mut running: Vec<Arc<Job>> = lock(&self.jobs)
            .values()
            .filter(|j| j.session_id == session_id && j.state() == JobState::Running)
            .cloned()
            .collect();
        running.sort_by_key(|j| j.started);
        running
    }

    /// Provides the `background-tasks` service: a session's running jobs,
    /// as Claude Code's Stop payload lists them (`list`), and a wait for
    /// them to end (`wait`, `dsh prompt`'s wind-down).
    pub fn provide(self: &Arc<Self>, host: &Host) -> Result<(), String> {
        use dsh_plugin_api::services::background_tasks::{
            ListRequest, METHOD_LIST, METHOD_WAIT, SERVICE, WaitRequest,
        };
        let jobs = self.clone();
        host.provide_service(SERVICE, move |method: String, args: serde_json::Value| {
            let jobs = jobs.clone();
            let bad = |e: serde_json::Error| format!("{SERVICE}: bad request: {e}");
            let call = match method.as_str() {
                METHOD_LIST => serde_json::from_value::<ListRequest>(args)
                    .map(|req| (req.session_id, None))
                    .map_err(bad),
                METHOD_WAIT => serde_json::from_value::<WaitRequest>(args)
                    .map(|req| (req.session_id, Some(Duration::from_millis(req.timeout_ms))))
                    .map_err(bad),
                _ => Err(format!("{SERVICE}: no method `{method}`")),
            };
            async move {
                let (session_id, wait) = call?;
                if let Some(wait) = wait {
                    jobs.wait_running(&session_id, wait).await;
                }
                Ok(jobs.listed(&session_id))
            }
        })
    }

    /// The session's running jobs as the service answers them.
    fn listed(&self, session_id: &str) -> serde_json::Value {
        use dsh_plugin_api::services::background_tasks::{ListAnswer, Task};
        let tasks = self
            .running(session_id)
            .iter()
            .map(|j| Task {
                id: j.id.clone(),
                kind: "shell".into(),
                status: "running".into(),
                description: j.description.clone(),
                command: j.command.clone(),
            })
            .collect();
        serde_json::json!(ListAnswer { tasks })
    }

    /// Waits until none of `session_id`'s jobs runs, at most `wait` (a job
    /// started meanwhile is waited for too).
    pub async fn wait_running(&self, session_id: &str, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let running = self.running(session_id);
            let Some(job) = running.first() else {
                return;
            };
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if job.wait(left).await == JobState::Running {
                return;
            }
        }
    }

    /// Where job `id` of `session_id`, working in `cwd`, writes.
    pub(crate) fn output_path(&self, cwd: &Path, session_id: &str, id: &str) -> PathBuf {
        self.root
            .join(slug(cwd))
            .join(session_id)
            .join("tasks")
            .join(format!("{id}.output"))
    }

    /// Starts `start.command` in the background; `host` gets its
    /// notification when it ends.
    pub fn start(
        self: &Arc<Self>,
        host: &Host,
        config: &crate::Config,
        start: Start<'_>,
    ) -> Result<Arc<Job>, StartError> {
        let id = new_id();
        let output = self.output_path(start.cwd, start.session_id, &id);
        crate::runner::private_root(&self.root)
            .and_then(|()| create_output(&output))
            .map_err(|source| StartError::OutputFile {
                path: output.clone(),
                source,
            })?;
        let script = format!(
            "exec >>{} 2>&1; {}",
            crate::cwd::shell_quote(&output.to_string_lossy()),
            crate::prelude::prefix(start.prelude, start.command.to_string())
        );
        let mut spec = RunRequest::new(vec![config.shell.clone(), "-c".into(), script], start.cwd);
        spec.timeout_ms = None;
        spec.allow_env = config.env_allow.clone();
        spec.env.extend(start.session_env.iter().cloned());
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (pgid, run) = runner::start_merged(spec, async move {
            let _ = stop_rx.await;
        });
        let pgid = pgid.map_err(StartError::Spawn)?;
        let job = Job::new(&Meta::of(&start), id, output, pgid, stop_tx);
        Ok(self.track(host, job, run))
    }

    /// Supervises `job` (running `run`) until it ends, and knows it.
    pub(crate) fn track(
        self: &Arc<Self>,
        host: &Host,
        job: Arc<Job>,
        run: impl std::future::Future<Output = RunAnswer> + Send + 'static,
    ) -> Arc<Job> {
        let supervised = job.clone();
        let jobs = self.clone();
        let host = host.clone();
        let handle = tokio::spawn(async move {
            let answer = run.await;
            let job = supervised;
            // What the shell left in its group goes with it; the id is
            // not used again (it may be another group's one day).
            kill_group(job.pgid.swap(0, Ordering::SeqCst));
            let state = if job.stopping.load(Ordering::SeqCst) {
                JobState::Killed
            } else {
                JobState::Exited(match (answer.exit_code, answer.signal) {
                    (Some(code), _) => code,
                    (None, Some(signal)) => 128 + signal,
                    (None, None) => 1,
                })
            };
            // Told before its state changes: whoever waits on it (a
            // blocking `TaskOutput`, `dsh prompt`'s wind-down) sees it end
            // after the notification is in.
            if let JobState::Exited(code) = state {
                match announce(&host, &job, code) {
                    Ok(()) => job.notified.store(true, Ordering::SeqCst),
                    // The session is gone: nobody is left to tell.
                    Err(e) => {
                        tracing::debug!(job = %job.id, "Bash: background job ended unannounced: {e}");
                        jobs.forget(&job.id);
                    }
                }
            }
            job.state.send_replace(state);
        });
        *lock(&job.supervisor) = Some(handle);
        lock(&self.jobs).insert(job.id.clone(), job.clone());
        job
    }

    fn forget(&self, id: &str) -> Option<Arc<Job>> {
        lock(&self.jobs).remove(id)
    }

    /// `TaskStop`: kills the job and forgets it; `None` when `session_id`
    /// has no such job.
    pub async fn stop(&self, session_id: &str, id: &str) -> Option<Arc<Job>> {
        let job = {
            let mut jobs = lock(&self.jobs);
            match jobs.get(id) {
                Some(j) if j.session_id == session_id => jobs.remove(id),
                _ => None,
            }
        }?;
        job.kill_and_reap().await;
        Some(job)
    }

    /// A model request of `session_id` went out: the jobs whose
    /// notification it carried are forgotten.
    pub fn request_sent(&self, session_id: &str) {
        lock(&self.jobs)
            .retain(|_, j| !(j.session_id == session_id && j.notified.load(Ordering::SeqCst)));
    }

    /// The session ended: its jobs are killed, reaped and forgotten.
    pub async fn end_session(&self, session_id: &str) {
        let ended: Vec<Arc<Job>> = {
            let mut jobs = lock(&self.jobs);
            let ids: Vec<String> = jobs
                .values()
                .filter(|j| j.session_id == session_id)
                .map(|j| j.id.clone())
                .collect();
            ids.iter().filter_map(|id| jobs.remove(id)).collect()
        };
        for job in ended {
            if job.state() == JobState::Running {
                tracing::debug!(job = %job.id, session = session_id, "Bash: session ended, killing background job");
            }
            job.kill_and_reap().await;
        }
    }
}

impl Drop for Jobs {
    /// The plugin is going away: every job still running is killed now
    /// (their supervisors, if the runtime still polls them, reap them).
    fn drop(&mut self) {
        for job in lock(&self.jobs).values() {
            if job.state() == JobState::Running {
                job.kill();
            }
        }
    }
}

/// Tells `job`'s session it exited with `code`, as Claude Code does. In a
/// `dsh prompt` run (plugin API 1.11, `Host::open_turn`): Claude Code's
/// system message if the running turn asks the model again (recorded
/// `S260-finishes-during-turn`), else a turn of its own whose prompt is
/// the bare `<task-notification>` (`claude -p` re-invokes the model so,
/// recorded `S262-*`). Any other session (ACP, the daemon) gets the system
/// message, which the model reads after the running step's tool results or
/// with the next prompt.
fn announce(host: &Host, job: &Job, code: i32) -> Result<(), String> {
    let context = notification(job, code);
    match host.open_turn(&job.session_id, &task_notification(job, code), &context) {
        Ok(()) => Ok(()),
        Err(refused) => {
            tracing::trace!(job = %job.id, "Bash: no turn of its own for a background job's end: {refused}");
            host.inject_system_context(&job.session_id, context)
        }
    }
}

fn create_output(file: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = file.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file)
        .map(drop)
}

/// A fresh job id: `b` and eight characters of `[0-9a-z]`.
pub(crate) fn new_id() -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let mut id = String::from("b");
    for b in &bytes[..8] {
        id.push(DIGITS[usize::from(*b) % DIGITS.len()] as char);
    }
    id
}

/// The project folder as Claude Code names it in paths: every character
/// other than `[A-Za-z0-9]` is `-`.
pub fn slug(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_look_like_claude_codes() {
        let id = new_id();
        assert_eq!(id.len(), 9);
        assert!(id.starts_with('b'));
        assert!(
            id.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
        );
        assert_ne!(new_id(), new_id());
    }

    #[test]
    fn slug_replaces_everything_but_letters_and_digits() {
        assert_eq!(
            slug(Path::new("/tmp/cc_runs/S260_x/proj")),
            "-tmp-cc-runs-S260-x-proj"
        );
    }
}
