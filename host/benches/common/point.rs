//! What the hook benches share: a host's PreToolUse point, its session
//! started on the bus as a daemon starts it, and one pre-execute waterfall
//! timed inside a task on the runtime's workers. Compiled into each bench
//! (`#[path]` module).
#![allow(clippy::unwrap_used)] // a benchmark fails loudly

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use abi_stable::std_types::{RArc, ROption, RResult};
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_host::seams::{Terminal, TerminalFn};
use dsh_plugin_api::{
    PreToolDecision, SeamInput, SeamOutput, SessionRef, SessionStartInput, SessionStartSource,
    ToolCall,
};
use futures::FutureExt as _;

/// One hook point of a host: its core, its plugins (kept loaded) and the
/// tool call its pre-execute waterfalls carry.
pub struct Point {
    pub _dir: tempfile::TempDir,
    pub core: Arc<HostCore>,
    pub _plugins: PluginHost,
    pub call: RArc<ToolCall>,
}

pub fn session(cwd: &Path) -> SessionRef {
    SessionRef {
        session_id: "ses_bench".into(),
        cwd: cwd.to_string_lossy().as_ref().into(),
        log_path: cwd
            .join("ses_bench.jsonl")
            .to_string_lossy()
            .as_ref()
            .into(),
        permission_mode: "default".into(),
        turn_id: "turn_bench".into(),
        prompt_id: "prompt_bench".into(),
        parent_session_id: ROption::RNone,
        agent_type: ROption::RNone,
    }
}

pub fn allow() -> Arc<dyn Terminal> {
    Arc::new(TerminalFn(|_| {
        async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) }.boxed()
    }))
}

impl Point {
    /// Starts the call's session on the bus, as a daemon does before any
    /// of its tool calls: the bridge resolves the session's hooks here,
    /// once, and each call after uses them (as in a daemon, rather than
    /// reading the settings files again on every call).
    pub fn start_session(&self, rt: &tokio::runtime::Runtime) {
        let input = SessionStartInput {
            session: self.call.session.clone(),
            source: SessionStartSource::Startup,
        };
        let core = self.core.clone();
        let failures = rt.block_on(async move {
            core.view()
                .bus
                .notify(SeamInput::SessionStart(RArc::new(input)))
                .await
        });
        assert!(failures.is_empty(), "{failures:?}");
    }

    /// One pre-execute waterfall, through every listener, run as a task on
    /// the runtime's workers (where a daemon's turns run); the time is
    /// taken inside the task.
    pub fn pre_execute(&self, rt: &tokio::runtime::Runtime) -> Duration {
        let (core, call) = (self.core.clone(), self.call.clone());
        let task = async move {
            let t = Instant::now();
            let out = core
                .view()
                .bus
                .waterfall(SeamInput::PreExecute(call), allow())
                .await;
            let took = t.elapsed();
            assert!(
                matches!(
                    out,
                    RResult::ROk(SeamOutput::PreTool(PreToolDecision::Allow { .. }))
                ),
                "{out:?}"
            );
            took
        };
        rt.block_on(rt.spawn(task)).unwrap()
    }
}
