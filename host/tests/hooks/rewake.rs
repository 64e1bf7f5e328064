//! `asyncRewake` hooks backgrounded as Claude Code backgrounds them (an
//! `async` one everywhere; any in a session with streaming input, which
//! is what the bridge's `async_rewake: background` means and what `dsh
//! serve` sets): an exit 2 reaches the model at a later request, after a
//! step's tool results, in Claude Code's words and as a system-role
//! message, as Claude Code sends it (recorded, S83).

use serde_json::{Value, json};

use dsh_host::session::TurnEndReason;

use crate::bridge::{Case, bash, text};

/// The last message of the S83 recording's third request, byte for byte
/// (`MARK_REWAKE_ERR woke` on the hook's stderr, exit 2).
const S83_NOTIFICATION: &str = "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event, NOT a message from the user.\nDo NOT interpret this as user acknowledgement, confirmation, or response to any pending question.\n\n<task-notification>\n<summary>Stop hook feedback</summary>\n</task-notification>\n<system-reminder>\nStop hook blocking error from command \"PostToolUse:Bash\": MARK_REWAKE_ERR woke\n\n</system-reminder>";

/// Runs a turn of three `Bash` calls with a `PostToolUse` hook configured
/// as `handler` (plus its command). The hook's first run can only end
/// after the second call has started, so a bridge that waited for it
/// would never reach that call; the second call returns once the hook's
/// process is gone. Returns the model's requests.
async fn run(config: Value, handler: Value) -> Vec<Value> {
    let c = Case::claude_with(
        config,
        json!([
            bash("echo one"),
            bash(
                "touch second-ran; while [ ! -s rewake.pid ]; do sleep 0.05; done; \
                 read p < rewake.pid; while kill -0 \"$p\" 2>/dev/null; do sleep 0.05; done; echo two"
            ),
            bash("echo three"),
            text("done")
        ]),
        |cap| {
            let hook = cap.hook(
                "rewake.sh",
                "cat >/dev/null; if [ -e woke ]; then exit 0; fi; : > woke; \
                 while [ ! -e second-ran ]; do sleep 0.05; done; echo $$ > rewake.pid; \
                 echo MARK_REWAKE_OUT; echo 'MARK_REWAKE_ERR woke' >&2; exit 2",
            );
            let mut h = handler;
            h["type"] = json!("command");
            h["command"] = json!(hook);
            json!({"PostToolUse": [{"matcher": "Bash", "hooks": [h]}]})
        },
    );
    let (_, out) = c.run("do it").await;
    assert_eq!(out.reason, TurnEndReason::Completed, "{:?}", out.events);
    c.host.requests()
}

/// Checks the last request holds the notification once, right after a
/// tool result, as a system-role message (Claude Code's role for it,
/// recorded S83), and no request holds the hook's output any other way.
fn assert_woken(requests: &[Value]) {
    assert_eq!(requests.len(), 4, "{requests:#?}");
    let messages = requests[3]["messages"].as_array().unwrap();
    let at: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i]["content"] == S83_NOTIFICATION)
        .collect();
    assert_eq!(at.len(), 1, "{messages:#?}");
    assert_eq!(messages[at[0]]["role"], "system", "{messages:#?}");
    assert_eq!(messages[at[0] - 1]["role"], "tool", "{messages:#?}");
    for request in requests {
        let text = request.to_string();
        assert!(
            !text.contains("hook blocking error from command:"),
            "the hook was read as a waited-for PostToolUse hook: {text}"
        );
        assert!(text.matches("MARK_REWAKE_ERR").count() <= 1, "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_sessions_rewake_hook_runs_in_the_background_and_its_exit_2_wakes_the_model() {
    let requests = run(
        json!({"async_rewake": "background"}),
        json!({"asyncRewake": true}),
    )
    .await;
    assert_woken(&requests);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_rewake_hook_is_backgrounded_and_woken_in_a_print_mode_session_too() {
    // Claude Code backgrounds `async` hooks everywhere, and its background
    // path brings an `asyncRewake` hook's exit 2 to the model.
    let requests = run(json!({}), json!({"async": true, "asyncRewake": true})).await;
    assert_woken(&requests);
}
