//! Hostile plugins and hostile plugin paths: a `.so` is trusted only when
//! its whole resolved path is (sshd's `StrictModes`), a listener that never
//! answers is cut off at its `listener_timeout_s` and fails its call closed,
//! and a listener that blocks its thread stalls nothing but its own call.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_host::agent::{Agent, AgentOptions, Prompt, TurnOutcome};
use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost, PluginStatus};
use dsh_host::session::TurnEndReason;
use dsh_host::session::events::wire;
use dsh_plugin_api::abi_stable::std_types::RResult;
use dsh_plugin_api::{PreToolDecision, SeamOutput};
use dsh_tests::host::{terminal, tool_call};
use dsh_tests::{TestHost, fixture, run_dsh, temp_dir};
use serde_json::{Value, json};

/// The uid the ownership cases hand files to (`nobody`).
const NOBODY: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

fn mkdir(path: &Path, mode: u32) -> PathBuf {
    std::fs::create_dir_all(path).unwrap_or_else(|e| panic!("mkdir {}: {e}", path.display()));
    chmod(path, mode);
    path.to_path_buf()
}

/// A copy of the `delegate` fixture at `path`, mode 0755.
fn plugin_at(path: &Path) -> PathBuf {
    std::fs::copy(fixture("delegate"), path)
        .unwrap_or_else(|e| panic!("copy to {}: {e}", path.display()));
    chmod(path, 0o755);
    path.to_path_buf()
}

/// Hands `path` to `nobody`; `false` (with the reason printed) when this
/// process may not, i.e. does not run as root.
#[allow(clippy::print_stderr)] // a skipped case says so
fn give_to_nobody(path: &Path) -> bool {
    match std::os::unix::fs::chown(path, Some(NOBODY), None) {
        Ok(()) => true,
        Err(e) => {
            eprintln!(
                "skipped the ownership cases: cannot chown {} to uid {NOBODY} ({e}); they need root",
                path.display()
            );
            false
        }
    }
}

fn status(host: &TestHost, id: &str) -> Result<(), String> {
    match &host.record(id).status {
        PluginStatus::Applied => Ok(()),
        PluginStatus::Failed(message) => Err(message.clone()),
        other => panic!("plugin `{id}`: unexpected status {other:?}"),
    }
}

#[test]
fn plugin_trust_follows_the_whole_resolved_path() {
    // Everything under a private (0700) temp folder: the system temp folder
    // above it is sticky (1777), which the loader accepts.
    let base = temp_dir();
    let base = base.path();
    let clean = mkdir(&base.join("clean"), 0o755);
    let open = mkdir(&base.join("open"), 0o777);
    let sticky = mkdir(&base.join("sticky"), 0o1777);
    let theirs = mkdir(&base.join("theirs"), 0o755);

    let good = plugin_at(&clean.join("libgood.so"));
    let in_sticky = plugin_at(&sticky.join("libsticky.so"));
    let in_open = plugin_at(&open.join("libopen.so"));
    let open_target = plugin_at(&open.join("libtarget.so"));
    let link_to_open = clean.join("liblink-open.so");
    std::os::unix::fs::symlink(&open_target, &link_to_open).expect("symlink");
    let link_to_good = clean.join("liblink-good.so");
    std::os::unix::fs::symlink(&good, &link_to_good).expect("symlink");
    let foreign = plugin_at(&clean.join("libforeign.so"));
    let under_theirs = plugin_at(&theirs.join("libunder.so"));
    let as_root = give_to_nobody(&foreign) && give_to_nobody(&theirs);

    let mut entries = vec![
        ("good", &good),
        ("sticky", &in_sticky),
        ("link-good", &link_to_good),
        ("open", &in_open),
        ("link-open", &link_to_open),
    ];
    if as_root {
        entries.push(("foreign", &foreign));
        entries.push(("under", &under_theirs));
    }
    let yaml: String = entries
        .iter()
        .map(|(id, path)| format!("  - {{id: {id}, path: {}}}\n", path.display()))
        .collect();
    let host = TestHost::load(&format!("plugins:\n{yaml}"));

    for id in ["good", "sticky", "link-good"] {
        assert_eq!(status(&host, id), Ok(()), "{id}");
    }
    let writable = |path: &Path, folder: &Path| {
        format!(
            "{}: refused: folder {} is writable by group or others (mode 777); run `chmod go-w` on it",
            path.display(),
            folder.display()
        )
    };
    assert_eq!(status(&host, "open"), Err(writable(&in_open, &open)));
    assert_eq!(
        status(&host, "link-open"),
        Err(writable(&link_to_open, &open))
    );
    if as_root {
        assert_eq!(
            status(&host, "foreign"),
            Err(format!(
                "{}: refused: file is owned by uid {NOBODY} (mode 755), not by root or the daemon's user (uid 0)",
                foreign.display()
            ))
        );
        assert_eq!(
            status(&host, "under"),
            Err(format!(
                "{}: refused: folder {} is owned by uid {NOBODY} (mode 755), not by root or the daemon's user (uid 0)",
                under_theirs.display(),
                theirs.display()
            ))
        );
    }
    // One problem per refusal, each one line naming the plugin.
    let problems: Vec<String> = host.host.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(problems.len(), if as_root { 4 } else { 2 }, "{problems:#?}");
    assert!(problems.iter().all(|p| !p.contains('\n')), "{problems:#?}");
    chmod(&open, 0o700);
    chmod(&sticky, 0o700);
}

/// A manifest for `dsh prompt`: Bash, a scripted model, and the `stall`
/// fixture configured by `stall` with a 2 s limit.
fn stall_manifest(dir: &Path, stall: Value, script: Value) -> PathBuf {
    let entries = json!([
        {"name": "bash-local"},
        {"name": "model-scripted", "config": {"script": script, "record": dir.join("requests.jsonl")}},
        {"id": "stall", "path": fixture("stall"), "listener_timeout_s": 2, "config": stall},
    ]);
    let text = format!(
        "state_dir: {}\nplugins: {entries}\n",
        dir.join("state").display()
    );
    let path = dir.join("cordis.yml");
    std::fs::write(&path, text).expect("write the manifest");
    path
}

fn bash(command: &str) -> Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]})
}

/// The events of `kind`, without their timestamps.
fn of_kind(events: &[Value], kind: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .map(|e| {
            let mut e = e.clone();
            if let Some(fields) = e.as_object_mut() {
                fields.remove("ts");
            }
            e
        })
        .collect()
}

/// What one `dsh prompt --json` run did.
struct Run {
    code: Option<i32>,
    events: Vec<Value>,
    stderr: String,
    /// The folder the session ran in.
    project: PathBuf,
    /// Model requests made.
    requests: usize,
    _dir: tempfile::TempDir,
}

fn prompt_with_stall(stall: Value) -> Run {
    let dir = temp_dir();
    let project = mkdir(&dir.path().join("project"), 0o755);
    let script = json!([bash("touch ran.txt"), {"text": "done"}, {"text": "done"}]);
    let manifest = stall_manifest(dir.path(), stall, script);
    let out = run_dsh(
        [
            "prompt",
            "--json",
            "--config",
            &manifest.display().to_string(),
            "--cwd",
            &project.display().to_string(),
            "go",
        ],
        dir.path(),
    );
    let events = out
        .stdout_lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let requests = std::fs::read_to_string(dir.path().join("requests.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0);
    Run {
        code: out.code,
        events,
        stderr: out.stderr,
        project,
        requests,
        _dir: dir,
    }
}

fn cut_off(seam: &str) -> Value {
    json!({
        "type": "listener/failed",
        "seam": seam,
        "plugin": "stall",
        "message": "did not answer within 2 s (listener_timeout_s); the call failed closed",
    })
}

const CUT: &str =
    "plugin `stall`: did not answer within 2 s (listener_timeout_s); the call failed closed";

#[test]
fn a_listener_that_never_answers_fails_its_call_closed_and_dsh_prompt_exits() {
    let cases = [
        ("pre-execute", "pending"),
        ("pre-execute", "block"),
        ("guard", "block"),
        ("prompt-submit", "block"),
        ("post-execute", "pending"),
        ("turn-continuation", "pending"),
    ];
    // Each run waits out the limit; run them side by side.
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .iter()
            .map(|(seam, how)| {
                scope.spawn(move || prompt_with_stall(json!({"seam": seam, "how": how})))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a run"))
            .collect()
    });
    for ((seam, how), run) in cases.iter().zip(&runs) {
        let case = format!("{seam}/{how}: stderr:\n{}", run.stderr);
        let ran = run.project.join("ran.txt").exists();
        let denied = of_kind(&run.events, "tool/denied");
        let failed = of_kind(&run.events, "listener/failed");
        let turn_end = of_kind(&run.events, "turn/end");
        match *seam {
            "pre-execute" => {
                assert_eq!(run.code, Some(0), "{case}");
                assert!(!ran, "{case}: the denied tool ran");
                assert_eq!(denied.len(), 1, "{case}");
                assert_eq!(denied[0]["by"], "stall", "{case}");
                assert_eq!(
                    denied[0]["reason"],
                    format!("tools/pre-execute failed: {CUT}"),
                    "{case}"
                );
                assert_eq!(failed, [cut_off("tools/pre-execute")], "{case}");
            }
            "guard" => {
                assert_eq!(run.code, Some(0), "{case}");
                assert!(!ran, "{case}: the denied tool ran");
                assert_eq!(denied.len(), 1, "{case}");
                assert_eq!(denied[0]["by"], "stall", "{case}");
                assert_eq!(
                    denied[0]["reason"],
                    "guard of plugin `stall` failed: did not answer within 2 s (listener_timeout_s); the call failed closed",
                    "{case}"
                );
            }
            "prompt-submit" => {
                // Every prompt blocked: exit 3, the model never asked.
                assert_eq!(run.code, Some(3), "{case}");
                assert_eq!(run.requests, 0, "{case}");
                assert_eq!(failed, [cut_off("agent/prompt-submit")], "{case}");
                let blocked = of_kind(&run.events, "prompt/blocked");
                assert_eq!(blocked.len(), 1, "{case}");
                assert_eq!(blocked[0]["content"], "go", "{case}");
                assert_eq!(blocked[0]["plugin"], "stall", "{case}");
                assert_eq!(
                    blocked[0]["reason"],
                    format!("agent/prompt-submit failed: {CUT}"),
                    "{case}"
                );
                assert_eq!(turn_end[0]["reason"], "rejected", "{case}");
            }
            "post-execute" => {
                assert_eq!(run.code, Some(0), "{case}");
                assert!(ran, "{case}: the tool should have run");
                let result = of_kind(&run.events, "tool/result");
                assert_eq!(result[0]["is_error"], true, "{case}");
                let content = result[0]["content"].as_str().unwrap_or_default();
                assert!(
                    content.ends_with(&format!("tools/post-execute failed: {CUT}")),
                    "{case}: {content}"
                );
                assert_eq!(failed, [cut_off("tools/post-execute")], "{case}");
            }
            "turn-continuation" => {
                // The turn stops: no model request after the cut.
                assert_eq!(run.code, Some(1), "{case}");
                assert_eq!(run.requests, 1, "{case}");
                assert_eq!(failed, [cut_off("agent/turn-continuation")], "{case}");
                assert_eq!(turn_end[0]["reason"], "error", "{case}");
                assert_eq!(
                    turn_end[0]["message"],
                    format!("agent/turn-continuation failed: {CUT}"),
                    "{case}"
                );
            }
            other => unreachable!("{other}"),
        }
    }
}

#[test]
fn time_spent_waiting_on_next_does_not_count_against_a_listener() {
    // A delegating `.so` listener with a 0.5 s limit in front of a chain end
    // that takes three times as long: the listener's own time is tiny.
    let host = TestHost::load(&format!(
        "plugins:\n  - {{id: fast, path: {}, listener_timeout_s: 0.5}}\n",
        fixture("delegate").display()
    ));
    assert_eq!(host.record("fast").status, PluginStatus::Applied);
    let slow_end = terminal(|_| async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
    });
    let call = tool_call("c1", "Bash", json!({"command": "ls"}));
    let traced = host.block_on(
        host.core()
            .view()
            .bus
            .waterfall_traced(dsh_plugin_api::SeamInput::PreExecute(call), slow_end),
    );
    assert_eq!(
        traced.answer,
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
    );
    assert!(traced.timed_out.is_empty(), "{:?}", traced.timed_out);
}

/// Waits (bounded) until `path` exists. A plain thread wait: the runtime
/// under test may be the thing that is stuck.
fn wait_for_file(path: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for `task` from outside its runtime, with a deadline that needs no
/// tokio timer (a stuck worker would stop those too).
fn join_within<T: Send + 'static>(task: tokio::task::JoinHandle<T>, limit: Duration) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(futures::executor::block_on(task));
    });
    rx.recv_timeout(limit).ok().and_then(Result::ok)
}

#[test]
fn a_listener_blocking_its_thread_stalls_only_its_own_session() {
    let dir = temp_dir();
    let project = mkdir(&dir.path().join("project"), 0o755);
    let signal = dir.path().join("stalling");
    // Both sessions get a Bash call first and text after, whatever order
    // they ask in: only the stuck session's calls stall.
    let script = json!([bash("echo one"), bash("echo two"), {"text": "done"}, {"text": "done"}]);
    let stall = json!({"how": "block", "session": "ses-stuck", "signal": signal});
    let manifest = Manifest::load(&stall_manifest(dir.path(), stall, script))
        .unwrap_or_else(|e| panic!("{e}"));
    // One worker: a listener polled on it would stop every session.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let core = HostCore::new(manifest.state_dir.clone(), runtime.handle().clone());
    let agent = Agent::new(core.clone(), &manifest.state_dir, AgentOptions::default());
    let mut host = PluginHost::new(core, manifest.path.clone());
    runtime.block_on(async { host.load_manifest(&manifest) });
    assert!(host.all_applied(), "{:?}", host.problems());

    let turn = |id: &'static str| {
        let (agent, project) = (agent.clone(), project.clone());
        async move {
            let session = agent
                .create_session(&project, Some(id.to_string()))
                .await
                .expect("a session");
            session.prompt(Prompt::user("go")).await
        }
    };
    let stuck = runtime.spawn(turn("ses-stuck"));
    // The stuck session's listener now holds its thread, for good.
    wait_for_file(&signal);
    let free = runtime.spawn(turn("ses-free"));
    let free = join_within(free, Duration::from_secs(60));
    let stuck = join_within(stuck, Duration::from_secs(60));
    // Never wait for the blocked thread (nor, should the host regress, for
    // a worker it holds): the test must fail, not hang.
    drop((host, agent));
    runtime.shutdown_background();
    let free: TurnOutcome = free.expect("the other session finishes while the listener blocks");
    let stuck: TurnOutcome = stuck.expect("the stuck session is cut off at its limit");
    // Snapshot the events as their log lines' JSON.
    let (free_events, stuck_events) = (wire(&free.events), wire(&stuck.events));

    assert_eq!(free.reason, TurnEndReason::Completed, "{:#?}", free.events);
    let result = of_kind(&free_events, "tool/result");
    assert_eq!(result.len(), 1, "{:#?}", free.events);
    assert_eq!(result[0]["is_error"], false, "{:#?}", free.events);
    assert!(of_kind(&free_events, "listener/failed").is_empty());

    assert_eq!(
        stuck.reason,
        TurnEndReason::Completed,
        "{:#?}",
        stuck.events
    );
    let denied = of_kind(&stuck_events, "tool/denied");
    assert_eq!(denied.len(), 1, "{:#?}", stuck.events);
    assert_eq!(denied[0]["by"], "stall");
    assert_eq!(
        of_kind(&stuck_events, "listener/failed"),
        [cut_off("tools/pre-execute")]
    );
}
