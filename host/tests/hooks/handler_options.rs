//! Claude Code handler options and `CLAUDE_ENV_FILE` through the real
//! loop: what a vector cannot show (an async hook is not waited for at
//! all; SessionEnd's short budget kills a slow hook; the env script
//! reaches a subagent's `Bash`).

use std::time::Duration;

use serde_json::json;

use crate::bridge::{Case, bash, text};
use crate::support::{of_kind, wait_for, within};

const LIMIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_hook_is_not_waited_for_and_its_deny_changes_nothing() {
    // The hook runs in the session's cwd, where the tool touches `ran`.
    let c = Case::claude(
        json!([bash("touch ran && echo ran"), text("done")]),
        |cap| {
            // The hook can only finish after the tool ran: waiting for it
            // would deadlock the call.
            let hook = cap.hook(
            "pre.sh",
            "cat >/dev/null; while [ ! -f ran ]; do sleep 0.05; done; \
             echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"late\"}}'; \
             touch $CAP/hook_done",
        );
            json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": hook, "async": true}]}]})
        },
    );
    let (_, out) = within("the turn", LIMIT, c.run("go")).await;
    let results = of_kind(&out.events, "tool/result");
    assert_eq!(results[0]["content"], "ran", "{results:?}");
    assert!(of_kind(&out.events, "tool/denied").is_empty());
    wait_for("the async hook to finish", LIMIT, || {
        c.cap.0.join("hook_done").exists()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_end_hook_without_a_timeout_gets_claude_codes_short_budget() {
    let c = Case::claude(json!([text("hi")]), |cap| {
        let hook = cap.hook("end.sh", "cat >/dev/null; sleep 8; touch $CAP/finished");
        json!({"SessionEnd": [{"hooks": [{"type": "command", "command": hook}]}]})
    });
    let (session, _) = c.run("go").await;
    within(
        "the session to close",
        LIMIT,
        c.host.agent.close_session(&session.id, "other"),
    )
    .await;
    // The runner killed the hook's process group before close returned:
    // the hook can no longer finish (with the 600 s default it would
    // have, 8 s in).
    assert_eq!(c.cap.read("finished"), "");
    assert!(!c.cap.0.join("finished").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_bash_runs_its_sessions_claude_env_file_script() {
    let c = Case::claude(
        json!([
            {"tool_calls": [{"name": "Agent", "arguments": {"description": "d", "prompt": "p",
                "subagent_type": "general-purpose"}}]},
            bash("echo \"foo=${MARK_FOO-unset}\""),
            text("child done"),
            text("parent done")
        ]),
        |cap| {
            let hook = cap.hook(
                "ss.sh",
                "cat >/dev/null; printf 'export MARK_FOO=bar\\n' >> \"$CLAUDE_ENV_FILE\"",
            );
            json!({"SessionStart": [{"hooks": [{"type": "command", "command": hook}]}]})
        },
    );
    within("the turn", LIMIT, c.run("go")).await;
    let results: Vec<String> = c
        .host
        .requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(String::from))
        .collect();
    assert!(
        results.iter().any(|r| r == "foo=bar"),
        "the subagent's Bash did not see the env script: {results:?}"
    );
}
