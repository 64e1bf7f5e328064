//! MCP elicitation over ACP: an MCP server's `elicitation/create` during
//! its tool call, with no hook answering, is asked of the session's editor
//! as ACP's `elicitation/create` when the editor offered elicitation at
//! `initialize`, and is `cancel` (what `claude -p` answers) when it did
//! not. The server is the recorder's (`tests/fixtures/vectors/mcp_server.py
//! --elicit`): its tool answers with what it got back.

use agent_client_protocol::v1::schema::{
    ClientCapabilities, McpServer, McpServerStdio, StopReason,
};
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestHost, of_kind, text};

fn elicit(text: &str) -> Value {
    json!({"tool_calls": [{"name": "mcp__srv__elicit", "arguments": {"text": text}}]})
}

fn server() -> McpServer {
    let script = dsh_test_support::workspace_root().join("tests/fixtures/vectors/mcp_server.py");
    McpServer::Stdio(
        McpServerStdio::new("srv", "python3")
            .args(vec![script.display().to_string(), "--elicit".into()]),
    )
}

fn results(host: &TestHost, session: &str) -> Vec<Value> {
    of_kind(&host.log(session), "tool/result")
        .into_iter()
        .map(|r| r["content"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_offering_elicitation_answers_the_mcp_server() {
    let host = TestHost::new(
        Model::Scripted(json!([
            elicit("who"),
            elicit("editor-declines"),
            text("done")
        ])),
        &[],
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let offers: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    client.initialize_with(offers).await;
    let session = client.new_session_with(&host.project, vec![server()]).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    assert_eq!(
        results(&host, &session),
        [
            json!(
                r#"elicitation result: {"action": "accept", "content": {"name": "from-editor"}}"#
            ),
            json!(r#"elicitation result: {"action": "decline"}"#),
        ]
    );
    let asked = client.elicitations.try_recv().unwrap();
    assert_eq!(
        asked,
        json!({"sessionId": session, "mode": "form", "message": "MARK_ELICIT who",
               "requestedSchema": {"type": "object", "properties": {
                   "name": {"type": "string", "description": "Your name"},
                   "ok": {"type": "boolean", "description": "Proceed?"}},
                   "required": ["name"]}})
    );
    assert_eq!(
        client.elicitations.try_recv().unwrap()["message"],
        "MARK_ELICIT editor-declines"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_offers_no_elicitation_is_not_asked_and_the_server_gets_cancel() {
    let host = TestHost::new(Model::Scripted(json!([elicit("who"), text("done")])), &[]);
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    client.initialize().await;
    let session = client.new_session_with(&host.project, vec![server()]).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    assert_eq!(
        results(&host, &session),
        [json!(r#"elicitation result: {"action": "cancel"}"#)]
    );
    assert!(
        client.elicitations.try_recv().is_err(),
        "the editor was asked"
    );
    client.close().await;
}
