//! Running one hook: the request a bridge builds ([`hook_request`]), the
//! answer it gets back, and [`HookHost`], the only door a bridge has to the
//! outside world.
//!
//! The request and the answer are the `process-runner` contract itself
//! ([`dsh_plugin_api::services::process_runner`]): one type, shared with the
//! runner in `bash-local`. A plugin does no I/O of its own (it has no
//! reactor): processes run in the host's `process-runner` service, context
//! and records go through [`dsh_plugin_api::Host`]. Putting those calls
//! behind one small trait lets the bridges' tests record what a bridge did
//! while its hooks run in the real runner ([`crate::local`]).
//!
//! The runner never throws: a missing service, an unparseable answer, a
//! missing shell or a bad cwd all come back as a [`RunAnswer`] with
//! `spawn_error` set, which the codec turns into a non-blocking error.

use std::future::Future;
use std::pin::Pin;

use dsh_plugin_api::services::process_runner::{self, Overflow};
pub use dsh_plugin_api::services::process_runner::{RunAnswer, RunRequest};
use dsh_plugin_api::{ConfigProblem, Host};
use serde_json::Value;

use crate::transport::Handler;

/// A boxed, sendable future (what [`HookHost::run`] returns).
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Name of the host service that runs processes.
pub const PROCESS_RUNNER: &str = process_runner::SERVICE;

/// The request for one hook: the shell argv, the session's cwd, the exact
/// stdin and the hook's timeout, with the protocol's defaults for the rest.
///
/// Both real CLIs hand hooks their whole environment, credentials
/// included, and a user's unmodified hook may rely on one (`gh` with
/// `GH_TOKEN`, say): fidelity wins, so the request turns
/// `scrub_credentials` off (vectors S20/C20 record what each CLI passes).
/// Past [`crate::MAX_OUTPUT_BYTES`] the runner kills the hook and reports
/// `output_limit_exceeded`, so a decision is read whole or not at all
/// (never cut, then parsed).
pub fn hook_request(program: Vec<String>, cwd: &str, stdin: String, timeout_s: u64) -> RunRequest {
    RunRequest {
        stdin,
        scrub_credentials: false,
        timeout_ms: Some(timeout_s.saturating_mul(1000)),
        kill_grace_ms: crate::KILL_GRACE_MS,
        max_output_bytes: crate::MAX_OUTPUT_BYTES,
        on_overflow: Overflow::Kill,
        ..RunRequest::new(program, cwd)
    }
}

/// Everything a bridge needs from the host.
pub trait HookHost: Send + Sync + 'static {
    /// Runs one hook process. Never fails: problems are in the answer.
    fn run(&self, request: RunRequest) -> BoxFuture<RunAnswer>;
    /// Runs one `http` or `socket` hook with the request a command hook
    /// would have got ([`crate::transport`]). Never fails. A host without
    /// the `hook-transport` service answers that the hook cannot run.
    fn send(&self, handler: Handler, request: RunRequest) -> BoxFuture<RunAnswer> {
        let _ = request;
        let message = format!(
            "cannot run {}: this host has no `{}` service",
            handler.label(),
            crate::transport::SERVICE
        );
        Box::pin(async move { crate::transport::unreachable_answer(message) })
    }
    /// Adds model-facing context to a session, attributed to the bridge.
    fn inject_context(&self, session_id: &str, text: &str) -> Result<(), String>;
    /// Adds context the model reads as a system-role message at its place
    /// (plugin API 1.7: Claude Code's background-task notifications). The
    /// default adds it as [`Self::inject_context`] does.
    fn inject_system_context(&self, session_id: &str, text: &str) -> Result<(), String> {
        self.inject_context(session_id, text)
    }
    /// Appends a `hook/*` record to the session log of an open turn.
    fn append_record(&self, session_id: &str, record: &Value) -> Result<(), String>;
    /// [`Self::append_record`] for a record already written as JSON text
    /// (the plugin boundary takes text, so the production host sends it as
    /// it is). The default reads it and appends the value.
    fn append_record_text(&self, session_id: &str, record: &str) -> Result<(), String> {
        let record: Value =
            serde_json::from_str(record).map_err(|e| format!("record is not JSON: {e}"))?;
        self.append_record(session_id, &record)
    }
    /// Ends the session's open turn after the current step.
    fn halt_turn(&self, session_id: &str, reason: &str) -> Result<(), String>;
    /// Reports a degraded condition at run time to the operator.
    fn warn(&self, message: &str);
    /// Reports a problem with a hooks file (at load: `dsh check` lists it).
    fn report_problem(&self, problem: ConfigProblem);
    /// Sets the bridge's shell prelude for a session (plugin API 1.4):
    /// script the shell tool runs before each of its commands; empty
    /// clears it. The default refuses (a host that keeps none).
    fn set_shell_prelude(&self, session_id: &str, script: &str) -> Result<(), String> {
        let _ = (session_id, script);
        Err("this host keeps no shell prelude".into())
    }
    /// Sets the bridge's shell-tool environment for a session (plugin API
    /// 1.9): variables the shell tool's commands get; empty clears it. The
    /// default refuses (a host that keeps none).
    fn set_session_env(&self, session_id: &str, env: &[(String, String)]) -> Result<(), String> {
        let _ = (session_id, env);
        Err("this host keeps no session environment".into())
    }
    /// The live session `session_id` as the host sees it now (its open
    /// turn's id, its log), if the host keeps sessions. The default knows
    /// none.
    fn session(&self, session_id: &str) -> Option<dsh_plugin_api::SessionRef> {
        let _ = session_id;
        None
    }
    /// The refusal of `arguments` by `tool`'s own input check (the service
    /// `input-check/<tool>` of the plugin offering the tool), `None` when it
    /// takes them or the host has no check for the tool. A check that fails
    /// refuses, naming the tool (fail closed, as the host's own use of it).
    /// The default checks nothing.
    fn check_input(
        &self,
        tool: &str,
        session: &dsh_plugin_api::SessionRef,
        arguments: &Value,
    ) -> BoxFuture<Option<String>> {
        let _ = (tool, session, arguments);
        Box::pin(async { None })
    }
    /// Starts one hook process in the background and does not wait for it
    /// (Claude Code's `async` hooks; plugin API 1.4's `process-runner`
    /// method `spawn`). The default refuses.
    fn spawn(&self, request: RunRequest) -> BoxFuture<Result<(), String>> {
        let _ = request;
        Box::pin(async { Err("this host cannot run hooks in the background".to_string()) })
    }
    /// The background shell jobs `session_id` has running, as Claude
    /// Code's Stop payload lists them (the `background-tasks` service,
    /// `S260-left-running`). The default knows none.
    fn background_tasks(&self, session_id: &str) -> BoxFuture<Vec<Value>> {
        let _ = session_id;
        Box::pin(async { Vec::new() })
    }
    /// Allows `rules` for the rest of `session_id`'s turn (a slash
    /// command's `allowed-tools`: the agent's `turn-rules` service); the
    /// answer lists the rules that allow nothing, with why. The default
    /// refuses (a host without an agent).
    fn allow_for_turn(
        &self,
        session_id: &str,
        rules: Vec<String>,
    ) -> BoxFuture<Result<Vec<String>, String>> {
        let _ = (session_id, rules);
        Box::pin(async { Err("this host keeps no turn rules".to_string()) })
    }
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
    fn allow_for_turn(
        &self,
        session_id: &str,
        rules: Vec<String>,
    ) -> BoxFuture<Result<Vec<String>, String>> {
        use dsh_plugin_api::services::turn_rules::{
            AllowAnswer, AllowRequest, METHOD_ALLOW, SERVICE,
        };
        let host = self.host.clone();
        let request = AllowRequest {
            session_id: session_id.to_string(),
            rules,
        };
        Box::pin(async move {
            let args = serde_json::to_value(&request).map_err(|e| e.to_string())?;
            let answer = host.call_service(SERVICE, METHOD_ALLOW, &args).await?;
            let answer: AllowAnswer = serde_json::from_value(answer).map_err(|e| e.to_string())?;
            Ok(answer.skipped)
        })
    }

    fn background_tasks(&self, session_id: &str) -> BoxFuture<Vec<Value>> {
        use dsh_plugin_api::services::background_tasks::{METHOD_LIST, SERVICE};
        let host = self.host.clone();
        let args = serde_json::json!({"session_id": session_id});
        Box::pin(async move {
            if !host.has_service(SERVICE) {
                return Vec::new();
            }
            match host.call_service(SERVICE, METHOD_LIST, &args).await {
                Ok(answer) => answer["tasks"].as_array().cloned().unwrap_or_default(),
                Err(e) => {
                    tracing::warn!("cannot list the session's background jobs: {e}");
                    Vec::new()
                }
            }
        })
    }

    fn run(&self, request: RunRequest) -> BoxFuture<RunAnswer> {
        let host = self.host.clone();
        Box::pin(async move {
            let size = text_size(&request);
            call_typed(
                &host,
                PROCESS_RUNNER,
                process_runner::METHOD_RUN,
                &request,
                size,
            )
            .await
            .unwrap_or_else(RunAnswer::spawn_failure)
        })
    }

    fn send(&self, handler: Handler, request: RunRequest) -> BoxFuture<RunAnswer> {
        let host = self.host.clone();
        Box::pin(async move {
            let call = crate::transport::TransportRequest {
                handler,
                run: request,
            };
            let (service, method) = (crate::transport::SERVICE, crate::transport::METHOD_CALL);
            let size = text_size(&call.run);
            call_typed(&host, service, method, &call, size)
                .await
                .unwrap_or_else(RunAnswer::spawn_failure)
        })
    }

    fn inject_context(&self, session_id: &str, text: &str) -> Result<(), String> {
        self.host.inject_context(session_id, text)
    }

    fn inject_system_context(&self, session_id: &str, text: &str) -> Result<(), String> {
        self.host.inject_system_context(session_id, text)
    }

    fn append_record(&self, session_id: &str, record: &Value) -> Result<(), String> {
        self.host.append_record(session_id, record)
    }

    fn append_record_text(&self, session_id: &str, record: &str) -> Result<(), String> {
        use dsh_plugin_api::abi_stable::std_types::RString;
        self.host
            .raw()
            .append_record(RString::from(session_id), RString::from(record))
            .into_result()
            .map_err(String::from)
    }

    fn halt_turn(&self, session_id: &str, reason: &str) -> Result<(), String> {
        self.host.halt_turn(session_id, reason)
    }

    fn session(&self, session_id: &str) -> Option<dsh_plugin_api::SessionRef> {
        self.host
            .sessions()
            .into_iter()
            .find(|s| s.session_id.as_str() == session_id)
    }

    fn warn(&self, message: &str) {
        self.host.warn(message);
    }

    fn report_problem(&self, problem: ConfigProblem) {
        self.host.report_problem(problem);
    }

    fn set_shell_prelude(&self, session_id: &str, script: &str) -> Result<(), String> {
        self.host.set_session_shell_prelude(session_id, script)
    }

    fn set_session_env(&self, session_id: &str, env: &[(String, String)]) -> Result<(), String> {
        self.host.set_session_env(session_id, env)
    }

    fn check_input(
        &self,
        tool: &str,
        session: &dsh_plugin_api::SessionRef,
        arguments: &Value,
    ) -> BoxFuture<Option<String>> {
        use dsh_plugin_api::abi_stable::std_types::RStr;
        use dsh_plugin_api::services::input_check::{
            CheckAnswer, CheckRequest, METHOD_CHECK, service_name,
        };
        let name = service_name(tool);
        if self.host.raw().service(RStr::from_str(&name)).is_none() {
            return Box::pin(async { None });
        }
        let host = self.host.clone();
        let tool = tool.to_string();
        let request = CheckRequest {
            session_id: session.session_id.to_string(),
            cwd: session.cwd.to_string(),
            arguments: arguments.clone(),
        };
        Box::pin(async move {
            let answer: Result<CheckAnswer, String> =
                call_typed(&host, &name, METHOD_CHECK, &request, 512).await;
            match answer {
                Ok(CheckAnswer { refusal }) => refusal,
                Err(e) => Some(format!("the input check of `{tool}` failed: {e}")),
            }
        })
    }

    fn spawn(&self, request: RunRequest) -> BoxFuture<Result<(), String>> {
        let host = self.host.clone();
        Box::pin(async move {
            let args = serde_json::to_value(&request)
                .map_err(|e| format!("cannot encode request: {e}"))?;
            host.call_service(PROCESS_RUNNER, process_runner::METHOD_SPAWN, &args)
                .await
                .map(|_| ())
        })
    }
}

/// About how long `request` is as JSON text: its stdin escaped (a JSON
/// payload's quotes take two bytes each) and room for the rest, so the
/// text is written into one buffer rather than one grown and copied a
/// dozen times.
fn text_size(request: &RunRequest) -> usize {
    let env: usize = request.env.iter().map(|(k, v)| k.len() + v.len() + 6).sum();
    request.stdin.len() + request.stdin.len() / 4 + env + 512
}

/// Calls `method` of the service `name` with `args` written straight to
/// the wire text (into a buffer of `size` bytes to start with) and reads
/// the answer straight into `T`: what [`Host::call_service`] does,
/// without a `serde_json::Value` tree on either side (every hook a bridge
/// runs comes this way). The errors are that method's, and `<name>
/// answered badly` for an answer of the wrong shape.
async fn call_typed<A, T>(
    host: &Host,
    name: &str,
    method: &str,
    args: &A,
    size: usize,
) -> Result<T, String>
where
    A: serde::Serialize,
    T: serde::de::DeserializeOwned,
{
    use dsh_plugin_api::abi_stable::std_types::{RStr, RString};
    let mut text = Vec::with_capacity(size);
    serde_json::to_writer(&mut text, args).map_err(|e| format!("cannot encode request: {e}"))?;
    let args = String::from_utf8(text).map_err(|e| format!("cannot encode request: {e}"))?;
    let service = host
        .raw()
        .service(RStr::from_str(name))
        .into_option()
        .ok_or_else(|| format!("service `{name}` is not available"))?;
    let answer = service
        .call(RString::from(method), RString::from(args))
        .await
        .into_result()
        .map_err(String::from)?;
    serde_json::from_str(&answer).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => format!("{name} answered badly: {e}"),
        _ => format!("service `{name}` answered `{method}` with invalid JSON: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_request_keeps_credentials_and_kills_past_the_limit() {
        let req = hook_request(
            vec!["/bin/sh".into(), "-c".into(), "true".into()],
            "/tmp",
            "{}\n".into(),
            600,
        )
        .with_env("CLAUDECODE", "1");
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(v["scrub_credentials"], false);
        assert_eq!(v["allow_env"], serde_json::json!([]));
        assert_eq!(v["on_overflow"], "kill");
        assert_eq!(v["max_output_bytes"], 16 * 1024 * 1024);
        assert_eq!(v["timeout_ms"], 600_000);
        assert_eq!(v["kill_grace_ms"], 1500);
        assert_eq!(v["env"]["CLAUDECODE"], "1");
        assert_eq!(v["stdin"], "{}\n");
    }
}
