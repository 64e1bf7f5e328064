//! Many sessions at once (issue 15), against a real `dsh serve` over its
//! Unix socket: `bash-local`, `model-openai` against a local stateless
//! endpoint ([`StatelessModel`]: a `Bash` call after the user's message,
//! text after the tool's result) and `hooks-claude` with two `PreToolUse`
//! command hooks. Each turn is two model requests, two hook processes and
//! one `bash -c` process.
//!
//! Baseline, measured in the same run: the spawn floor, how many times per
//! second this machine runs the turn's three processes (`posix_spawn` and
//! wait: `/bin/bash -c 'echo hi'`, then twice `/bin/sh -c 'cat >/dev/null'`
//! fed the size of a hook's stdin), on one thread per core at once; the
//! best of a measurement before and after the daemon's runs.
//!
//! Reported, with their targets:
//! - per session: RSS and descriptors the daemon keeps for each of
//!   `SESSIONS` sessions that ran one turn and went idle (≤ 50 KiB, no
//!   descriptor);
//! - burst: `SESSIONS` turns started at once, one per session, in turns
//!   per second against the floor (≥ 70 %; the median of three bursts);
//! - steady: turns arriving at half the burst capacity, open loop (each
//!   latency counts from when the turn was due), p99 against the p99 of
//!   one session alone (≤ 3×); no errors anywhere;
//! - the daemon's RSS after the run.
//!
//! Exits non-zero when a target is missed or a turn failed. The machine is
//! shared: run it more than once.
//!
//! Run: `cargo bench -p dsh-tests --bench sessions`. With
//! `SESSIONS_BENCH_DSH=<path>` it serves with that `dsh` binary instead of
//! the workspace's (an A/B of two builds with one bench executable); with
//! `SESSIONS_BENCH_PID=<file>` it writes the daemon's pid there as the
//! bursts start (to attach a profiler to the bursts and the steady run).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // a benchmark reports and fails loudly

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_tests::artifacts::workspace;
use dsh_tests::daemon::ServedDaemon;
use dsh_tests::stateless_model::StatelessModel;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::oneshot;

const SESSIONS: usize = 200;
const CONNECTIONS: usize = 8;
const SINGLE_TURNS: usize = 200;
const STEADY_TURNS: usize = 600;
const BURSTS: usize = 3;
const PER_SESSION_TARGET_KIB: f64 = 50.0;
const BURST_TARGET: f64 = 0.70;
const STEADY_TARGET: f64 = 3.0;
/// The variable the daemon reads the endpoint's key from (not `DSH_*`:
/// the daemon harness strips those).
const KEY_VAR: &str = "BENCH_SESSIONS_OPENAI_KEY";
/// About what `hooks-claude` writes to a `PreToolUse` hook's stdin here.
const HOOK_STDIN: usize = 600;

/// `VmRSS` and `RssAnon` of `pid`, in KiB.
fn rss(pid: i32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("RssAnon:"))
}

fn open_fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("read /proc/<pid>/fd")
        .count()
}

/// Waits (up to 30 s) until the daemon's descriptors are back to at most
/// `limit`; returns the count.
fn settle_fds(pid: i32, limit: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = open_fds(pid);
        if now <= limit || Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Turns per second the machine runs the turn's three processes, one
/// thread per core, for `window`.
/// Clock ticks of CPU time: the machine's busy and total (`/proc/stat`),
/// a process's own and its reaped children's (`/proc/<pid>/stat`).
#[derive(Debug, Clone, Copy, Default)]
struct Ticks {
    busy: u64,
    total: u64,
    daemon: u64,
    /// The daemon's user time (the rest of `daemon` is system time).
    daemon_user: u64,
    children: u64,
    bench: u64,
}

impl Ticks {
    fn now(daemon: i32) -> Ticks {
        let stat = std::fs::read_to_string("/proc/stat").expect("read /proc/stat");
        let cpu: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|n| n.parse().ok())
            .collect();
        let total: u64 = cpu.iter().take(8).sum();
        // idle and iowait
        let idle = cpu.get(3).copied().unwrap_or(0) + cpu.get(4).copied().unwrap_or(0);
        let (own, reaped) = process_ticks(&format!("/proc/{daemon}/stat"));
        let (daemon_user, _) = user_system_ticks(&format!("/proc/{daemon}/stat"));
        let (bench, _) = process_ticks("/proc/self/stat");
        Ticks {
            busy: total - idle,
            total,
            daemon: own,
            daemon_user,
            children: reaped,
            bench,
        }
    }

    fn since(self, before: Ticks) -> Ticks {
        Ticks {
            busy: self.busy - before.busy,
            total: self.total - before.total,
            daemon: self.daemon - before.daemon,
            daemon_user: self.daemon_user - before.daemon_user,
            children: self.children - before.children,
            bench: self.bench - before.bench,
        }
    }
}

/// utime + stime, and cutime + cstime, of a `/proc/<pid>/stat`.
fn process_ticks(path: &str) -> (u64, u64) {
    let stat = std::fs::read_to_string(path).expect("read a process's stat");
    // The fields after the command's closing parenthesis, from `state`.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(1)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    // utime, stime, cutime, cstime are fields 14-17 (1-based); `f` starts
    // at field 4 (`ppid`), so they are 10-13 here. (Until 2026-12-02 this
    // read 11-14: the "daemon" figure was its system time plus its
    // children's user time.)
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    (at(10) + at(11), at(12) + at(13))
}

/// utime and stime of a `/proc/<pid>/stat`, apart.
fn user_system_ticks(path: &str) -> (u64, u64) {
    let stat = std::fs::read_to_string(path).expect("read a process's stat");
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(1)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    (at(10), at(11))
}

fn spawn_floor(cores: usize, window: Duration) -> f64 {
    let stdin = vec![b'x'; HOOK_STDIN];
    let start = Instant::now();
    let done = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..cores {
            scope.spawn(|| {
                while start.elapsed() < window {
                    let mut out = String::new();
                    let mut bash = Command::new("/bin/bash")
                        .args(["-c", "echo hi"])
                        .stdin(Stdio::null())
                        .stdout(Stdio::piped())
                        .spawn()
                        .expect("spawn bash");
                    bash.stdout
                        .take()
                        .unwrap()
                        .read_to_string(&mut out)
                        .unwrap();
                    assert!(bash.wait().unwrap().success());
                    for _ in 0..2 {
                        let mut hook = Command::new("/bin/sh")
                            .args(["-c", "cat >/dev/null"])
                            .stdin(Stdio::piped())
                            .stdout(Stdio::piped())
                            .spawn()
                            .expect("spawn sh");
                        hook.stdin.take().unwrap().write_all(&stdin).unwrap();
                        assert!(hook.wait().unwrap().success());
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

/// One JSON-RPC connection to the daemon, with requests in flight at once.
#[derive(Clone)]
struct Acp {
    writer: Arc<tokio::sync::Mutex<OwnedWriteHalf>>,
    pending: Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>,
    next: Arc<AtomicU64>,
}

impl Acp {
    async fn connect(socket: &Path) -> Acp {
        let stream = UnixStream::connect(socket).await.expect("connect");
        let (read, write) = stream.into_split();
        let acp = Acp {
            writer: Arc::new(tokio::sync::Mutex::new(write)),
            pending: Arc::new(Mutex::new(HashMap::new())),
            next: Arc::new(AtomicU64::new(1)),
        };
        let reader = acp.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message: Value = serde_json::from_str(&line).expect("a JSON frame");
                if message.get("method").is_some() {
                    if let Some(id) = message.get("id") {
                        let refusal = json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32601, "message": "Method not found"}});
                        reader.send(&refusal).await;
                    }
                    continue;
                }
                let Some(id) = message["id"].as_u64() else {
                    continue;
                };
                if let Some(waiter) = reader.pending.lock().unwrap().remove(&id) {
                    let _ = waiter.send(message);
                }
            }
        });
        acp.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await
        .expect("initialize");
        acp
    }

    async fn send(&self, frame: &Value) {
        let mut line = frame.to_string();
        line.push('\n');
        self.writer
            .lock()
            .await
            .write_all(line.as_bytes())
            .await
            .expect("write a frame");
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = tokio::time::timeout(Duration::from_secs(60), rx)
            .await
            .unwrap_or_else(|_| panic!("no answer to {method} within 60 s"))
            .expect("the connection ended");
        match answer.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    async fn new_session(&self, cwd: &Path) -> String {
        let result = self
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await
            .expect("session/new");
        result["sessionId"].as_str().unwrap().to_string()
    }

    /// One turn; its latency, or what went wrong.
    async fn turn(&self, session: &str) -> Result<Duration, String> {
        let start = Instant::now();
        let answer = self
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
            )
            .await;
        match answer {
            Ok(result) if result["stopReason"] == "end_turn" => Ok(start.elapsed()),
            Ok(result) => Err(format!("stopped: {result}")),
            Err(e) => Err(format!("error: {e}")),
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[at]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn setup(dir: &Path, model: &StatelessModel) -> std::path::PathBuf {
    let hooks = dir.join("hooks.json");
    std::fs::write(
        &hooks,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "cat >/dev/null"},
            {"type": "command", "command": "cat >/dev/null; exit 0"}]}]}})
        .to_string(),
    )
    .unwrap();
    let plugins = json!([
        {"name": "bash-local"},
        {"name": "model-openai", "config": {"base_url": model.base_url, "model": "mock-model",
            "api_key_env": KEY_VAR, "max_retries": 0}},
        {"name": "hooks-claude", "config": {"config_path": hooks}},
    ]);
    let config = dir.join("cordis.yml");
    std::fs::write(
        &config,
        format!(
            "state_dir: {}\nsocket: {}\nplugins: {plugins}\n",
            dir.join("state").display(),
            dir.join("dsh.sock").display()
        ),
    )
    .unwrap();
    config
}

fn main() {
    // SAFETY: set before this process starts any thread; the daemon
    // inherits it.
    unsafe { std::env::set_var(KEY_VAR, "sk-bench-local") };
    let _ = workspace();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let floor_before = spawn_floor(cores, Duration::from_secs(3));

    let model = StatelessModel::start(1);
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let config = setup(dir.path(), &model);
    let daemon = match std::env::var_os("SESSIONS_BENCH_DSH") {
        Some(dsh) => ServedDaemon::start_binary(Path::new(&dsh), &config, dir.path(), "warn"),
        None => ServedDaemon::start(&config, dir.path(), "warn"),
    };
    let pid = daemon.pid();
    let socket = dir.path().join("dsh.sock");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut errors: Vec<String> = Vec::new();
    let mut turns = 0u64;

    let report = runtime.block_on(async {
        let mut connections = Vec::new();
        for _ in 0..CONNECTIONS {
            connections.push(Acp::connect(&socket).await);
        }
        let fds_connected = open_fds(pid);
        // One session alone: warm up, then its latency.
        let alone = connections[0].new_session(&project).await;
        for _ in 0..10 {
            connections[0].turn(&alone).await.unwrap();
        }
        let mut single = Vec::new();
        for _ in 0..SINGLE_TURNS {
            single.push(connections[0].turn(&alone).await.unwrap());
        }
        turns += 10 + SINGLE_TURNS as u64;
        single.sort();
        // One idle session: at most the holds file more than no session.
        let fds_before = settle_fds(pid, fds_connected + 1);
        let rss_before = rss(pid);

        // SESSIONS sessions, each one turn, one after another; then idle.
        let mut sessions = Vec::new();
        for n in 0..SESSIONS {
            let acp = connections[n % CONNECTIONS].clone();
            let id = acp.new_session(&project).await;
            if let Err(e) = acp.turn(&id).await {
                errors.push(e);
            }
            sessions.push((acp, id));
        }
        turns += SESSIONS as u64;
        let fds_idle = settle_fds(pid, fds_before + 1);
        let rss_idle = rss(pid);

        // Bursts: one turn in every session, all started at once.
        let mut bursts = Vec::new();
        if let Some(file) = std::env::var_os("SESSIONS_BENCH_PID") {
            std::fs::write(file, pid.to_string()).unwrap();
        }
        let ticks_before = Ticks::now(pid);
        for _ in 0..BURSTS {
            let start = Instant::now();
            let runs = sessions.iter().map(|(acp, id)| {
                let (acp, id) = (acp.clone(), id.clone());
                tokio::spawn(async move { acp.turn(&id).await })
            });
            for run in futures::future::join_all(runs).await {
                if let Err(e) = run.unwrap() {
                    errors.push(e);
                }
            }
            bursts.push(SESSIONS as f64 / start.elapsed().as_secs_f64());
            turns += SESSIONS as u64;
        }
        let burst_ticks = Ticks::now(pid).since(ticks_before);
        bursts.sort_by(f64::total_cmp);
        let burst = bursts[BURSTS / 2];

        // Steady arrivals at half the burst capacity, open loop.
        let rate = burst / 2.0;
        let start = Instant::now();
        let mut steady = Vec::new();
        let mut runs = Vec::new();
        for n in 0..STEADY_TURNS {
            let due = start + Duration::from_secs_f64(n as f64 / rate);
            let (acp, id) = sessions[n % SESSIONS].clone();
            runs.push(tokio::spawn(async move {
                tokio::time::sleep_until(due.into()).await;
                acp.turn(&id).await.map(|_| due.elapsed())
            }));
        }
        for run in runs {
            match run.await.unwrap() {
                Ok(latency) => steady.push(latency),
                Err(e) => errors.push(e),
            }
        }
        turns += STEADY_TURNS as u64;
        steady.sort();
        let rss_after = rss(pid);
        (
            single,
            (fds_before, fds_idle),
            (rss_before, rss_idle, rss_after),
            (bursts, burst, burst_ticks),
            (rate, steady),
        )
    });
    let (
        single,
        (fds_before, fds_idle),
        (rss_before, rss_idle, rss_after),
        (bursts, burst, burst_ticks),
        (rate, steady),
    ) = report;
    let problems = daemon.stderr();
    daemon.stop();
    let floor_after = spawn_floor(cores, Duration::from_secs(3));
    let floor = floor_before.max(floor_after);
    if model.refused() > 0 || model.answered() != 2 * turns {
        errors.push(format!(
            "the endpoint answered {} requests and refused {} for {turns} turns (2 each)",
            model.answered(),
            model.refused()
        ));
    }

    let per_session = (rss_idle.0 as f64 - rss_before.0 as f64) / SESSIONS as f64;
    let per_session_anon = (rss_idle.1 as f64 - rss_before.1 as f64) / SESSIONS as f64;
    let single_p99 = percentile(&single, 0.99);
    let steady_p99 = percentile(&steady, 0.99);
    let burst_ratio = burst / floor;
    let steady_ratio = steady_p99.as_secs_f64() / single_p99.as_secs_f64();
    println!("sessions ({SESSIONS} sessions over {CONNECTIONS} connections, {cores} cores):");
    println!(
        "  spawn floor:       {floor:>8.1} turns/s (before {floor_before:.1}, after {floor_after:.1}; 3 processes per turn)"
    );
    println!(
        "  one session:       p50 {:>6.2} ms  p99 {:>6.2} ms  ({SINGLE_TURNS} turns)",
        ms(percentile(&single, 0.5)),
        ms(single_p99)
    );
    println!(
        "  per idle session:  {per_session:>8.1} KiB RSS ({per_session_anon:.1} KiB anonymous), {} descriptors for {SESSIONS} sessions  target ≤ {PER_SESSION_TARGET_KIB} KiB, no descriptor: {}",
        fds_idle as i64 - fds_before as i64,
        verdict(per_session <= PER_SESSION_TARGET_KIB && fds_idle <= fds_before + 1)
    );
    println!(
        "  burst:             {burst:>8.1} turns/s (bursts {bursts:.1?})  {:.0}% of the floor  target ≥ {:.0}%: {}",
        burst_ratio * 100.0,
        BURST_TARGET * 100.0,
        verdict(burst_ratio >= BURST_TARGET)
    );
    // Where the bursts' CPU went: the machine's busy share of its cores,
    // and per turn the daemon's own, its processes' (hooks and tools,
    // reaped), the bench's (client and endpoint) and anything else's.
    // SAFETY: sysconf with a valid name reads a constant.
    let tick_ms = 1000.0 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let per_turn = |ticks: u64| ticks as f64 * tick_ms / (BURSTS * SESSIONS) as f64;
    let t = burst_ticks;
    let other = t.busy.saturating_sub(t.daemon + t.children + t.bench);
    println!(
        "  burst CPU:         machine {:.0}% busy; per turn: daemon {:.2} ms ({:.2} user, {:.2} system), its processes {:.2} ms, bench {:.2} ms, other {:.2} ms",
        100.0 * t.busy as f64 / t.total.max(1) as f64,
        per_turn(t.daemon),
        per_turn(t.daemon_user),
        per_turn(t.daemon - t.daemon_user),
        per_turn(t.children),
        per_turn(t.bench),
        per_turn(other)
    );
    println!(
        "  steady {rate:>6.1}/s:    p50 {:>6.2} ms  p99 {:>6.2} ms  {steady_ratio:.2}x the single p99  target ≤ {STEADY_TARGET}x: {}",
        ms(percentile(&steady, 0.5)),
        ms(steady_p99),
        verdict(steady_ratio <= STEADY_TARGET)
    );
    println!(
        "  daemon RSS:        {} KiB before the sessions, {} KiB with {SESSIONS} idle, {} KiB after the run",
        rss_before.0, rss_idle.0, rss_after.0
    );
    println!("  errors:            {}", errors.len());
    for e in errors.iter().take(5) {
        println!("    {e}");
    }
    if problems.contains("ERROR") {
        println!("  daemon stderr:\n{problems}");
    }
    let met = per_session <= PER_SESSION_TARGET_KIB
        && fds_idle <= fds_before + 1
        && burst_ratio >= BURST_TARGET
        && steady_ratio <= STEADY_TARGET
        && errors.is_empty();
    if !met {
        std::process::exit(1);
    }
}
