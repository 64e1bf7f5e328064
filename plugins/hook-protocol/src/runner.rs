//! Running one hook: the request a bridge builds, the answer it gets back,
//! and [`HookHost`], the only door a bridge has to the outside world.
//!
//! A plugin does no I/O of its own (it has no reactor): processes run in the
//! host's `process-runner` service, context and records go through
//! [`dsh_plugin_api::Host`]. Putting those four calls behind one small trait
//! lets the bridges' tests drive real shells through an in-crate runner
//! ([`crate::local`]) while the host is still being built.
//!
//! The runner never throws: a missing service, an unparseable answer, a
//! missing shell or a bad cwd all come back as a [`RunAnswer`] with
//! `spawn_error` set, which the codec turns into a non-blocking error.

use std::future::Future;
use std::pin::Pin;

use dsh_plugin_api::{ConfigProblem, Host};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A boxed, sendable future (what [`HookHost::run`] returns).
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Name of the host service that runs processes.
pub const PROCESS_RUNNER: &str = "process-runner";

/// One process to run, exactly as the `process-runner` service takes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRequest {
    /// argv: the shell, its flag (`-c` or `-lc`) and the hook command.
    pub program: Vec<String>,
    /// Working directory: the session's cwd.
    pub cwd: String,
    /// Exact bytes written to stdin, then EOF.
    pub stdin: String,
    /// Variables added to (or replacing) the inherited environment.
    pub env: Map<String, Value>,
    /// Whether the hook inherits the host's environment.
    pub inherit_env: bool,
    /// Credential-like names the runner must not scrub.
    pub allow_env: Vec<String>,
    /// Inherited variables whose name starts with one of these are removed
    /// (Claude Code drops every `OTEL_*` from its hooks' environment).
    /// Variables in `env` are always kept. Same field in bash-local's
    /// `RunSpec`.
    pub env_remove_prefixes: Vec<String>,
    /// Timeout before SIGTERM to the process group.
    pub timeout_ms: u64,
    /// Delay between SIGTERM and SIGKILL.
    pub kill_grace_ms: u64,
    /// Hard limit on each output stream.
    pub max_output_bytes: u64,
    /// `kill`: past `max_output_bytes` the runner kills the process group
    /// and reports `output_limit_exceeded`, so a decision is read whole or
    /// not at all (never cut, then parsed).
    pub on_overflow: String,
}

impl RunRequest {
    /// A request with the protocol defaults for everything but argv, cwd,
    /// stdin and timeout.
    pub fn new(program: Vec<String>, cwd: &str, stdin: String, timeout_s: u64) -> Self {
        RunRequest {
            program,
            cwd: cwd.to_string(),
            stdin,
            env: Map::new(),
            inherit_env: true,
            allow_env: credential_like_env_names(),
            env_remove_prefixes: Vec::new(),
            timeout_ms: timeout_s.saturating_mul(1000),
            kill_grace_ms: crate::KILL_GRACE_MS,
            max_output_bytes: crate::MAX_OUTPUT_BYTES,
            on_overflow: "kill".to_string(),
        }
    }

    /// Adds one environment variable.
    pub fn with_env(mut self, key: &str, value: &str) -> Self {
        self.env
            .insert(key.to_string(), Value::String(value.to_string()));
        self
    }

    /// Removes inherited variables whose name starts with `prefix`.
    pub fn without_env_prefix(mut self, prefix: &str) -> Self {
        self.env_remove_prefixes.push(prefix.to_string());
        self
    }
}

/// Names in this process's environment that the process runner would scrub
/// ([`dsh_plugin_api::credentials`]: names with KEY, SECRET, TOKEN,
/// PASSWORD, PASSWD or WEBHOOK, `*_PAT`, `*_DSN`, URLs with userinfo).
///
/// Both real CLIs hand hooks their whole environment, credentials included,
/// and a user's unmodified hook may rely on one (`gh` with `GH_TOKEN`, say).
/// Fidelity wins here: the bridges list every such name in `allow_env`, so a
/// hook sees exactly the environment the daemon was started with, as it
/// would under the real CLI.
pub fn credential_like_env_names() -> Vec<String> {
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.into_string().ok()?;
            dsh_plugin_api::credentials::is_credential(&k, &v.to_string_lossy()).then_some(k)
        })
        .collect();
    names.sort();
    names
}

/// What the process runner reports about one finished (or failed) run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunAnswer {
    /// Exit status, `None` when killed by a signal or never started.
    pub exit_code: Option<i32>,
    /// The signal that ended the process, if any.
    pub signal: Option<i32>,
    /// Captured stdout (lossy UTF-8, at most the limit).
    pub stdout: String,
    /// Captured stderr (lossy UTF-8, at most the limit).
    pub stderr: String,
    /// Whether stdout is not whole (it passed the limit).
    pub stdout_truncated: bool,
    /// Whether stderr is not whole.
    pub stderr_truncated: bool,
    /// Whether the runner killed the hook because a stream passed
    /// `max_output_bytes`.
    pub output_limit_exceeded: bool,
    /// Whether the timeout fired.
    pub timed_out: bool,
    /// Why the process could not be started (or the runner could not be
    /// reached); the hook then fails open.
    pub spawn_error: Option<String>,
    /// Wall time.
    pub duration_ms: u64,
}

impl RunAnswer {
    /// An answer for a hook that never started.
    pub fn spawn_failure(message: impl Into<String>) -> Self {
        RunAnswer {
            spawn_error: Some(message.into()),
            ..RunAnswer::default()
        }
    }
}

/// Everything a bridge needs from the host.
pub trait HookHost: Send + Sync + 'static {
    /// Runs one hook process. Never fails: problems are in the answer.
    fn run(&self, request: RunRequest) -> BoxFuture<RunAnswer>;
    /// Adds model-facing context to a session, attributed to the bridge.
    fn inject_context(&self, session_id: &str, text: &str) -> Result<(), String>;
    /// Appends a `hook/*` record to the session log of an open turn.
    fn append_record(&self, session_id: &str, record: &Value) -> Result<(), String>;
    /// Ends the session's open turn after the current step.
    fn halt_turn(&self, session_id: &str, reason: &str) -> Result<(), String>;
    /// Reports a degraded condition at run time to the operator.
    fn warn(&self, message: &str);
    /// Reports a problem with a hooks file (at load: `dsh check` lists it).
    fn report_problem(&self, problem: ConfigProblem);
}

/// The production [`HookHost`]: the plugin SDK's [`Host`].
#[derive(Clone)]
pub struct PluginHost {
    host: Host,
}

impl PluginHost {
    /// Wraps the host handle a plugin receives in `apply`.
    pub fn new(host: Host) -> Self {
        PluginHost { host }
    }
}

impl HookHost for PluginHost {
    fn run(&self, request: RunRequest) -> BoxFuture<RunAnswer> {
        let host = self.host.clone();
        Box::pin(async move {
            let args = match serde_json::to_value(&request) {
                Ok(args) => args,
                Err(e) => return RunAnswer::spawn_failure(format!("cannot encode request: {e}")),
            };
            match host.call_service(PROCESS_RUNNER, "run", &args).await {
                Ok(answer) => serde_json::from_value(answer).unwrap_or_else(|e| {
                    RunAnswer::spawn_failure(format!("{PROCESS_RUNNER} answered badly: {e}"))
                }),
                Err(e) => RunAnswer::spawn_failure(e),
            }
        })
    }

    fn inject_context(&self, session_id: &str, text: &str) -> Result<(), String> {
        self.host.inject_context(session_id, text)
    }

    fn append_record(&self, session_id: &str, record: &Value) -> Result<(), String> {
        self.host.append_record(session_id, record)
    }

    fn halt_turn(&self, session_id: &str, reason: &str) -> Result<(), String> {
        self.host.halt_turn(session_id, reason)
    }

    fn warn(&self, message: &str) {
        self.host.warn(message);
    }

    fn report_problem(&self, problem: ConfigProblem) {
        self.host.report_problem(problem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_serializes_as_the_service_contract() {
        let req = RunRequest::new(
            vec!["/bin/sh".into(), "-c".into(), "true".into()],
            "/tmp",
            "{}\n".into(),
            600,
        )
        .with_env("CLAUDECODE", "1");
        let v = serde_json::to_value(&req).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "program",
                "cwd",
                "stdin",
                "env",
                "inherit_env",
                "allow_env",
                "env_remove_prefixes",
                "timeout_ms",
                "kill_grace_ms",
                "max_output_bytes",
                "on_overflow"
            ]
        );
        assert_eq!(v["on_overflow"], "kill");
        assert_eq!(v["max_output_bytes"], 16 * 1024 * 1024);
        assert_eq!(v["timeout_ms"], 600_000);
        assert_eq!(v["kill_grace_ms"], 1500);
        assert_eq!(v["env"]["CLAUDECODE"], "1");
    }

    #[test]
    fn hooks_keep_every_credential_the_runner_would_scrub() {
        // SAFETY: set_var is unsound only with concurrent readers of the
        // environment in other threads; these names are unique to this
        // test and only read by the call below.
        unsafe {
            std::env::set_var("DSH_RUNNER_TEST_DB_URL", "postgres://u:pw@db/x");
            std::env::set_var("DSH_RUNNER_TEST_SITE_URL", "https://example.com/x");
            std::env::set_var("DSH_RUNNER_TEST_PAT", "ghp_x");
        }
        let names = credential_like_env_names();
        assert!(
            names.iter().any(|n| n == "DSH_RUNNER_TEST_DB_URL"),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n == "DSH_RUNNER_TEST_PAT"),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|n| n == "DSH_RUNNER_TEST_SITE_URL"),
            "{names:?}"
        );
    }

    #[test]
    fn answer_tolerates_missing_fields() {
        let a: RunAnswer = serde_json::from_str(r#"{"exit_code":2,"stderr":"no"}"#).unwrap();
        assert_eq!(a.exit_code, Some(2));
        assert_eq!(a.stderr, "no");
        assert!(!a.timed_out);
    }
}
