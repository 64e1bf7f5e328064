//! A plugin host to drive seams against, as a library: [`TestHost`] loads a
//! manifest through the real registry and loader (real `.so` files) into
//! a throwaway state directory, on its own tokio runtime, and dispatches
//! seams the way the agent loop does.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost, PluginRecord};
use dsh_host::seams::{ListenerFailure, Terminal, TerminalFn};
use dsh_plugin_api::ffi::{AbortSignal, AbortSignal_TO, AbortSignalBox, SeamResult};
use dsh_plugin_api::sdk::FromSeamOutput;
use dsh_plugin_api::{
    ExecuteInput, PostExecuteInput, PreToolDecision, SeamInput, SeamOutput, SessionRef, ToolCall,
    ToolResult,
};

/// How long any one dispatch may take before the test fails.
pub const DISPATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// A loaded plugin host in a temp dir. Dropping it drops the runtime.
pub struct TestHost {
    /// The host under test.
    pub host: PluginHost,
    dir: tempfile::TempDir,
    runtime: tokio::runtime::Runtime,
}

impl TestHost {
    /// Writes `yaml` (a manifest without `state_dir`, which is added) as
    /// `cordis.yml` in a fresh temp dir and loads it.
    pub fn load(yaml: &str) -> TestHost {
        let dir = crate::temp_dir();
        let path = dir.path().join("cordis.yml");
        let text = format!("state_dir: state\n{yaml}");
        std::fs::write(&path, &text).expect("write the manifest");
        let manifest = Manifest::from_yaml(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let core = HostCore::new(manifest.state_dir.clone(), runtime.handle().clone());
        let mut host = PluginHost::new(core, manifest.path.clone());
        runtime.block_on(async { host.load_manifest(&manifest) });
        TestHost { host, dir, runtime }
    }

    /// The temp dir holding the manifest.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The host's state directory.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The core plugins registered into.
    pub fn core(&self) -> &Arc<HostCore> {
        self.host.core()
    }

    /// The record of plugin `id`.
    pub fn record(&self, id: &str) -> &PluginRecord {
        let records = self.host.records();
        records
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("no plugin `{id}` in {records:?}"))
    }

    /// Runs `fut` on the host's runtime; fails the test after
    /// [`DISPATCH_TIMEOUT`].
    pub fn block_on<F: Future>(&self, fut: F) -> F::Output {
        self.runtime.block_on(async {
            tokio::time::timeout(DISPATCH_TIMEOUT, fut)
                .await
                .unwrap_or_else(|_| panic!("dispatch did not finish within {DISPATCH_TIMEOUT:?}"))
        })
    }

    /// A handle to the host's runtime.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }

    /// Dispatches `tools/pre-execute` for `call`; the chain ends in allow.
    pub fn pre_execute(&self, call: &RArc<ToolCall>) -> Result<PreToolDecision, String> {
        let terminal =
            terminal(|_| async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) });
        let out = self.block_on(
            self.core()
                .view()
                .bus
                .waterfall(SeamInput::PreExecute(call.clone()), terminal),
        );
        decision(out)
    }

    /// Dispatches `tools/execute` for `call` with `signal`, ending in
    /// `dispatch` (the stand-in for the core dispatch).
    pub fn execute(
        &self,
        call: &RArc<ToolCall>,
        signal: AbortSignalBox,
        dispatch: Arc<dyn Terminal>,
    ) -> Result<ToolResult, String> {
        let input = ExecuteInput {
            call: call.clone(),
            signal,
        };
        let out = self.block_on(
            self.core()
                .view()
                .bus
                .waterfall(SeamInput::Execute(RArc::new(input)), dispatch),
        );
        decision(out)
    }

    /// Notifies `tools/result` for `call` with `result`.
    pub fn tool_result(
        &self,
        call: &RArc<ToolCall>,
        result: ToolResult,
        denied: bool,
    ) -> Vec<ListenerFailure> {
        let input = PostExecuteInput {
            call: call.clone(),
            result,
            denied,
        };
        self.block_on(
            self.core()
                .view()
                .bus
                .notify(SeamInput::ToolResult(RArc::new(input))),
        )
    }
}

fn decision<D: FromSeamOutput>(out: SeamResult) -> Result<D, String> {
    match out {
        RResult::ROk(output) => D::from_output(output),
        RResult::RErr(e) => Err(e.into()),
    }
}

/// A waterfall terminal from an async closure over the seam input.
pub fn terminal<F, Fut>(f: F) -> Arc<dyn Terminal>
where
    F: Fn(SeamInput) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = SeamResult> + Send + 'static,
{
    Arc::new(TerminalFn(
        move |input| -> futures::future::BoxFuture<'static, SeamResult> { Box::pin(f(input)) },
    ))
}

/// A session reference for seam inputs.
pub fn session() -> SessionRef {
    SessionRef {
        session_id: "ses_test".into(),
        cwd: "/tmp".into(),
        log_path: "/tmp/ses_test.jsonl".into(),
        permission_mode: "default".into(),
        turn_id: "turn_1".into(),
        prompt_id: "prompt_1".into(),
        parent_session_id: ROption::RNone,
        agent_type: ROption::RNone,
    }
}

/// A sealed tool call with JSON `arguments`.
pub fn tool_call(call_id: &str, name: &str, arguments: serde_json::Value) -> RArc<ToolCall> {
    RArc::new(ToolCall {
        session: session(),
        call_id: call_id.into(),
        name: name.into(),
        arguments: arguments.to_string().into(),
        parent: ROption::RNone,
    })
}

/// An abort signal the test fires by hand.
#[derive(Clone)]
pub struct TestSignal(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for TestSignal {
    fn default() -> Self {
        TestSignal(Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl TestSignal {
    /// Fires the signal.
    pub fn fire(&self) {
        self.0.send_replace(true);
    }

    /// The signal as it crosses the boundary.
    pub fn boxed(&self) -> AbortSignalBox {
        AbortSignal_TO::from_ptr(RArc::new(self.clone()), TD_Opaque)
    }
}

impl AbortSignal for TestSignal {
    fn is_aborted(&self) -> bool {
        *self.0.borrow()
    }

    fn aborted(&self) -> FfiFuture<()> {
        let mut fired = self.0.subscribe();
        async move {
            // The sender lives as long as any clone of this signal; if it
            // is gone the signal can never fire.
            if fired.wait_for(|f| *f).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        .into_ffi()
    }
}
