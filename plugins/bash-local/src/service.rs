//! The `process-runner` service: a thin JSON face on [`crate::runner`].
//!
//! Method `run` takes a [`RunRequest`] (the contract in
//! [`dsh_plugin_api::services::process_runner`], read with
//! [`RunRequest::from_json`]) and answers the [`crate::RunAnswer`] as JSON.
//! Process problems (missing program, bad cwd, timeout) are *answers*;
//! only malformed arguments are errors, and each error names the offending
//! key. Unknown keys are ignored so callers can be newer than this plugin.
//! `null` counts as absent for optional keys.

use dsh_plugin_api::services::process_runner::{self as contract, RunRequestError};
use serde_json::Value;

use crate::runner::{self, RunRequest};

/// The service name other plugins look up.
pub const SERVICE_NAME: &str = contract::SERVICE;
/// The one method.
pub const METHOD_RUN: &str = contract::METHOD_RUN;

/// Why a `process-runner` call was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RunArgsError {
    /// The method is not `run`.
    #[error("process-runner: unknown method `{0}` (the only method is `run`)")]
    UnknownMethod(String),
    /// The arguments do not follow the contract.
    #[error(transparent)]
    Request(#[from] RunRequestError),
}

/// Parses `run` arguments. `env_allow` (the plugin config's allow-list) is
/// merged into the call's `allow_env`.
pub fn parse_run_args(args: &Value, env_allow: &[String]) -> Result<RunRequest, RunArgsError> {
    let mut request = RunRequest::from_json(args)?;
    request.allow_env.extend(env_allow.iter().cloned());
    Ok(request)
}

/// Handles one service call.
pub async fn handle(
    method: &str,
    args: &Value,
    env_allow: &[String],
) -> Result<Value, RunArgsError> {
    if method == contract::METHOD_SPAWN {
        let request = parse_run_args(args, env_allow)?;
        // Started before the call returns (what the caller does next comes
        // after it); the host's runtime drives it to its end and nobody
        // reads its answer.
        tokio::spawn(runner::run_started(request));
        return Ok(serde_json::json!({"started": true}));
    }
    if method != METHOD_RUN {
        return Err(RunArgsError::UnknownMethod(method.to_string()));
    }
    let request = parse_run_args(args, env_allow)?;
    let answer = runner::run(request).await;
    Ok(serde_json::to_value(&answer).unwrap_or_else(|e| {
        // A struct of strings, numbers and booleans always serializes;
        // answer a spawn_error rather than panic if that ever changes.
        serde_json::json!({"spawn_error": format!("cannot encode the answer: {e}"),
            "duration_ms": answer.duration_ms})
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_config_allow_list_joins_the_calls() {
        let args = json!({"program": ["/bin/sh", "-c", "true"], "cwd": "/tmp",
            "allow_env": ["X_TOKEN"], "env_remove_prefixes": ["OTEL_"]});
        let spec = parse_run_args(&args, &["CFG_KEY".to_string()]).expect("valid");
        assert_eq!(spec.allow_env, ["X_TOKEN", "CFG_KEY"]);
        assert_eq!(spec.env_remove_prefixes, ["OTEL_"]);
        assert!(spec.scrub_credentials);
    }

    #[test]
    fn malformed_arguments_name_the_key() {
        let err = parse_run_args(
            &json!({"program": ["x"], "cwd": "/", "timeout_ms": "soon"}),
            &[],
        )
        .expect_err("malformed")
        .to_string();
        assert!(err.contains("key `timeout_ms` is invalid"), "{err}");
    }

    #[tokio::test]
    async fn unknown_method_is_an_error() {
        let err = handle("exec", &json!({}), &[]).await.expect_err("unknown");
        assert_eq!(err, RunArgsError::UnknownMethod("exec".into()));
    }
}
