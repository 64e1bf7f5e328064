//! Hostile MCP elicitation: a server whose `elicitation/create` is
//! malformed, and Elicitation / ElicitationResult hooks printing junk. The
//! server is the recorder's (`tests/fixtures/vectors/mcp_server.py
//! --elicit`, stdlib Python): its tool answers with what it got back, so
//! the tool result says what dsh answered.

use std::path::Path;
use std::time::Duration;

use dsh_host::agent::Prompt;
use dsh_tests::agent::{AgentHost, Load};
use dsh_tests::temp_dir;
use dsh_tests::wait::within;
use serde_json::{Value, json};

fn call(tool: &str) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": {"text": "who"}}]})
}

/// An agent with the Claude bridge running `hooks`, the recorder's MCP
/// server as `srv`, and one session connected to it.
async fn host(
    root: &Path,
    hooks: Value,
    script: Value,
) -> (AgentHost, std::sync::Arc<dsh_host::agent::Session>) {
    let file = root.join("hooks.json");
    std::fs::write(&file, json!({ "hooks": hooks }).to_string()).unwrap();
    let host = AgentHost::scripted(
        root,
        vec![Load::builtin(
            "hooks-claude",
            "hooks-claude",
            json!({"config_path": file}),
        )],
        script,
    )
    .problem_free();
    let session = host.session().await;
    let server = dsh_tests::workspace_root().join("tests/fixtures/vectors/mcp_server.py");
    let spec = dsh_host::mcp::McpServerSpec::from_manifest(
        "srv",
        &json!({"command": "python3", "args": [server, "--elicit"]}),
    )
    .unwrap();
    let failed = host.agent.connect_mcp(&session, vec![spec]).await;
    assert!(failed.is_empty(), "{failed:?}");
    (host, session)
}

/// The `tool/result` contents of a turn's events, in order.
fn results(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "tool/result")
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn command_hook(command: String) -> Value {
    json!([{"hooks": [{"type": "command", "command": command}]}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_elicitation_is_refused_to_the_server_and_its_session_goes_on() {
    let dir = temp_dir();
    let root = dir.path().canonicalize().unwrap();
    let heard = root.join("heard");
    let hooks = json!({"Elicitation": command_hook(format!("cat > '{}'", heard.display()))});
    let script = json!([call("mcp__srv__elicit_bad"), call("mcp__srv__elicit"), {"text": "done"}]);
    let (_host, session) = host(&root, hooks, script).await;
    let out = within(
        "the turn",
        Duration::from_secs(60),
        session.prompt(Prompt::user("go")),
    )
    .await;
    let events = dsh_host::session::events::wire(&out.events);
    let results = results(&events);
    assert_eq!(results.len(), 2, "{events:#?}");
    // No message and a schema that is a string: the server got an error
    // back (no answer), and no hook heard of it.
    assert!(
        results[0].starts_with("elicitation error: "),
        "{}",
        results[0]
    );
    assert!(!results[0].contains("action"), "{}", results[0]);
    // The same server's next, well-formed request reaches the hook, whose
    // silence leaves headless Claude's answer.
    assert_eq!(results[1], r#"elicitation result: {"action": "cancel"}"#);
    let payload: Value = serde_json::from_str(&std::fs::read_to_string(&heard).unwrap()).unwrap();
    assert_eq!(payload["message"], "MARK_ELICIT who");
    assert_eq!(events.last().unwrap()["type"], "turn/end", "{events:#?}");
    assert_eq!(events.last().unwrap()["reason"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_printing_junk_answer_nothing_and_the_server_gets_cancel() {
    let dir = temp_dir();
    let root = dir.path().canonicalize().unwrap();
    let hooks = json!({
        // Bytes that are not UTF-8, then half a JSON object.
        "Elicitation": command_hook(
            r#"printf '\377\376{"hookSpecificOutput": {"action": "acc'"#.to_string()
        ),
        // Well-formed JSON with content that is not an object.
        "ElicitationResult": command_hook(format!(
            "printf '%s' '{}'",
            json!({"hookSpecificOutput": {"hookEventName": "ElicitationResult",
                   "action": "accept", "content": [1, 2]}})
        )),
    });
    let script = json!([call("mcp__srv__elicit"), {"text": "done"}]);
    let (_host, session) = host(&root, hooks, script).await;
    let out = within(
        "the turn",
        Duration::from_secs(60),
        session.prompt(Prompt::user("go")),
    )
    .await;
    let events = dsh_host::session::events::wire(&out.events);
    assert_eq!(
        results(&events),
        [r#"elicitation result: {"action": "cancel"}"#],
        "{events:#?}"
    );
    // The bad content is said in the hook's record (the answer does not
    // fit Claude Code's schema: `hooks-claude`'s `output_schema`).
    let details: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "hook/result")
        .map(|e| e.to_string())
        .collect();
    assert!(
        details.iter().any(|d| d.contains("ElicitationResult")
            && d.contains("hookSpecificOutput.content: expected an object, got array")),
        "{details:#?}"
    );
}
