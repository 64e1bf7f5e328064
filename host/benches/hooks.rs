//! What a Claude Code hook costs when dsh runs it, against a baseline
//! measured in the same run.
//!
//! - `pre_tool_use_exit_0`: one `tools/pre-execute` waterfall on a real
//!   host (bash-local's process runner + the `hooks-claude` bridge) whose
//!   only hook is `exit 0`, against a bare `sh -c 'exit 0'` spawn with
//!   tokio. Target: within 15%.
//! - `eight_concurrent_sleeps`: eight `sleep 0.1` hooks on one point.
//!   Target: under 130 ms for the whole point (they run concurrently).
//!
//! The ratios are printed after criterion's own report, from interleaved
//! timing rounds (medians), so machine load hits both sides alike. The
//! session the calls belong to is not live, so the bridge's `hook/*`
//! records are refused (cheaply) rather than appended: inside a turn they
//! are two log lines.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench reports on stdout

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use abi_stable::std_types::{RArc, ROption, RResult};
use criterion::{Criterion, criterion_group, criterion_main};
use dsh_host::plugins::{HostCore, PluginHost, builtin};
use dsh_host::seams::{Terminal, TerminalFn};
use dsh_plugin_api::{PreToolDecision, SeamInput, SeamOutput, SessionRef, ToolCall};
use futures::FutureExt as _;
use serde_json::json;

struct Point {
    _dir: tempfile::TempDir,
    core: Arc<HostCore>,
    _plugins: PluginHost,
    call: RArc<ToolCall>,
}

/// A host whose PreToolUse point runs `commands` (one hook each).
fn point(rt: &tokio::runtime::Runtime, commands: &[&str]) -> Point {
    let _enter = rt.enter();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let hooks: Vec<_> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    let file = root.join("settings.json");
    std::fs::write(
        &file,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}).to_string(),
    )
    .unwrap();
    let core = HostCore::new(root.join("state"), rt.handle().clone());
    let mut plugins = PluginHost::new(core.clone(), root.join("cordis.yml"));
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
    assert!(plugins.problems().is_empty(), "{:?}", plugins.problems());
    let call = RArc::new(ToolCall {
        session: session(root),
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
    /// One pre-execute waterfall, through every listener.
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

async fn bare_spawn() {
    let status = tokio::process::Command::new("/bin/sh")
        .args(["-c", "exit 0"])
        .status()
        .await
        .unwrap();
    assert!(status.success());
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
    let one = point(&rt, &["exit 0"]);
    // Identical commands on one point run once (Claude Code dedups them):
    // a distinct trailing comment keeps all eight.
    let sleeps: Vec<String> = (0..8).map(|i| format!("sleep 0.1 # {i}")).collect();
    let sleeps: Vec<&str> = sleeps.iter().map(String::as_str).collect();
    let eight = point(&rt, &sleeps);

    let mut g = c.benchmark_group("hooks");
    g.bench_function("bare_sh_exit_0", |b| b.iter(|| rt.block_on(bare_spawn())));
    g.bench_function("pre_tool_use_exit_0", |b| {
        b.iter(|| rt.block_on(one.pre_execute()))
    });
    g.sample_size(10);
    g.bench_function("eight_concurrent_sleeps", |b| {
        b.iter(|| rt.block_on(eight.pre_execute()))
    });
    g.finish();

    // Ratios from interleaved rounds measured here, in the same run.
    let rounds = 200;
    let (mut bare, mut hook) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        rt.block_on(bare_spawn());
        bare.push(t.elapsed());
        let t = Instant::now();
        rt.block_on(one.pre_execute());
        hook.push(t.elapsed());
    }
    let (bare, hook) = (median(bare), median(hook));
    let concurrent = median(
        (0..10)
            .map(|_| {
                let t = Instant::now();
                rt.block_on(eight.pre_execute());
                t.elapsed()
            })
            .collect(),
    );
    println!(
        "\nhook overhead: PreToolUse exit 0 through the bridge {hook:?} vs bare sh spawn {bare:?} \
         (median of {rounds}): ratio {:.3} (target <= 1.15)",
        hook.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "8 concurrent `sleep 0.1` hooks on one point: {concurrent:?} (median of 10): \
         {:.3} x one sleep (target < 130 ms, i.e. < 1.30)",
        concurrent.as_secs_f64() / 0.1
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
