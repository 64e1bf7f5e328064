//! `session/prompt`: streamed updates and stop reasons.

use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{ContentBlock, ImageContent, StopReason};
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestHost, bash, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_text_tool_calls_and_results_then_ends_the_turn() {
    let host = TestHost::new(
        Model::Scripted(json!([
            {"text": "Let me look.", "tool_calls": [{"name": "Bash", "arguments": {"command": "pwd"}}]},
            text("All done."),
        ])),
        &[],
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let init = client.initialize().await;
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    let session = client.new_session(&host.project).await;
    let stop = client.prompt(&session, "where are we?").await.unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    let mut updates = client.take_updates();
    // bash-local owns the structured part of a result; the rest is ours.
    updates[2]["rawOutput"]
        .as_object_mut()
        .unwrap()
        .remove("structured");
    let cwd = host.project.to_string_lossy().into_owned();
    assert_eq!(
        updates,
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Let me look."}}),
            json!({
                "sessionUpdate": "tool_call", "toolCallId": "call_1_1", "title": "Bash: pwd",
                "kind": "execute", "status": "in_progress", "rawInput": {"command": "pwd"}
            }),
            json!({
                "sessionUpdate": "tool_call_update", "toolCallId": "call_1_1", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": cwd}}],
                "rawOutput": {"content": cwd, "is_error": false}
            }),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "All done."}}),
        ]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_text_is_forwarded_as_chunks_and_not_repeated() {
    let host = TestHost::new(Model::Streaming, &[]);
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "hi").await.unwrap(),
        StopReason::EndTurn
    );
    let texts: Vec<Value> = client
        .take_updates()
        .into_iter()
        .map(|u| {
            assert_eq!(u["sessionUpdate"], "agent_message_chunk");
            u["content"]["text"].clone()
        })
        .collect();
    assert_eq!(texts, ["Hel", "lo"]);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_blocked_by_a_plugin_is_a_refusal_telling_why_without_calling_the_model() {
    let host = TestHost::new(
        Model::Scripted(json!([text("never")])),
        &[json!({"prompt": "block:not today"})],
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    let stop = client.prompt(&session, "please").await.unwrap();
    // `cancelled` is the client's own cancel; a block is a refusal.
    assert_eq!(stop, StopReason::Refusal);
    assert_eq!(
        client.take_updates(),
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "not today"}})
        ]
    );
    assert!(host.requests().is_empty(), "the model must not be called");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_is_a_json_rpc_error_carrying_its_message() {
    let host = TestHost::new(Model::Scripted(json!([])), &[]);
    let (client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    let error = client.prompt(&session, "hello").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert!(error.message.contains("out of replies"), "{error:?}");
    // The session is still usable: the failure ended the turn, not the session.
    let error = client.prompt(&session, "again").await.unwrap_err();
    assert!(error.message.contains("out of replies"), "{error:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_sessions_are_not_found_and_unsupported_content_is_invalid_params() {
    let host = TestHost::new(Model::Scripted(json!([bash("true"), text("x")])), &[]);
    let (client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    let error = client.prompt("ses_nope", "hello").await.unwrap_err();
    // -32002, as the ACP schema names it.
    assert_eq!(i32::from(error.code), -32002);
    assert_eq!(error.data, Some(json!({"sessionId": "ses_nope"})));
    let image = ContentBlock::Image(ImageContent::new("AAAA", "image/png"));
    let error = client
        .prompt_blocks(&session, vec![image])
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("image"), "{error:?}");
    // Refusals changed nothing: the session still takes a prompt.
    assert_eq!(
        client.prompt(&session, "ok").await.unwrap(),
        StopReason::EndTurn
    );
    client.close().await;
}
