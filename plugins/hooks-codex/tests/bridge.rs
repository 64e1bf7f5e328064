//! The Codex bridge's own contract beyond single vectors: several hooks on
//! one point, strict outputs, no Stop cap, the login shell. Every hook is a
//! real command run by the local runner.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;

use dsh_hook_protocol::local::LocalHost;
use dsh_hooks_codex::{CodexBridge, Config, ConfigPaths};
use dsh_plugin_api::abi_stable::std_types::{ROption, RVec};
use dsh_plugin_api::*;
use serde_json::{Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    cwd: String,
    source: String,
    host: Arc<LocalHost>,
    bridge: CodexBridge,
}

fn fixture(hooks: Value) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap().display().to_string();
    let file = dir.path().canonicalize().unwrap().join("hooks.json");
    std::fs::write(&file, json!({ "hooks": hooks }).to_string()).unwrap();
    let host = Arc::new(LocalHost::new());
    let bridge = CodexBridge::new(
        Config {
            config_path: ConfigPaths::One(file.display().to_string()),
            model: "m".into(),
            env: [("DSH_TEST_MARK".to_string(), "1".to_string())].into(),
            ..Config::default()
        },
        host.clone(),
    );
    Fixture {
        _dir: dir,
        cwd,
        source: file.display().to_string(),
        host,
        bridge,
    }
}

fn group(commands: &[&str]) -> Value {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    json!({"hooks": hooks})
}

fn json_out(v: Value) -> String {
    format!("printf '%s' '{v}'")
}

fn session(cwd: &str) -> SessionRef {
    SessionRef {
        session_id: "sess".into(),
        cwd: cwd.into(),
        log_path: String::new().into(),
        permission_mode: "bypassPermissions".into(),
        turn_id: "turn".into(),
        prompt_id: String::new().into(),
        parent_session_id: ROption::RNone,
        agent_type: ROption::RNone,
    }
}

fn shell_call(cwd: &str) -> ToolCall {
    ToolCall {
        session: session(cwd),
        call_id: "call_1".into(),
        name: "exec_command".into(),
        arguments: r#"{"cmd":"echo hi"}"#.into(),
        parent: ROption::RNone,
    }
}

#[tokio::test]
async fn the_first_blocker_in_config_order_gives_the_reason() {
    let f = fixture(json!({"PreToolUse": [group(&[
        "sleep 0.2; echo slow first >&2; exit 2",
        &json_out(json!({"decision": "block", "reason": "fast second"})),
    ])]}));
    let d = f
        .bridge
        .on_pre_tool_use(&shell_call(&f.cwd), || async {
            Ok(PreToolDecision::allow())
        })
        .await
        .unwrap();
    assert_eq!(
        d,
        PreToolDecision::Deny {
            reason: "Command blocked by PreToolUse hook: slow first. Command: echo hi".into()
        }
    );
}

#[tokio::test]
async fn unknown_keys_and_unsupported_answers_fail_open() {
    let f = fixture(json!({"PreToolUse": [group(&[
        &json_out(json!({"decision": "block", "reason": "r", "extra": true})),
        &json_out(json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "?"}})),
        "echo plain text is ignored here",
    ])]}));
    let d = f
        .bridge
        .on_pre_tool_use(&shell_call(&f.cwd), || async {
            Ok(PreToolDecision::allow())
        })
        .await
        .unwrap();
    assert_eq!(d, PreToolDecision::allow());
    let outcomes: Vec<Value> = f
        .host
        .take()
        .records
        .into_iter()
        .filter(|(_, r)| r["type"] == "hook/result")
        .map(|(_, r)| r["outcome"].clone())
        .collect();
    assert_eq!(
        outcomes,
        ["non_blocking_error", "non_blocking_error", "success"]
    );
}

#[tokio::test]
async fn stop_blocks_have_no_cap_and_carry_codex_run_ids() {
    let f = fixture(json!({
        "UserPromptSubmit": [group(&["true"])],
        "Stop": [group(&[&json_out(json!({"decision": "block", "reason": "a < b & c"}))])]
    }));
    let input = ContinuationInput {
        session: session(&f.cwd),
        step_count: 50,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: 40,
        last_assistant_message: "x".into(),
    };
    let d = f
        .bridge
        .on_stop(&input, || async { Ok(ContinuationDecision::Stop) })
        .await
        .unwrap();
    let want = format!(
        "<hook_prompt hook_run_id=\"stop:1:{}\">a &lt; b &amp; c</hook_prompt>",
        f.source
    );
    assert_eq!(
        d,
        ContinuationDecision::Continue {
            reason: ROption::RSome(want.into())
        }
    );
}

#[tokio::test]
async fn two_stop_blocks_are_two_parts_of_one_steering() {
    let f = fixture(json!({
        "Stop": [group(&[
            &json_out(json!({"decision": "block", "reason": "one"})),
            &json_out(json!({"decision": "block", "reason": "two"})),
        ])]
    }));
    let input = ContinuationInput {
        session: session(&f.cwd),
        step_count: 1,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: 0,
        last_assistant_message: "x".into(),
    };
    let d = f
        .bridge
        .on_stop(&input, || async { Ok(ContinuationDecision::Stop) })
        .await
        .unwrap();
    // Codex's two `input_text` items of one message (`C50-two-stop-blocks`).
    let prompt = |i: usize, text: &str| {
        format!(
            "<hook_prompt hook_run_id=\"stop:{i}:{}\">{text}</hook_prompt>",
            f.source
        )
    };
    assert_eq!(
        d,
        ContinuationDecision::ContinueParts {
            parts: vec![prompt(0, "one").into(), prompt(1, "two").into()].into()
        }
    );
}

#[tokio::test]
async fn hooks_run_in_bin_bash_c_with_compact_stdin() {
    let f = fixture(
        json!({"UserPromptSubmit": [group(&["cat > stdin.json; echo \"$0\" > shell.txt"])]}),
    );
    let input = PromptSubmitInput {
        session: session(&f.cwd),
        content: RVec::from(vec![ContentBlock::text("hi")]),
        source: MessageSource::User.into(),
    };
    f.bridge
        .on_prompt_submit(&input, || async { Ok(PromptDecision::allow()) })
        .await
        .unwrap();
    let stdin = std::fs::read_to_string(format!("{}/stdin.json", f.cwd)).unwrap();
    assert_eq!(
        stdin,
        r#"{"session_id":"sess","turn_id":"turn","transcript_path":null,"cwd":"CWD","hook_event_name":"UserPromptSubmit","model":"m","permission_mode":"bypassPermissions","prompt":"hi"}"#
            .replace("CWD", &f.cwd)
    );
    let request = &f.host.take().requests[0];
    // Not a login shell and not `$SHELL` (C20-hook-shell-probe).
    assert_eq!(request.program[..2], ["/bin/bash", "-c"]);
    let shell = std::fs::read_to_string(format!("{}/shell.txt", f.cwd)).unwrap();
    assert_eq!(shell, "/bin/bash\n");
    // Codex adds no variables; only the fixture's configured `env` is there.
    let added: Vec<&String> = request.env.keys().collect();
    assert_eq!(
        added,
        ["DSH_TEST_MARK"],
        "Codex adds no variables of its own"
    );
    assert!(
        request.env_remove_prefixes.is_empty(),
        "Codex removes nothing"
    );
}

#[tokio::test]
async fn post_tool_use_continue_false_replaces_the_output_without_ending_the_turn() {
    let f = fixture(
        json!({"PostToolUse": [group(&[&json_out(json!({"continue": false, "stopReason": "stopped"}))])]}),
    );
    let input = PostExecuteInput {
        call: dsh_plugin_api::abi_stable::std_types::RArc::new(shell_call(&f.cwd)),
        result: ToolResult::text("hi\n"),
        denied: false,
    };
    let d = f
        .bridge
        .on_post_tool_use(&input, || async { Ok(PostToolDecision::accept()) })
        .await
        .unwrap();
    assert_eq!(
        d,
        PostToolDecision::Accept {
            content: ROption::RSome(RVec::from(vec![ContentBlock::text("stopped")])),
            additional_context: ROption::RNone,
        }
    );
    assert!(f.host.take().halts.is_empty());
}

/// A PreToolUse hook that prints a deny and exits, leaving `child` running
/// with the hook's stdout (recorded `C203_background_child`: Codex reads
/// stdout to its end, not to the hook's exit).
async fn deny_then_child(child: &str, timeout_s: Option<u64>) -> (PreToolDecision, Vec<Value>) {
    let deny = json_out(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "MARK bg"}}));
    let mut handler = json!({"type": "command", "command": format!("{deny}; {child} &")});
    if let Some(t) = timeout_s {
        handler["timeout"] = t.into();
    }
    let f = fixture(json!({"PreToolUse": [{"hooks": [handler]}]}));
    let d = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        f.bridge.on_pre_tool_use(&shell_call(&f.cwd), || async {
            Ok(PreToolDecision::allow())
        }),
    )
    .await
    .expect("the hook point ends")
    .unwrap();
    let outcomes = f
        .host
        .take()
        .records
        .into_iter()
        .filter(|(_, r)| r["type"] == "hook/result")
        .map(|(_, r)| r["outcome"].clone())
        .collect();
    (d, outcomes)
}

#[tokio::test]
async fn a_child_holding_stdout_is_waited_for_and_its_output_read() {
    // C203b: a silent child: the deny is read once the child closes stdout.
    let (d, outcomes) = deny_then_child("(sleep 1)", None).await;
    assert_eq!(
        d,
        PreToolDecision::Deny {
            reason: "Command blocked by PreToolUse hook: MARK bg. Command: echo hi".into()
        }
    );
    assert_eq!(outcomes, [json!("blocked")]);
    // C203a: the child's later line joins stdout: JSON then `late` is not
    // JSON, so the hook fails open.
    let (d, outcomes) = deny_then_child("(sleep 1; echo late)", None).await;
    assert_eq!(d, PreToolDecision::allow());
    assert_eq!(outcomes, [json!("non_blocking_error")]);
}

#[tokio::test]
async fn a_child_holding_stdout_past_the_timeout_times_the_hook_out() {
    // C203c: the hook exited with its deny at once, but its stdout stays
    // open past the 1 s timeout: a timeout, the deny is lost.
    let (d, outcomes) = deny_then_child("(sleep 5)", Some(1)).await;
    assert_eq!(d, PreToolDecision::allow());
    assert_eq!(outcomes, [json!("timed_out")]);
}
