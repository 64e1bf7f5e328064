//! Codex's sub-agent tools given what they cannot use: a manifest value
//! that is not a kind of subagent tools is refused by name; a
//! `spawn_agent` without a task and a `wait_agent` for an agent that does
//! not exist are error results the model reads, and the turn goes on.

use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::{run, run_dsh, temp_dir};
use serde_json::{Value, json};

#[test]
fn an_unknown_subagent_tools_value_is_refused_by_name() {
    let dir = temp_dir();
    let bad = dir.path().join("bad.yml");
    std::fs::write(&bad, "subagent_tools: sideways\nplugins: []\n").unwrap();
    let out = run_dsh(
        ["check", "--config", &bad.display().to_string()],
        dir.path(),
    );
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(&bad.display().to_string())
            && out.stderr.contains("`subagent_tools`")
            && out.stderr.contains("sideways")
            && out.stderr.contains("claude, codex"),
        "{}",
        out.stderr
    );
}

#[test]
fn spawn_and_wait_calls_without_a_task_or_a_known_agent_are_error_results() {
    let dir = temp_dir();
    let root = dir.path();
    std::fs::create_dir_all(root.join("proj")).unwrap();
    let model = json!({
        "script": [
            {"tool_calls": [{"name": "spawn_agent", "arguments": {"items": [{"type": "image"}]}}]},
            {"tool_calls": [{"name": "wait_agent", "arguments": {"targets": ["ses_nobody"]}}]},
            {"tool_calls": [{"name": "wait_agent", "arguments": {"targets": "ses_nobody"}}]},
            {"text": "gave up"}
        ],
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
    let results: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool/result")
        .collect();
    assert_eq!(results.len(), 3, "{}", out.stdout);
    let text = |k: usize| {
        results[k]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(results[0]["is_error"], true);
    assert!(text(0).contains("`message`"), "{}", text(0));
    assert_eq!(results[1]["is_error"], true);
    assert!(
        text(1).contains("no agent with id ses_nobody"),
        "{}",
        text(1)
    );
    assert_eq!(results[2]["is_error"], true);
    assert!(text(2).contains("`targets`"), "{}", text(2));
    // No child session was made.
    let logs = std::fs::read_dir(root.join("state/sessions"))
        .unwrap()
        .count();
    assert_eq!(logs, 1);
}
