//! The `process-runner` service, read and answered as text.
//!
//! A service made with the SDK (`Host::provide_service`) gets its arguments
//! as a `serde_json::Value` parsed from the caller's text, which
//! [`RunRequest::from_json`] then copies twice more before typing it, and
//! its answer is built as a `Value` before it is written out: for every
//! hook a bridge runs, its whole request (the payload on stdin, the
//! environment it sets) parsed, copied and freed several times (issue 15:
//! a hook costs its spawn). Here a `run` or `spawn` request is read straight
//! from the text into a [`RunRequest`] and the answer written straight to
//! text. Anything the direct read refuses (text that is not JSON, a request
//! of the wrong shape, a `null` where the type has no room for one, an
//! empty `program`, an unknown method) takes the SDK's path unchanged
//! ([`service::handle`]), so every answer and error is the same as before.

use std::future::Future;
use std::sync::Arc;

use dsh_plugin_api::Host;
use dsh_plugin_api::abi_stable::sabi_trait::TD_Opaque;
use dsh_plugin_api::abi_stable::std_types::{RArc, RResult, RString};
use dsh_plugin_api::async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::process_runner as contract;
use futures::FutureExt as _;
use serde_json::Value;

use crate::runner::{self, RunAnswer, RunRequest};
use crate::service;

/// Mounts the `process-runner` service, with `env_allow` (the plugin's
/// config) joining every request's `allow_env`.
pub fn provide(host: &Host, env_allow: Vec<String>) -> Result<(), String> {
    let service: ServiceBox =
        Service_TO::from_ptr(RArc::new(TextService(Arc::new(env_allow))), TD_Opaque);
    host.raw()
        .provide_service(service::SERVICE_NAME.into(), service)
        .into_result()
        .map_err(RString::into_string)
}

#[derive(Clone)]
struct TextService(Arc<Vec<String>>);

/// `args` read straight into a request, when `method` takes one and the
/// text is one as [`RunRequest::from_json`] would read it; `None` sends the
/// call down the SDK's path.
fn direct_request(method: &str, args: &str, env_allow: &[String]) -> Option<RunRequest> {
    if method != contract::METHOD_RUN && method != contract::METHOD_SPAWN {
        return None;
    }
    // A `null` key reads as its default here exactly as in `from_json`
    // wherever this read accepts one (the only `Option` field's default is
    // `None`); a `null` anywhere else fails this read and takes that path.
    let mut request: RunRequest = serde_json::from_str(args).ok()?;
    if request.program.is_empty() {
        return None; // `from_json` names the key
    }
    request.allow_env.extend(env_allow.iter().cloned());
    Some(request)
}

/// The answer to `method` as text: `{"started":true}` for `spawn`, the run's
/// answer for `run`.
async fn answer(method: &str, request: RunRequest) -> Result<String, String> {
    if method == contract::METHOD_SPAWN {
        tokio::spawn(runner::run_started(request));
        return Ok(serde_json::json!({"started": true}).to_string());
    }
    let answer = runner::run(request).await;
    Ok(answer_text(&answer))
}

/// `answer` as JSON text, as the SDK's path writes it.
fn answer_text(answer: &RunAnswer) -> String {
    serde_json::to_string(answer).unwrap_or_else(|e| {
        serde_json::json!({"spawn_error": format!("cannot encode the answer: {e}"),
            "duration_ms": answer.duration_ms})
        .to_string()
    })
}

/// The SDK's path: the text as a `Value`, then [`service::handle`].
async fn through_value(method: &str, args: &str, env_allow: &[String]) -> Result<String, String> {
    let args: Value =
        serde_json::from_str(args).map_err(|e| format!("arguments are not JSON: {e}"))?;
    service::handle(method, &args, env_allow)
        .await
        .map(|v| v.to_string())
        .map_err(|e| e.to_string())
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Runs `call`, turning a panic into the SDK's error text.
async fn guarded(call: impl Future<Output = Result<String, String>>) -> RResult<RString, RString> {
    match std::panic::AssertUnwindSafe(call).catch_unwind().await {
        Ok(Ok(text)) => RResult::ROk(text.into()),
        Ok(Err(e)) => RResult::RErr(e.into()),
        Err(panic) => RResult::RErr(format!("service panicked: {}", panic_message(&panic)).into()),
    }
}

impl Service for TextService {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let env_allow = self.0.clone();
        async move {
            match direct_request(&method, &args, &env_allow) {
                Some(request) => {
                    drop(args);
                    guarded(answer(&method, request)).await
                }
                None => guarded(through_value(&method, &args, &env_allow)).await,
            }
        }
        .into_ffi()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the SDK's path reads from `args` (or its error).
    fn sdk_read(args: &str, env_allow: &[String]) -> Result<RunRequest, String> {
        let value: Value =
            serde_json::from_str(args).map_err(|e| format!("arguments are not JSON: {e}"))?;
        service::parse_run_args(&value, env_allow).map_err(|e| e.to_string())
    }

    #[test]
    fn a_direct_read_is_what_the_sdk_path_reads() {
        let allow = vec!["CFG_KEY".to_string()];
        let full = RunRequest::new(vec!["/bin/sh".into(), "-c".into(), "exit 0".into()], "/tmp")
            .with_env("CLAUDECODE", "1")
            .without_env_prefix("OTEL_");
        let cases = [
            serde_json::to_string(&full).unwrap(),
            json!({"program": ["x"], "cwd": "/", "timeout_ms": null}).to_string(),
            json!({"program": ["x"], "cwd": "/", "stdin": "é\n", "unknown": [1]}).to_string(),
            json!({"program": ["x"], "cwd": "/", "allow_env": ["A"], "inherit_env": false,
                "scrub_credentials": false, "kill_grace_ms": 5, "max_output_bytes": 9,
                "on_overflow": "kill", "timeout_ms": 7})
            .to_string(),
        ];
        for args in &cases {
            let direct = direct_request(contract::METHOD_RUN, args, &allow);
            assert_eq!(
                direct.as_ref().ok_or(()),
                sdk_read(args, &allow).as_ref().map_err(|_| ()),
                "{args}"
            );
        }
    }

    #[test]
    fn what_the_direct_read_refuses_takes_the_sdk_path() {
        // Each of these reads differently (or fails) without a `Value`
        // first: the direct read must leave them to the SDK's path.
        let refused = [
            json!({"program": ["x"], "cwd": "/", "stdin": null}).to_string(),
            json!({"program": [], "cwd": "/"}).to_string(),
            json!({"program": ["x"]}).to_string(),
            json!({"program": ["x"], "cwd": "/", "timeout_ms": "soon"}).to_string(),
            r#"{"program": ["x"], "cwd": "/a", "cwd": "/b"}"#.to_string(),
            "{not json".to_string(),
        ];
        for args in &refused {
            assert!(
                direct_request(contract::METHOD_RUN, args, &[]).is_none(),
                "{args}"
            );
        }
        let fine = json!({"program": ["x"], "cwd": "/"}).to_string();
        assert!(direct_request("exec", &fine, &[]).is_none());
        // The null `stdin` is still a request on the SDK's path.
        assert_eq!(sdk_read(&refused[0], &[]).unwrap().stdin, "");
    }

    #[test]
    fn an_answer_is_written_as_the_sdk_path_writes_it() {
        let answer = RunAnswer {
            exit_code: Some(2),
            stdout: "out \"q\"\n".into(),
            stderr: "é".into(),
            duration_ms: 12,
            interrupted: true,
            ..RunAnswer::default()
        };
        let sdk = serde_json::to_value(&answer).unwrap().to_string();
        assert_eq!(answer_text(&answer), sdk);
    }

    #[tokio::test]
    async fn the_service_runs_a_request_and_names_a_bad_key() {
        let service = TextService(Arc::new(Vec::new()));
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"program": ["/bin/sh", "-c", "cat; echo err >&2; exit 3"],
            "cwd": dir.path(), "stdin": "in\n"})
        .to_string();
        let answer = service
            .call("run".into(), args.into())
            .await
            .into_result()
            .unwrap();
        let answer: RunAnswer = serde_json::from_str(&answer).unwrap();
        assert_eq!(
            (
                answer.exit_code,
                answer.stdout.as_str(),
                answer.stderr.as_str()
            ),
            (Some(3), "in\n", "err\n")
        );
        let bad = json!({"program": ["x"], "cwd": "/", "timeout_ms": "soon"}).to_string();
        let err = service
            .call("run".into(), bad.into())
            .await
            .into_result()
            .unwrap_err();
        assert!(err.contains("key `timeout_ms` is invalid"), "{err}");
        let err = service
            .call("run".into(), "{not json".into())
            .await
            .into_result()
            .unwrap_err();
        assert!(err.starts_with("arguments are not JSON: "), "{err}");
        let err = service
            .call("exec".into(), "{}".into())
            .await
            .into_result()
            .unwrap_err();
        assert!(err.contains("unknown method `exec`"), "{err}");
    }
}
