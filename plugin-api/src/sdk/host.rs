//! [`Host`]: the safe face of the host context a plugin receives.

use std::future::Future;

use abi_stable::std_types::{RArc, ROption, RResult, RStr, RString, Tuple2};
use async_ffi::{FfiFuture, FutureExt};
use serde_json::Value;

use abi_stable::sabi_trait::TD_Opaque;

use crate::decisions::{GuardDecision, GuardDecision_NE, ToolResult};
use crate::ffi::{
    AbortSignal, AbortSignal_TO, AbortSignalBox, Guard, Guard_TO, HostContextBox, Service,
    Service_TO, ServiceBox, ToolBody, ToolBody_TO,
};
use crate::seams::ToolCall;
use crate::types::{ConfigProblem, LogLevel, ToolSpec};

/// An abort signal of your own (e.g. one that also fires at a deadline), as
/// it crosses the boundary.
pub fn abort_signal<S: AbortSignal + 'static>(signal: S) -> AbortSignalBox {
    AbortSignal_TO::from_ptr(RArc::new(signal), TD_Opaque)
}

/// The host as a plugin sees it. Cheap to clone; keep one to use later.
#[derive(Clone)]
pub struct Host {
    ctx: HostContextBox,
}

fn into_result(r: RResult<(), RString>) -> Result<(), String> {
    r.into_result().map_err(String::from)
}

impl Host {
    /// Wraps the raw context.
    pub fn new(ctx: HostContextBox) -> Self {
        Host { ctx }
    }

    /// The raw context, for registrations the SDK does not wrap.
    pub fn raw(&self) -> &HostContextBox {
        &self.ctx
    }

    /// This plugin's manifest id.
    pub fn plugin_id(&self) -> String {
        self.ctx.plugin_id().into()
    }

    /// The sessions open in this host, one snapshot each (since 1.1).
    pub fn sessions(&self) -> Vec<crate::types::SessionRef> {
        self.ctx.sessions().into_iter().collect()
    }

    /// Moves session `session_id` into `cwd`, an absolute directory (since
    /// 1.3; see [`crate::ffi::HostContext::set_session_cwd`]).
    pub fn set_session_cwd(&self, session_id: &str, cwd: &str) -> Result<(), String> {
        self.ctx
            .set_session_cwd(RString::from(session_id), RString::from(cwd))
            .into_result()
            .map_err(String::from)
    }

    /// Sets this plugin's shell prelude for `session_id` (since 1.4; see
    /// [`crate::ffi::HostContext::set_session_shell_prelude`]); empty
    /// clears it.
    pub fn set_session_shell_prelude(&self, session_id: &str, script: &str) -> Result<(), String> {
        self.ctx
            .set_session_shell_prelude(RString::from(session_id), RString::from(script))
            .into_result()
            .map_err(String::from)
    }

    /// The shell prelude to run before each command of `session_id`
    /// (since 1.4; see [`crate::ffi::HostContext::session_shell_prelude`]);
    /// `None` when there is none.
    pub fn session_shell_prelude(&self, session_id: &str) -> Option<String> {
        let script: String = self
            .ctx
            .session_shell_prelude(RString::from(session_id))
            .into();
        (!script.is_empty()).then_some(script)
    }

    /// The host's state directory.
    pub fn state_dir(&self) -> String {
        self.ctx.state_dir().into()
    }

    /// The manifest's folder, against which config paths resolve.
    pub fn config_dir(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(self.ctx.config_dir().as_str())
    }

    /// `path` as written in this plugin's config: absolute as is, relative
    /// against the manifest's folder.
    pub fn resolve_path(&self, path: impl AsRef<std::path::Path>) -> std::path::PathBuf {
        let path = path.as_ref();
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.config_dir().join(path)
        }
    }

    /// Logs at `level` through the host.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        self.ctx.log(level, RString::from(message.into()));
    }

    /// Logs a warning.
    pub fn warn(&self, message: impl Into<String>) {
        self.log(LogLevel::Warn, message);
    }

    /// Reports a problem with this plugin's configuration or a file it
    /// names: call it from `apply` so `dsh check` lists it (an
    /// [`ProblemSeverity::Error`](crate::ProblemSeverity::Error) fails the
    /// check); later it is only logged (since 1.1).
    pub fn report_problem(&self, problem: ConfigProblem) {
        self.ctx.report_problem(problem);
    }

    /// Sleeps on the host's timer (plugins have no reactor of their own).
    pub fn sleep(&self, millis: u64) -> FfiFuture<()> {
        self.ctx.sleep(millis)
    }

    /// Whether a service is mounted right now.
    pub fn has_service(&self, name: &str) -> bool {
        self.ctx.service(RStr::from_str(name)).is_some()
    }

    /// Calls `method` on the named service with JSON arguments. The service
    /// is looked up at call time, so optional services may come and go.
    pub async fn call_service(
        &self,
        name: &str,
        method: &str,
        args: &Value,
    ) -> Result<Value, String> {
        let service = match self.ctx.service(RStr::from_str(name)) {
            ROption::RSome(s) => s,
            ROption::RNone => return Err(format!("service `{name}` is not available")),
        };
        let answer = service
            .call(RString::from(method), RString::from(args.to_string()))
            .await
            .into_result()
            .map_err(String::from)?;
        serde_json::from_str(&answer)
            .map_err(|e| format!("service `{name}` answered `{method}` with invalid JSON: {e}"))
    }

    /// Adds context to a session, attributed to this plugin.
    pub fn inject_context(&self, session_id: &str, text: impl Into<String>) -> Result<(), String> {
        into_result(
            self.ctx
                .inject_context(session_id.into(), RString::from(text.into())),
        )
    }

    /// Adds context the model reads as a system-role message at its place
    /// in the conversation, attributed to this plugin (since 1.7; see
    /// [`crate::ffi::HostContext::inject_system_context`]).
    pub fn inject_system_context(
        &self,
        session_id: &str,
        text: impl Into<String>,
    ) -> Result<(), String> {
        into_result(
            self.ctx
                .inject_system_context(session_id.into(), RString::from(text.into())),
        )
    }

    /// Sets this plugin's environment for `session_id`'s shell tool
    /// (since 1.9; see [`crate::ffi::HostContext::set_session_env`]); an
    /// empty list clears it.
    pub fn set_session_env(
        &self,
        session_id: &str,
        env: &[(String, String)],
    ) -> Result<(), String> {
        let env = env
            .iter()
            .map(|(k, v)| Tuple2(RString::from(k.as_str()), RString::from(v.as_str())))
            .collect();
        into_result(self.ctx.set_session_env(RString::from(session_id), env))
    }

    /// Opens a turn in `session_id` whose one prompt is `text`, a user
    /// message from this plugin, with no `agent/prompt-submit` (since 1.11;
    /// see [`crate::ffi::HostContext::open_turn`]); while a turn runs,
    /// `context` reaches its next model request as system context instead,
    /// if it makes one. Refused unless the session's embedder runs
    /// plugin-opened turns (today: a `dsh prompt` run); an older host
    /// refuses too.
    pub fn open_turn(&self, session_id: &str, text: &str, context: &str) -> Result<(), String> {
        into_result(self.ctx.open_turn(
            RString::from(session_id),
            RString::from(text),
            RString::from(context),
        ))
    }

    /// The environment a shell tool gives `session_id`'s commands (since
    /// 1.9; see [`crate::ffi::HostContext::session_env`]): every plugin's,
    /// merged in plugin id order; empty in an older host.
    pub fn session_env(&self, session_id: &str) -> Vec<(String, String)> {
        self.ctx
            .session_env(RString::from(session_id))
            .into_iter()
            .map(|t| (t.0.into_string(), t.1.into_string()))
            .collect()
    }

    /// Moves `session_id`'s shell to `cwd` unless that leaves the session's
    /// root (since 1.10; see
    /// [`crate::ffi::HostContext::set_session_shell_cwd`]): `Some(root)`
    /// when the move was undone and the session is back in its root.
    pub fn set_session_shell_cwd(
        &self,
        session_id: &str,
        cwd: &str,
    ) -> Result<Option<String>, String> {
        match self
            .ctx
            .set_session_shell_cwd(RString::from(session_id), RString::from(cwd))
        {
            RResult::ROk(root) => Ok(root.into_option().map(RString::into_string)),
            RResult::RErr(e) => Err(e.into_string()),
        }
    }

    /// Sets the role the model reads this plugin's context in: `user` (the
    /// default), `developer` or `system` (since 1.8; see
    /// [`crate::ffi::HostContext::set_context_role`]).
    pub fn set_context_role(&self, role: &str) -> Result<(), String> {
        into_result(self.ctx.set_context_role(role.into()))
    }

    /// Appends a record (a JSON object with a `type`) to a session's log.
    pub fn append_record(&self, session_id: &str, record: &Value) -> Result<(), String> {
        into_result(
            self.ctx
                .append_record(session_id.into(), RString::from(record.to_string())),
        )
    }

    /// Sends a live event (not persisted) to the session's subscribers.
    pub fn stream_event(&self, session_id: &str, event: &Value) -> Result<(), String> {
        into_result(
            self.ctx
                .stream_event(session_id.into(), RString::from(event.to_string())),
        )
    }

    /// Ends the session's open turn after the current step.
    pub fn halt_turn(&self, session_id: &str, reason: impl Into<String>) -> Result<(), String> {
        into_result(
            self.ctx
                .halt_turn(session_id.into(), RString::from(reason.into())),
        )
    }

    /// Registers a guard: a synchronous check run after the whole
    /// `tools/pre-execute` waterfall, in plugin order; the first deny wins
    /// and nothing can re-allow. A panic in it is a failure, which the host
    /// treats as a deny.
    pub fn add_guard<F>(&self, guard: F) -> Result<(), String>
    where
        F: Fn(&ToolCall) -> GuardDecision + Send + Sync + 'static,
    {
        into_result(
            self.ctx
                .guard(Guard_TO::from_value(ClosureGuard(guard), TD_Opaque)),
        )
    }

    /// Registers a tool whose body is an async closure.
    pub fn register_tool<F, Fut>(&self, spec: ToolSpec, body: F) -> Result<(), String>
    where
        F: Fn(RArc<ToolCall>, AbortSignalBox) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        let body = ToolBody_TO::from_value(ClosureTool(body), TD_Opaque);
        into_result(self.ctx.register_tool(spec, body))
    }

    /// Provides a service whose calls are handled by an async closure
    /// taking the method name and JSON arguments.
    pub fn provide_service<F, Fut>(&self, name: &str, handler: F) -> Result<(), String>
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, String>> + Send + 'static,
    {
        let service: ServiceBox = Service_TO::from_ptr(
            RArc::new(ClosureService(std::sync::Arc::new(handler))),
            TD_Opaque,
        );
        into_result(self.ctx.provide_service(name.into(), service))
    }
}

struct ClosureGuard<F>(F);

impl<F> Guard for ClosureGuard<F>
where
    F: Fn(&ToolCall) -> GuardDecision + Send + Sync + 'static,
{
    fn check(&self, call: RArc<ToolCall>) -> RResult<GuardDecision_NE, RString> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.0)(&call))) {
            Ok(decision) => RResult::ROk(decision.into()),
            Err(panic) => RResult::RErr(
                format!("guard panicked: {}", super::adapter::panic_message(&panic)).into(),
            ),
        }
    }
}

struct ClosureTool<F>(F);

impl<F, Fut> ToolBody for ClosureTool<F>
where
    F: Fn(RArc<ToolCall>, AbortSignalBox) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let fut =
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.0)(call, signal)))
            {
                Ok(fut) => fut,
                Err(panic) => {
                    let msg = super::adapter::panic_message(&panic);
                    return async move { ToolResult::error(format!("tool panicked: {msg}")) }
                        .into_ffi();
                }
            };
        async move {
            match futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut)).await {
                Ok(result) => result,
                Err(panic) => ToolResult::error(format!(
                    "tool panicked: {}",
                    super::adapter::panic_message(&panic)
                )),
            }
        }
        .into_ffi()
    }
}

struct ClosureService<F>(std::sync::Arc<F>);

impl<F> Clone for ClosureService<F> {
    fn clone(&self) -> Self {
        ClosureService(self.0.clone())
    }
}

impl<F, Fut> Service for ClosureService<F>
where
    F: Fn(String, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, String>> + Send + 'static,
{
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let handler = self.0.clone();
        async move {
            let args: Value = match serde_json::from_str(&args) {
                Ok(v) => v,
                Err(e) => return RResult::RErr(format!("arguments are not JSON: {e}").into()),
            };
            let call =
                std::panic::AssertUnwindSafe(async move { handler(method.into(), args).await });
            match futures::FutureExt::catch_unwind(call).await {
                Ok(Ok(v)) => RResult::ROk(v.to_string().into()),
                Ok(Err(e)) => RResult::RErr(e.into()),
                Err(panic) => RResult::RErr(
                    format!(
                        "service panicked: {}",
                        super::adapter::panic_message(&panic)
                    )
                    .into(),
                ),
            }
        }
        .into_ffi()
    }
}
