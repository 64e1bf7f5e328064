//! The Claude bridge's own contract, beyond what one recorded vector pins:
//! several hooks on one point, merging, `ask`, `continue: false`, context
//! folding, timeouts and the `hook/*` records. Every hook is a real
//! `/bin/sh` command run by the local runner.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;

use dsh_hook_protocol::local::LocalHost;
use dsh_hooks_claude::{ClaudeBridge, Config, ConfigPaths};
use dsh_plugin_api::abi_stable::std_types::{RArc, ROption, RVec};
use dsh_plugin_api::*;
use serde_json::{Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    cwd: String,
    host: Arc<LocalHost>,
    bridge: ClaudeBridge,
}

/// A bridge over one settings file holding `hooks`.
fn fixture(hooks: Value) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap().display().to_string();
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, json!({ "hooks": hooks }).to_string()).unwrap();
    let host = Arc::new(LocalHost::new());
    let bridge = ClaudeBridge::new(
        Config {
            config_path: ConfigPaths::One(settings.display().to_string()),
            ..Config::default()
        },
        host.clone(),
    );
    assert!(host.take().warnings.is_empty());
    Fixture {
        _dir: dir,
        cwd,
        host,
        bridge,
    }
}

fn group(matcher: &str, commands: &[&str]) -> Value {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    json!({"matcher": matcher, "hooks": hooks})
}

fn session(cwd: &str) -> SessionRef {
    SessionRef {
        session_id: "sess".into(),
        cwd: cwd.into(),
        log_path: "/log.jsonl".into(),
        permission_mode: "default".into(),
        turn_id: "turn".into(),
        prompt_id: "prompt".into(),
        parent_session_id: ROption::RNone,
        agent_type: ROption::RNone,
    }
}

fn bash_call(cwd: &str) -> ToolCall {
    ToolCall {
        session: session(cwd),
        call_id: "call-1".into(),
        name: "Bash".into(),
        arguments: r#"{"command":"echo hi"}"#.into(),
        parent: ROption::RNone,
    }
}

fn prompt(cwd: &str) -> PromptSubmitInput {
    PromptSubmitInput {
        session: session(cwd),
        content: RVec::from(vec![ContentBlock::text("do it")]),
        source: MessageSource::User.into(),
    }
}

async fn allow() -> Result<PreToolDecision, String> {
    Ok(PreToolDecision::allow())
}

fn json_out(v: Value) -> String {
    format!("printf '%s' '{v}'")
}

#[tokio::test]
async fn deny_beats_ask_beats_allow() {
    // One deny among them: its reason is the model's, whatever finished
    // when. (Which of several denies speaks, the last to finish, is
    // vectors S53-two-denies and S53-deny-exit2-and-json-deny.)
    let f = fixture(json!({"PreToolUse": [group("Bash", &[
        &json_out(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})),
        &json_out(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "sure?"}})),
        &json_out(json!({"decision": "block", "reason": "second"})),
    ])]}));
    let d = f
        .bridge
        .on_pre_tool_use(&bash_call(&f.cwd), allow)
        .await
        .unwrap();
    let PreToolDecision::Deny { reason } = d else {
        panic!("{d:?}")
    };
    assert_eq!(reason.as_str(), "second");
}

#[tokio::test]
async fn ask_becomes_an_approval_request() {
    let f = fixture(json!({"PreToolUse": [group("Bash", &[&json_out(
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "confirm"}}),
    )])]}));
    let d = f
        .bridge
        .on_pre_tool_use(&bash_call(&f.cwd), allow)
        .await
        .unwrap();
    assert_eq!(
        d,
        PreToolDecision::Ask {
            reason: ROption::RSome("confirm".into())
        }
    );
    // A downstream deny still wins over the hook's ask.
    let d = f
        .bridge
        .on_pre_tool_use(&bash_call(&f.cwd), || async {
            Ok(PreToolDecision::Deny {
                reason: "policy".into(),
            })
        })
        .await
        .unwrap();
    assert_eq!(
        d,
        PreToolDecision::Deny {
            reason: "policy".into()
        }
    );
}

#[tokio::test]
async fn identical_commands_run_once_and_records_stay_in_config_order() {
    // `slow` finishes last but is first in config order; the duplicate of
    // `fast` in a second group runs once.
    let slow = "sleep 0.3; printf 'e%.0s' $(seq 600) >&2";
    let fast = "true";
    let f = fixture(json!({"PreToolUse": [group("Bash", &[slow, fast]), group("*", &[fast])]}));
    f.bridge
        .on_pre_tool_use(&bash_call(&f.cwd), allow)
        .await
        .unwrap();
    let effects = f.host.take();
    assert_eq!(effects.requests.len(), 2, "the duplicate command ran");
    let recs: Vec<(String, String)> = effects
        .records
        .iter()
        .map(|(_, r)| {
            (
                r["type"].as_str().unwrap().into(),
                r["command"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        recs,
        [
            ("hook/invoked".into(), slow.into()),
            ("hook/result".into(), slow.into()),
            ("hook/invoked".into(), fast.into()),
            ("hook/result".into(), fast.into()),
        ]
    );
    let stderr = effects.records[1].1["stderr"].as_str().unwrap();
    assert!(
        stderr.len() < 600 && stderr.ends_with("more chars]"),
        "stderr stored whole: {stderr}"
    );
    assert_eq!(effects.records[1].1["dialect"], "claude");
    assert_eq!(effects.records[1].1["event"], "PreToolUse");
}

#[tokio::test]
async fn context_only_hooks_are_not_a_veto() {
    // The answers are read in the order the hooks finished (as Claude Code
    // does): the json hook waits until the plain one has exited and been
    // reaped (its pid is gone), so the order is the same on every run, on a
    // loaded machine too (a mark written before `exit` was not enough: the
    // plain shell could be preempted between the two).
    let json_hook = format!(
        "while [ ! -s plain-pid ]; do :; done; read p < plain-pid; \
         while kill -0 \"$p\" 2>/dev/null; do :; done; {}",
        json_out(
            json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "json ctx"}})
        )
    );
    let f = fixture(json!({"UserPromptSubmit": [group(
        "",
        &["echo plain ctx; echo $$ > plain-pid", &json_hook]
    )]}));
    let mut downstream_ran = false;
    let d = f
        .bridge
        .on_prompt_submit(&prompt(&f.cwd), || {
            downstream_ran = true;
            // As the host hands it on: a later plugin's stamped piece.
            async {
                Ok(PromptDecision::allow()
                    .with_pieces(vec![AuthoredContext::by("later", "theirs")]))
            }
        })
        .await
        .unwrap();
    assert!(downstream_ran, "later plugins must still see the prompt");
    // The later plugins' decision stands; the hooks' context is one
    // system-role text (Claude Code's system message after the prompt).
    assert_eq!(
        d,
        PromptDecision::allow().with_pieces(vec![AuthoredContext::by("later", "theirs")])
    );
    let ours = "UserPromptSubmit hook success: plain ctx\n\nUserPromptSubmit hook additional context: json ctx";
    let effects = f.host.take();
    assert!(effects.contexts.is_empty());
    assert_eq!(
        effects.system_contexts,
        [("sess".to_string(), ours.to_string())]
    );
}

#[tokio::test]
async fn a_prompt_a_later_plugin_blocks_gets_no_hook_context() {
    let f = fixture(json!({"UserPromptSubmit": [group("", &["echo plain ctx"])]}));
    let d = f
        .bridge
        .on_prompt_submit(&prompt(&f.cwd), || async {
            Ok(PromptDecision::Block {
                reason: "later says no".into(),
            })
        })
        .await
        .unwrap();
    assert_eq!(
        d,
        PromptDecision::Block {
            reason: "later says no".into()
        }
    );
    let effects = f.host.take();
    assert!(effects.contexts.is_empty() && effects.system_contexts.is_empty());
}

#[tokio::test]
async fn continue_false_stops_the_prompt_and_halts_tool_turns() {
    let stop = json_out(json!({"continue": false, "stopReason": "enough"}));
    let f = fixture(json!({
        "UserPromptSubmit": [group("", &[&stop])],
        "PreToolUse": [group("Bash", &[&stop])],
        "PostToolUse": [group("Bash", &[&stop])]
    }));
    let d = f
        .bridge
        .on_prompt_submit(&prompt(&f.cwd), || async {
            panic!("no model call after continue:false")
        })
        .await
        .unwrap();
    // Claude Code's words (recorded `S273-continue-false`).
    assert_eq!(
        d,
        PromptDecision::Block {
            reason: "Operation stopped by hook: enough".into()
        }
    );

    let call = bash_call(&f.cwd);
    let d = f.bridge.on_pre_tool_use(&call, allow).await.unwrap();
    assert_eq!(d, PreToolDecision::allow(), "the call's outcome stands");
    let post = PostExecuteInput {
        call: RArc::new(call),
        result: ToolResult::text("hi"),
        denied: false,
    };
    let d = f
        .bridge
        .on_post_tool_use(&post, || async { Ok(PostToolDecision::accept()) })
        .await
        .unwrap();
    assert_eq!(d, PostToolDecision::accept(), "the result stands");
    let halts = f.host.take().halts;
    assert_eq!(
        halts,
        [
            ("sess".to_string(), "enough".to_string()),
            ("sess".to_string(), "enough".to_string())
        ]
    );
}

#[tokio::test]
async fn denied_calls_fire_no_post_hook_and_failures_fire_the_failure_event() {
    let f = fixture(json!({
        "PostToolUse": [group("Bash", &["echo post >&2; exit 2"])],
        "PostToolUseFailure": [group("Bash", &["cat > failure.json"])]
    }));
    let call = bash_call(&f.cwd);
    let denied = PostExecuteInput {
        call: RArc::new(call.clone()),
        result: ToolResult::error("denied"),
        denied: true,
    };
    let d = f
        .bridge
        .on_post_tool_use(&denied, || async { Ok(PostToolDecision::accept()) })
        .await
        .unwrap();
    assert_eq!(d, PostToolDecision::accept());
    assert!(f.host.take().requests.is_empty());
    let failed = PostExecuteInput {
        call: RArc::new(call),
        result: ToolResult::error("Exit code 2\nboom"),
        denied: false,
    };
    f.bridge
        .on_post_tool_use(&failed, || async { Ok(PostToolDecision::accept()) })
        .await
        .unwrap();
    let payload: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}/failure.json", f.cwd)).unwrap())
            .unwrap();
    assert_eq!(payload["hook_event_name"], "PostToolUseFailure");
    assert_eq!(payload["error"], "Exit code 2\nboom");
    assert_eq!(payload["is_interrupt"], false);
}

#[tokio::test]
async fn a_timed_out_hook_fails_open() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("s.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "sleep 30; echo late >&2; exit 2", "timeout": 1}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let host = Arc::new(LocalHost::new());
    let bridge = ClaudeBridge::new(
        Config {
            config_path: ConfigPaths::One(settings.display().to_string()),
            ..Config::default()
        },
        host.clone(),
    );
    let cwd = dir.path().display().to_string();
    let d = bridge
        .on_pre_tool_use(&bash_call(&cwd), allow)
        .await
        .unwrap();
    assert_eq!(d, PreToolDecision::allow());
    let result = host
        .take()
        .records
        .into_iter()
        .map(|(_, r)| r)
        .find(|r| r["type"] == "hook/result")
        .unwrap();
    assert_eq!(result["outcome"], "timed_out");
    assert_eq!(result["timed_out"], true);
}

#[tokio::test]
async fn stop_blocks_stop_after_eight_in_a_row() {
    let f = fixture(
        json!({"Stop": [group("", &[&json_out(json!({"decision": "block", "reason": "again"}))])]}),
    );
    let input = |consecutive| ContinuationInput {
        session: session(&f.cwd),
        step_count: 3,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: consecutive,
        last_assistant_message: "done".into(),
    };
    let stop = || async { Ok(ContinuationDecision::Stop) };
    let d = f.bridge.on_stop(&input(7), stop).await.unwrap();
    assert_eq!(
        d,
        ContinuationDecision::Continue {
            reason: ROption::RSome("Stop hook feedback:\nagain".into())
        }
    );
    assert_eq!(
        f.bridge.on_stop(&input(8), stop).await.unwrap(),
        ContinuationDecision::Stop
    );
    // The loop was going on anyway: Stop hooks do not fire.
    f.host.take();
    let mut going = input(0);
    going.default = ContinuationDecision::Continue {
        reason: ROption::RNone,
    }
    .into();
    f.bridge
        .on_stop(&going, || async {
            Ok(ContinuationDecision::Continue {
                reason: ROption::RNone,
            })
        })
        .await
        .unwrap();
    assert!(f.host.take().requests.is_empty());
}

#[tokio::test]
async fn two_stop_blocks_are_two_parts_of_one_steering() {
    // Two commands (Claude Code runs an identical one once) with the same
    // block: the parts are the same whichever hook ends first.
    let block = json_out(json!({"decision": "block", "reason": "again"}));
    let other = format!("{block}; true");
    let f = fixture(json!({"Stop": [group("", &[&block, &other])]}));
    let input = ContinuationInput {
        session: session(&f.cwd),
        step_count: 1,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: 0,
        last_assistant_message: "done".into(),
    };
    let d = f
        .bridge
        .on_stop(&input, || async { Ok(ContinuationDecision::Stop) })
        .await
        .unwrap();
    // Claude Code's two text blocks (vector `S53-two-stop-blocks`).
    assert_eq!(
        d,
        ContinuationDecision::ContinueParts {
            parts: vec![
                "Stop hook feedback:\nagain\n".into(),
                "Stop hook feedback:\nagain".into()
            ]
            .into()
        }
    );
}

#[tokio::test]
async fn session_start_context_and_subagent_context_go_where_they_belong() {
    let f = fixture(json!({
        "SessionStart": [group("resume", &["echo resumed"]), group("startup", &["echo fresh"])],
        "SubagentStart": [group("general-purpose", &[&json_out(
            json!({"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "for the child"}}),
        )])]
    }));
    // A resumed session's hooks run, but their output reaches no model
    // (Claude Code's `--continue` run, recorded `S131-hook-output`).
    f.bridge
        .on_session_start(&SessionStartInput {
            session: session(&f.cwd),
            source: SessionStartSource::Resume,
        })
        .await;
    let resumed = f.host.take();
    assert!(resumed.contexts.is_empty() && resumed.system_contexts.is_empty());
    f.bridge
        .on_session_start(&SessionStartInput {
            session: session(&f.cwd),
            source: SessionStartSource::Startup,
        })
        .await;
    // SessionStart's is Claude Code's system message: system-role context.
    assert_eq!(
        f.host.take().system_contexts,
        [(
            "sess".to_string(),
            "SessionStart:startup hook success: fresh".to_string()
        )]
    );
    let info = SubagentInfo {
        parent: session(&f.cwd),
        child_session_id: "child".into(),
        child_log_path: "/child.jsonl".into(),
        agent_type: "general-purpose".into(),
        description: "d".into(),
        prompt: "p".into(),
        call_id: "c".into(),
        result: ROption::RNone,
    };
    f.bridge.on_subagent_start(&info).await;
    // SubagentStart's starts the subagent's system message (recorded
    // `S170-additional-context`): system-role context of the child.
    let taken = f.host.take();
    assert!(taken.contexts.is_empty());
    assert_eq!(
        taken.system_contexts,
        [(
            "child".to_string(),
            "SubagentStart hook additional context: for the child".to_string()
        )]
    );
}

/// A subagent's session: `child` of `sess`.
fn child_session(cwd: &str) -> SessionRef {
    let mut s = session(cwd);
    s.session_id = "child".into();
    s.parent_session_id = ROption::RSome("sess".into());
    s.agent_type = ROption::RSome("general-purpose".into());
    s
}

fn subagent(cwd: &str) -> SubagentInfo {
    SubagentInfo {
        parent: session(cwd),
        child_session_id: "child".into(),
        child_log_path: "/child.jsonl".into(),
        agent_type: "general-purpose".into(),
        description: "d".into(),
        prompt: "p".into(),
        call_id: "c".into(),
        result: ROption::RNone,
    }
}

/// The stdins a hook appended to `file` (each one JSON line: Claude's
/// stdin ends with a newline).
fn stdins(file: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn subagent_stop_blocks_keep_the_subagent_going_and_fire_once_per_stop() {
    // Recorded `S171-block-once`, `S173-substop-block-always`: SubagentStop
    // fires when the subagent would stop; a block continues it with Stop's
    // feedback text, the next firing says stop_hook_active, 8 in a row.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stops.jsonl");
    let block = json!({"decision": "block", "reason": "again"});
    let hook = format!("cat >> {}; printf '%s' '{block}'", log.display());
    let f = fixture(json!({
        "SubagentStop": [group("general-purpose", &[&hook])],
        "Stop": [group("", &[&json_out(block.clone())])]
    }));
    f.bridge.on_subagent_start(&subagent(&f.cwd)).await;
    let input = |consecutive| ContinuationInput {
        session: child_session(&f.cwd),
        step_count: 1,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: consecutive,
        last_assistant_message: "sub answer".into(),
    };
    let stop = || async { Ok(ContinuationDecision::Stop) };
    let d = f.bridge.on_stop(&input(0), stop).await.unwrap();
    assert_eq!(
        d,
        ContinuationDecision::Continue {
            reason: ROption::RSome("Stop hook feedback:\nagain".into())
        }
    );
    let d = f.bridge.on_stop(&input(1), stop).await.unwrap();
    assert!(matches!(d, ContinuationDecision::Continue { .. }));
    // The 9th block in a row is overridden.
    assert_eq!(
        f.bridge.on_stop(&input(8), stop).await.unwrap(),
        ContinuationDecision::Stop
    );
    // The subagent ended: its SubagentStop hooks already ran.
    f.bridge.on_subagent_stop(&subagent(&f.cwd)).await;
    let seen = stdins(&log);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "SubagentStop");
    assert_eq!(seen[0]["session_id"], "sess");
    assert_eq!(seen[0]["agent_id"], "child");
    assert_eq!(seen[0]["agent_transcript_path"], "/child.jsonl");
    assert_eq!(seen[0]["last_assistant_message"], "sub answer");
    assert_eq!(
        seen.iter()
            .map(|s| s["stop_hook_active"].clone())
            .collect::<Vec<_>>(),
        [json!(false), json!(true), json!(true)]
    );
    // A subagent that ran no turn of its own (a compaction's forked
    // agent, S90-*) gets its SubagentStop once at its end, observe only.
    let mut other = subagent(&f.cwd);
    other.child_session_id = "child-2".into();
    f.bridge.on_subagent_start(&other).await;
    other.result = ROption::RSome("partial".into());
    f.bridge.on_subagent_stop(&other).await;
    let seen = stdins(&log);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(seen[3]["agent_id"], "child-2");
    assert_eq!(seen[3]["last_assistant_message"], "partial");
    assert_eq!(seen[3]["stop_hook_active"], false);
    // One whose turn ended another way (a failed model request, a cancel)
    // gets none (recorded S180-*, S181-sigint-in-child-tool).
    for (id, reason, message) in [
        ("child-3", "error", "model request refused: HTTP 500: down"),
        ("child-4", "aborted", "cancelled"),
    ] {
        let mut ended = subagent(&f.cwd);
        ended.child_session_id = id.into();
        f.bridge.on_subagent_start(&ended).await;
        let mut session = child_session(&f.cwd);
        session.session_id = id.into();
        f.bridge
            .on_turn_end(&TurnEndInput {
                session,
                reason: reason.into(),
                message: ROption::RSome(message.into()),
            })
            .await;
        f.bridge.on_subagent_stop(&ended).await;
    }
    let seen = stdins(&log);
    assert_eq!(seen.len(), 4, "{seen:?}");
}

#[tokio::test]
async fn post_tool_use_failure_continue_false_does_not_halt_the_turn() {
    // Recorded `S173-failure-continue-false`: the turn goes on.
    let stop = json_out(json!({"continue": false, "stopReason": "enough"}));
    let f = fixture(json!({"PostToolUseFailure": [group("Bash", &[&stop])]}));
    let post = PostExecuteInput {
        call: RArc::new(bash_call(&f.cwd)),
        result: ToolResult::error("Exit code 1"),
        denied: false,
    };
    let d = f
        .bridge
        .on_post_tool_use(&post, || async { Ok(PostToolDecision::accept()) })
        .await
        .unwrap();
    assert_eq!(d, PostToolDecision::accept());
    let effects = f.host.take();
    assert!(effects.halts.is_empty(), "{:?}", effects.halts);
    assert_eq!(
        effects
            .records
            .iter()
            .filter(|(_, r)| r["type"] == "hook/result")
            .count(),
        1,
        "the hook ran"
    );
}
