//! The rest of Codex's sub-agent tools over the real `dsh` binary
//! (`subagent_tools: codex`): `send_input`, `close_agent`,
//! `resume_agent`, a child whose model request fails, and the nickname.
//! Real Codex hooks (shell scripts through `hooks-codex`), real session
//! logs; only the model is scripted. Recorded: C184–C185
//! (`tools/recorder-scenarios/FINDINGS-csub3.md`).
//!
//! - one child taken through its life: spawned (a nickname from Codex's
//!   list), waited for, sent a second task, closed (`wait_agent` then says
//!   `not_found`), resumed with its history and sent a third; each tool's
//!   result as Codex gives it, `send_input`'s `submission_id` the id of the
//!   turn it starts, hook tool names with the namespace glued on, one
//!   SubagentStart, a SubagentStop per turn, a notification for the spawn's
//!   completion and the resume's but not for the `send_input`'s;
//! - a child whose model request is refused: `errored` with the server's
//!   answer, notified, and no SubagentStop;
//! - `fork_context: true`: the child starts with its parent's history.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use dsh_host::agent::CODEX_NICKNAMES;
use dsh_tests::artifacts::workspace;
use dsh_tests::{run, temp_dir};
use serde_json::{Value, json};

use super::codex_subagent::captured;

/// A hook that saves its stdin in a file of its own under `cap`
/// ([`super::codex_subagent::capture`]).
fn capture(root: &Path, name: &str) -> Value {
    super::codex_subagent::capture(root, name, "")
}

/// Runs `dsh prompt` as session `main1` with Codex hooks on every event
/// this file looks at and the scripted `model`; returns the tool results'
/// texts, in order, and the requests the model got.
fn run_main(root: &Path, model: &Value) -> (Vec<String>, Vec<Value>) {
    for sub in ["proj", "home", "cap"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    let hooks = json!({"hooks": {
        "SubagentStart": capture(root, "start"),
        "SubagentStop": capture(root, "stop"),
        "PreToolUse": capture(root, "pre"),
        "UserPromptSubmit": capture(root, "ups"),
        "Interrupt": capture(root, "interrupt")
    }});
    std::fs::write(root.join("hooks.json"), hooks.to_string()).unwrap();
    let config = root.join("cordis.yml");
    std::fs::write(
        &config,
        format!(
            "state_dir: state\nsubagent_tools: codex\nplugins:\n  - name: bash-local\n    config: {{\"codex_exec_command\": true}}\n  \
             - name: hooks-codex\n    config: {{\"config_path\": \"hooks.json\", \"model\": \"gpt-test\"}}\n  \
             - id: model\n    name: model-scripted\n    config: {model}\n"
        ),
    )
    .unwrap();
    let mut command = Command::new(&workspace().dsh);
    command
        .args(["prompt", "--config"])
        .arg(&config)
        .arg("--cwd")
        .arg(root.join("proj"))
        // Not the default mode: a child, and a child resumed from its log,
        // work in their parent's.
        .args(["--permission-mode", "bypassPermissions"])
        .args(["--session", "main1", "--json", "spawn a helper"])
        .current_dir(root)
        .env("HOME", root.join("home"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DSH_") {
            command.env_remove(key);
        }
    }
    let out = run(command, Duration::from_secs(120));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let results = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool/result")
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .collect();
    let requests = std::fs::read_to_string(root.join("requests.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (results, requests)
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": arguments}]})
}

/// The `(role, text)` of each message of a recorded request.
fn messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn notifications(request: &Value) -> Vec<String> {
    messages(request)
        .into_iter()
        .filter(|(role, text)| role == "user" && text.starts_with("<subagent_notification>"))
        .map(|(_, text)| text)
        .collect()
}

#[test]
fn a_child_is_sent_input_closed_and_resumed_as_in_codex() {
    let dir = temp_dir();
    let root = dir.path();
    let id = json!("$AGENT_ID");
    let model = json!({
        "script": [
            call("spawn_agent", json!({"message": "first task"})),
            call("wait_agent", json!({"targets": [id]})),
            call("send_input", json!({"target": id, "message": "second task"})),
            call("wait_agent", json!({"targets": [id]})),
            call("close_agent", json!({"target": id})),
            call("wait_agent", json!({"targets": [id]})),
            call("resume_agent", json!({"id": id})),
            call("send_input", json!({"target": id, "message": "third task"})),
            call("wait_agent", json!({"targets": [id]})),
            {"text": "main done"}
        ],
        "subagent_script": [{"text": "a1"}, {"text": "a2"}, {"text": "a3"}],
        "record": "requests.jsonl"
    });
    let (results, requests) = run_main(root, &model);
    assert_eq!(results.len(), 9, "{results:?}");
    let spawned: Value = serde_json::from_str(&results[0]).unwrap();
    let child = spawned["agent_id"].as_str().unwrap().to_string();
    let nickname = spawned["nickname"].as_str().unwrap();
    assert!(CODEX_NICKNAMES.contains(&nickname), "{nickname}");
    let completed = |answer: &str| {
        json!({"status": {child.as_str(): {"completed": answer}}, "timed_out": false}).to_string()
    };
    assert_eq!(results[1], completed("a1"));
    let second: Value = serde_json::from_str(&results[2]).unwrap();
    assert_eq!(results[3], completed("a2"));
    assert_eq!(
        results[4],
        json!({"previous_status": {"completed": "a2"}}).to_string()
    );
    assert_eq!(
        results[5],
        json!({"status": {child.as_str(): "not_found"}, "timed_out": false}).to_string()
    );
    assert_eq!(results[6], json!({"status": "pending_init"}).to_string());
    let third: Value = serde_json::from_str(&results[7]).unwrap();
    assert_eq!(results[8], completed("a3"));

    // The child's prompts: its task, then each message, in a turn whose id
    // send_input returned.
    let ups = captured(root, "ups");
    let turn_of = |prompt: &str| {
        let found: Vec<&Value> = ups.iter().filter(|u| u["prompt"] == prompt).collect();
        assert_eq!(found.len(), 1, "{prompt}: {ups:?}");
        assert_eq!(found[0]["agent_id"], child.as_str());
        found[0]["turn_id"].clone()
    };
    turn_of("first task");
    assert_eq!(second["submission_id"], turn_of("second task"));
    assert_eq!(third["submission_id"], turn_of("third task"));
    // The parent's permission mode throughout, after the resume too.
    let modes: Vec<&Value> = ups.iter().map(|u| &u["permission_mode"]).collect();
    assert!(modes.iter().all(|m| *m == "bypassPermissions"), "{modes:?}");
    // One SubagentStart; a SubagentStop per turn, naming the main transcript.
    assert_eq!(captured(root, "start").len(), 1);
    let mut stops: Vec<String> = captured(root, "stop")
        .iter()
        .map(|s| {
            assert_eq!(
                s["transcript_path"],
                root.join("state/sessions/main1.jsonl")
                    .display()
                    .to_string()
            );
            s["last_assistant_message"].as_str().unwrap().to_string()
        })
        .collect();
    stops.sort();
    assert_eq!(stops, ["a1", "a2", "a3"]);
    let mut names: Vec<String> = captured(root, "pre")
        .iter()
        .map(|p| p["tool_name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "multi_agent_v1close_agent",
            "multi_agent_v1resume_agent",
            "multi_agent_v1send_input",
            "multi_agent_v1send_input",
            "multi_agent_v1wait_agent",
            "multi_agent_v1wait_agent",
            "multi_agent_v1wait_agent",
            "multi_agent_v1wait_agent",
            "spawn_agent"
        ]
    );
    assert!(captured(root, "interrupt").is_empty());

    // The parent heard of the spawn's completion and the resume's, not of
    // the send_input's.
    let last = requests
        .iter()
        .rev()
        .find(|r| r["session_id"] == "main1")
        .unwrap();
    let note = |answer: &str| {
        format!(
            "<subagent_notification>\n{}\n</subagent_notification>",
            json!({"agent_path": child.as_str(), "status": {"completed": answer}})
        )
    };
    assert_eq!(notifications(last), [note("a1"), note("a3")]);
    // Resumed, the child kept its history.
    let child_last = requests
        .iter()
        .rev()
        .find(|r| r["session_id"] == child.as_str())
        .unwrap();
    let said: Vec<String> = messages(child_last)
        .into_iter()
        .filter(|(role, _)| role == "user" || role == "assistant")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(
        said,
        ["first task", "a1", "second task", "a2", "third task"]
    );
}

#[test]
fn a_child_whose_model_request_is_refused_is_errored_without_subagent_stop() {
    let dir = temp_dir();
    let root = dir.path();
    let model = json!({
        "script": [
            call("spawn_agent", json!({"message": "doomed task"})),
            call("wait_agent", json!({"targets": ["$AGENT_ID"]})),
            {"text": "main done"}
        ],
        "subagent_script": [{"error": {"status": 400, "message": "{\"error\": \"refused MARK\"}"}}],
        "record": "requests.jsonl"
    });
    let (results, requests) = run_main(root, &model);
    assert_eq!(results.len(), 2, "{results:?}");
    let spawned: Value = serde_json::from_str(&results[0]).unwrap();
    let child = spawned["agent_id"].as_str().unwrap();
    let status = json!({"errored": "{\"error\": \"refused MARK\"}"});
    assert_eq!(
        results[1],
        json!({"status": {child: status.clone()}, "timed_out": false}).to_string()
    );
    assert_eq!(captured(root, "start").len(), 1);
    assert!(captured(root, "stop").is_empty());
    assert!(captured(root, "interrupt").is_empty());
    let last = requests.last().unwrap();
    assert_eq!(last["session_id"], "main1");
    assert_eq!(
        notifications(last),
        [format!(
            "<subagent_notification>\n{}\n</subagent_notification>",
            json!({"agent_path": child, "status": status})
        )]
    );
}

#[test]
fn a_forked_child_starts_with_its_parents_history_and_a_plain_one_without() {
    let dir = temp_dir();
    let root = dir.path();
    let model = json!({
        "script": [
            call("exec_command", json!({"cmd": "echo parent-step"})),
            call("spawn_agent", json!({"message": "forked task", "fork_context": true})),
            call("wait_agent", json!({"targets": ["$AGENT_ID"]})),
            call("spawn_agent", json!({"message": "plain task"})),
            call("wait_agent", json!({"targets": ["$AGENT_ID"]})),
            {"text": "main done"}
        ],
        "subagent_script": [{"text": "forked done"}, {"text": "plain done"}],
        "record": "requests.jsonl"
    });
    let (results, requests) = run_main(root, &model);
    assert_eq!(results.len(), 5, "{results:?}");
    let first_of = |k: usize| {
        let spawned: Value = serde_json::from_str(&results[k]).unwrap();
        let child = spawned["agent_id"].as_str().unwrap().to_string();
        requests
            .iter()
            .find(|r| r["session_id"] == child.as_str())
            .unwrap()
            .clone()
    };
    // The forked child read the parent's prompt, its step (the call and
    // its result), not the step that spawned it, then its task.
    let forked = messages(&first_of(1));
    let said: Vec<(&str, &str)> = forked
        .iter()
        .filter(|(role, _)| role != "system" && role != "developer")
        .map(|(r, t)| (r.as_str(), t.as_str()))
        .collect();
    assert_eq!(said.len(), 4, "{forked:?}");
    assert_eq!(said[0], ("user", "spawn a helper"));
    assert_eq!(said[1].0, "assistant");
    assert_eq!(said[2].0, "tool");
    assert!(said[2].1.contains("parent-step"), "{forked:?}");
    assert_eq!(said[3], ("user", "forked task"));
    let plain = messages(&first_of(3));
    let said: Vec<(&str, &str)> = plain
        .iter()
        .filter(|(role, _)| role != "system" && role != "developer")
        .map(|(r, t)| (r.as_str(), t.as_str()))
        .collect();
    assert_eq!(said, [("user", "plain task")]);
}
