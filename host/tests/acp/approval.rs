//! Approval over ACP: a pre-tool `ask` becomes `session/request_permission`.

use agent_client_protocol::v1::schema::StopReason;
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestHost, bash, of_kind, text, within};

const ASK: &str = "ask";

fn host() -> TestHost {
    TestHost::new(
        Model::Scripted(json!([bash("touch approved.txt"), text("ok")])),
        &[json!({"pre": ASK})],
    )
}

/// The approval outcome the session log recorded.
fn approval(host: &TestHost, session: &str) -> Value {
    let log = host.log(session);
    let approvals = of_kind(&log, "tool/approval");
    assert_eq!(approvals.len(), 1, "{log:#?}");
    approvals[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_ask_runs_the_tool() {
    let host = host();
    let (mut client, _serving) = host.connect(Answer::Allow).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "touch it").await.unwrap(),
        StopReason::EndTurn
    );
    let asked = within("the permission request", client.permissions.recv())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&asked).unwrap(),
        json!({
            "sessionId": session,
            "toolCall": {
                "toolCallId": "call_1_1", "title": "Bash: touch approved.txt", "kind": "execute",
                "status": "pending", "rawInput": {"command": "touch approved.txt"}
            },
            "options": [
                {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow_always", "name": "Allow always (this session)", "kind": "allow_always"},
                {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"}
            ]
        })
    );
    assert!(host.project.join("approved.txt").exists());
    let updates = client.take_updates();
    // pending (the permission request) → in_progress once allowed → completed.
    assert_eq!(
        updates[1],
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1_1", "status": "in_progress"})
    );
    assert_eq!(updates[2]["status"], "completed", "{updates:#?}");
    assert_eq!(approval(&host, &session)["outcome"], "allow_once");
    // The request was answered: nothing cancels it.
    let sent = host.sent_methods();
    assert!(
        sent.contains(&"session/request_permission".to_string()),
        "{sent:?}"
    );
    assert!(!sent.contains(&"$/cancel_request".to_string()), "{sent:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_runs_the_tool_but_a_hooks_ask_still_asks_again_as_recorded() {
    let host = TestHost::new(
        Model::Scripted(json!([
            bash("touch approved.txt"),
            bash("touch approved.txt"),
            bash("touch other.txt"),
            text("ok"),
        ])),
        &[json!({"pre": ASK})],
    );
    let (mut client, _serving) = host.connect(Answer::AllowAlways).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "touch them").await.unwrap(),
        StopReason::EndTurn
    );
    let mut asked = Vec::new();
    while let Ok(request) = client.permissions.try_recv() {
        asked.push(request.tool_call.fields.title.clone().unwrap());
    }
    // "Always" adds a session rule, but a pre-execute `ask` asks even over
    // an allow rule (recorded: S31-hook-ask-vs-allow-rule-trusted), so the
    // repeat is asked again. (An ask of the rules themselves is not:
    // `modes::`.)
    assert_eq!(
        asked,
        [
            "Bash: touch approved.txt",
            "Bash: touch approved.txt",
            "Bash: touch other.txt"
        ]
    );
    let log = host.log(&session);
    let outcomes: Vec<&Value> = of_kind(&log, "tool/approval")
        .iter()
        .map(|a| &a["outcome"])
        .collect();
    assert_eq!(outcomes, ["allow_always", "allow_always", "allow_always"]);
    assert!(host.project.join("other.txt").exists());
    client.close().await;
}

/// Claude Code's text for a call the user refused ("No" in its dialog).
const USER_REJECTED: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_ask_skips_the_tool_stops_the_turn_and_the_model_reads_claude_codes_texts_next()
{
    let host = host();
    let (mut client, _serving) = host.connect(Answer::Reject).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "touch it").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(
        !host.project.join("approved.txt").exists(),
        "the tool must not run"
    );
    let updates = client.take_updates();
    assert_eq!(
        updates[1],
        json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "call_1_1", "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": USER_REJECTED}}]
        })
    );
    let recorded = approval(&host, &session);
    assert_eq!(recorded["outcome"], "reject");
    assert_eq!(recorded["reason"], USER_REJECTED);
    // As Claude Code's "No" (recorded, S34 user_rejects): the turn stops
    // there, without asking the model again ...
    assert_eq!(host.requests().len(), 1);
    // ... and with the user's next prompt the model reads the refusal as
    // the call's result, then `[Request interrupted by user for tool use]`.
    assert_eq!(
        client.prompt(&session, "what now").await.unwrap(),
        StopReason::EndTurn
    );
    let second = host.requests()[1]["messages"].as_array().unwrap().clone();
    let tail: Vec<(&str, &str)> = second
        .iter()
        .skip_while(|m| m["role"] != "tool")
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tail,
        [
            ("tool", USER_REJECTED),
            ("user", "[Request interrupted by user for tool use]\n"),
            ("user", "what now"),
        ]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_permission_request_denies_with_its_own_reason() {
    let host = host();
    let (mut client, _serving) = host.connect(Answer::Cancel).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "touch it").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(!host.project.join("approved.txt").exists());
    let updates = client.take_updates();
    assert_eq!(
        updates[1]["content"][0]["content"]["text"],
        "the approval request was cancelled"
    );
    assert_eq!(approval(&host, &session)["outcome"], "cancelled");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_cannot_answer_makes_approval_unavailable() {
    let host = host();
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "touch it").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(!host.project.join("approved.txt").exists());
    let updates = client.take_updates();
    let reason = updates[1]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(reason.starts_with("approval unavailable:"), "{reason}");
    assert_eq!(approval(&host, &session)["outcome"], "unavailable");
    client.close().await;
}
