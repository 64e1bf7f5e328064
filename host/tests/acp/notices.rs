//! Honest stop reasons and hook text for the user, through the real Claude
//! hook bridge and real shell hooks: a blocked prompt ends `refusal` with
//! the hook's reason as an agent message; `systemMessage` and the
//! `stopReason` of `continue: false` reach the user, never the model.

use agent_client_protocol::v1::schema::StopReason;
use dsh_test_support::agent::Load;
use serde_json::{Value, json};

use crate::support::{Answer, TestHost, of_kind, text};

/// A host whose Claude bridge runs `hooks` (the settings.json `hooks`
/// object), with `make(dir)` building it.
fn host(script: Value, hooks: impl FnOnce(&std::path::Path) -> Value) -> TestHost {
    TestHost::with_loads(script, |dir| {
        let settings = dir.join("settings.json");
        std::fs::write(&settings, json!({"hooks": hooks(dir)}).to_string()).unwrap();
        vec![Load::builtin(
            "hooks-claude",
            "hooks-claude",
            json!({"config_path": settings}),
        )]
    })
}

fn echo_json(v: Value) -> Value {
    json!({"type": "command", "command": format!("printf '%s' '{v}'")})
}

fn texts(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_a_hook_blocks_is_a_refusal_and_the_user_reads_why() {
    let host = host(json!([text("never")]), |_| {
        json!({"UserPromptSubmit": [{"hooks": [echo_json(json!({
            "decision": "block", "reason": "not on fridays", "systemMessage": "policy says no"
        }))]}]})
    });
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "ship it").await.unwrap(),
        StopReason::Refusal
    );
    assert!(host.requests().is_empty(), "the model must not be called");
    let said = texts(&client.take_updates());
    assert_eq!(
        said,
        [
            "policy says no",
            "UserPromptSubmit operation blocked by hook:\nnot on fridays\n\nOriginal prompt: ship it",
        ]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_messages_and_stop_reasons_reach_the_user_not_the_model() {
    let host = host(json!([text("first"), text("second")]), |_| {
        json!({
            "UserPromptSubmit": [{"hooks": [echo_json(json!({"systemMessage": "prompt noted"}))]}],
            "Stop": [{"hooks": [echo_json(json!({"continue": false, "stopReason": "stopping here"}))]}]
        })
    });
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    let said = texts(&client.take_updates());
    assert_eq!(said, ["prompt noted", "first", "stopping here"]);
    // Shown to the user, logged as notices, never sent to the model.
    let log = host.log(&session);
    let notices: Vec<&str> = of_kind(&log, "user/notice")
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert_eq!(notices, ["prompt noted", "stopping here"]);
    let request = host.requests()[0].to_string();
    assert!(!request.contains("prompt noted"), "{request}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_shows_notices_gets_hook_text_as_notices() {
    use agent_client_protocol::v1::schema::{
        ClientCapabilities, ClientSessionCapabilities, NoticeCapabilities,
    };
    let host = host(
        json!([text("answer")]),
        |_| json!({"UserPromptSubmit": [{"hooks": [echo_json(json!({"systemMessage": "prompt noted"}))]}]}),
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    client
        .initialize_with(
            ClientCapabilities::new()
                .session(ClientSessionCapabilities::new().notices(NoticeCapabilities::new())),
        )
        .await;
    let session = client.new_session(&host.project).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    assert_eq!(
        client.take_updates(),
        [
            json!({"sessionUpdate": "notice", "severity": "info", "title": "prompt noted",
                   "description": "from the UserPromptSubmit hook"}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "answer"}}),
        ]
    );
    client.close().await;
}
