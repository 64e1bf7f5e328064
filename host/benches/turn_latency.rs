//! Where a hook sits in a turn, timed by the processes themselves (issue
//! 15): **reply → first hook running** against a bare spawn's spawn →
//! `main`, and **hook exit → next model request** against the tool's own
//! run, each baseline measured in the same run.
//!
//! One round is one turn of a fresh session on a real host (`bash-local`,
//! `hooks-claude` with one `PreToolUse` hook on `Bash`, and a model plugin
//! of this bench's own): the model answers the user's prompt with one
//! `Bash` call (`true`), the hook runs, the tool runs, and the model
//! answers the tool's result with text. Every timestamp is
//! `CLOCK_MONOTONIC`: the model stamps when it hands its reply back and
//! when the next request reaches it; the hook is `exec stamp FILE`, a tiny
//! C program (built here with `cc`) that appends the clock to `FILE` first
//! thing in `main` and exits. So:
//!
//! - reply → hook running = hook's `main` − model reply. Baseline: a bare
//!   `posix_spawn` of `/bin/sh -c 'exec stamp FILE'` with a 500-byte stdin,
//!   from just before the spawn to the stamp. Target: ≤ baseline + 0.2 ms.
//! - hook exit → next request = next request − hook's `main` (the hook
//!   exits right after its stamp, so its exit is counted against dsh).
//!   Baseline: the tool's own run, a bare spawn and wait of `/bin/bash -c`
//!   with the script the `Bash` tool runs for `true` (wrapped to report its
//!   final directory, as the tool wraps it). Target: ≤ baseline + 0.5 ms.
//!
//! Rounds interleave the baselines and the turn, so machine load hits all
//! alike; figures are medians. The turn runs as a task on the runtime's
//! workers, as a daemon's turns do. Capabilities are dropped at start, as
//! the `dsh` binary does (else every spawn of a root process forks).
//!
//! Run: `cargo bench -p dsh-host --bench turn_latency`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // a benchmark reports on stdout and fails loudly

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use dsh_host::agent::Prompt;
use dsh_host::session::TurnEndReason;
use dsh_plugin_api::services::model::{ModelReply, ModelRequest, ModelToolCall, StopReason};
use dsh_plugin_api::{Host, Plugin};
use dsh_test_support::agent::{AgentHost, Load};
use serde::{Deserialize, Serialize};
use serde_json::json;

const ROUNDS: usize = 200;
const WARMUP: usize = 20;

/// What a hook's stdin is about the size of.
const STDIN: [u8; 500] = [b'x'; 500];

/// The hook: stamps `CLOCK_MONOTONIC` (ns) onto the file named by its
/// argument, first thing, and exits.
const STAMP_C: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (argc < 2) return 2;
    char line[32];
    int n = snprintf(line, sizeof line, "%lld\n",
                     (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) return 3;
    if (write(fd, line, n) != n) return 4;
    return close(fd) == 0 ? 0 : 5;
}
"#;

/// `CLOCK_MONOTONIC` now, in ns.
fn now_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// What the model saw and did, in order: `(reply handed back, ns)` and
/// `(request arrived, ns)`.
static MODEL: Mutex<Vec<(Mark, i64)>> = Mutex::new(Vec::new());

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    Request,
    Reply,
}

/// The bench's model: a `Bash` call (`true`) for the user's prompt, text
/// for a tool's result; stamps each request's arrival and each reply's
/// hand-back.
struct StampModel;

#[derive(Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
struct NoConfig {}

impl Plugin for StampModel {
    type Config = NoConfig;
    const NAME: &'static str = "stamp-model";
    const VERSION: &'static str = "0.0.0";

    fn apply(host: &Host, _: NoConfig) -> Result<Self, String> {
        host.provide_service("model", |_method, args| async move {
            let arrived = now_ns();
            let request: ModelRequest = serde_json::from_value(args).map_err(|e| e.to_string())?;
            let after_tool = request.messages.last().is_some_and(|m| m.role == "tool");
            let reply = if after_tool {
                ModelReply {
                    text: "done".into(),
                    tool_calls: Vec::new(),
                    stop_reason: StopReason::EndTurn,
                    model: None,
                    usage: None,
                }
            } else {
                ModelReply {
                    text: String::new(),
                    tool_calls: vec![ModelToolCall {
                        id: "call_1".into(),
                        name: "Bash".into(),
                        arguments: json!({"command": "true"}),
                    }],
                    stop_reason: StopReason::ToolUse,
                    model: None,
                    usage: None,
                }
            };
            let reply = serde_json::to_value(reply).map_err(|e| e.to_string())?;
            let mut marks = MODEL.lock().unwrap();
            marks.push((Mark::Request, arrived));
            marks.push((Mark::Reply, now_ns()));
            Ok(reply)
        })?;
        Ok(StampModel)
    }
}

/// Builds the stamp program into `dir`; `None` (with the reason printed)
/// when there is no C compiler.
fn build_stamp(dir: &Path) -> Option<PathBuf> {
    let source = dir.join("stamp.c");
    let binary = dir.join("stamp");
    std::fs::write(&source, STAMP_C).unwrap();
    match std::process::Command::new("cc")
        .arg("-O2")
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .status()
    {
        Ok(s) if s.success() => Some(binary),
        Ok(s) => {
            println!("turn_latency: skipped: `cc` failed ({s}) building the stamp hook");
            None
        }
        Err(e) => {
            println!("turn_latency: skipped: no C compiler to build the stamp hook ({e})");
            None
        }
    }
}

/// The last stamp in `file`.
fn last_stamp(file: &Path) -> i64 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no stamp in {}", file.display()))
}

/// Spawns `program -c script` with a 500-byte stdin and waits for it;
/// returns the ns just before the spawn and just after the wait.
fn bare_spawn(program: &str, script: &str) -> (i64, i64) {
    use std::io::Write as _;
    let started = now_ns();
    let mut child = std::process::Command::new(program)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(mut stdin) = child.stdin.take() {
        // The shell may exit before reading it all: EPIPE is fine.
        let _ = stdin.write_all(&STDIN);
    }
    let out = child.wait_with_output().unwrap();
    let ended = now_ns();
    assert!(out.status.success(), "{program} -c {script}: {out:?}");
    (started, ended)
}

fn median(mut v: Vec<i64>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64 / 1e6
}

fn main() {
    // As the `dsh` binary does first thing: else every child of a root
    // process is forked (a `pre_exec` hook drops them per child).
    dsh_bash_local::runner::drop_capabilities_at_startup().expect("drop capabilities");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let Some(stamp) = build_stamp(&root) else {
        return;
    };
    let hook_file = root.join("hook-stamps");
    let base_file = root.join("bare-stamps");
    let hook = format!("exec {} {}", stamp.display(), hook_file.display());
    let bare = format!("exec {} {}", stamp.display(), base_file.display());
    // The script the `Bash` tool runs for `true` (see bash-local's `cwd`).
    let cwd_out = root.join("cwd-out");
    let tool_script = dsh_bash_local::cwd::wrap("true", &cwd_out);

    let settings = root.join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": hook}]}]}})
        .to_string(),
    )
    .unwrap();
    let host = {
        let _enter = rt.enter();
        AgentHost::with_model(
            &root,
            vec![Load::builtin(
                "hooks-claude",
                "hooks-claude",
                json!({"config_path": settings}),
            )],
            Load::native::<StampModel>("model", json!({})),
        )
        .problem_free()
    };

    let (mut to_hook, mut spawn_main, mut to_request, mut tool_run) =
        (vec![], vec![], vec![], vec![]);
    let wall = Instant::now();
    for round in 0..WARMUP + ROUNDS {
        let (started, _) = bare_spawn("/bin/sh", &bare);
        let bare_main = last_stamp(&base_file) - started;
        // The tool's side file starts empty, as the tool creates it.
        std::fs::write(&cwd_out, "").unwrap();
        let (started, ended) = bare_spawn("/bin/bash", &tool_script);
        let bare_tool = ended - started;

        MODEL.lock().unwrap().clear();
        let session = rt.block_on(host.session());
        let outcome = rt
            .block_on(rt.spawn(async move { session.prompt(Prompt::user("go")).await }))
            .unwrap();
        assert_eq!(
            outcome.reason,
            TurnEndReason::Completed,
            "{:?}",
            outcome.message
        );
        let marks = MODEL.lock().unwrap().clone();
        let kinds: Vec<Mark> = marks.iter().map(|(m, _)| *m).collect();
        assert_eq!(
            kinds,
            [Mark::Request, Mark::Reply, Mark::Request, Mark::Reply],
            "one tool call, then text"
        );
        let hook_main = last_stamp(&hook_file);
        let (reply, next_request) = (marks[1].1, marks[2].1);
        assert!(
            reply < hook_main && hook_main < next_request,
            "the hook ran between the reply and the next request"
        );
        if round >= WARMUP {
            spawn_main.push(bare_main);
            tool_run.push(bare_tool);
            to_hook.push(hook_main - reply);
            to_request.push(next_request - hook_main);
        }
    }

    let (to_hook, spawn_main) = (median(to_hook), median(spawn_main));
    let (to_request, tool_run) = (median(to_request), median(tool_run));
    println!(
        "turn_latency: {ROUNDS} turns (+{WARMUP} warm-up) in {:.1} s, medians:",
        wall.elapsed().as_secs_f64()
    );
    let over = to_hook - spawn_main;
    println!(
        "reply -> first hook running: {to_hook:.3} ms vs bare /bin/sh spawn -> main {spawn_main:.3} ms: \
         +{over:.3} ms, ratio {:.3} (target <= +0.200 ms: {})",
        to_hook / spawn_main,
        if over <= 0.2 { "met" } else { "MISSED" }
    );
    let over = to_request - tool_run;
    println!(
        "hook exit -> next model request: {to_request:.3} ms vs the tool's own run (bare /bin/bash -c) \
         {tool_run:.3} ms: +{over:.3} ms, ratio {:.3} (target <= +0.500 ms: {})",
        to_request / tool_run,
        if over <= 0.5 { "met" } else { "MISSED" }
    );
}
