//! The Codex vectors (`tests/fixtures/vectors/codex`), every one.
//!
//! 1. `every_payload_matches_its_vector`: for every `hook_calls` entry, the
//!    payload builder, fed the equivalent seam snapshot (the model's own
//!    `exec_command` arguments for tool calls), writes the recorded stdin
//!    byte for byte, with no trailing newline.
//! 2. `every_vector_replays_through_real_hooks`: the vector's `hooks.json` /
//!    `config.toml` are installed in a sandbox with a real `hook.sh` that
//!    answers as `hook_behaviors` says (per call, or by what stdin holds);
//!    each recorded call is driven through the bridge and checked: what the
//!    hook received (stdin, cwd, argv) and the decision against `outcome`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use dsh_hook_protocol::local::LocalHost;
use dsh_hook_protocol::vectors::{
    Sandbox, Vector, behavior, behavior_entry, foreign_to, load_dir, matches_with_uuids,
    set_launch_env,
};
use dsh_hooks_codex::events::{
    self, compact, interrupt, post_tool_use, pre_tool_use, session_end, session_start, stop,
    subagent, user_prompt_submit,
};
use dsh_hooks_codex::{CodexBridge, Config, ConfigPaths};
use dsh_plugin_api::abi_stable::std_types::{RArc, ROption, RString, RVec};
use dsh_plugin_api::*;
use serde_json::{Map, Value};

/// Events this harness does not drive: they fire from seams it does not
/// build (`agent/model-request`); `host/tests/hooks` replays them.
const NOT_REPRODUCED: [&str; 1] = ["PreModelRequest"];

/// Vectors whose command the hooks allowed and Codex's read-only sandbox
/// then refused (`ran: false`, NOT_REPRODUCED.md, C101): the bridge's
/// decision is the hooks' allow.
const SANDBOX_REFUSED: [&str; 2] = ["C101-on-request-read-only", "C101-never-read-only"];

const MODEL: &str = "mock-model";

fn vectors() -> Vec<Vector> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/vectors/codex");
    let v = load_dir(&dir);
    set_launch_env(&v);
    assert!(
        v.len() >= 60,
        "expected every Codex vector, found {}",
        v.len()
    );
    v
}

fn s(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

/// The session of a call: the hook ran in the session's cwd (`call.cwd`),
/// which the payload may override with a tool's workdir.
/// A sub-agent's payload (`agent_id`, C180-*) is its own session's, whose
/// parent is the `session_id` it names.
fn session(call_cwd: &str, j: &Value) -> SessionRef {
    let agent = j["agent_id"].as_str();
    SessionRef {
        session_id: agent
            .unwrap_or(j["session_id"].as_str().unwrap_or_default())
            .into(),
        cwd: call_cwd.into(),
        log_path: s(j, "transcript_path").into(),
        permission_mode: s(j, "permission_mode").into(),
        turn_id: s(j, "turn_id").into(),
        prompt_id: RString::new(),
        parent_session_id: match agent {
            Some(_) => ROption::RSome(s(j, "session_id").into()),
            None => ROption::RNone,
        },
        agent_type: match agent {
            Some(_) => ROption::RSome(s(j, "agent_type").into()),
            None => ROption::RNone,
        },
    }
}

/// SubagentStart's snapshot: the parent's session, the child's id, log
/// and type.
fn subagent_info(cwd: &str, j: &Value) -> SubagentInfo {
    SubagentInfo {
        parent: SessionRef {
            session_id: s(j, "session_id").into(),
            cwd: cwd.into(),
            log_path: RString::new(),
            permission_mode: s(j, "permission_mode").into(),
            turn_id: RString::new(),
            prompt_id: RString::new(),
            parent_session_id: ROption::RNone,
            agent_type: ROption::RNone,
        },
        child_session_id: s(j, "agent_id").into(),
        child_log_path: s(j, "transcript_path").into(),
        agent_type: s(j, "agent_type").into(),
        description: RString::new(),
        prompt: RString::new(),
        call_id: RString::new(),
        result: ROption::RNone,
    }
}

/// The turn-end snapshot of a cancelled turn (`agent/turn-end`, `aborted`).
fn aborted(call_cwd: &str, j: &Value) -> TurnEndInput {
    TurnEndInput {
        session: session(call_cwd, j),
        reason: "aborted".into(),
        message: ROption::RNone,
    }
}

/// The model's call as dsh would seal it: `exec_command` with the model's
/// own arguments; after a rewrite, with the rewritten command.
fn tool_call(v: &Vector, call_cwd: &str, j: &Value) -> ToolCall {
    let id = s(j, "tool_use_id");
    // A sub-agent's calls are apart (C180-child-tool).
    let recorded = ["tool_calls", "subagent_tool_calls"]
        .iter()
        .filter_map(|k| v.json["outcome"][*k].as_array())
        .flatten()
        .find(|t| t["tool_use_id"] == id.as_str())
        .unwrap_or_else(|| panic!("{}: no tool call {id}", v.name));
    let mut args: Map<String, Value> =
        serde_json::from_str(recorded["arguments"].as_str().unwrap()).unwrap();
    // An MCP tool's and a `multi_agent_v1` call's arguments are their own;
    // the shell's command is `cmd`.
    let own = s(recorded, "name").starts_with("mcp__")
        || [
            "spawn_agent",
            "wait_agent",
            "send_input",
            "close_agent",
            "resume_agent",
        ]
        .contains(&s(recorded, "name").as_str());
    if j["hook_event_name"] == "PostToolUse" && !own {
        args.insert("cmd".into(), j["tool_input"]["command"].clone());
    }
    ToolCall {
        session: session(call_cwd, j),
        call_id: id.into(),
        name: s(recorded, "name").into(),
        arguments: Value::Object(args).to_string().into(),
        parent: ROption::RNone,
    }
}

fn source(j: &Value) -> SessionStartSource {
    match j["source"].as_str() {
        Some("resume") => SessionStartSource::Resume,
        Some("clear") => SessionStartSource::Clear,
        Some("compact") => SessionStartSource::Compact,
        _ => SessionStartSource::Startup,
    }
}

fn continuation(cwd: &str, j: &Value, consecutive: u32) -> ContinuationInput {
    ContinuationInput {
        session: session(cwd, j),
        step_count: 1,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: consecutive,
        last_assistant_message: s(j, "last_assistant_message").into(),
    }
}

fn prompt_input(cwd: &str, j: &Value) -> PromptSubmitInput {
    PromptSubmitInput {
        session: session(cwd, j),
        content: RVec::from(vec![ContentBlock::text(s(j, "prompt"))]),
        source: MessageSource::User.into(),
    }
}

fn post_input(v: &Vector, cwd: &str, j: &Value) -> PostExecuteInput {
    // An MCP tool's result keeps the server's answer as its structured part.
    let result = match &j["tool_response"] {
        Value::Object(answer) => {
            let text = answer["content"][0]["text"].as_str().unwrap_or_default();
            ToolResult::text(text).with_structured(Value::Object(answer.clone()).to_string())
        }
        other => ToolResult::text(other.as_str().unwrap_or_default()),
    };
    PostExecuteInput {
        call: RArc::new(tool_call(v, cwd, j)),
        result,
        denied: false,
    }
}

fn compact_input(cwd: &str, j: &Value) -> CompactInput {
    CompactInput {
        session: session(cwd, j),
        trigger: s(j, "trigger").into(),
        custom_instructions: ROption::RNone,
    }
}

fn compacted_input(cwd: &str, j: &Value) -> CompactedInput {
    CompactedInput {
        session: session(cwd, j),
        trigger: s(j, "trigger").into(),
        summary: "the summary".into(),
    }
}

/// Whether the recorded run ended without `turn.completed`, codex exiting
/// 1: a hook stopped the turn (`continue: false`, C91-*).
fn stopped(v: &Vector) -> bool {
    v.json["outcome"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| {
            r["exit_code"] == 1
                && !r["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e == "turn.completed")
        })
}

fn built_payload(v: &Vector, call: &Value) -> Option<Value> {
    let j = &call["stdin_json"];
    let cwd = s(call, "cwd");
    Some(match j["hook_event_name"].as_str()? {
        "SessionStart" => session_start::payload(
            &SessionStartInput {
                session: session(&cwd, j),
                source: source(j),
            },
            MODEL,
        ),
        "UserPromptSubmit" => user_prompt_submit::payload(&prompt_input(&cwd, j), MODEL),
        "PreToolUse" => pre_tool_use::payload(&tool_call(v, &cwd, j), MODEL),
        "PostToolUse" => {
            let input = post_input(v, &cwd, j);
            post_tool_use::payload(&input, &input.call, MODEL)
        }
        "Stop" => stop::payload(
            &continuation(&cwd, j, u32::from(j["stop_hook_active"] == true)),
            MODEL,
        ),
        "PreCompact" => compact::pre_payload(&compact_input(&cwd, j), MODEL),
        "PostCompact" => compact::post_payload(&compacted_input(&cwd, j), MODEL),
        "SessionEnd" => session_end::payload(&SessionEndInput {
            session: session(&cwd, j),
            reason: s(j, "reason").into(),
        }),
        "Interrupt" => interrupt::payload(&aborted(&cwd, j), MODEL),
        "SubagentStart" => {
            subagent::start_payload(&subagent_info(&cwd, j), &s(j, "turn_id"), MODEL)
        }
        "SubagentStop" => {
            // The continuation of the child's turn: its own log.
            let mut input = continuation(&cwd, j, u32::from(j["stop_hook_active"] == true));
            input.session.log_path = s(j, "agent_transcript_path").into();
            subagent::stop_payload(&input, &j["transcript_path"], MODEL)
        }
        _ => return None,
    })
}

#[test]
fn every_payload_matches_its_vector() {
    let mut skipped = Vec::new();
    let mut checked = 0;
    for v in vectors() {
        for call in v.calls() {
            let Some(payload) = built_payload(&v, call) else {
                skipped.push(s(call, "event"));
                continue;
            };
            let keys: Vec<&str> = payload
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let want: Vec<&str> = call["key_order"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            assert_eq!(keys, want, "{}: key order of {}", v.name, call["event"]);
            assert_eq!(
                events::stdin_bytes(&payload),
                s(call, "stdin"),
                "{}: stdin of {}",
                v.name,
                call["event"]
            );
            assert_eq!(call["trailing_newline"], false, "{}", v.name);
            checked += 1;
        }
    }
    assert!(checked > 150, "only {checked} payloads checked");
    skipped.sort();
    skipped.dedup();
    assert_eq!(skipped, NOT_REPRODUCED);
}

fn bridge_for(v: &Vector, sb: &Sandbox, outs: &Outputs, host: Arc<LocalHost>) -> CodexBridge {
    let mut files: Vec<PathBuf> = sb.write_config_files(v);
    // Codex reads the user layer before the project layer, and within a
    // layer hooks.json before config.toml.
    let project = sb.run().join("proj");
    files.sort_by_key(|p| {
        (
            p.starts_with(&project),
            p.extension().is_some_and(|e| e == "toml"),
        )
    });
    let config = Config {
        config_path: ConfigPaths::Many(files.iter().map(|p| p.display().to_string()).collect()),
        model: MODEL.into(),
        hook_outputs_dir: Some(outs.0.path().display().to_string()),
        ..Config::default()
    };
    CodexBridge::new(config, host)
}

fn check_received(
    v: &Vector,
    sb: &Sandbox,
    call: &Value,
    got: &dsh_hook_protocol::vectors::Captured,
) {
    assert_eq!(
        got.stdin,
        sb.subst(&s(call, "stdin")),
        "{}: stdin of {}",
        v.name,
        call["event"]
    );
    assert!(
        !got.stdin.ends_with('\n'),
        "{}: no trailing newline",
        v.name
    );
    assert_eq!(got.cwd, sb.subst(&s(call, "cwd")), "{}: cwd", v.name);
    let argv: Vec<String> = call["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| sb.subst(a.as_str().unwrap()))
        .collect();
    assert_eq!(got.argv, argv, "{}: argv (nothing substituted)", v.name);
    check_env(v, call, got);
}

/// Codex hands hooks its environment unchanged (`env_added` is empty in
/// every vector; C20: `OTEL_*` and credentials included): every variable of
/// this process reaches the hook as is, and none is added (the shells'
/// `PWD`, `SHLVL`, `_` aside). The one change Codex makes, `PATH` prefixed
/// with its own `codex-path` folder (`env_PATH`), is declared in
/// NOT_REPRODUCED.md: the rest of the recorded PATH is the launch PATH.
fn check_env(v: &Vector, call: &Value, got: &dsh_hook_protocol::vectors::Captured) {
    assert_eq!(call["env_added"], serde_json::json!({}), "{}", v.name);
    assert!(
        call["env_removed"].as_array().is_none_or(Vec::is_empty),
        "{}: Codex removed {}",
        v.name,
        call["env_removed"]
    );
    if let Some(path) = call["env_PATH"].as_str() {
        assert!(
            path.starts_with("$CODEX_VENDOR/codex-path:"),
            "{}: {path}",
            v.name
        );
    }
    let shells = ["PWD", "SHLVL", "_", "OLDPWD"];
    for (k, val) in std::env::vars() {
        if shells.contains(&k.as_str()) || val.contains('\n') || foreign_to(v, &k) {
            continue;
        }
        assert_eq!(got.env_var(&k), Some(val), "{}: env {k}", v.name);
    }
    for line in got.env.lines() {
        let Some((k, _)) = line.split_once('=') else {
            continue;
        };
        let is_name = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        assert!(
            !is_name || shells.contains(&k) || std::env::var_os(k).is_some(),
            "{}: env {k} added; Codex adds nothing",
            v.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_vector_replays_through_real_hooks() {
    // Vectors are independent (one sandbox and bridge each): replay them
    // side by side, since a login shell costs a few hundred milliseconds.
    use futures::StreamExt as _;
    let all = vectors();
    futures::stream::iter(all.iter().map(replay))
        .buffer_unordered(8)
        .collect::<Vec<()>>()
        .await;
}

/// A context Codex cut: it starts as recorded, ends with the footer naming
/// the file (under the sandbox) that holds the hook's whole context.
fn check_spilled(v: &Vector, sb: &Sandbox, recorded: &str, got: &str) {
    let (shown, _) = recorded.split_once("...[truncated ").unwrap();
    assert!(got.starts_with(shown), "{}: {got:.400}", v.name);
    let (_, path) = got
        .rsplit_once("\n\nFull hook output saved to: ")
        .unwrap_or_else(|| panic!("{}: no footer in {got:.400}", v.name));
    assert!(path.starts_with(&sb.run().display().to_string()) || path.starts_with("/"));
    let whole = std::fs::read_to_string(path).unwrap();
    let answered: Value = v.json["hook_behaviors"]
        .as_object()
        .unwrap()
        .values()
        .find_map(|b| serde_json::from_str(b["stdout"].as_str()?).ok())
        .unwrap();
    assert_eq!(
        whole, answered["hookSpecificOutput"]["additionalContext"],
        "{}",
        v.name
    );
    assert!(got.len() < 10_200, "{}: {} bytes", v.name, got.len());
}

/// The texts the model saw at `placement`, paths mapped: Codex's
/// `$TMPDIR/hook_outputs` is the bridge's `outs` (as long, see [`outputs_dir`]).
fn texts(v: &Vector, sb: &Sandbox, outs: &Outputs, placement: &str) -> Vec<String> {
    // `$TMPDIR` was `/tmp` when recorded (a 124-byte footer, FINDINGS §4).
    let codex = "$TMPDIR/hook_outputs/";
    v.json["outcome"]["hook_text_seen_by_model"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["placement"].as_str().unwrap().starts_with(placement))
        // Codex's exec framing is the tool's own output, not a hook's
        // (C20-env-passthrough lists it).
        .filter(|t| !t["text"].as_str().unwrap().starts_with("Chunk ID: "))
        .map(|t| {
            sb.subst(t["text"].as_str().unwrap())
                .replace(codex, &format!("{}/", outs.0.path().display()))
        })
        .collect()
}

/// The bridge's `hook_outputs_dir` for one vector.
struct Outputs(tempfile::TempDir);

/// A folder for saved hook texts whose path plus the session id is exactly
/// as long as Codex's `/tmp/hook_outputs/<36-character session id>`, so that
/// the footer naming the file, and with it Codex's cut points (the footer's
/// tokens come off the budget), are the recorded ones byte for byte.
fn outputs_dir(v: &Vector) -> Outputs {
    let session_len = v
        .calls()
        .first()
        .map_or(0, |c| s(&c["stdin_json"], "session_id").len());
    let tmp = std::env::temp_dir();
    let fixed = tmp.display().to_string().len() + "/ho".len() + session_len;
    let want = "/tmp/hook_outputs".len() + 36;
    assert!(
        fixed + 6 <= want,
        "the temp dir {} is too long to pad",
        tmp.display()
    );
    Outputs(
        tempfile::Builder::new()
            .prefix("ho")
            .rand_bytes(want - fixed)
            .tempdir_in(&tmp)
            .unwrap(),
    )
}

/// `want` with its fresh ids (`$UUID`) taken from `got` when that is all
/// that differs.
fn unified(want: &[String], got: &[String]) -> Vec<String> {
    want.iter()
        .enumerate()
        .map(|(i, w)| match got.get(i) {
            Some(g) if matches_with_uuids(w, g) => g.clone(),
            _ => w.clone(),
        })
        .collect()
}

/// Vectors only the loop-level test (`host/tests/hooks`) replays: several
/// hooks of one point answering at once (`C50-*`, `C197-groups-*`,
/// `C198-*`, `C200-*` but `C200-no-stdin-read`), an `async` hook nobody
/// waits for (`C205-async-true`), a sub-agent's hooks beside its parent's
/// (`C180-*`–`C183-*`); this harness drives one recorded call at a time.
fn loop_only(v: &Vector) -> bool {
    const SEVERAL: [&str; 7] = [
        "C205-async-true",
        "C50-",
        "C197-groups-",
        "C198-",
        "C200-same-",
        "C200-two-",
        "C200-rewrite-",
    ];
    // And a sub-agent beside its parent (C180-*): two threads at once.
    SEVERAL.iter().any(|p| v.name.starts_with(p)) || v.json.get("model_script_subagent").is_some()
}

async fn replay(v: &Vector) {
    if loop_only(v) {
        return;
    }
    let sb = Sandbox::new();
    let outs = outputs_dir(v);
    let host = Arc::new(LocalHost::new());
    let bridge = bridge_for(v, &sb, &outs, host.clone());
    let outcome = &v.json["outcome"];
    let calls = v.calls();
    let mut nth: HashMap<String, usize> = HashMap::new();
    let mut consecutive = 0;
    let mut prompts_seen = 0;
    let mut continuations =
        texts(v, &sb, &outs, "user message, after the assistant message").into_iter();
    let mut tool_contexts: Vec<String> = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let event = s(call, "event");
        if NOT_REPRODUCED.contains(&event.as_str()) {
            continue;
        }
        let label = s(call, "label");
        let n = nth
            .entry(label.clone())
            .and_modify(|n| *n += 1)
            .or_insert(1);
        let (code, out, err) = behavior(v, &label, *n, &s(call, "stdin"));
        // Output that is not UTF-8 is replayed as its bytes, and a hook
        // that killed itself kills itself again (vectors `C19x-invalid-utf8-*`,
        // `C19x-signal`).
        let entry = behavior_entry(v, &label, *n, &s(call, "stdin"));
        let bytes = |k: &str, text: String| match entry[format!("{k}_b64")].as_str() {
            Some(b64) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
            None => text.into_bytes(),
        };
        sb.set_behavior(
            &label,
            code,
            bytes("stdout", out.clone()),
            bytes("stderr", err),
        );
        if entry["killed_by_signal"].is_string() {
            sb.set_killed(&label);
        }
        let j = sb.subst_value(&call["stdin_json"]);
        let cwd = sb.subst(&s(call, "cwd"));
        host.take();
        match event.as_str() {
            "SessionStart" => {
                bridge
                    .on_session_start(&SessionStartInput {
                        session: session(&cwd, &j),
                        source: source(&j),
                    })
                    .await;
                let effects = host.take();
                let got: Vec<String> = effects.contexts.into_iter().map(|(_, t)| t).collect();
                let want = texts(
                    v,
                    &sb,
                    &outs,
                    "developer message, after the environment_context",
                );
                assert_eq!(got, unified(&want, &got), "{}", v.name);
                // The turn went on when any hook of it fired next (a
                // resumed run's SessionStart(compact) follows its
                // SessionStart(resume) in the same turn, `C90-text-then-resume`).
                let prompt_follows = calls.get(i + 1).is_some_and(|c| {
                    c["event"] != "SessionStart" || c["stdin_json"]["source"] == "compact"
                });
                assert_eq!(
                    effects.halts.is_empty(),
                    prompt_follows,
                    "{}: halted turn",
                    v.name
                );
            }
            "UserPromptSubmit" => {
                let d = bridge
                    .on_prompt_submit(&prompt_input(&cwd, &j), || async {
                        Ok(PromptDecision::allow())
                    })
                    .await
                    .unwrap();
                // Answered, or a later hook stopped the turn the prompt
                // opened (C91-*-continue-false).
                let answered = outcome["runs"][prompts_seen]["agent_messages"]
                    .as_array()
                    .is_some_and(|m| !m.is_empty())
                    || stopped(v);
                prompts_seen += 1;
                match d {
                    PromptDecision::Block { .. } => {
                        assert!(!answered, "{}: blocked a prompt Codex let through", v.name)
                    }
                    allowed => {
                        assert!(answered, "{}: let through a prompt Codex blocked", v.name);
                        let want =
                            texts(v, &sb, &outs, "developer message, after the user message");
                        // The hooks' context as the bridge folded it,
                        // empty pieces included (C201-ups-context-empty).
                        let pieces = allowed.context();
                        let got = (!pieces.is_empty()).then(|| {
                            let texts: Vec<&str> = pieces.iter().map(|p| p.text.as_str()).collect();
                            texts.join("\n\n")
                        });
                        match want.first() {
                            // The recording kept the first 300 characters of
                            // Codex's cut (`...[truncated N chars]`); the
                            // rest names the file holding the whole text.
                            Some(t) if t.contains("...[truncated ") => {
                                check_spilled(v, &sb, t, &got.unwrap_or_default())
                            }
                            _ => {
                                let want = (!want.is_empty()).then(|| want.join("\n\n"));
                                let want = want.map(|w| unified(&[w], got.as_slice()).remove(0));
                                assert_eq!(got, want, "{}", v.name)
                            }
                        }
                    }
                }
            }
            "PreToolUse" => {
                let tc = tool_call(v, &cwd, &j);
                let d = bridge
                    .on_pre_tool_use(&tc, || async { Ok(PreToolDecision::allow()) })
                    .await
                    .unwrap();
                let recorded = outcome["tool_calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["tool_use_id"] == tc.call_id.as_str())
                    .unwrap();
                if recorded["ran"] == false && SANDBOX_REFUSED.contains(&v.name.as_str()) {
                    assert_eq!(d, PreToolDecision::allow(), "{}", v.name);
                } else if recorded["ran"] == false {
                    let want = sb.subst(&s(recorded, "result_seen_by_model"));
                    assert_eq!(
                        d,
                        PreToolDecision::Deny {
                            reason: want.into()
                        },
                        "{}",
                        v.name
                    );
                } else {
                    let rewritten = serde_json::from_str::<Value>(&out)
                        .ok()
                        .filter(|o| o["hookSpecificOutput"]["permissionDecision"] == "allow")
                        .and_then(|o| {
                            o["hookSpecificOutput"]["updatedInput"]["command"]
                                .as_str()
                                .map(String::from)
                        })
                        .map(|cmd| {
                            let mut args: Map<String, Value> =
                                serde_json::from_str(&tc.arguments).unwrap();
                            args.insert("cmd".into(), cmd.into());
                            RString::from(Value::Object(args).to_string())
                        });
                    assert_eq!(
                        d,
                        PreToolDecision::Allow {
                            updated_arguments: rewritten.into()
                        },
                        "{}",
                        v.name
                    );
                }
                tool_contexts.extend(host.take().contexts.into_iter().map(|(_, t)| t));
            }
            "PostToolUse" => {
                let input = post_input(v, &cwd, &j);
                let d = bridge
                    .on_post_tool_use(&input, || async { Ok(PostToolDecision::accept()) })
                    .await
                    .unwrap();
                let replaced = texts(v, &sb, &outs, "output of the function_call_output item");
                assert!(
                    d.feedback().is_none(),
                    "{}: Codex never blocks alongside the output",
                    v.name
                );
                let content: ROption<RVec<_>> = d.replaced_content().cloned().into();
                let shown: Vec<String> = content
                    .as_ref()
                    .into_option()
                    .map(|c| vec![blocks_text(c)])
                    .unwrap_or_default();
                let want = unified(&replaced, &shown)
                    .first()
                    .map(|t| RVec::from(vec![ContentBlock::text(t.clone())]));
                assert_eq!(content, want.into(), "{}: PostToolUse output", v.name);
                tool_contexts.extend(d.context_text("\n\n"));
            }
            "Stop" => {
                let d = bridge
                    .on_stop(&continuation(&cwd, &j, consecutive), || async {
                        Ok(ContinuationDecision::Stop)
                    })
                    .await
                    .unwrap();
                let continued = calls[i + 1..]
                    .iter()
                    .take_while(|c| c["event"] != "SessionStart")
                    .find(|c| c["event"] == "Stop")
                    .is_some_and(|c| c["stdin_json"]["stop_hook_active"] == true);
                if continued {
                    let text = continuations
                        .next()
                        .expect("a continuation text per continue");
                    assert_eq!(
                        d,
                        ContinuationDecision::Continue {
                            reason: ROption::RSome(text.into())
                        },
                        "{}",
                        v.name
                    );
                    consecutive += 1;
                } else {
                    assert_eq!(d, ContinuationDecision::Stop, "{}", v.name);
                    consecutive = 0;
                }
            }
            "PreCompact" => {
                let d = bridge
                    .on_pre_compact(&compact_input(&cwd, &j), || async {
                        Ok(PromptDecision::allow())
                    })
                    .await
                    .unwrap();
                let halts = host.take().halts;
                // Codex compacted when PostCompact fired afterwards; else a
                // hook stopped the turn there (C91-pre-continue-false).
                let compacted = calls[i + 1..].iter().any(|c| c["event"] == "PostCompact");
                if compacted {
                    assert_eq!(d, PromptDecision::allow(), "{}: PreCompact", v.name);
                    assert!(halts.is_empty(), "{}: halted {halts:?}", v.name);
                } else {
                    assert!(stopped(v), "{}: neither compacted nor stopped", v.name);
                    assert!(
                        matches!(d, PromptDecision::Block { .. }),
                        "{}: PreCompact {d:?}",
                        v.name
                    );
                    assert_eq!(halts.len(), 1, "{}: halts {halts:?}", v.name);
                }
            }
            "PostCompact" => {
                bridge.on_post_compact(&compacted_input(&cwd, &j)).await;
                let halts = host.take().halts;
                // The turn went on when any hook of it fired next.
                let went_on = i + 1 < calls.len();
                assert_eq!(
                    halts.is_empty(),
                    went_on || !stopped(v),
                    "{}: PostCompact halts {halts:?}",
                    v.name
                );
            }
            "SessionEnd" => {
                bridge
                    .on_session_end(&SessionEndInput {
                        session: session(&cwd, &j),
                        reason: s(&j, "reason").into(),
                    })
                    .await
            }
            "Interrupt" => {
                // A cancelled turn (C173, C174): observe only, whatever the
                // hook answers.
                bridge.on_turn_end(&aborted(&cwd, &j)).await;
                let effects = host.take();
                assert!(
                    effects.contexts.is_empty() && effects.system_contexts.is_empty(),
                    "{}: Interrupt gave the model {:?}",
                    v.name,
                    effects.contexts
                );
            }
            other => panic!("{}: unexpected event {other}", v.name),
        }
        let got = sb
            .take_captured(&label)
            .unwrap_or_else(|| panic!("{}: hook {label} did not run", v.name));
        check_received(v, &sb, call, &got);
    }
    let want = texts(
        v,
        &sb,
        &outs,
        "developer message, after the function_call item",
    );
    let want = unified(&want, &tool_contexts);
    assert_eq!(tool_contexts, want, "{}: tool-step context", v.name);
}
