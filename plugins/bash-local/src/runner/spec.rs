//! The runner's data: [`RunSpec`] (what to run) and [`RunOutcome`] (how
//! it ended). Both are serde types whose JSON is the `process-runner`
//! service contract, so other crates can build and read them directly.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// Default per-stream cap on kept output: 1 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Default time between SIGTERM and SIGKILL on timeout.
pub const DEFAULT_KILL_GRACE_MS: u64 = 1500;

/// What to run. Mirrors the `process-runner` `run` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// argv: the program, then its arguments. Must not be empty.
    pub program: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Written fully to the child's stdin, which is then closed.
    #[serde(default)]
    pub stdin: String,
    /// Variables added to (or overriding) the environment; always kept.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Inherit the host environment, minus credentials.
    #[serde(default = "default_true")]
    pub inherit_env: bool,
    /// Credential-like inherited variables to keep anyway.
    #[serde(default)]
    pub allow_env: Vec<String>,
    /// Inherited variables whose name starts with one of these are dropped
    /// (hook bridges: Claude Code removes `OTEL_*`); `env` is still added.
    /// Same field as `dsh-hook-protocol`'s `RunRequest`.
    #[serde(default)]
    pub env_remove_prefixes: Vec<String>,
    /// Kill the run after this long; `None` waits forever.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Time between SIGTERM and SIGKILL on timeout.
    #[serde(default = "default_kill_grace_ms")]
    pub kill_grace_ms: u64,
    /// Per-stream cap; past it the tail is kept (or, with
    /// [`Overflow::Kill`], the run is killed).
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: usize,
    /// What happens when a stream passes `max_output_bytes`.
    #[serde(default)]
    pub on_overflow: Overflow,
}

/// What the runner does when a stream passes `max_output_bytes`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// Keep reading and keep the last `max_output_bytes` (a build log's end
    /// is where the error is). The `Bash` tool's choice.
    #[default]
    KeepTail,
    /// The cap is a hard limit: SIGKILL the process group at once, keep
    /// what fit, and report [`RunOutcome::output_limit_exceeded`]. For
    /// callers that must read an output whole or not at all (hook
    /// decisions).
    Kill,
}

fn default_true() -> bool {
    true
}
fn default_kill_grace_ms() -> u64 {
    DEFAULT_KILL_GRACE_MS
}
fn default_max_output_bytes() -> usize {
    DEFAULT_MAX_OUTPUT_BYTES
}

impl RunSpec {
    /// A spec with every optional field at its default.
    pub fn new(program: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        RunSpec {
            program,
            cwd: cwd.into(),
            stdin: String::new(),
            env: BTreeMap::new(),
            inherit_env: true,
            allow_env: Vec::new(),
            env_remove_prefixes: Vec::new(),
            timeout_ms: None,
            kill_grace_ms: DEFAULT_KILL_GRACE_MS,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            on_overflow: Overflow::KeepTail,
        }
    }
}

/// How a run ended. Serializes to the `process-runner` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// The exit code; `None` when killed by a signal or never started.
    pub exit_code: Option<i32>,
    /// The signal number that killed the program, if one did.
    pub signal: Option<i32>,
    /// Standard output, lossily decoded, tail-kept past the cap.
    pub stdout: String,
    /// Standard error, lossily decoded, tail-kept past the cap.
    pub stderr: String,
    /// Whether stdout is not whole: it lost its beginning to the cap, or
    /// (with [`Overflow::Kill`]) its end.
    pub stdout_truncated: bool,
    /// Whether stderr is not whole (as for stdout).
    pub stderr_truncated: bool,
    /// Whether the timeout fired.
    pub timed_out: bool,
    /// Why the program could not be started.
    pub spawn_error: Option<String>,
    /// Wall time from spawn to the end of the run.
    pub duration_ms: u64,
    /// Whether [`run_cancellable`]'s cancel future fired. Never set by the
    /// service (its cancellation is a drop), so it is left out of the JSON
    /// answer unless true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Whether the run was killed because a stream passed
    /// `max_output_bytes` under [`Overflow::Kill`]. Left out of the JSON
    /// answer unless true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output_limit_exceeded: bool,
}

impl RunOutcome {
    pub(crate) fn spawn_failure(message: String, started: Instant) -> Self {
        tracing::debug!(error = %message, "process-runner: spawn failed");
        RunOutcome {
            exit_code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            timed_out: false,
            spawn_error: Some(message),
            duration_ms: elapsed_ms(started),
            interrupted: false,
            output_limit_exceeded: false,
        }
    }
}

pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_appears_in_json_only_when_true() {
        let mut outcome = RunOutcome::spawn_failure("nope".into(), Instant::now());
        let json = serde_json::to_value(&outcome).expect("json");
        assert!(json.get("interrupted").is_none());
        assert_eq!(json["spawn_error"], "nope");
        outcome.interrupted = true;
        let json = serde_json::to_value(&outcome).expect("json");
        assert_eq!(json["interrupted"], true);
        let back: RunOutcome = serde_json::from_value(json).expect("round trip");
        assert_eq!(back, outcome);
    }

    #[test]
    fn spec_deserializes_with_contract_defaults() {
        let spec: RunSpec =
            serde_json::from_str(r#"{"program":["true"],"cwd":"/"}"#).expect("spec");
        assert_eq!(spec, RunSpec::new(vec!["true".into()], "/"));
        assert!(spec.inherit_env && spec.timeout_ms.is_none());
    }
}
