//! Reload is one atomic swap: real agent turns (real `bash` through
//! `bash-local`, the policy gate from its `.so`) run while the manifest is
//! reloaded, and each turn checks the plugins it ran through.
//!
//! - a reload whose gate config is invalid keeps the previous gate: a
//!   denied command stays denied, for 8 concurrent sessions prompting while
//!   the manifest goes good → bad → good;
//! - no turn sees a registry half applied: two gates whose deny lists change
//!   together are seen both old or both new, never one of each, both while a
//!   reload is held in the middle (deterministically, by a plugin whose
//!   apply reads a fifo) and under concurrent turns during repeated reloads.
//!
//! The model is scripted (the only scripted part): either `model-scripted`,
//! or a per-session echo model mounted by the test that asks for one `Bash`
//! call per `|`-separated command in the prompt.

use dsh_host::session::events::wire;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_host::agent::{Agent, AgentOptions, Prompt, TurnOutcome};
use dsh_host::config::Manifest;
use dsh_host::model::{ModelReply, ModelRequest, ModelToolCall, StopReason};
use dsh_host::plugins::{HostCore, PluginHost, PluginStatus};
use dsh_plugin_api::ffi::{Service, Service_TO};
use dsh_tests::{example, temp_dir};
use serde_json::{Value, json};

/// How long any one wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(120);

/// A model that, for a prompt `cmd1|cmd2|…`, asks for one `Bash` call per
/// command, then ends the turn once it sees their results.
#[derive(Clone)]
struct EchoModel;

impl EchoModel {
    fn answer(args: &str) -> Result<ModelReply, String> {
        let request: ModelRequest = serde_json::from_str(args).map_err(|e| e.to_string())?;
        let last = request.messages.last().ok_or("no messages")?;
        if last.role == "tool" {
            return Ok(ModelReply {
                text: "done".into(),
                tool_calls: Vec::new(),
                stop_reason: StopReason::EndTurn,
                ..ModelReply::default()
            });
        }
        let prompt = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .ok_or("no user message")?;
        let tool_calls = prompt
            .content
            .split('|')
            .enumerate()
            .map(|(i, command)| ModelToolCall {
                id: format!("call_{}", i + 1),
                name: "Bash".into(),
                arguments: json!({ "command": command }),
            })
            .collect();
        Ok(ModelReply {
            text: String::new(),
            tool_calls,
            stop_reason: StopReason::ToolUse,
            ..ModelReply::default()
        })
    }
}

impl Service for EchoModel {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let answer = match method.as_str() {
            "complete" => EchoModel::answer(&args)
                .and_then(|reply| serde_json::to_string(&reply).map_err(|e| e.to_string())),
            other => Err(format!("no method `{other}`")),
        };
        let answer = match answer {
            Ok(json) => RResult::ROk(RString::from(json)),
            Err(e) => RResult::RErr(RString::from(e)),
        };
        async move { answer }.into_ffi()
    }
}

/// Mounts the echo model as the `model` service of `core`.
fn mount_echo_model(core: &HostCore) {
    let service = Service_TO::from_ptr(RArc::new(EchoModel), TD_Opaque);
    core.mount_service("test-model", "model", service).unwrap();
}

/// What became of each `Bash` command of a turn: the plugin that denied
/// it, or `None` when it ran (and has a result).
fn verdicts(outcome: &TurnOutcome) -> BTreeMap<String, Option<String>> {
    let events = &wire(&outcome.events);
    let of_type = |t: &'static str| events.iter().filter(move |e| e["type"] == t);
    let mut out = BTreeMap::new();
    for call in of_type("tool/call") {
        let id = &call["call_id"];
        let command = call["arguments"]["command"].as_str().unwrap().to_string();
        let denied = of_type("tool/denied").find(|d| d["call_id"] == *id);
        let verdict = match denied {
            Some(d) => Some(d["by"].as_str().unwrap().to_string()),
            None => {
                let ran = of_type("tool/result").any(|r| r["call_id"] == *id);
                assert!(ran, "`{command}` neither denied nor run: {events:#?}");
                None
            }
        };
        out.insert(command, verdict);
    }
    out
}

/// Writes `text` (plus the state dir) as the manifest and loads it.
fn write_manifest(dir: &Path, text: &str) -> Manifest {
    let path = dir.join("cordis.yml");
    std::fs::write(&path, format!("state_dir: state\n{text}")).unwrap();
    Manifest::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// A host on the current runtime: plugins of `manifest`, an agent.
fn boot(manifest: &Manifest, model: bool) -> (Arc<HostCore>, Arc<Agent>, PluginHost) {
    let core = HostCore::new(
        manifest.state_dir.clone(),
        tokio::runtime::Handle::current(),
    );
    if model {
        mount_echo_model(&core);
    }
    let agent = Agent::new(core.clone(), &manifest.state_dir, AgentOptions::default());
    let mut host = PluginHost::new(core.clone(), manifest.path.clone());
    host.load_manifest(manifest);
    assert!(host.all_applied(), "{:?}", host.problems());
    (core, agent, host)
}

/// Runs `prompts` in each of `sessions` concurrent sessions (one turn per
/// prompt, in order), calling `check` on every turn and telling `progress`
/// after each.
async fn hammer(
    agent: &Arc<Agent>,
    cwd: &Path,
    sessions: usize,
    prompts: &[String],
    check: impl Fn(&str, &TurnOutcome) + Send + Sync + 'static,
    progress: mpsc::Sender<()>,
) {
    let check = Arc::new(check);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..sessions {
        let session = agent.create_session(cwd, None).await.unwrap();
        let (prompts, check, progress) = (prompts.to_vec(), check.clone(), progress.clone());
        tasks.spawn(async move {
            for prompt in prompts {
                let outcome = session.prompt(Prompt::user(&prompt)).await;
                check(&prompt, &outcome);
                let _ = progress.send(());
            }
        });
    }
    tokio::time::timeout(WAIT, async {
        while let Some(joined) = tasks.join_next().await {
            joined.unwrap();
        }
    })
    .await
    .expect("the prompts did not finish in time");
}

fn gate_manifest(gate: &Path, config: &str) -> String {
    format!(
        "plugins:\n  - name: bash-local\n  - id: gate\n    path: {}\n    config: {config}\n",
        gate.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_whose_new_config_is_invalid_keeps_denying_across_reloads_under_concurrent_prompts()
{
    let dir = temp_dir();
    let d = dir.path().to_path_buf();
    let gate = example("policy-gate");
    let good = [
        r#"{deny: ["echo forbidden*"], tools: [Bash]}"#,
        r#"{deny: ["echo forbidden*", "echo other*"], tools: [Bash]}"#,
    ];
    // A typo: `denny` is not a key of the gate's config.
    let bad = r#"{denny: ["echo forbidden*"], tools: [Bash]}"#;
    let manifest = write_manifest(&d, &gate_manifest(&gate, good[0]));
    let (_core, agent, mut host) = boot(&manifest, true);

    // The first bad reload lands before any prompt.
    let report = host.reload(&write_manifest(&d, &gate_manifest(&gate, bad)));
    assert_eq!(report.kept, ["gate"], "{report:?}");
    let record = host.records().iter().find(|r| r.id == "gate").unwrap();
    assert!(
        matches!(&record.status, PluginStatus::Kept(why) if why.contains("denny")),
        "{:?}",
        record.status
    );
    assert!(
        host.problems()
            .iter()
            .any(|p| p.to_string().contains("previous instance keeps running")),
        "{:?}",
        host.problems()
    );

    // Then reloads go good → bad → good … while 8 sessions prompt 6 turns
    // each: one reload per 4 turns done, 8 in all, so every reload runs
    // with turns still to come. (Each reload maps a fresh copy of the
    // gate's library, so the count stays small.)
    let (progress, turns_done) = mpsc::channel();
    let reloader = {
        let d = d.clone();
        std::thread::spawn(move || {
            let mut kinds = Vec::new();
            for n in 0..8 {
                for _ in 0..4 {
                    if turns_done.recv_timeout(WAIT).is_err() {
                        return (host, kinds);
                    }
                }
                // good[0] is what the kept instance runs: start from good[1].
                let config = if n % 2 == 0 {
                    good[(n / 2 + 1) % 2]
                } else {
                    bad
                };
                let report = host.reload(&write_manifest(&d, &gate_manifest(&gate, config)));
                let kind = if report.kept == ["gate"] {
                    "kept"
                } else if report.changed == ["gate"] {
                    "changed"
                } else {
                    panic!("reload {n}: {report:?}")
                };
                kinds.push(kind);
            }
            (host, kinds)
        })
    };
    let prompts: Vec<String> = (0..6)
        .map(|i| match i % 2 {
            0 => format!("echo forbidden-{i}"),
            _ => format!("echo fine-{i}"),
        })
        .collect();
    hammer(
        &agent,
        &d,
        8,
        &prompts,
        |prompt, outcome| {
            let verdicts = verdicts(outcome);
            let expected = match prompt.starts_with("echo forbidden") {
                true => Some("gate".to_string()),
                false => None,
            };
            assert_eq!(
                verdicts.get(prompt),
                Some(&expected),
                "`{prompt}`: {verdicts:?}"
            );
        },
        progress,
    )
    .await;
    let (host, kinds) = reloader.join().unwrap();
    assert_eq!(kinds, ["changed", "kept"].repeat(4));
    assert!(matches!(
        host.records()
            .iter()
            .find(|r| r.id == "gate")
            .unwrap()
            .status,
        PluginStatus::Kept(_)
    ));
}

/// Two gates that change together: `gen` is `old` or `new`.
fn pair_manifest(gate: &Path, gen_: &str, middle: &str) -> String {
    format!(
        "plugins:\n  - name: bash-local\n  - id: gate-a\n    path: {g}\n    config: {{deny: [\"echo a-{gen_}*\"]}}\n{middle}  - id: gate-b\n    path: {g}\n    config: {{deny: [\"echo b-{gen_}*\"]}}\n",
        g = gate.display()
    )
}

/// The prompt that probes both gates of both generations.
const PROBE: &str = "echo a-old|echo b-old|echo a-new|echo b-new";

/// The verdicts of [`PROBE`] when every gate is of generation `gen_`.
fn probe_verdicts(gen_: &str) -> BTreeMap<String, Option<String>> {
    let denied = |gate: &str, of: &str| (of == gen_).then(|| format!("gate-{gate}"));
    BTreeMap::from([
        ("echo a-old".to_string(), denied("a", "old")),
        ("echo b-old".to_string(), denied("b", "old")),
        ("echo a-new".to_string(), denied("a", "new")),
        ("echo b-new".to_string(), denied("b", "new")),
    ])
}

/// Opens `fifo` for writing: returns once a reader opened it.
fn open_fifo_writer(fifo: PathBuf) -> std::fs::File {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::OpenOptions::new().write(true).open(&fifo));
    });
    rx.recv_timeout(WAIT)
        .expect("nobody opened the fifo to read it")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_during_a_reload_held_midway_sees_every_plugin_as_before_it() {
    let dir = temp_dir();
    let d = dir.path().to_path_buf();
    let gate = example("policy-gate");
    // Each turn: one reply with the probe's calls, one that ends it.
    let calls: Vec<Value> = PROBE
        .split('|')
        .map(|c| json!({"name": "Bash", "arguments": {"command": c}}))
        .collect();
    let script = |turns: usize| {
        let replies: Vec<Value> = (0..turns)
            .flat_map(|_| [json!({"tool_calls": calls}), json!({"text": "done"})])
            .collect();
        serde_json::to_string(&replies).unwrap()
    };
    std::fs::write(d.join("script.json"), script(2)).unwrap();
    // The model sits between the gates, so a reload applies gate-a, then
    // the model (whose apply reads its script), then gate-b.
    let model = |script: &str| {
        format!("  - id: model\n    name: model-scripted\n    config: {{script: {script}}}\n")
    };
    let manifest = write_manifest(&d, &pair_manifest(&gate, "old", &model("script.json")));
    let (_core, agent, host) = boot(&manifest, false);
    let session = agent.create_session(&d, None).await.unwrap();
    let first = session.prompt(Prompt::user("probe")).await;
    assert_eq!(verdicts(&first), probe_verdicts("old"), "{first:?}");

    // The next reload changes all three; the model's new script is a fifo,
    // so the reload stops in the model's apply until the test writes it.
    let fifo = d.join("script.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let next = write_manifest(&d, &pair_manifest(&gate, "new", &model("script.fifo")));
    let mut host = host;
    let reload = std::thread::spawn(move || {
        let report = host.reload(&next);
        (host, report)
    });
    let mut writer = open_fifo_writer(fifo);

    // gate-a's new config has been applied by now, gate-b's not yet: a turn
    // starting now must see both old (and the old model).
    let during = session.prompt(Prompt::user("probe")).await;
    assert_eq!(verdicts(&during), probe_verdicts("old"), "{during:?}");

    std::io::Write::write_all(&mut writer, script(1).as_bytes()).unwrap();
    drop(writer);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(reload.join());
    });
    let (host, report) = rx.recv_timeout(WAIT).unwrap().unwrap();
    assert_eq!(report.changed, ["gate-a", "model", "gate-b"], "{report:?}");
    assert!(host.all_applied(), "{:?}", host.problems());
    let after = session.prompt(Prompt::user("probe")).await;
    assert_eq!(verdicts(&after), probe_verdicts("new"), "{after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_turns_during_repeated_reloads_see_both_gates_old_or_both_new() {
    let dir = temp_dir();
    let d = dir.path().to_path_buf();
    let gate = example("policy-gate");
    let manifest = write_manifest(&d, &pair_manifest(&gate, "old", ""));
    let (_core, agent, mut host) = boot(&manifest, true);

    let (progress, turns_done) = mpsc::channel();
    let reloader = {
        let d = d.clone();
        std::thread::spawn(move || {
            let mut reloads = 0;
            // One reload per 4 turns done, 8 in all (each maps fresh copies
            // of the gates' library).
            for n in 0..8 {
                if (0..4).any(|_| turns_done.recv_timeout(WAIT).is_err()) {
                    break;
                }
                let gen_ = if n % 2 == 0 { "new" } else { "old" };
                let report = host.reload(&write_manifest(&d, &pair_manifest(&gate, gen_, "")));
                assert_eq!(report.changed, ["gate-a", "gate-b"], "{report:?}");
                reloads += 1;
            }
            reloads
        })
    };
    let prompts = vec![PROBE.to_string(); 6];
    hammer(
        &agent,
        &d,
        8,
        &prompts,
        |_, outcome| {
            let seen = verdicts(outcome);
            assert!(
                seen == probe_verdicts("old") || seen == probe_verdicts("new"),
                "a turn saw the gates half reloaded: {seen:?}"
            );
        },
        progress,
    )
    .await;
    assert_eq!(reloader.join().unwrap(), 8);
}

#[test]
fn systemd_hears_which_plugin_kept_its_previous_instance_after_a_reload() {
    use dsh_tests::daemon::ServedDaemon;
    let dir = temp_dir();
    let d = dir.path();
    let gate = example("policy-gate");
    let config = d.join("cordis.yml");
    let write = |gate_config: &str| {
        let text = format!("state_dir: state\n{}", gate_manifest(&gate, gate_config));
        std::fs::write(&config, text).unwrap();
    };
    write(r#"{deny: ["echo forbidden*"]}"#);
    let daemon = ServedDaemon::start(&config, d, "warn");

    // A typo in the gate's config: the gate keeps running, and says so.
    write(r#"{denny: ["echo forbidden*"]}"#);
    daemon.signal(libc::SIGHUP);
    daemon.expect_notify("RELOADING=1");
    let ready = daemon.expect_notify("READY=1");
    assert!(ready.contains("STATUS=2/2 plugins applied"), "{ready}");
    assert!(
        ready.contains("new config failed, previous instance kept: gate"),
        "{ready}"
    );
    let stderr = daemon.expect_stderr("previous instance keeps running");
    assert!(stderr.contains("denny"), "{stderr}");

    // Fixed: the status line no longer mentions it.
    write(r#"{deny: ["echo forbidden*", "echo other*"]}"#);
    daemon.signal(libc::SIGHUP);
    daemon.expect_notify("RELOADING=1");
    let ready = daemon.expect_notify("READY=1");
    assert!(ready.contains("STATUS=2/2 plugins applied"), "{ready}");
    assert!(!ready.contains("kept"), "{ready}");
    assert!(daemon.stop().success());
}
