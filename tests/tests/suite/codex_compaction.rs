//! Codex's compaction over the real `dsh` binary, real Codex hooks (shell
//! scripts through `hooks-codex`), real `exec_command` runs and a real
//! session log; only the model is scripted (recorded `C90-*`–`C92-*`).
//!
//! - a tool step after which the provider reports the context past the
//!   threshold compacts before the model is asked again, in the same turn:
//!   PreCompact, the checkpoint request (no tools), PostCompact,
//!   SessionStart `compact`, Stop; the next request holds the user's prompt
//!   and Codex's summary message, and a later `dsh prompt` (a new process)
//!   derives the same history from the log;
//! - PreCompact `continue: false` ends the turn there and keeps the history.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::{Outcome, run, temp_dir};
use serde_json::{Value, json};

/// A folder with a manifest (bash-local offering `exec_command`,
/// hooks-codex, a scripted model recording its requests, `compaction:
/// {style: codex}` at half the window), a Codex hooks file whose hooks save
/// their stdin, and a project folder.
pub(crate) struct CodexProject {
    dir: tempfile::TempDir,
    compaction: String,
}

/// One `dsh prompt --json` run.
pub(crate) struct Run {
    pub(crate) outcome: Outcome,
    pub(crate) events: Vec<Value>,
}

impl Run {
    pub(crate) fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }
}

impl CodexProject {
    /// Hooks `(event, then)`: each appends its event to `order.log`, saves
    /// its stdin as `cap/<event>.<n>.json`, then runs `then`.
    pub(crate) fn new(hooks: &[(&str, &str)]) -> CodexProject {
        Self::with_compaction(hooks, "compaction:\n  threshold: 0.5\n  style: codex\n")
    }

    pub(crate) fn with_compaction(hooks: &[(&str, &str)], compaction: &str) -> CodexProject {
        let dir = temp_dir();
        let root = dir.path().to_path_buf();
        for sub in ["proj", "home", "cap"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let mut map = serde_json::Map::new();
        for (event, then) in hooks {
            let script = format!(
                "n=$(ls {root}/cap | grep -c '^{event}\\.'); cat > {root}/cap/{event}.$n.json; \
                 echo {event} >> {root}/order.log; {then}",
                root = root.display()
            );
            map.insert(
                event.to_string(),
                json!([{"hooks": [{"type": "command", "command": script}]}]),
            );
        }
        std::fs::write(root.join("hooks.json"), json!({ "hooks": map }).to_string()).unwrap();
        CodexProject {
            dir,
            compaction: compaction.to_string(),
        }
    }

    fn write_manifest(&self, script: &Value) {
        let manifest = format!(
            "state_dir: state\n{}plugins:\n  - name: bash-local\n    config: {{\"codex_exec_command\": true}}\n  \
             - name: hooks-codex\n    config: {{\"config_path\": \"hooks.json\", \"model\": \"gpt-test\"}}\n  \
             - id: model\n    name: model-scripted\n    config: {}\n",
            self.compaction,
            json!({"script": script, "record": "requests.jsonl"}),
        );
        std::fs::write(self.root().join("cordis.yml"), manifest).unwrap();
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    fn proj(&self) -> PathBuf {
        self.root().join("proj")
    }

    /// `dsh prompt --json --session <session> text`, a process of its own
    /// whose model answers from `script`.
    pub(crate) fn prompt(&self, session: &str, text: &str, script: Value) -> Run {
        self.write_manifest(&script);
        let mut command = Command::new(&workspace().dsh);
        command
            .args(["prompt", "--config"])
            .arg(self.root().join("cordis.yml"))
            .arg("--cwd")
            .arg(self.proj())
            .args(["--session", session, "--json", text])
            .current_dir(self.root());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DSH_") {
                command.env_remove(key);
            }
        }
        command.env("HOME", self.root().join("home"));
        let outcome = run(command, Duration::from_secs(120));
        let events = outcome
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        Run { outcome, events }
    }

    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The stdin the `n`th hook of `event` got, as written.
    pub(crate) fn hook_stdin(&self, event: &str, n: usize) -> String {
        let path = self.root().join("cap").join(format!("{event}.{n}.json"));
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{event} hook {n} did not run ({e})"))
    }

    pub(crate) fn order(&self) -> Vec<String> {
        std::fs::read_to_string(self.root().join("order.log"))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }
}

/// `(role, content)` of each message of a request.
pub(crate) fn contents(request: &Value) -> Vec<(String, String)> {
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

/// The model's replies of a compacting turn: `echo hi` reporting the
/// context 90% full, the summary, the final answer.
pub(crate) fn compacting_script() -> Value {
    json!([
        {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "echo hi"}}],
         "context": {"used": 90, "size": 100}},
        {"text": "SUMMARY: echoed hi", "context": {"used": 10, "size": 100}},
        {"text": "all done", "context": {"used": 12, "size": 100}},
    ])
}

pub(crate) const CHECKPOINT_HEAD: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION.";
pub(crate) const SUMMARY_MESSAGE: &str = "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\nSUMMARY: echoed hi";

const EVENTS: [(&str, &str); 6] = [
    ("SessionStart", "true"),
    ("PreToolUse", "true"),
    ("PostToolUse", "true"),
    ("PreCompact", "true"),
    ("PostCompact", "true"),
    ("Stop", "true"),
];

#[test]
fn a_tool_step_past_the_threshold_compacts_within_the_turn_as_codex_does() {
    let p = CodexProject::new(&EVENTS);
    let run = p.prompt("c1", "run echo hi", compacting_script());
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    assert_eq!(
        p.order(),
        [
            "SessionStart",
            "PreToolUse",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "SessionStart",
            "Stop"
        ]
    );
    // Codex's payload: no permission_mode, the trigger last.
    let pre: Value = serde_json::from_str(&p.hook_stdin("PreCompact", 0)).unwrap();
    let keys: Vec<&str> = pre
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "turn_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "model",
            "trigger"
        ]
    );
    assert_eq!(pre["trigger"], "auto");
    assert_eq!(pre["model"], "gpt-test");
    let post: Value = serde_json::from_str(&p.hook_stdin("PostCompact", 0)).unwrap();
    assert_eq!(post["hook_event_name"], "PostCompact");
    assert_eq!(post["turn_id"], pre["turn_id"]);
    let again: Value = serde_json::from_str(&p.hook_stdin("SessionStart", 1)).unwrap();
    assert_eq!(again["source"], "compact");

    let requests = p.requests();
    assert_eq!(requests.len(), 3);
    // The checkpoint request: the history, then Codex's prompt; no tools.
    let summary = contents(&requests[1]);
    let (role, last) = summary.last().unwrap();
    assert_eq!(role, "user");
    assert!(last.starts_with(CHECKPOINT_HEAD), "{last}");
    assert!(summary.iter().any(|(r, _)| r == "tool"));
    assert!(requests[1]["tools"].as_array().is_none_or(|t| t.is_empty()));
    // Then the prompt and the summary message, the tool step gone.
    let after = contents(&requests[2]);
    assert_eq!(
        after,
        [
            ("user".to_string(), "run echo hi".to_string()),
            ("user".to_string(), SUMMARY_MESSAGE.to_string()),
        ]
    );
    let compacted = run.of_type("session/compacted");
    assert_eq!(compacted.len(), 1);
    assert_eq!(compacted[0]["kept"], json!(["run echo hi"]));
    assert_eq!(run.of_type("turn/end")[0]["reason"], "completed");

    // A new process derives the same history from the log.
    let next = p.prompt("c1", "and now?", json!([{"text": "fine"}]));
    assert_eq!(next.outcome.code, Some(0), "{}", next.outcome.stderr);
    let requests = p.requests();
    assert_eq!(
        contents(&requests[3]),
        [
            ("user".to_string(), "run echo hi".to_string()),
            ("user".to_string(), SUMMARY_MESSAGE.to_string()),
            ("assistant".to_string(), "all done".to_string()),
            ("user".to_string(), "and now?".to_string()),
        ]
    );
}

#[test]
fn pre_compact_continue_false_ends_the_turn_and_keeps_the_history() {
    let p = CodexProject::new(&[
        (
            "PreCompact",
            r#"printf '%s' '{"continue":false,"stopReason":"not now"}'"#,
        ),
        ("PostCompact", "true"),
        ("Stop", "true"),
    ]);
    let run = p.prompt("c2", "run echo hi", compacting_script());
    assert_eq!(p.order(), ["PreCompact"]);
    assert!(run.of_type("session/compacted").is_empty());
    let end = run.of_type("turn/end");
    assert_eq!(
        end[0]["message"], "halted by plugin `hooks-codex`: not now",
        "{}",
        run.outcome.stderr
    );
    // No checkpoint request; the next turn has the whole history.
    assert_eq!(p.requests().len(), 1);
    let next = p.prompt("c2", "again", json!([{"text": "ok"}]));
    assert_eq!(next.outcome.code, Some(0), "{}", next.outcome.stderr);
    let roles: Vec<String> = contents(&p.requests()[1])
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "user"]);
}
