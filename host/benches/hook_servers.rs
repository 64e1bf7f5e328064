//! What a PreToolUse decision costs through a `socket` hook server, against
//! an `exit 0` command hook and a native listener, measured in one run.
//!
//! - `socket_hook`: the `hooks-claude` bridge on a real host whose only
//!   hook is `{"type": "socket", "path": ...}`; the server is a separate
//!   process answering `exit_code: 0` on one long-lived connection (what
//!   dsh adds per call: payload, service call, one JSON-RPC round trip,
//!   decision). A user's server may be written in any language; this one
//!   is the least a server can cost: this bench's own binary started again
//!   as a minimal Rust server (on a one-thread tokio runtime, as a Rust
//!   server usually is), which reads each request line whole and parses it
//!   into the one field it needs (`id`) rather than into a
//!   `serde_json::Value` tree. A Python or Node server adds its own parse
//!   and write to every call. Target:
//!   <= 100 µs per call.
//! - `command_hook_exit_0`: the same bridge whose only hook is `exit 0`
//!   (a process spawn per call). Target: >= 20x the socket hook's cost.
//! - `native_listener`: a built-in plugin answering allow.
//! - `floor_task` and `floor_blocking`: the physical floor, with no dsh
//!   code. The exact request line dsh writes for the socket hook's call
//!   (captured once, before timing, from a real call to a socket the bench
//!   listens on) sent on a second connection to the same server process,
//!   and its answer line read back: from a task on the same runtime
//!   through a tokio `UnixStream` (`floor_task`: the two cross-process
//!   wake-ups plus the runtime's own), and from the bench's thread through
//!   a blocking std `UnixStream` (`floor_blocking`: the two wake-ups
//!   alone). `socket_hook - floor_task` is dsh's share.
//!
//! Each call is one pre-execute waterfall run as a task on the runtime's
//! workers (where a daemon's turns run), timed inside the task. Each
//! point's session is started on the bus first (`agent/session-start`),
//! as a daemon does, so the bridge resolves the session's hooks once and
//! the timed calls measure what a daemon does per call (not a re-read of
//! the settings files). No agent runs in the bench's host, so the
//! bridge's `hook/*` records are refused rather than appended.
//!
//! The ratios are printed after criterion's report, from interleaved rounds
//! (medians), so machine load hits every side alike.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench reports on stdout

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use abi_stable::std_types::{RArc, ROption};
use criterion::{Criterion, criterion_group};
use dsh_host::plugins::{HostCore, PluginHost, builtin};
use dsh_plugin_api::{Host, Next, NoConfig, Plugin, PreToolDecision, ToolCall, plugin_module};
use serde_json::{Value, json};

#[path = "common/point.rs"]
mod point_support;

use point_support::{Point, session};

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

/// Set (to the socket to listen on) in the bench's own process started
/// again as the hook server.
const SERVER_ENV: &str = "DSH_BENCH_HOOK_SERVER";

/// The one field of a request the bench's server needs.
#[derive(serde::Deserialize)]
struct Request {
    id: u64,
}

/// The hook server (this binary started again with [`SERVER_ENV`]): on
/// `socket`, answers every request `exit_code: 0`, reading each request
/// line whole and parsing it (into the one field it uses, as a Rust server
/// would) before it writes its answer line. It is written as a Rust server
/// usually is, on tokio (one thread, epoll; so is a Node server), one task
/// per connection. It exits when its stdin closes (the bench has ended).
fn serve(socket: &str) {
    use std::io::Write as _;
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let listener = tokio::net::UnixListener::bind(socket).unwrap();
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = tokio::io::BufReader::new(read).lines();
                let mut answer = Vec::new();
                while let Ok(Some(line)) = lines.next_line().await {
                    let request: Request = serde_json::from_str(&line).unwrap();
                    answer.clear();
                    writeln!(
                        answer,
                        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"exit_code\":0,\"stdout\":\"\",\"stderr\":\"\"}}}}",
                        request.id
                    )
                    .unwrap();
                    write.write_all(&answer).await.unwrap();
                }
            });
        }
    });
}

/// The hook server process, listening on `socket` once this returns;
/// dropping it ends the server.
struct Server(std::process::Child);

impl Server {
    fn start(socket: &Path) -> Server {
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .env(SERVER_ENV, socket)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let server = Server(child);
        let limit = Instant::now() + Duration::from_secs(30);
        while std::os::unix::net::UnixStream::connect(socket).is_err() {
            assert!(Instant::now() < limit, "the hook server did not listen");
            std::thread::sleep(Duration::from_millis(5));
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
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
    let _server = Server::start(&sock);
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
    socket.pre_execute(&rt);
    let request = captured_request(&rt);
    let floor_task = TaskFloor::connect(&rt, &sock, &request);
    let floor_blocking = BlockingFloor::connect(&sock, &request);
    floor_task.round_trip(&rt);
    floor_blocking.round_trip();

    let mut g = c.benchmark_group("hook_servers");
    g.bench_function("socket_hook", |b| reported(b, || socket.pre_execute(&rt)));
    g.bench_function("command_hook_exit_0", |b| {
        reported(b, || command.pre_execute(&rt))
    });
    g.bench_function("native_listener", |b| {
        reported(b, || native.pre_execute(&rt))
    });
    g.bench_function("floor_task", |b| reported(b, || floor_task.round_trip(&rt)));
    g.bench_function("floor_blocking", |b| {
        reported(b, || floor_blocking.round_trip())
    });
    g.finish();

    let rounds = 200;
    let (mut s, mut cmd, mut n) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ft, mut fb) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for (side, out) in [(&socket, &mut s), (&command, &mut cmd), (&native, &mut n)] {
            out.push(side.pre_execute(&rt));
        }
        ft.push(floor_task.round_trip(&rt));
        fb.push(floor_blocking.round_trip());
    }
    let (s, cmd, n) = (median(s), median(cmd), median(n));
    let (ft, fb) = (median(ft), median(fb));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\nPreToolUse decision (median of {rounds}): socket hook {s:?} (target <= 100 µs), \
         `exit 0` command hook {cmd:?}, native listener {n:?}\n\
         command / socket = {:.1}x (target >= 20x); socket / native = {:.1}x\n\
         floor (the same request line, raw, to the same server): from a task {ft:?}, \
         blocking {fb:?}; dsh's share (socket - task floor) {:?}; \
         command / task floor = {:.1}x (the best a socket hook can reach here)\n\
         load average: {}",
        cmd.as_secs_f64() / s.as_secs_f64(),
        s.as_secs_f64() / n.as_secs_f64(),
        s.saturating_sub(ft),
        cmd.as_secs_f64() / ft.as_secs_f64(),
        load.trim()
    );
}

/// The request line the socket hook's bridge writes for one call of
/// `point` (with its newline): read off the first connection to a socket
/// the bench listens on itself, answered `exit_code: 0` so the call ends
/// as the timed ones do.
fn captured_request(rt: &tokio::runtime::Runtime) -> Vec<u8> {
    use std::io::{BufRead as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let capture = point(
        rt,
        tempfile::tempdir().unwrap(),
        Some(json!({"type": "socket", "path": path})),
    );
    let reader = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut lines = std::io::BufReader::new(stream.try_clone().unwrap());
        let mut line = Vec::new();
        lines.read_until(b'\n', &mut line).unwrap();
        let request: Request = serde_json::from_slice(&line).unwrap();
        let mut answer = &stream;
        writeln!(
            answer,
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"exit_code\":0,\"stdout\":\"\",\"stderr\":\"\"}}}}",
            request.id
        )
        .unwrap();
        line
    });
    capture.start_session(rt);
    capture.pre_execute(rt);
    let line = reader.join().unwrap();
    assert!(line.ends_with(b"\n"), "{}", String::from_utf8_lossy(&line));
    line
}

/// The floor's client side from a task on the runtime: `line` written, one
/// answer line read, on a connection of its own to the bench's server.
struct TaskFloor {
    stream: Arc<tokio::sync::Mutex<tokio::io::BufReader<tokio::net::UnixStream>>>,
    line: Arc<[u8]>,
}

impl TaskFloor {
    fn connect(rt: &tokio::runtime::Runtime, socket: &Path, line: &[u8]) -> TaskFloor {
        let stream = rt
            .block_on(tokio::net::UnixStream::connect(socket))
            .unwrap();
        TaskFloor {
            stream: Arc::new(tokio::sync::Mutex::new(tokio::io::BufReader::new(stream))),
            line: line.into(),
        }
    }

    /// One round trip, timed inside a task on the runtime's workers (as
    /// [`Point::pre_execute`] times a call).
    fn round_trip(&self, rt: &tokio::runtime::Runtime) -> Duration {
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
        let (stream, line) = (self.stream.clone(), self.line.clone());
        let task = async move {
            let mut stream = stream.lock().await;
            let mut answer = Vec::with_capacity(128);
            let t = Instant::now();
            stream.get_mut().write_all(&line).await.unwrap();
            stream.read_until(b'\n', &mut answer).await.unwrap();
            let took = t.elapsed();
            assert!(answer.ends_with(b"\n"), "the server closed");
            took
        };
        rt.block_on(rt.spawn(task)).unwrap()
    }
}

/// The floor's client side on the calling thread, blocking.
struct BlockingFloor {
    stream: std::cell::RefCell<std::io::BufReader<std::os::unix::net::UnixStream>>,
    line: Vec<u8>,
}

impl BlockingFloor {
    fn connect(socket: &Path, line: &[u8]) -> BlockingFloor {
        let stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
        BlockingFloor {
            stream: std::cell::RefCell::new(std::io::BufReader::new(stream)),
            line: line.to_vec(),
        }
    }

    fn round_trip(&self) -> Duration {
        use std::io::{BufRead as _, Write as _};
        let mut stream = self.stream.borrow_mut();
        let mut answer = Vec::with_capacity(128);
        let t = Instant::now();
        stream.get_mut().write_all(&self.line).unwrap();
        stream.read_until(b'\n', &mut answer).unwrap();
        let took = t.elapsed();
        assert!(answer.ends_with(b"\n"), "the server closed");
        took
    }
}

/// Criterion's timing of `measured`, by the time it reports.
fn reported(b: &mut criterion::Bencher<'_>, measured: impl Fn() -> Duration) {
    b.iter_custom(|iters| (0..iters).map(|_| measured()).sum());
}

criterion_group!(benches, bench);

fn main() {
    if let Some(socket) = std::env::var_os(SERVER_ENV) {
        return serve(&socket.to_string_lossy());
    }
    // As the `dsh` binary does first thing (and the `hooks` bench): a root
    // process that kept its capabilities would have the runner drop them in
    // each child from a `pre_exec` hook, which makes std fork the whole bench
    // for every command hook instead of `posix_spawn`, a cost `dsh` never pays.
    dsh_bash_local::runner::drop_capabilities_at_startup().expect("drop capabilities");
    benches();
    Criterion::default().configure_from_args().final_summary();
}
