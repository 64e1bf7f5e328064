//! What a PreToolUse decision costs through a `socket` hook server, against
//! an `exit 0` command hook and a native listener, measured in one run.
//!
//! - `socket_hook`: the `hooks-claude` bridge on a real host whose only
//!   hook is `{"type": "socket", "path": ...}`; the server is a small
//!   tokio task in this process answering `exit_code: 0` on one long-lived
//!   connection (what dsh adds per call: payload, service call, one
//!   JSON-RPC round trip, decision). The server is written as a Rust
//!   server would be: it reads each request line whole and parses it into
//!   the one field it needs (`id`) rather than into a `serde_json::Value`
//!   tree, so the number is dsh's cost plus the least a real server costs.
//!   Target: <= 100 µs per call.
//! - `command_hook_exit_0`: the same bridge whose only hook is `exit 0`
//!   (a process spawn per call). Target: >= 20x the socket hook's cost.
//! - `native_listener`: a built-in plugin answering allow.
//!
//! Each point's session is started on the bus first (`agent/session-start`),
//! as a daemon does, so the bridge resolves the session's hooks once and
//! the timed calls measure what a daemon does per call (not a re-read of
//! the settings files). No agent runs in the bench's host, so the
//! bridge's `hook/*` records are refused (after the host reads them)
//! rather than appended.
//!
//! The ratios are printed after criterion's report, from interleaved rounds
//! (medians), so machine load hits every side alike.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench reports on stdout

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use abi_stable::std_types::{RArc, ROption, RResult};
use criterion::{Criterion, criterion_group};
use dsh_host::plugins::{HostCore, PluginHost, builtin};
use dsh_host::seams::{Terminal, TerminalFn};
use dsh_plugin_api::{
    Host, Next, NoConfig, Plugin, PreToolDecision, SeamInput, SeamOutput, SessionRef,
    SessionStartInput, SessionStartSource, ToolCall, plugin_module,
};
use futures::FutureExt as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A native listener that allows every call.
struct AllowAll;

impl Plugin for AllowAll {
    type Config = NoConfig;
    const NAME: &'static str = "allow-all";
    const VERSION: &'static str = "0.0.0";

    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(AllowAll)
    }

    async fn pre_execute(
        self: Arc<Self>,
        _call: RArc<ToolCall>,
        _next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        Ok(PreToolDecision::allow())
    }
}

struct Point {
    _dir: tempfile::TempDir,
    core: Arc<HostCore>,
    _plugins: PluginHost,
    call: RArc<ToolCall>,
}

/// A host whose PreToolUse point runs `hook` (a Claude handler object),
/// or only the native listener when `hook` is `None`.
fn point(rt: &tokio::runtime::Runtime, dir: tempfile::TempDir, hook: Option<Value>) -> Point {
    let _enter = rt.enter();
    let root = dir.path().to_path_buf();
    let core = HostCore::new(root.join("state"), rt.handle().clone());
    let mut plugins = PluginHost::new(core.clone(), root.join("cordis.yml"));
    match hook {
        Some(hook) => {
            let file = root.join("settings.json");
            let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}});
            std::fs::write(&file, hooks.to_string()).unwrap();
            plugins.load_module(
                "bash-local",
                builtin::lookup("bash-local").unwrap(),
                json!({}),
            );
            plugins.load_module(
                "hooks-claude",
                builtin::lookup("hooks-claude").unwrap(),
                json!({"config_path": file}),
            );
        }
        None => plugins.load_module("allow-all", plugin_module::<AllowAll>(), json!({})),
    }
    assert!(plugins.problems().is_empty(), "{:?}", plugins.problems());
    let call = RArc::new(ToolCall {
        session: session(&root),
        call_id: "call_1".into(),
        name: "Bash".into(),
        arguments: json!({"command": "echo hi"}).to_string().into(),
        parent: ROption::RNone,
    });
    Point {
        _dir: dir,
        core,
        _plugins: plugins,
        call,
    }
}

fn session(cwd: &Path) -> SessionRef {
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

fn allow() -> Arc<dyn Terminal> {
    Arc::new(TerminalFn(|_| {
        async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) }.boxed()
    }))
}

impl Point {
    /// Starts the call's session on the bus, as a daemon does before any
    /// of its tool calls: the bridge resolves the session's hooks here,
    /// once, and each call after uses them (as in a daemon, rather than
    /// reading the settings files again on every call).
    fn start_session(&self, rt: &tokio::runtime::Runtime) {
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
    async fn pre_execute(&self) {
        let out = self
            .core
            .view()
            .bus
            .waterfall(SeamInput::PreExecute(self.call.clone()), allow())
            .await;
        assert!(
            matches!(
                out,
                RResult::ROk(SeamOutput::PreTool(PreToolDecision::Allow { .. }))
            ),
            "{out:?}"
        );
    }
}

/// The one field of a request the bench's server needs.
#[derive(serde::Deserialize)]
struct Request {
    id: u64,
}

/// A hook server on `listener` answering every request `exit_code: 0`:
/// it reads each request line whole and parses it (into the one field it
/// uses, as a Rust server would), then writes its answer line.
async fn serve(listener: tokio::net::UnixListener) {
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let request: Request = serde_json::from_str(&line).unwrap();
                let answer = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"exit_code\":0,\"stdout\":\"\",\"stderr\":\"\"}}}}\n",
                    request.id
                );
                write.write_all(answer.as_bytes()).await.unwrap();
            }
        });
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let socket_dir = tempfile::tempdir().unwrap();
    let sock = socket_dir.path().join("hooks.sock");
    let listener = {
        let _enter = rt.enter();
        tokio::net::UnixListener::bind(&sock).unwrap()
    };
    rt.spawn(serve(listener));
    let socket = point(
        &rt,
        tempfile::tempdir().unwrap(),
        Some(json!({"type": "socket", "path": sock})),
    );
    let command = point(
        &rt,
        tempfile::tempdir().unwrap(),
        Some(json!({"type": "command", "command": "exit 0"})),
    );
    let native = point(&rt, tempfile::tempdir().unwrap(), None);
    for p in [&socket, &command, &native] {
        p.start_session(&rt);
    }
    rt.block_on(socket.pre_execute());

    let mut g = c.benchmark_group("hook_servers");
    g.bench_function("socket_hook", |b| {
        b.iter(|| rt.block_on(socket.pre_execute()))
    });
    g.bench_function("command_hook_exit_0", |b| {
        b.iter(|| rt.block_on(command.pre_execute()))
    });
    g.bench_function("native_listener", |b| {
        b.iter(|| rt.block_on(native.pre_execute()))
    });
    g.finish();

    let rounds = 200;
    let (mut s, mut cmd, mut n) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        for (side, out) in [(&socket, &mut s), (&command, &mut cmd), (&native, &mut n)] {
            let t = Instant::now();
            rt.block_on(side.pre_execute());
            out.push(t.elapsed());
        }
    }
    let (s, cmd, n) = (median(s), median(cmd), median(n));
    println!(
        "\nPreToolUse decision (median of {rounds}): socket hook {s:?} (target <= 100 µs), \
         `exit 0` command hook {cmd:?}, native listener {n:?}\n\
         command / socket = {:.1}x (target >= 20x); socket / native = {:.1}x",
        cmd.as_secs_f64() / s.as_secs_f64(),
        s.as_secs_f64() / n.as_secs_f64()
    );
}

criterion_group!(benches, bench);

fn main() {
    // As the `dsh` binary does first thing (and the `hooks` bench): a root
    // process that kept its capabilities would have the runner drop them in
    // each child from a `pre_exec` hook, which makes std fork the whole bench
    // for every command hook instead of `posix_spawn`, a cost `dsh` never pays.
    dsh_bash_local::runner::drop_capabilities_at_startup().expect("drop capabilities");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
