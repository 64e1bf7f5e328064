//! MCP over ACP: the servers a client names in `session/new`, against a
//! real MCP server process (`dsh-mcp-fixture`, on rmcp's server side).
//! Its tools join the session as `mcp__<server>__<tool>` and run through the
//! whole pipeline: the model is offered them, a Claude hook matching
//! `mcp__fix__.*` can deny one, a failing or crashing server ends the call
//! in an error and the session goes on.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{McpServer, McpServerStdio, StopReason};
use dsh_test_support::agent::Load;
use dsh_test_support::artifacts::mcp_fixture;
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestHost, of_kind, text};

fn call(name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": arguments}]})
}

/// The fixture as client server `fix`, touching `started` once serving.
fn fixture(started: &Path) -> McpServer {
    McpServer::Stdio(
        McpServerStdio::new("fix", mcp_fixture())
            .args(vec!["--touch".into(), started.display().to_string()]),
    )
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn calls_file(started: &Path) -> PathBuf {
    started.with_extension("calls")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_server_s_tools_are_offered_called_streamed_and_logged() {
    let host = TestHost::new(
        Model::Scripted(json!([
            call("mcp__fix__echo", json!({"text": "hi"})),
            text("done")
        ])),
        &[],
    );
    let started = host.dir.path().join("started");
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let init = client.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["mcpCapabilities"],
        json!({"http": true, "sse": false})
    );
    let session = client
        .new_session_with(&host.project, vec![fixture(&started)])
        .await;
    assert!(started.exists(), "the server was started by session/new");
    assert_eq!(
        client.prompt(&session, "echo hi").await.unwrap(),
        StopReason::EndTurn
    );
    let requests = host.requests();
    let names = tool_names(&requests[0]);
    for tool in ["mcp__fix__echo", "mcp__fix__fail", "mcp__fix__crash"] {
        assert!(names.contains(&tool.to_string()), "{names:?}");
    }
    let echo = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__fix__echo")
        .unwrap();
    assert_eq!(echo["description"], "Echo the text back");
    assert_eq!(echo["input_schema"]["required"], json!(["text"]));
    // The server really ran it.
    assert_eq!(
        std::fs::read_to_string(calls_file(&started)).unwrap(),
        "hi\n"
    );
    let updates = client.take_updates();
    assert_eq!(
        updates[0],
        json!({
            "sessionUpdate": "tool_call", "toolCallId": "call_1_1", "title": "mcp__fix__echo",
            "status": "in_progress", "rawInput": {"text": "hi"}
        })
    );
    assert_eq!(
        updates[1],
        json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "call_1_1", "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "echo: hi"}}],
            "rawOutput": {
                "content": "echo: hi", "is_error": false,
                "structured": {"content": [{"type": "text", "text": "echo: hi"}], "isError": false}
            }
        })
    );
    let log = host.log(&session);
    let results = of_kind(&log, "tool/result");
    assert_eq!(results[0]["name"], "mcp__fix__echo");
    assert_eq!(results[0]["content"], "echo: hi");
    // The model read the result.
    let tool_msg = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool_msg["content"], "echo: hi");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_hook_matching_mcp_tools_denies_one_and_sees_its_payload() {
    let host = TestHost::with_loads(
        json!([
            call("mcp__fix__echo", json!({"text": "secret"})),
            text("ok")
        ]),
        |dir| {
            let stdin = dir.join("hook-stdin.json");
            let deny = json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "no MCP here"}});
            let settings = dir.join("settings.json");
            std::fs::write(
                &settings,
                json!({"hooks": {"PreToolUse": [{"matcher": "mcp__fix__.*", "hooks": [{
                    "type": "command",
                    "command": format!("cat > '{}'; printf '%s' '{}'", stdin.display(), deny)
                }]}]}})
                .to_string(),
            )
            .unwrap();
            vec![Load::builtin(
                "hooks-claude",
                "hooks-claude",
                json!({"config_path": settings}),
            )]
        },
    );
    let started = host.dir.path().join("started");
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    client.initialize().await;
    let session = client
        .new_session_with(&host.project, vec![fixture(&started)])
        .await;
    assert_eq!(
        client.prompt(&session, "echo").await.unwrap(),
        StopReason::EndTurn
    );
    // Denied before it reached the server.
    assert!(!calls_file(&started).exists());
    let payload: Value = serde_json::from_str(
        &std::fs::read_to_string(host.dir.path().join("hook-stdin.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(payload["hook_event_name"], "PreToolUse");
    assert_eq!(payload["tool_name"], "mcp__fix__echo");
    assert_eq!(payload["tool_input"], json!({"text": "secret"}));
    let updates = client.take_updates();
    assert_eq!(updates[1]["status"], "failed", "{updates:#?}");
    assert_eq!(updates[1]["content"][0]["content"]["text"], "no MCP here");
    let denied = of_kind(&host.log(&session), "tool/denied")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(denied[0]["by"], "hooks-claude", "{denied:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_result_and_a_server_crashing_mid_call_end_in_errors_and_the_session_goes_on() {
    let host = TestHost::new(
        Model::Scripted(json!([
            call("mcp__fix__fail", json!({"text": "x"})),
            call("mcp__fix__crash", json!({})),
            text("still here"),
            text("second prompt"),
        ])),
        &[],
    );
    let started = host.dir.path().join("started");
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    client.initialize().await;
    let session = client
        .new_session_with(&host.project, vec![fixture(&started)])
        .await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    let log = host.log(&session);
    let results = of_kind(&log, "tool/result");
    assert_eq!(results[0]["content"], "failed: x");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[1]["name"], "mcp__fix__crash");
    assert_eq!(results[1]["is_error"], true);
    let crashed = results[1]["content"].as_str().unwrap();
    assert!(crashed.starts_with("MCP server `fix` stopped"), "{crashed}");
    let updates = client.take_updates();
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "agent_message_chunk"
                && u["content"]["text"] == "still here"),
        "{updates:#?}"
    );
    // The next prompt runs without the dead server's tools.
    assert_eq!(
        client.prompt(&session, "again").await.unwrap(),
        StopReason::EndTurn
    );
    let requests = host.requests();
    let last = requests.last().unwrap();
    let names = tool_names(last);
    assert!(names.iter().all(|n| !n.starts_with("mcp__")), "{names:?}");
    assert!(names.contains(&"Bash".to_string()), "{names:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_reported_and_the_session_goes_on() {
    let host = TestHost::new(Model::Scripted(json!([text("fine")])), &[]);
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    client.initialize().await;
    let missing = host.dir.path().join("no-such-server");
    let session = client
        .new_session_with(
            &host.project,
            vec![McpServer::Stdio(McpServerStdio::new("gone", &missing))],
        )
        .await;
    let report = client.next_update().await;
    assert_eq!(report["sessionUpdate"], "agent_message_chunk");
    let said = report["content"]["text"].as_str().unwrap();
    assert!(
        said.starts_with(&format!(
            "MCP server `gone`: cannot start `{}`: ",
            missing.display()
        )) && said.ends_with("; continuing without it.\n"),
        "{said}"
    );
    assert_eq!(
        client.prompt(&session, "hi").await.unwrap(),
        StopReason::EndTurn
    );
    let names = tool_names(&host.requests()[0]);
    assert!(names.iter().all(|n| !n.starts_with("mcp__")), "{names:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_is_reached_with_its_headers() {
    use agent_client_protocol::v1::schema::{HttpHeader, McpServerHttp};
    let host = TestHost::new(
        Model::Scripted(json!([
            call("mcp__web__echo", json!({"text": "over http"})),
            call("mcp__web__header", json!({"name": "x-dsh-test"})),
            text("done"),
        ])),
        &[],
    );
    let url_file = host.dir.path().join("url");
    let mut server = tokio::process::Command::new(mcp_fixture())
        .arg("--http")
        .arg(&url_file)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    crate::support::until("the HTTP server to listen", || url_file.exists()).await;
    let url = std::fs::read_to_string(&url_file).unwrap();
    let (client, _serving) = host.connect(Answer::Fail).await;
    client.initialize().await;
    let web = McpServer::Http(
        McpServerHttp::new("web", url).headers(vec![HttpHeader::new("x-dsh-test", "sesame")]),
    );
    let session = client.new_session_with(&host.project, vec![web]).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    let log = host.log(&session);
    let results: Vec<(&str, &str)> = of_kind(&log, "tool/result")
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        results,
        [
            ("mcp__web__echo", "echo: over http"),
            ("mcp__web__header", "sesame")
        ]
    );
    client.close().await;
    server.kill().await.unwrap();
}
