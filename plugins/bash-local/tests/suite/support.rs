//! Test support: timed waits, process liveness, a test abort signal and a
//! fake host context that records what a plugin registers.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_bash_local::{RunAnswer, RunRequest};
use dsh_plugin_api::abi_stable::sabi_trait::TD_Opaque;
use dsh_plugin_api::abi_stable::std_types::{RArc, ROption, RResult, RStr, RString};
use dsh_plugin_api::async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{
    AbortSignal, AbortSignal_TO, AbortSignalBox, GuardBox, HostContext, HostContext_TO,
    HostContextBox, ListenerBox, ServiceBox, ToolBodyBox,
};
use dsh_plugin_api::{LogLevel, Seam, SessionRef, ToolCall, ToolSpec};

/// Generous bound for "it finished at all".
pub const FINISH: Duration = Duration::from_secs(20);

/// Runs a spec, failing the test if it does not finish in [`FINISH`].
pub async fn run(spec: RunRequest) -> RunAnswer {
    tokio::time::timeout(FINISH, dsh_bash_local::run(spec))
        .await
        .expect("run did not finish")
}

/// `/bin/sh -c <script>` in `cwd`.
pub fn sh(script: &str, cwd: &Path) -> RunRequest {
    RunRequest::new(vec!["/bin/sh".into(), "-c".into(), script.into()], cwd)
}

/// Waits until `path` exists (and is non-empty).
pub async fn wait_for_file(path: &Path) -> String {
    let wait = async {
        loop {
            if let Ok(text) = std::fs::read_to_string(path)
                && text.ends_with('\n')
            {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(FINISH, wait)
        .await
        .unwrap_or_else(|_| panic!("{} never appeared", path.display()))
}

/// Reads a pid written by `echo $! > file`.
pub async fn read_pid(path: &Path) -> i32 {
    wait_for_file(path).await.trim().parse().expect("a pid")
}

/// Whether `pid` is a live process: `kill -0` succeeds and it is not a
/// zombie waiting for a reaper (zombies are dead for our purposes).
pub fn pid_alive(pid: i32) -> bool {
    let kill0 = std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run kill")
        .success();
    if !kill0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_none_or(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Asserts `pid` dies within [`FINISH`] (killing is asynchronous).
pub async fn assert_dies(pid: i32) {
    let wait = async {
        while pid_alive(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    if tokio::time::timeout(FINISH, wait).await.is_err() {
        panic!("process {pid} is still alive");
    }
}

/// A temp dir whose path is canonical (so `pwd` output compares equal).
pub fn temp_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().canonicalize().expect("canonical");
    (dir, path)
}

/// An abort signal the test fires by hand.
#[derive(Clone, Default)]
pub struct TestSignal(Arc<SignalInner>);

#[derive(Default)]
pub struct SignalInner {
    fired: AtomicBool,
    notify: tokio::sync::Notify,
}

impl TestSignal {
    pub fn fire(&self) {
        self.0.fired.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn boxed(&self) -> AbortSignalBox {
        AbortSignal_TO::from_ptr(RArc::new(self.clone()), TD_Opaque)
    }
}

impl AbortSignal for TestSignal {
    fn is_aborted(&self) -> bool {
        self.0.fired.load(Ordering::SeqCst)
    }

    fn aborted(&self) -> FfiFuture<()> {
        let me = self.clone();
        async move {
            loop {
                // Created before the check, so a fire in between still wakes us.
                let notified = me.0.notify.notified();
                if me.is_aborted() {
                    return;
                }
                notified.await;
            }
        }
        .into_ffi()
    }
}

/// A session in `cwd`.
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

/// A tool call in `cwd`.
pub fn tool_call(name: &str, arguments: &serde_json::Value, cwd: &Path) -> ToolCall {
    ToolCall {
        session: session(cwd),
        call_id: "call-1".into(),
        name: name.into(),
        arguments: arguments.to_string().into(),
        parent: ROption::RNone,
    }
}

/// What a plugin registered on the [`FakeHost`].
#[derive(Default)]
pub struct Registry {
    pub tools: Vec<(ToolSpec, ToolBodyBox)>,
    pub services: Vec<(String, ServiceBox)>,
}

/// A host context that records registrations and serves services back.
#[derive(Clone, Default)]
pub struct FakeHost(pub Arc<Mutex<Registry>>);

impl FakeHost {
    pub fn boxed(&self) -> HostContextBox {
        HostContext_TO::from_ptr(RArc::new(self.clone()), TD_Opaque)
    }

    /// Removes and returns a registered tool body.
    pub fn take_tool(&self, name: &str) -> ToolBodyBox {
        let mut reg = self.0.lock().expect("lock");
        let at = reg
            .tools
            .iter()
            .position(|(s, _)| s.name.as_str() == name)
            .expect("tool registered");
        reg.tools.remove(at).1
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
        self.0.lock().expect("lock").tools.push((spec, body));
        RResult::ROk(())
    }
    fn provide_service(&self, name: RString, service: ServiceBox) -> RResult<(), RString> {
        self.0
            .lock()
            .expect("lock")
            .services
            .push((name.into(), service));
        RResult::ROk(())
    }
    fn service(&self, name: RStr<'_>) -> ROption<ServiceBox> {
        let reg = self.0.lock().expect("lock");
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
    fn report_problem(&self, _problem: dsh_plugin_api::ConfigProblem) {}
}
