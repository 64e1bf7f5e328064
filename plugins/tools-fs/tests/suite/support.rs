//! Test support: temp dirs, result helpers and a fake host context that
//! records tool registrations.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_plugin_api::abi_stable::sabi_trait::TD_Opaque;
use dsh_plugin_api::abi_stable::std_types::{RArc, ROption, RResult, RStr, RString};
use dsh_plugin_api::async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{
    AbortSignal, AbortSignal_TO, AbortSignalBox, GuardBox, HostContext, HostContext_TO,
    HostContextBox, ListenerBox, ServiceBox, ToolBodyBox,
};
use dsh_plugin_api::{LogLevel, Seam, SessionRef, ToolCall, ToolResult, ToolSpec};
use serde_json::Value;

/// A temp dir and its canonical path.
pub fn temp_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().canonicalize().expect("canonical");
    (dir, path)
}

/// The structured response as JSON.
pub fn structured(result: &ToolResult) -> Value {
    serde_json::from_str(result.structured.as_ref().expect("structured").as_str()).expect("json")
}

/// Asserts an error result whose text contains `needle`.
pub fn assert_error(result: &ToolResult, needle: &str) {
    assert!(
        result.is_error,
        "expected an error, got {:?}",
        result.text_content()
    );
    assert!(
        result.text_content().contains(needle),
        "{:?} does not contain {needle:?}",
        result.text_content()
    );
}

/// A tool call in `cwd` with raw argument text.
pub fn tool_call(name: &str, arguments: &str, cwd: &Path) -> ToolCall {
    ToolCall {
        session: SessionRef {
            session_id: "s-1".into(),
            cwd: cwd.to_string_lossy().as_ref().into(),
            log_path: "/dev/null".into(),
            permission_mode: "default".into(),
            turn_id: "t-1".into(),
            prompt_id: "p-1".into(),
            parent_session_id: ROption::RNone,
            agent_type: ROption::RNone,
        },
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

pub fn never_aborted() -> AbortSignalBox {
    AbortSignal_TO::from_ptr(RArc::new(NeverAborted), TD_Opaque)
}

/// A host context that records tool registrations.
#[derive(Clone, Default)]
pub struct FakeHost(pub Arc<Mutex<Vec<(ToolSpec, ToolBodyBox)>>>);

impl FakeHost {
    pub fn boxed(&self) -> HostContextBox {
        HostContext_TO::from_ptr(RArc::new(self.clone()), TD_Opaque)
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.0
            .lock()
            .expect("lock")
            .iter()
            .map(|(s, _)| s.name.to_string())
            .collect()
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.0
            .lock()
            .expect("lock")
            .iter()
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// Runs a registered tool with raw argument text.
    pub async fn call(&self, name: &str, arguments: &str, cwd: &Path) -> ToolResult {
        let future = {
            let tools = self.0.lock().expect("lock");
            let (_, body) = tools
                .iter()
                .find(|(s, _)| s.name.as_str() == name)
                .expect("registered");
            body.run(RArc::new(tool_call(name, arguments, cwd)), never_aborted())
        };
        tokio::time::timeout(Duration::from_secs(20), future)
            .await
            .expect("finished")
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
        self.0.lock().expect("lock").push((spec, body));
        RResult::ROk(())
    }
    fn provide_service(&self, _name: RString, _service: ServiceBox) -> RResult<(), RString> {
        RResult::RErr("not supported by the fake host".into())
    }
    fn service(&self, _name: RStr<'_>) -> ROption<ServiceBox> {
        ROption::RNone
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
    fn report_problem(&self, _problem: dsh_plugin_api::ConfigProblem) {}
}
