//! A recording [`HookHost`] whose hooks run in the real process runner
//! (feature `local-runner`, for tests only).
//!
//! [`LocalHost::run`] hands the [`RunRequest`] unchanged to
//! [`dsh_bash_local::run`], the function behind the `process-runner`
//! service, so the bridges' tests run real shells through the one runner
//! dsh has. Everything else a bridge does through the host (contexts,
//! records, halts, warnings, problems, and every request it made) is
//! recorded so tests can assert on it.

use std::sync::Mutex;

use serde_json::Value;

use crate::runner::{BoxFuture, HookHost, RunAnswer, RunRequest};

/// Everything a bridge did through the host, in order.
#[derive(Debug, Default)]
pub struct Effects {
    /// `(session_id, text)` of every injected context.
    pub contexts: Vec<(String, String)>,
    /// `(session_id, text)` of every system-role context
    /// ([`HookHost::inject_system_context`]).
    pub system_contexts: Vec<(String, String)>,
    /// `(session_id, record)` of every appended record.
    pub records: Vec<(String, Value)>,
    /// `(session_id, reason)` of every halted turn.
    pub halts: Vec<(String, String)>,
    /// Every warning.
    pub warnings: Vec<String>,
    /// Every config problem reported.
    pub problems: Vec<dsh_plugin_api::ConfigProblem>,
    /// Every process request, in start order.
    pub requests: Vec<RunRequest>,
    /// What [`HookHost::background_tasks`] answers (set by the test: the
    /// jobs a shell tool would have running).
    pub background_tasks: Vec<Value>,
}

/// The local, recording host.
#[derive(Debug, Default)]
pub struct LocalHost {
    effects: Mutex<Effects>,
}

impl LocalHost {
    /// A host with nothing recorded yet.
    pub fn new() -> Self {
        LocalHost::default()
    }

    /// Runs `f` on the recorded effects.
    pub fn with_effects<R>(&self, f: impl FnOnce(&mut Effects) -> R) -> R {
        let mut guard = self.effects.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Takes and clears the recorded effects.
    pub fn take(&self) -> Effects {
        self.with_effects(std::mem::take)
    }
}

impl HookHost for LocalHost {
    fn background_tasks(&self, _session_id: &str) -> BoxFuture<Vec<Value>> {
        let tasks = self.with_effects(|e| e.background_tasks.clone());
        Box::pin(async move { tasks })
    }

    fn run(&self, request: RunRequest) -> BoxFuture<RunAnswer> {
        self.with_effects(|e| e.requests.push(request.clone()));
        Box::pin(dsh_bash_local::run(request))
    }

    fn inject_context(&self, session_id: &str, text: &str) -> Result<(), String> {
        self.with_effects(|e| e.contexts.push((session_id.into(), text.into())));
        Ok(())
    }

    fn inject_system_context(&self, session_id: &str, text: &str) -> Result<(), String> {
        self.with_effects(|e| e.system_contexts.push((session_id.into(), text.into())));
        Ok(())
    }

    fn append_record(&self, session_id: &str, record: &Value) -> Result<(), String> {
        self.with_effects(|e| e.records.push((session_id.into(), record.clone())));
        Ok(())
    }

    fn halt_turn(&self, session_id: &str, reason: &str) -> Result<(), String> {
        self.with_effects(|e| e.halts.push((session_id.into(), reason.into())));
        Ok(())
    }

    fn warn(&self, message: &str) {
        self.with_effects(|e| e.warnings.push(message.into()));
    }

    fn report_problem(&self, problem: dsh_plugin_api::ConfigProblem) {
        self.with_effects(|e| e.problems.push(problem));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::point::{Invocation, run_all};
    use crate::runner::hook_request;

    fn sh(cmd: &str, cwd: &str, stdin: &str, timeout_s: u64) -> RunRequest {
        hook_request(
            vec!["/bin/sh".into(), "-c".into(), cmd.into()],
            cwd,
            stdin.into(),
            timeout_s,
        )
    }

    /// What the service answers for `request`, sent as the bridges send it
    /// (serialized, through `process-runner`'s own argument parsing).
    async fn through_the_service(request: &RunRequest) -> RunAnswer {
        let args = serde_json::to_value(request).unwrap();
        let answer = dsh_bash_local::service::handle("run", &args, &[])
            .await
            .unwrap();
        serde_json::from_value(answer).unwrap()
    }

    #[tokio::test]
    async fn a_hook_request_runs_unchanged_in_the_process_runner_service() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_str().unwrap();
        let req = sh(
            "cat; printf 'E' >&2; pwd >&2; printf \"$HOOK_X\"; exit 3",
            cwd,
            "{\"a\":1}\n",
            5,
        )
        .with_env("HOOK_X", "x!");
        let parsed =
            dsh_bash_local::service::parse_run_args(&serde_json::to_value(&req).unwrap(), &[])
                .unwrap();
        assert_eq!(
            parsed, req,
            "the service reads the bridge's request as sent"
        );
        let a = through_the_service(&req).await;
        assert_eq!(a.exit_code, Some(3));
        assert_eq!(a.stdout, "{\"a\":1}\nx!");
        assert_eq!(
            a.stderr,
            format!("E{}\n", dir.path().canonicalize().unwrap().display())
        );
        assert!(!a.timed_out && a.spawn_error.is_none());
    }

    #[tokio::test]
    async fn output_past_the_limit_kills_the_hook() {
        let mut req = sh("sleep 30 & yes a", "/", "", 60);
        req.max_output_bytes = 100;
        let a = through_the_service(&req).await;
        assert_eq!(a.stdout.len(), 100);
        assert!(a.stdout_truncated && a.output_limit_exceeded && !a.timed_out);
    }

    #[tokio::test]
    async fn hooks_of_one_point_run_concurrently() {
        // `a` waits for a file only `b` creates; run one after the other,
        // `a` would time out instead of exiting 0.
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_str().unwrap();
        let inv = |index, cmd: &str| Invocation {
            index,
            command: cmd.into(),
            matcher: None,
            source: "t".into(),
            request: Ok(sh(cmd, cwd, "", 10)),
            transport: None,
        };
        let host = LocalHost::new();
        let runs = run_all(
            &host,
            vec![
                inv(0, "i=0; while [ ! -e flag ]; do sleep 0.05; i=$((i+1)); [ $i -gt 100 ] && exit 9; done; exit 0"),
                inv(1, "touch flag"),
            ],
        )
        .await;
        assert_eq!(runs[0].answer.exit_code, Some(0));
        assert_eq!(runs[1].answer.exit_code, Some(0));
        assert_eq!(host.take().requests.len(), 2);
    }
}
