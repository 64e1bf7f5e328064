//! The one fake plugin host for plugin unit tests: [`FakeHost`] is a
//! `HostContext` that applies a plugin without a real host, records the
//! tools and services it registers, serves those services back to it, and
//! runs its tools; plus the seam inputs such tests build by hand (a
//! [`session`] and a [`tool_call`] in a folder, a signal that never fires).
//! Listeners and guards are accepted and dropped: a plugin's seams are
//! tested through [`crate::TestHost`] or [`crate::agent::AgentHost`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult, RStr, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{
    AbortSignal, AbortSignal_TO, AbortSignalBox, GuardBox, HostContext, HostContext_TO,
    HostContextBox, ListenerBox, ServiceBox, ToolBodyBox,
};
use dsh_plugin_api::{ConfigProblem, LogLevel, Seam, SessionRef, ToolCall, ToolResult, ToolSpec};

/// How long a tool run through [`FakeHost::call`] may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(20);

/// What a plugin registered on the [`FakeHost`].
#[derive(Default)]
pub struct Registry {
    /// Tools, in registration order.
    pub tools: Vec<(ToolSpec, ToolBodyBox)>,
    /// Services, in registration order.
    pub services: Vec<(String, ServiceBox)>,
}

/// A host context that records registrations and serves services back.
#[derive(Clone, Default)]
pub struct FakeHost(pub Arc<Mutex<Registry>>);

impl FakeHost {
    /// The context as it crosses the boundary, for `apply`.
    pub fn boxed(&self) -> HostContextBox {
        HostContext_TO::from_ptr(RArc::new(self.clone()), TD_Opaque)
    }

    /// The names of the registered tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.specs().iter().map(|s| s.name.to_string()).collect()
    }

    /// The specs of the registered tools, in order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let reg = self.0.lock().expect("registry");
        reg.tools.iter().map(|(s, _)| s.clone()).collect()
    }

    /// Removes and returns the registered tool body `name`.
    pub fn take_tool(&self, name: &str) -> ToolBodyBox {
        let mut reg = self.0.lock().expect("registry");
        let at = reg
            .tools
            .iter()
            .position(|(s, _)| s.name.as_str() == name)
            .unwrap_or_else(|| panic!("no tool `{name}` registered"));
        reg.tools.remove(at).1
    }

    /// Runs the registered tool `name` with raw argument text in `cwd`;
    /// fails the test after [`TOOL_TIMEOUT`].
    pub async fn call(&self, name: &str, arguments: &str, cwd: &Path) -> ToolResult {
        let future = {
            let reg = self.0.lock().expect("registry");
            let (_, body) = reg
                .tools
                .iter()
                .find(|(s, _)| s.name.as_str() == name)
                .unwrap_or_else(|| panic!("no tool `{name}` registered"));
            body.run(RArc::new(tool_call(name, arguments, cwd)), never_aborted())
        };
        tokio::time::timeout(TOOL_TIMEOUT, future)
            .await
            .unwrap_or_else(|_| panic!("`{name}` did not finish within {TOOL_TIMEOUT:?}"))
    }
}

impl HostContext for FakeHost {
    fn plugin_id(&self) -> RString {
        "test-plugin".into()
    }
    fn listen(&self, _seam: Seam, _listener: ListenerBox) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn guard(&self, _guard: GuardBox) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn register_tool(&self, spec: ToolSpec, body: ToolBodyBox) -> RResult<(), RString> {
        self.0.lock().expect("registry").tools.push((spec, body));
        RResult::ROk(())
    }
    fn provide_service(&self, name: RString, service: ServiceBox) -> RResult<(), RString> {
        let mut reg = self.0.lock().expect("registry");
        reg.services.push((name.into(), service));
        RResult::ROk(())
    }
    fn service(&self, name: RStr<'_>) -> ROption<ServiceBox> {
        let reg = self.0.lock().expect("registry");
        reg.services
            .iter()
            .find(|(n, _)| n.as_str() == name.as_str())
            .map(|(_, s)| s.clone())
            .into()
    }
    fn log(&self, _level: LogLevel, _message: RString) {}
    fn sleep(&self, millis: u64) -> FfiFuture<()> {
        tokio::time::sleep(Duration::from_millis(millis)).into_ffi()
    }
    fn inject_context(&self, _session_id: RString, _text: RString) -> RResult<(), RString> {
        RResult::RErr("not supported by the fake host".into())
    }
    fn append_record(&self, _session_id: RString, _record: RString) -> RResult<(), RString> {
        RResult::RErr("not supported by the fake host".into())
    }
    fn halt_turn(&self, _session_id: RString, _reason: RString) -> RResult<(), RString> {
        RResult::RErr("not supported by the fake host".into())
    }
    fn state_dir(&self) -> RString {
        std::env::temp_dir().to_string_lossy().as_ref().into()
    }
    fn stream_event(&self, _session_id: RString, _event: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn config_dir(&self) -> RString {
        std::env::temp_dir().to_string_lossy().as_ref().into()
    }
    fn report_problem(&self, _problem: ConfigProblem) {}
}

/// A session working in `cwd`.
pub fn session(cwd: &Path) -> SessionRef {
    SessionRef {
        session_id: "s-1".into(),
        cwd: cwd.to_string_lossy().as_ref().into(),
        log_path: "/dev/null".into(),
        permission_mode: "default".into(),
        turn_id: "t-1".into(),
        prompt_id: "p-1".into(),
        parent_session_id: ROption::RNone,
        agent_type: ROption::RNone,
    }
}

/// A call of tool `name` with raw argument text, in `cwd`.
pub fn tool_call(name: &str, arguments: &str, cwd: &Path) -> ToolCall {
    ToolCall {
        session: session(cwd),
        call_id: "call-1".into(),
        name: name.into(),
        arguments: arguments.into(),
        parent: ROption::RNone,
    }
}

/// An abort signal that never fires.
#[derive(Clone)]
pub struct NeverAborted;

impl AbortSignal for NeverAborted {
    fn is_aborted(&self) -> bool {
        false
    }
    fn aborted(&self) -> FfiFuture<()> {
        std::future::pending().into_ffi()
    }
}

/// [`NeverAborted`] as it crosses the boundary.
pub fn never_aborted() -> AbortSignalBox {
    AbortSignal_TO::from_ptr(RArc::new(NeverAborted), TD_Opaque)
}

/// A temp dir and its canonical path (so `pwd` output compares equal).
pub fn canonical_temp_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = crate::temp_dir();
    let path = dir.path().canonicalize().expect("a canonical temp dir");
    (dir, path)
}
