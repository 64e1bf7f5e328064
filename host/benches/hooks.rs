//! What a hook costs when dsh runs it, against the bare spawn of the same
//! shell measured in the same run (issue 15: a hook costs its spawn and
//! nothing more).
//!
//! - `claude_pre_tool_use_exit_0`: one `tools/pre-execute` waterfall on a
//!   real host (bash-local's process runner + the `hooks-claude` bridge)
//!   whose only hook is `exit 0`, against a bare spawn of `/bin/sh -c
//!   'exit 0'` fed a 500-byte stdin (about what the hook's payload is).
//!   Target: ≤ 1.10×.
//! - `codex_pre_tool_use_exit_0`: the same through `hooks-codex`, against
//!   `/bin/bash -c` (what Codex 0.171 runs hooks with, as recorded).
//!   Target: ≤ 1.10×.
//! - `claude_four_hooks`: four `exit 0` hooks on one point, against four
//!   bare spawns run at once (one thread each). Target: ≤ 1.10×.
//! - `eight_concurrent_sleeps`: eight `sleep 0.1` hooks on one point.
//!   Target: under 130 ms for the whole point (they run concurrently).
//! - `claude_request_runner_alone` (a diagnostic, no target of its own):
//!   the very request the Claude bridge sends for its hook (same argv,
//!   stdin, timeout, environment rules), run straight through bash-local's
//!   runner in a task, against the same bare spawn. What it is over the
//!   floor is the runner's process machinery; what the bridged hook is
//!   over it is the bus, the bridge and the service's JSON.
//!
//! The bare spawns use `std::process::Command` with an absolute program
//! path, which std runs with `posix_spawn`. The bench drops capabilities
//! first, as `dsh` does (a root process that kept them would fork for
//! every hook), and times each waterfall inside a task on the runtime's
//! workers, where a daemon's turns run. The ratios are printed after
//! criterion's own report, from interleaved timing rounds (medians), so
//! machine load hits both sides alike. Each point's session is started on
//! the bus first (`agent/session-start`), as a daemon does, so the bridge
//! resolves the session's hooks once and every timed call uses them: the
//! bench times what a daemon does per call, not a re-read of the settings
//! files. No agent runs in the bench's host, so the bridge's `hook/*`
//! records are refused (after the host reads them) rather than appended:
//! inside a turn they are two log lines.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench reports on stdout

use std::time::{Duration, Instant};

use abi_stable::std_types::{RArc, ROption};
use criterion::{Criterion, criterion_group};
use dsh_host::plugins::{HostCore, PluginHost, builtin};
use dsh_plugin_api::ToolCall;
use serde_json::json;

#[path = "common/point.rs"]
mod point_support;

use point_support::{Point, session};

/// Which bridge runs the hooks.
#[derive(Clone, Copy)]
enum Bridge {
    Claude,
    Codex,
}

/// A host whose PreToolUse point runs `commands` (one hook each).
fn point(rt: &tokio::runtime::Runtime, commands: &[&str]) -> Point {
    bridge_point(rt, Bridge::Claude, commands)
}

/// A host whose PreToolUse point runs `commands` (one hook each) through
/// `bridge`.
fn bridge_point(rt: &tokio::runtime::Runtime, bridge: Bridge, commands: &[&str]) -> Point {
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
    let name = match bridge {
        Bridge::Claude => "hooks-claude",
        Bridge::Codex => "hooks-codex",
    };
    plugins.load_module(
        name,
        builtin::lookup(name).unwrap(),
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

/// The request the Claude bridge builds for `point`'s hook, as
/// `hooks-claude` builds it (its `fire_resolved`): the payload as stdin,
/// `/bin/sh -c`, the default 600 s timeout, `OTEL_*` removed and its
/// variables set.
fn claude_request(point: &Point) -> dsh_bash_local::RunRequest {
    use dsh_hooks_claude::events::{REMOVED_ENV_PREFIX, pre_tool_use, stdin_bytes};
    let session = &point.call.session;
    let stdin = stdin_bytes(&pre_tool_use::payload(&point.call, None));
    dsh_hook_protocol::runner::hook_request(
        vec!["/bin/sh".into(), "-c".into(), "exit 0".into()],
        &session.cwd,
        stdin,
        600,
    )
    .without_env_prefix(REMOVED_ENV_PREFIX)
    .with_env("CLAUDE_PROJECT_DIR", &session.cwd)
    .with_env("CLAUDECODE", "1")
    .with_env("CLAUDE_CODE_SESSION_ID", &session.session_id)
}

/// `request` through bash-local's runner, in a task on the runtime's
/// workers (as the bridged hook is), timed inside the task.
fn runner_alone(rt: &tokio::runtime::Runtime, request: &dsh_bash_local::RunRequest) -> Duration {
    let request = request.clone();
    let task = async move {
        let t = Instant::now();
        let answer = dsh_bash_local::run(request).await;
        let took = t.elapsed();
        assert_eq!(answer.exit_code, Some(0), "{answer:?}");
        took
    };
    rt.block_on(rt.spawn(task)).unwrap()
}

/// What a hook's stdin is about the size of.
const STDIN: [u8; 500] = [b'x'; 500];

/// The floor: spawn `shell -c 'exit 0'`, write 500 bytes to its stdin,
/// wait for it. Blocking, on the calling thread.
fn bare_spawn(shell: &str) {
    use std::io::Write as _;
    let mut child = std::process::Command::new(shell)
        .args(["-c", "exit 0"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(mut stdin) = child.stdin.take() {
        // The shell may exit before reading it all: EPIPE is fine.
        let _ = stdin.write_all(&STDIN);
    }
    assert!(child.wait_with_output().unwrap().status.success());
}

/// `n` bare spawns at once, one thread each.
fn bare_spawns(shell: &str, n: usize) {
    std::thread::scope(|scope| {
        for _ in 0..n {
            scope.spawn(|| bare_spawn(shell));
        }
    });
}

/// Median times of `rounds` interleaved runs of `floor` (wall time) and
/// `measured` (the time it reports).
fn interleaved(
    rounds: usize,
    floor: impl Fn(),
    measured: impl Fn() -> Duration,
) -> (Duration, Duration) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        floor();
        a.push(t.elapsed());
        b.push(measured());
    }
    (median(a), median(b))
}

/// Criterion's timing of `measured`, by the time it reports.
fn reported(b: &mut criterion::Bencher<'_>, measured: impl Fn() -> Duration) {
    b.iter_custom(|iters| (0..iters).map(|_| measured()).sum());
}

fn report(label: &str, floor_label: &str, (floor, measured): (Duration, Duration), target: f64) {
    let ratio = measured.as_secs_f64() / floor.as_secs_f64();
    println!(
        "{label}: {measured:?} vs {floor_label} {floor:?}: ratio {ratio:.3} (target <= {target:.2}: {})",
        if ratio <= target { "met" } else { "MISSED" }
    );
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
    let codex = bridge_point(&rt, Bridge::Codex, &["exit 0"]);
    // Identical commands on one point run once (both CLIs dedup them): a
    // distinct trailing comment keeps them all.
    let four: Vec<String> = (0..4).map(|i| format!("exit 0 # {i}")).collect();
    let four: Vec<&str> = four.iter().map(String::as_str).collect();
    let four = point(&rt, &four);
    let sleeps: Vec<String> = (0..8).map(|i| format!("sleep 0.1 # {i}")).collect();
    let sleeps: Vec<&str> = sleeps.iter().map(String::as_str).collect();
    let eight = point(&rt, &sleeps);
    for p in [&one, &codex, &four, &eight] {
        p.start_session(&rt);
    }

    let mut g = c.benchmark_group("hooks");
    g.bench_function("bare_sh_exit_0", |b| b.iter(|| bare_spawn("/bin/sh")));
    g.bench_function("claude_pre_tool_use_exit_0", |b| {
        reported(b, || one.pre_execute(&rt))
    });
    g.bench_function("bare_bash_exit_0", |b| b.iter(|| bare_spawn("/bin/bash")));
    g.bench_function("codex_pre_tool_use_exit_0", |b| {
        reported(b, || codex.pre_execute(&rt))
    });
    g.bench_function("four_bare_sh_at_once", |b| {
        b.iter(|| bare_spawns("/bin/sh", 4))
    });
    g.bench_function("claude_four_hooks", |b| {
        reported(b, || four.pre_execute(&rt))
    });
    let request = claude_request(&one);
    g.bench_function("claude_request_runner_alone", |b| {
        reported(b, || runner_alone(&rt, &request))
    });
    g.sample_size(10);
    g.bench_function("eight_concurrent_sleeps", |b| {
        reported(b, || eight.pre_execute(&rt))
    });
    g.finish();

    // Ratios from interleaved rounds measured here, in the same run.
    let rounds = 200;
    println!();
    report(
        "claude PreToolUse `exit 0` through the bridge",
        "bare /bin/sh -c spawn",
        interleaved(rounds, || bare_spawn("/bin/sh"), || one.pre_execute(&rt)),
        1.10,
    );
    report(
        "codex PreToolUse `exit 0` through the bridge",
        "bare /bin/bash -c spawn",
        interleaved(
            rounds,
            || bare_spawn("/bin/bash"),
            || codex.pre_execute(&rt),
        ),
        1.10,
    );
    report(
        "four claude hooks on one point",
        "four bare /bin/sh spawns at once",
        interleaved(
            rounds / 2,
            || bare_spawns("/bin/sh", 4),
            || four.pre_execute(&rt),
        ),
        1.10,
    );
    let (floor, alone) = interleaved(
        rounds,
        || bare_spawn("/bin/sh"),
        || runner_alone(&rt, &request),
    );
    println!(
        "the claude hook's request through the runner alone: {alone:?} vs bare /bin/sh -c spawn \
         {floor:?}: ratio {:.3} (diagnostic: the runner's share of the hook's)",
        alone.as_secs_f64() / floor.as_secs_f64()
    );
    let concurrent = median((0..10).map(|_| eight.pre_execute(&rt)).collect());
    println!(
        "8 concurrent `sleep 0.1` hooks on one point: {concurrent:?} (median of 10): \
         {:.3} x one sleep (target < 130 ms, i.e. < 1.30)",
        concurrent.as_secs_f64() / 0.1
    );
}

criterion_group!(benches, bench);

fn main() {
    // As the `dsh` binary does first thing, before any thread exists: a
    // root process that kept these capabilities would have the runner drop
    // them in each child, from a `pre_exec` hook, which makes std fork the
    // whole process for every spawn instead of `posix_spawn`.
    dsh_bash_local::runner::drop_capabilities_at_startup().expect("drop capabilities");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
