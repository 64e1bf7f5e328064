//! The `process-runner` service: a thin JSON face on [`crate::runner`].
//!
//! Method `run` takes the [`RunSpec`] keys as a JSON object and answers the
//! [`RunOutcome`] as JSON. Process problems (missing program, bad cwd,
//! timeout) are *answers*; only malformed arguments are errors, and each
//! error names the offending key. Unknown keys are ignored so callers can
//! be newer than this plugin. `null` counts as absent for optional keys.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::runner::{self, RunSpec};

/// The service name other plugins look up.
pub const SERVICE_NAME: &str = "process-runner";
/// The one method.
pub const METHOD_RUN: &str = "run";

/// Why a `process-runner` call was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RunArgsError {
    /// The method is not `run`.
    #[error("process-runner: unknown method `{0}` (the only method is `run`)")]
    UnknownMethod(String),
    /// The arguments are not a JSON object.
    #[error("process-runner.run: arguments must be a JSON object, got {0}")]
    NotObject(&'static str),
    /// A required key is absent (or null).
    #[error("process-runner.run: missing required key `{0}`")]
    Missing(&'static str),
    /// A key has the wrong type or value.
    #[error("process-runner.run: key `{key}` is invalid: {reason}")]
    Invalid {
        /// The key.
        key: &'static str,
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

fn field<T: DeserializeOwned>(
    obj: &Map<String, Value>,
    key: &'static str,
) -> Result<Option<T>, RunArgsError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| RunArgsError::Invalid {
                key,
                reason: e.to_string(),
            }),
    }
}

/// Parses `run` arguments. `env_allow` (the plugin config's allow-list) is
/// merged into the call's `allow_env`.
pub fn parse_run_args(args: &Value, env_allow: &[String]) -> Result<RunSpec, RunArgsError> {
    let obj = args
        .as_object()
        .ok_or(RunArgsError::NotObject(json_kind(args)))?;
    let program: Vec<String> = field(obj, "program")?.ok_or(RunArgsError::Missing("program"))?;
    if program.is_empty() {
        return Err(RunArgsError::Invalid {
            key: "program",
            reason: "must be a non-empty array of strings".into(),
        });
    }
    let cwd: String = field(obj, "cwd")?.ok_or(RunArgsError::Missing("cwd"))?;
    let mut spec = RunSpec::new(program, cwd);
    if let Some(stdin) = field(obj, "stdin")? {
        spec.stdin = stdin;
    }
    if let Some(env) = field(obj, "env")? {
        spec.env = env;
    }
    if let Some(inherit) = field(obj, "inherit_env")? {
        spec.inherit_env = inherit;
    }
    if let Some(allow) = field(obj, "allow_env")? {
        spec.allow_env = allow;
    }
    spec.allow_env.extend(env_allow.iter().cloned());
    if let Some(prefixes) = field(obj, "env_remove_prefixes")? {
        spec.env_remove_prefixes = prefixes;
    }
    spec.timeout_ms = field(obj, "timeout_ms")?;
    if let Some(grace) = field(obj, "kill_grace_ms")? {
        spec.kill_grace_ms = grace;
    }
    if let Some(max) = field(obj, "max_output_bytes")? {
        spec.max_output_bytes = max;
    }
    if let Some(policy) = field(obj, "on_overflow")? {
        spec.on_overflow = policy;
    }
    Ok(spec)
}

/// Handles one service call.
pub async fn handle(
    method: &str,
    args: &Value,
    env_allow: &[String],
) -> Result<Value, RunArgsError> {
    if method != METHOD_RUN {
        return Err(RunArgsError::UnknownMethod(method.to_string()));
    }
    let spec = parse_run_args(args, env_allow)?;
    let outcome = runner::run(spec).await;
    Ok(serde_json::to_value(&outcome).unwrap_or_else(|e| {
        // A struct of strings, numbers and booleans always serializes;
        // answer a spawn_error rather than panic if that ever changes.
        serde_json::json!({"exit_code": null, "signal": null, "stdout": "", "stderr": "",
            "stdout_truncated": false, "stderr_truncated": false, "timed_out": false,
            "spawn_error": format!("cannot encode the outcome: {e}"), "duration_ms": outcome.duration_ms})
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_key() {
        let args = json!({"program": ["/bin/sh", "-c", "true"], "cwd": "/tmp", "stdin": "in",
            "env": {"A": "1"}, "inherit_env": false, "allow_env": ["X_TOKEN"], "timeout_ms": 5,
            "kill_grace_ms": 7, "max_output_bytes": 9, "on_overflow": "kill", "future_key": true,
            "env_remove_prefixes": ["OTEL_"]});
        let spec = parse_run_args(&args, &["CFG_KEY".to_string()]).expect("valid");
        assert_eq!(spec.program, ["/bin/sh", "-c", "true"]);
        assert_eq!(spec.cwd, std::path::PathBuf::from("/tmp"));
        assert_eq!(spec.stdin, "in");
        assert_eq!(spec.env.get("A").map(String::as_str), Some("1"));
        assert!(!spec.inherit_env);
        assert_eq!(spec.allow_env, ["X_TOKEN", "CFG_KEY"]);
        assert_eq!(spec.env_remove_prefixes, ["OTEL_"]);
        assert_eq!(
            (spec.timeout_ms, spec.kill_grace_ms, spec.max_output_bytes),
            (Some(5), 7, 9)
        );
        assert_eq!(spec.on_overflow, runner::Overflow::Kill);
    }

    #[test]
    fn defaults_apply_and_null_means_absent() {
        let spec = parse_run_args(
            &json!({"program": ["x"], "cwd": "/", "timeout_ms": null}),
            &[],
        )
        .expect("valid");
        assert_eq!(spec, RunSpec::new(vec!["x".into()], "/"));
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
        ];
        for (args, expected) in cases {
            let err = parse_run_args(&args, &[])
                .expect_err("malformed")
                .to_string();
            assert!(err.contains(expected), "{args}: {err}");
        }
    }

    #[tokio::test]
    async fn unknown_method_is_an_error() {
        let err = handle("exec", &json!({}), &[]).await.expect_err("unknown");
        assert_eq!(err, RunArgsError::UnknownMethod("exec".into()));
    }
}
