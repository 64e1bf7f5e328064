//! Codex's `send_input`, `close_agent` and `resume_agent` given what they
//! cannot use: no target, no message, an agent that was never spawned, a
//! resume of an agent that is open, a second close. Each is a result the
//! model reads (an error, or for the open agent its status), and the turn
//! goes on.

use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::{run, temp_dir};
use serde_json::{Value, json};

#[test]
fn send_close_and_resume_calls_they_cannot_serve_are_results_the_model_reads() {
    let dir = temp_dir();
    let root = dir.path();
    std::fs::create_dir_all(root.join("proj")).unwrap();
    let call = |name: &str, arguments: Value| json!({"tool_calls": [{"name": name, "arguments": arguments}]});
    let id = json!("$AGENT_ID");
    let model = json!({
        "script": [
            call("send_input", json!({"message": "to nobody"})),
            call("send_input", json!({"target": "ses_nobody", "message": "hello"})),
            call("close_agent", json!({"target": "ses_nobody"})),
            call("resume_agent", json!({"id": "ses_nobody"})),
            call("spawn_agent", json!({"message": "task"})),
            call("send_input", json!({"target": id})),
            call("wait_agent", json!({"targets": [id]})),
            call("resume_agent", json!({"id": id})),
            call("close_agent", json!({"target": id})),
            call("close_agent", json!({"target": id})),
            {"text": "gave up"}
        ],
        "subagent_script": [{"text": "child done"}],
        "record": "requests.jsonl"
    });
    std::fs::write(
        root.join("cordis.yml"),
        format!(
            "state_dir: state\nsubagent_tools: codex\nplugins:\n  - id: model\n    name: model-scripted\n    config: {model}\n"
        ),
    )
    .unwrap();
    let mut command = Command::new(&workspace().dsh);
    command
        .args(["prompt", "--config"])
        .arg(root.join("cordis.yml"))
        .arg("--cwd")
        .arg(root.join("proj"))
        .args(["--session", "h1", "--json", "try"])
        .current_dir(root);
    let out = run(command, Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let results: Vec<(bool, String)> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool/result")
        .map(|e| {
            (
                e["is_error"] == true,
                e["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(results.len(), 10, "{results:?}");
    let error = |k: usize, needle: &str| {
        assert!(results[k].0, "{k}: {results:?}");
        assert!(results[k].1.contains(needle), "{k}: {:?}", results[k].1);
    };
    error(0, "`target`");
    error(1, "no open agent with id ses_nobody");
    error(2, "no open agent with id ses_nobody");
    error(3, "no closed agent with id ses_nobody");
    error(5, "`message`");
    let spawned: Value = serde_json::from_str(&results[4].1).unwrap();
    let child = spawned["agent_id"].as_str().unwrap();
    assert!(!results[6].0, "{results:?}");
    // Resuming an open agent tells its status and changes nothing.
    assert_eq!(
        results[7],
        (
            false,
            json!({"status": {"completed": "child done"}}).to_string()
        )
    );
    assert_eq!(
        results[8],
        (
            false,
            json!({"previous_status": {"completed": "child done"}}).to_string()
        )
    );
    error(9, &format!("no open agent with id {child}"));
}
