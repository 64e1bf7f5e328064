//! Claude Code hook answers of hostile shapes, over the real `dsh` binary
//! with real shell hooks and the real `Bash` tool (only the model is
//! scripted): a PreToolUse deny printed beside JSON nested far deeper than
//! a recursive parser follows is still honoured, as Claude Code honours it
//! (recorded `S279`: 200 and 20,000 levels), and nothing hangs or crashes
//! on a million levels.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::{Outcome, run, temp_dir};
use serde_json::{Value, json};

/// A folder with a manifest (bash-local, hooks-claude, a scripted model
/// that calls `Bash` with `touch ran` and then answers), a hooks file and a
/// project folder.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = temp_dir();
        for sub in ["proj", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let script = json!([
            {"tool_calls": [{"name": "Bash", "arguments": {"command": "touch ran"}}]},
            {"text": "done"}
        ]);
        let manifest = format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: hooks-claude\n    \
             config: {}\n  - id: model\n    name: model-scripted\n    config: {}\n",
            json!({"config_path": "hooks.json"}),
            json!({"script": script, "record": "requests.jsonl"}),
        );
        std::fs::write(dir.path().join("cordis.yml"), manifest).unwrap();
        Project { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn proj(&self) -> PathBuf {
        self.root().join("proj")
    }

    /// A PreToolUse hook on `Bash` that prints the file `answer` holds.
    fn pre_tool_use_prints(&self, answer: &[u8]) {
        let file = self.root().join("answer.json");
        std::fs::write(&file, answer).unwrap();
        let command = format!("cat '{}'", file.display());
        let hooks = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
        ]}});
        std::fs::write(self.root().join("hooks.json"), hooks.to_string()).unwrap();
    }

    /// `dsh prompt --json go`: its outcome and its events.
    fn prompt(&self) -> (Outcome, Vec<Value>) {
        let mut command = Command::new(&workspace().dsh);
        command
            .args(["prompt", "--config", "cordis.yml", "--cwd"])
            .arg(self.proj())
            .args(["--json", "go"])
            .current_dir(self.root());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DSH_") {
                command.env_remove(key);
            }
        }
        command
            .env("HOME", self.root().join("home"))
            .env("SHELL", "/bin/sh");
        let outcome = run(command, Duration::from_secs(120));
        let events = outcome
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        (outcome, events)
    }
}

/// A deny whose reason is `reason`, beside an unknown key holding arrays
/// nested `depth` levels deep.
fn deny_beside_nesting(depth: usize, reason: &str) -> Vec<u8> {
    format!(
        r#"{{"junk": {}{}, "hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "{reason}"}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    )
    .into_bytes()
}

#[test]
fn a_deny_beside_deeply_nested_json_is_honoured() {
    for depth in [200, 20_000, 1_000_000] {
        let project = Project::new();
        let reason = format!("DEEP-DENY-{depth}");
        project.pre_tool_use_prints(&deny_beside_nesting(depth, &reason));
        let (outcome, events) = project.prompt();
        let ctx = || {
            format!(
                "depth {depth}: exit {:?}\nstderr: {}\nstdout: {:.3000}",
                outcome.code, outcome.stderr, outcome.stdout
            )
        };
        assert_eq!(outcome.code, Some(0), "{}", ctx());
        assert!(
            !project.proj().join("ran").exists(),
            "the denied command ran: {}",
            ctx()
        );
        let denied: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "tool/denied")
            .collect();
        assert_eq!(denied.len(), 1, "{}", ctx());
        assert_eq!(denied[0]["reason"], reason.as_str(), "{}", ctx());
        let results: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "hook/result")
            .collect();
        assert_eq!(results.len(), 1, "{}", ctx());
        assert_eq!(results[0]["outcome"], "blocked", "{}", ctx());
    }
}
