//! The `process-runner` service: run one program to completion.
//!
//! Method [`METHOD_RUN`] takes a [`RunRequest`] and answers a
//! [`RunAnswer`]. Process problems (a missing program, a bad cwd, a
//! timeout) are answers; only malformed arguments are errors
//! ([`RunRequestError`], each naming the key). `null` counts as absent for
//! every optional key, and unknown keys are ignored (see the
//! [evolution rule](super#evolution-rule)).
//!
//! # The environment
//!
//! With `inherit_env` the child gets the host's environment, then:
//! - with `scrub_credentials` (the default), inherited variables that hold
//!   a credential ([`crate::credentials`]) are dropped, except the names in
//!   `allow_env` (and the provider's own allow-list, e.g. `bash-local`'s
//!   `env_allow`); a model-driven tool gets this;
//! - without it, credentials are inherited like everything else: the hook
//!   bridges ask for this, because both real CLIs hand hooks their whole
//!   environment and a user's hook may rely on a token in it;
//! - names starting with one of `env_remove_prefixes` are dropped either
//!   way (Claude Code drops `OTEL_*` from its hooks' environment);
//! - `env` is added last and always wins: asking for a variable is the
//!   allow-listing.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The service's name.
pub const SERVICE: &str = "process-runner";
/// Its one method.
pub const METHOD_RUN: &str = "run";
/// Method that starts a [`RunRequest`] in the background and answers at
/// once (`{"started": true}`), since plugin API 1.4: the run goes on under
/// the same rules (timeout, process group, caps); its answer is dropped.
/// Claude Code's `async` hooks run this way.
pub const METHOD_SPAWN: &str = "spawn";
/// The contract's version (see the [evolution rule](super#evolution-rule)).
pub const VERSION: u32 = 1;
/// Default per-stream cap on kept output: 1 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1024 * 1024;
/// Default time between SIGTERM and SIGKILL on timeout.
pub const DEFAULT_KILL_GRACE_MS: u64 = 1500;

/// One program to run: the `run` method's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRequest {
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
    /// Inherit the host environment (see the module docs for what is
    /// dropped from it).
    #[serde(default = "default_true")]
    pub inherit_env: bool,
    /// Drop inherited credentials unless allow-listed. Default `true`.
    #[serde(default = "default_true")]
    pub scrub_credentials: bool,
    /// Credential-like inherited variables to keep anyway (exact names),
    /// when `scrub_credentials` is on.
    #[serde(default)]
    pub allow_env: Vec<String>,
    /// Inherited variables whose name starts with one of these are dropped,
    /// credential or not; `env` is still added.
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
    pub max_output_bytes: u64,
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
    /// what fit, and report [`RunAnswer::output_limit_exceeded`]. For
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
fn default_max_output_bytes() -> u64 {
    DEFAULT_MAX_OUTPUT_BYTES
}

impl RunRequest {
    /// A request with every optional field at its default.
    pub fn new(program: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        RunRequest {
            program,
            cwd: cwd.into(),
            stdin: String::new(),
            env: BTreeMap::new(),
            inherit_env: true,
            scrub_credentials: true,
            allow_env: Vec::new(),
            env_remove_prefixes: Vec::new(),
            timeout_ms: None,
            kill_grace_ms: DEFAULT_KILL_GRACE_MS,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            on_overflow: Overflow::KeepTail,
        }
    }

    /// Adds one environment variable.
    pub fn with_env(mut self, key: &str, value: &str) -> Self {
        self.env.insert(key.to_string(), value.to_string());
        self
    }

    /// Drops inherited variables whose name starts with `prefix`.
    pub fn without_env_prefix(mut self, prefix: &str) -> Self {
        self.env_remove_prefixes.push(prefix.to_string());
        self
    }

    /// Reads the `run` arguments, naming the offending key on failure.
    pub fn from_json(args: &Value) -> Result<Self, RunRequestError> {
        let obj = args
            .as_object()
            .ok_or(RunRequestError::NotObject(json_kind(args)))?;
        // `null` means absent: drop it so each key's serde default applies.
        let present: Map<String, Value> = obj
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for key in ["program", "cwd"] {
            if !present.contains_key(key) {
                return Err(RunRequestError::Missing(key.to_string()));
            }
        }
        let request: RunRequest =
            serde_json::from_value(Value::Object(present.clone())).map_err(|e| {
                // serde names no key for a type error: find the key that
                // fails on its own, beside placeholder required keys.
                let failing = present.iter().find(|(key, value)| {
                    let mut probe = Map::new();
                    probe.insert("program".into(), Value::from(vec!["x"]));
                    probe.insert("cwd".into(), Value::from("/"));
                    probe.insert((*key).clone(), (*value).clone());
                    serde_json::from_value::<RunRequest>(Value::Object(probe)).is_err()
                });
                RunRequestError::Invalid {
                    key: failing.map_or_else(|| "?".to_string(), |(k, _)| k.clone()),
                    reason: e.to_string(),
                }
            })?;
        if request.program.is_empty() {
            return Err(RunRequestError::Invalid {
                key: "program".into(),
                reason: "must be a non-empty array of strings".into(),
            });
        }
        Ok(request)
    }
}

/// Why `run` arguments were refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RunRequestError {
    /// The arguments are not a JSON object.
    #[error("process-runner.run: arguments must be a JSON object, got {0}")]
    NotObject(&'static str),
    /// A required key is absent (or null).
    #[error("process-runner.run: missing required key `{0}`")]
    Missing(String),
    /// A key has the wrong type or value.
    #[error("process-runner.run: key `{key}` is invalid: {reason}")]
    Invalid {
        /// The key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How a run ended: the `run` method's answer. Every field defaults, so an
/// answer from an older provider reads with "not said" for what it lacks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunAnswer {
    /// The exit code; `None` when killed by a signal or never started.
    pub exit_code: Option<i32>,
    /// The signal number that ended the program, if one did.
    pub signal: Option<i32>,
    /// Standard output, lossily decoded, at most the cap.
    pub stdout: String,
    /// Standard error, lossily decoded, at most the cap.
    pub stderr: String,
    /// Whether stdout is not whole: it lost its beginning to the cap, or
    /// (with [`Overflow::Kill`]) its end.
    pub stdout_truncated: bool,
    /// Whether stderr is not whole (as for stdout).
    pub stderr_truncated: bool,
    /// Whether the timeout fired.
    pub timed_out: bool,
    /// Why the program could not be started (or, on the caller's side, why
    /// the runner could not be reached).
    pub spawn_error: Option<String>,
    /// Wall time from spawn to the end of the run.
    pub duration_ms: u64,
    /// Whether an in-process caller's cancel fired. The service never sets
    /// it (its cancellation is a drop), so it is left out unless true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Whether the run was killed because a stream passed
    /// `max_output_bytes` under [`Overflow::Kill`]. Left out unless true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub output_limit_exceeded: bool,
}

impl RunAnswer {
    /// An answer for a program that never started.
    pub fn spawn_failure(message: impl Into<String>) -> Self {
        RunAnswer {
            spawn_error: Some(message.into()),
            ..RunAnswer::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_round_trips_with_every_field_set() {
        let mut req = RunRequest::new(vec!["/bin/sh".into(), "-c".into(), "true".into()], "/tmp")
            .with_env("A", "1")
            .without_env_prefix("OTEL_");
        req.stdin = "in".into();
        req.inherit_env = false;
        req.scrub_credentials = false;
        req.allow_env = vec!["X_TOKEN".into()];
        req.timeout_ms = Some(5);
        req.kill_grace_ms = 7;
        req.max_output_bytes = 9;
        req.on_overflow = Overflow::Kill;
        let json = serde_json::to_value(&req).unwrap();
        assert_eq!(
            json,
            json!({"program": ["/bin/sh", "-c", "true"], "cwd": "/tmp", "stdin": "in",
                "env": {"A": "1"}, "inherit_env": false, "scrub_credentials": false,
                "allow_env": ["X_TOKEN"], "env_remove_prefixes": ["OTEL_"], "timeout_ms": 5,
                "kill_grace_ms": 7, "max_output_bytes": 9, "on_overflow": "kill"})
        );
        assert_eq!(RunRequest::from_json(&json), Ok(req));
    }

    #[test]
    fn absent_and_null_keys_take_the_contract_defaults() {
        let req = RunRequest::from_json(
            &json!({"program": ["x"], "cwd": "/", "timeout_ms": null, "scrub_credentials": null,
                "a_future_key": true}),
        )
        .unwrap();
        assert_eq!(req, RunRequest::new(vec!["x".into()], "/"));
        assert!(req.inherit_env && req.scrub_credentials && req.timeout_ms.is_none());
    }

    #[test]
    fn malformed_arguments_name_the_key() {
        let cases = [
            (json!([1]), "must be a JSON object, got an array"),
            (json!({"cwd": "/"}), "missing required key `program`"),
            (json!({"program": ["x"]}), "missing required key `cwd`"),
            (
                json!({"program": [], "cwd": "/"}),
                "key `program` is invalid",
            ),
            (
                json!({"program": "ls", "cwd": "/"}),
                "key `program` is invalid",
            ),
            (
                json!({"program": ["x"], "cwd": "/", "timeout_ms": "soon"}),
                "key `timeout_ms` is invalid",
            ),
            (
                json!({"program": ["x"], "cwd": "/", "env": {"A": 1}}),
                "key `env` is invalid",
            ),
            (
                json!({"program": ["x"], "cwd": "/", "on_overflow": "truncate"}),
                "key `on_overflow` is invalid",
            ),
            (
                json!({"program": ["x"], "cwd": "/", "scrub_credentials": "no"}),
                "key `scrub_credentials` is invalid",
            ),
        ];
        for (args, expected) in cases {
            let err = RunRequest::from_json(&args).unwrap_err().to_string();
            assert!(err.contains(expected), "{args}: {err}");
        }
    }

    #[test]
    fn an_answer_round_trips_and_tolerates_missing_fields() {
        let answer = RunAnswer {
            exit_code: Some(2),
            signal: None,
            stdout: "out".into(),
            stderr: "err".into(),
            stdout_truncated: true,
            stderr_truncated: false,
            timed_out: true,
            spawn_error: None,
            duration_ms: 12,
            interrupted: false,
            output_limit_exceeded: true,
        };
        let json = serde_json::to_value(&answer).unwrap();
        assert!(json.get("interrupted").is_none(), "{json}");
        assert_eq!(json["output_limit_exceeded"], true);
        assert_eq!(serde_json::from_value::<RunAnswer>(json).unwrap(), answer);
        let old: RunAnswer = serde_json::from_str(r#"{"exit_code":2,"stderr":"no"}"#).unwrap();
        assert_eq!((old.exit_code, old.stderr.as_str()), (Some(2), "no"));
        assert!(!old.timed_out && !old.output_limit_exceeded);
    }
}
