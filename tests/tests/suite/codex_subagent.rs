//! Codex's sub-agents over the real `dsh` binary (`subagent_tools: codex`):
//! real Codex hooks (shell scripts through `hooks-codex`), a real
//! `exec_command` run by the child, real session logs; only the model is
//! scripted (its main and sub-agent answers apart). Recorded: C180–C183
//! (`tools/recorder-scenarios/FINDINGS-csub.md`).
//!
//! - `spawn_agent` returns the child's id and a nickname; the child runs in
//!   its own session (its log names the parent), SubagentStart and
//!   SubagentStop run with Codex's payloads, `wait_agent` returns its
//!   answer, and the parent's next request ends with the
//!   `<subagent_notification>` message;
//! - `dsh check` warns about SubagentStart/SubagentStop hooks only while
//!   `spawn_agent` is off.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::{run, run_dsh, temp_dir};
use serde_json::{Value, json};

/// A hook that saves its stdin in a file of its own, `<name>.<random>`
/// under `cap` (the parent's and the child's hooks run at once), then runs
/// `then`.
pub(crate) fn capture(root: &Path, name: &str, then: &str) -> Value {
    let script = format!(
        "cat > \"$(mktemp {root}/cap/{name}.XXXXXX)\"; {then}",
        root = root.display()
    );
    json!([{"hooks": [{"type": "command", "command": script}]}])
}

/// Every payload the hooks named `name` saved, in no order.
pub(crate) fn captured(root: &Path, name: &str) -> Vec<Value> {
    let prefix = format!("{name}.");
    std::fs::read_dir(root.join("cap"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .map(|p| serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap())
        .collect()
}

/// The one payload the hooks named `name` saved.
fn only(root: &Path, name: &str) -> Value {
    let mut all = captured(root, name);
    assert_eq!(all.len(), 1, "{name}: {all:?}");
    all.remove(0)
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// The manifest: `extra` lines, then bash-local (Codex's `exec_command`),
/// hooks-codex reading `hooks.json`, and the scripted model.
fn manifest(root: &Path, extra: &str, model: &Value) -> std::path::PathBuf {
    let path = root.join("cordis.yml");
    let text = format!(
        "state_dir: state\n{extra}plugins:\n  - name: bash-local\n    config: {{\"codex_exec_command\": true}}\n  \
         - name: hooks-codex\n    config: {{\"config_path\": \"hooks.json\", \"model\": \"gpt-test\"}}\n  \
         - id: model\n    name: model-scripted\n    config: {model}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn spawn_agent_runs_a_codex_child_with_its_hooks_over_the_binary() {
    let dir = temp_dir();
    let root = dir.path().to_path_buf();
    for sub in ["proj", "home", "cap"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    let hooks = json!({"hooks": {
        "SubagentStart": capture(&root, "start",
            r#"printf '%s' '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"e2e start context"}}'"#),
        "SubagentStop": capture(&root, "stop", ""),
        "PreToolUse": capture(&root, "pre", ""),
        "Stop": capture(&root, "main_stop", ""),
        "SessionEnd": capture(&root, "end", "")
    }});
    std::fs::write(root.join("hooks.json"), hooks.to_string()).unwrap();
    let model = json!({
        "script": [
            {"tool_calls": [{"name": "spawn_agent", "arguments": {"message": "write the file"}}]},
            {"tool_calls": [{"name": "wait_agent", "arguments": {"targets": ["$AGENT_ID"]}}]},
            {"text": "main done"}
        ],
        "subagent_script": [
            {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "echo from-child > child.txt"}}]},
            {"text": "child wrote it"}
        ],
        "record": "requests.jsonl"
    });
    let config = manifest(&root, "subagent_tools: codex\n", &model);
    let mut command = Command::new(&workspace().dsh);
    command
        .args(["prompt", "--config"])
        .arg(&config)
        .arg("--cwd")
        .arg(root.join("proj"))
        .args(["--session", "main1", "--json", "spawn a helper"])
        .current_dir(&root)
        .env("HOME", root.join("home"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DSH_") {
            command.env_remove(key);
        }
    }
    let out = run(command, Duration::from_secs(120));
    assert_eq!(out.code, Some(0), "{}", out.stderr);

    // The child's command ran in the project.
    assert_eq!(
        std::fs::read_to_string(root.join("proj/child.txt")).unwrap(),
        "from-child\n"
    );
    let start = only(&root, "start");
    assert_eq!(start["session_id"], "main1");
    assert_eq!(start["agent_type"], "default");
    assert_eq!(start["hook_event_name"], "SubagentStart");
    let child = start["agent_id"].as_str().unwrap().to_string();
    let stop = only(&root, "stop");
    assert_eq!(
        keys(&stop),
        [
            "session_id",
            "turn_id",
            "transcript_path",
            "agent_transcript_path",
            "cwd",
            "hook_event_name",
            "model",
            "permission_mode",
            "stop_hook_active",
            "agent_id",
            "agent_type",
            "last_assistant_message"
        ]
    );
    assert_eq!(stop["agent_id"], child.as_str());
    assert_eq!(stop["last_assistant_message"], "child wrote it");
    assert_eq!(stop["turn_id"], start["turn_id"]);
    let state = root.join("state/sessions");
    assert_eq!(
        stop["transcript_path"],
        state.join("main1.jsonl").display().to_string()
    );
    assert_eq!(
        stop["agent_transcript_path"],
        state.join(format!("{child}.jsonl")).display().to_string()
    );
    // The child's own PreToolUse names the main session and the agent.
    let pre = captured(&root, "pre");
    assert_eq!(pre.len(), 3, "{pre:?}");
    let child_pre = pre
        .iter()
        .find(|p| p["tool_name"] == "Bash")
        .unwrap_or_else(|| panic!("{pre:?}"));
    assert_eq!(child_pre["session_id"], "main1");
    assert_eq!(child_pre["agent_id"], child.as_str());
    // One Stop and one SessionEnd: the main session's.
    assert_eq!(
        only(&root, "main_stop")["last_assistant_message"],
        "main done"
    );
    assert_eq!(only(&root, "end")["session_id"], "main1");

    // The child's log names its parent.
    let header = std::fs::read_to_string(state.join(format!("{child}.jsonl"))).unwrap();
    let header: Value = serde_json::from_str(header.lines().next().unwrap()).unwrap();
    assert_eq!(header["parent_session_id"], "main1", "{header}");

    // What the models read.
    let requests: Vec<Value> = std::fs::read_to_string(root.join("requests.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(requests.len(), 5);
    let first_child = requests
        .iter()
        .find(|r| r["session_id"] == child.as_str())
        .unwrap();
    let msgs: Vec<(&str, &str)> = first_child["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        msgs,
        [
            ("developer", "e2e start context"),
            ("user", "write the file")
        ]
    );
    let last = requests.last().unwrap();
    assert_eq!(last["session_id"], "main1");
    let msgs = last["messages"].as_array().unwrap();
    let n = msgs.len();
    assert_eq!(
        msgs[n - 2]["content"],
        json!({"status": {child.as_str(): {"completed": "child wrote it"}}, "timed_out": false})
            .to_string()
    );
    assert_eq!(
        msgs[n - 1]["content"],
        format!(
            "<subagent_notification>\n{{\"agent_path\":\"{child}\",\"status\":{{\"completed\":\"child wrote it\"}}}}\n</subagent_notification>"
        )
    );
    let spawned: Value = serde_json::from_str(msgs[n - 4]["content"].as_str().unwrap()).unwrap();
    assert_eq!(spawned["agent_id"], child.as_str());
}

#[test]
fn dsh_check_warns_about_subagent_hooks_only_while_spawn_agent_is_off() {
    let dir = temp_dir();
    let root = dir.path();
    let hooks = json!({"hooks": {
        "SubagentStart": [{"hooks": [{"type": "command", "command": "true"}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": "true"}]}]
    }});
    std::fs::write(root.join("hooks.json"), hooks.to_string()).unwrap();
    let model = json!({"script": []});
    let warning = "their hooks never run: SubagentStart, SubagentStop";
    let config = manifest(root, "", &model);
    let off = run_dsh(["check", "--config", &config.display().to_string()], root);
    assert!(
        off.stdout.contains(warning) && off.stdout.contains("subagent_tools: codex"),
        "stdout:\n{}\nstderr:\n{}",
        off.stdout,
        off.stderr
    );
    let config = manifest(root, "subagent_tools: codex\n", &model);
    let on = run_dsh(["check", "--config", &config.display().to_string()], root);
    assert_eq!(on.code, Some(0), "{}\n{}", on.stdout, on.stderr);
    assert!(!on.stdout.contains("never run"), "{}", on.stdout);
}
