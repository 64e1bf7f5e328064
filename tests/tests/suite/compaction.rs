//! Compaction and model failures over the real `dsh` binary, real Claude
//! Code hooks (shell scripts) and a real session log; only the model is
//! scripted (its recorded requests are what it saw).
//!
//! - `/compact` in one `dsh prompt`: PreCompact (whose stdout joins the
//!   summary instructions), the summary request, `session/compacted` in the
//!   log, SessionStart `compact`, PostCompact; the next `dsh prompt` (a new
//!   process resuming the session) sends the summary instead of the history;
//! - a PreCompact exit 2 keeps the history;
//! - a turn after which the provider reported the context window past
//!   `compaction.threshold` ends compacted; below it nothing happens;
//! - a model request answered 503 ends the turn `error` and runs
//!   StopFailure with Claude Code's payload.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::{Outcome, run, temp_dir};
use serde_json::{Value, json};

/// A folder with a manifest (bash-local, a hooks bridge, a scripted model
/// recording its requests), a hooks file whose hooks save their stdin, and
/// a project folder. Each `dsh prompt` is a process of its own, whose
/// scripted model starts its script afresh: each run is given its own.
pub(crate) struct Project {
    dir: tempfile::TempDir,
    extra: String,
    /// The manifest's `bash-local` and bridge entries.
    plugins: &'static str,
    /// `SHELL` for the runs, when set.
    shell: Option<&'static str>,
}

/// Claude's: `hooks-claude` reading `hooks.json`.
const CLAUDE_PLUGINS: &str = "  - name: bash-local\n  - name: hooks-claude\n    \
     config: {\"config_path\": \"hooks.json\"}\n";

/// Codex's: `bash-local` offering `exec_command`, `hooks-codex` reading
/// `hooks.json`.
const CODEX_PLUGINS: &str = "  - name: bash-local\n    config: {\"codex_exec_command\": true}\n  \
     - name: hooks-codex\n    config: {\"config_path\": \"hooks.json\", \"model\": \"gpt-test\"}\n";

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

/// A hook that appends its event to `order.log`, saves its stdin as
/// `<event>.<n>.json` and then runs `then` (shell).
fn capture(root: &Path, event: &str, then: &str) -> Value {
    let script = format!(
        "n=$(ls {root}/cap 2>/dev/null | grep -c '^{event}\\.'); cat > {root}/cap/{event}.$n.json; \
         echo {event} >> {root}/order.log; {then}",
        root = root.display()
    );
    json!([{"hooks": [{"type": "command", "command": script}]}])
}

impl Project {
    /// Claude's project: hooks `(event, then)` ([`capture`]), `extra`
    /// manifest lines.
    pub(crate) fn new(hooks: &[(&str, &str)], extra: &str) -> Project {
        Self::with(hooks, extra, CLAUDE_PLUGINS, Some("/bin/sh"))
    }

    /// Codex's project (`hooks-codex`, `exec_command`) with the
    /// `compaction` manifest block.
    pub(crate) fn codex(hooks: &[(&str, &str)], compaction: &str) -> Project {
        Self::with(hooks, compaction, CODEX_PLUGINS, None)
    }

    fn with(
        hooks: &[(&str, &str)],
        extra: &str,
        plugins: &'static str,
        shell: Option<&'static str>,
    ) -> Project {
        let dir = temp_dir();
        let root = dir.path().to_path_buf();
        for sub in ["proj", "home", "cap"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let mut map = serde_json::Map::new();
        for (event, then) in hooks {
            map.insert(event.to_string(), capture(&root, event, then));
        }
        std::fs::write(root.join("hooks.json"), json!({ "hooks": map }).to_string()).unwrap();
        Project {
            dir,
            extra: extra.to_string(),
            plugins,
            shell,
        }
    }

    /// The manifest, with `script` as the model's replies.
    pub(crate) fn write_manifest(&self, script: &Value) {
        let manifest = format!(
            "state_dir: state\n{}plugins:\n{}  - id: model\n    name: model-scripted\n    \
             config: {}\n",
            self.extra,
            self.plugins,
            json!({"script": script, "record": "requests.jsonl"}),
        );
        std::fs::write(self.root().join("cordis.yml"), manifest).unwrap();
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn proj(&self) -> PathBuf {
        self.root().join("proj")
    }

    /// `dsh prompt --json --session <session> text`, a process of its own
    /// whose model answers from `script`.
    pub(crate) fn prompt(&self, session: &str, text: &str, script: Value) -> Run {
        self.prompt_in(&self.proj(), &["--session", session], text, script)
    }

    /// `dsh prompt --json --cwd <cwd> <args> text`, as [`Project::prompt`].
    pub(crate) fn prompt_in(&self, cwd: &Path, args: &[&str], text: &str, script: Value) -> Run {
        self.write_manifest(&script);
        let mut command = Command::new(&workspace().dsh);
        command
            .args(["prompt", "--config"])
            .arg(self.root().join("cordis.yml"))
            .arg("--cwd")
            .arg(cwd)
            .args(args)
            .args(["--json", text])
            .current_dir(self.root());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DSH_") {
                command.env_remove(key);
            }
        }
        command.env("HOME", self.root().join("home"));
        if let Some(shell) = self.shell {
            command.env("SHELL", shell);
        }
        let outcome = run(command, Duration::from_secs(120));
        let events = outcome
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        Run { outcome, events }
    }

    /// Every request the model got, in order.
    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The stdin the `n`th (0-based) hook of `event` got, parsed, with its
    /// keys in order.
    pub(crate) fn hook_stdin(&self, event: &str, n: usize) -> (Value, Vec<String>) {
        let path = self.root().join("cap").join(format!("{event}.{n}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{event} hook {n} did not run ({e})"));
        let value: Value = serde_json::from_str(&text).unwrap();
        let keys = value.as_object().unwrap().keys().cloned().collect();
        (value, keys)
    }

    pub(crate) fn order(&self) -> Vec<String> {
        std::fs::read_to_string(self.root().join("order.log"))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    pub(crate) fn log(&self, session: &str) -> Vec<Value> {
        std::fs::read_to_string(self.root().join(format!("state/sessions/{session}.jsonl")))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
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

const SUMMARY: &str =
    "<analysis>A</analysis>\n<summary>MARK_SUMMARY the user ran echo hi.</summary>";

#[test]
fn compact_replaces_the_history_with_the_summary_for_the_next_request() {
    let p = Project::new(
        &[
            ("PreCompact", "echo MARK_PRE keep X"),
            ("PostCompact", "true"),
            ("SessionStart", "true"),
        ],
        "",
    );
    let first = p.prompt(
        "s1",
        "do it",
        json!([
            {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo hi"}}]},
            {"text": "All done."},
        ]),
    );
    assert_eq!(first.outcome.code, Some(0), "{}", first.outcome.stderr);
    let compact = p.prompt(
        "s1",
        "/compact keep the file names",
        json!([{"text": SUMMARY}]),
    );
    assert_eq!(compact.outcome.code, Some(0), "{}", compact.outcome.stderr);
    let compacted = compact.of_type("session/compacted");
    assert_eq!(compacted.len(), 1, "{:?}", compact.events);
    assert_eq!(compacted[0]["trigger"], "manual");
    assert_eq!(compacted[0]["summary"], SUMMARY);
    // No prompt of that turn reached the model as a prompt.
    assert!(compact.of_type("user/message").is_empty());
    let after = p.prompt("s1", "what now?", json!([{"text": "after"}]));
    assert_eq!(after.outcome.code, Some(0), "{}", after.outcome.stderr);

    let requests = p.requests();
    assert_eq!(requests.len(), 4);
    // The summary request: the history, then Claude Code's prompt with the
    // custom instructions and the PreCompact hook's stdout; no tools.
    let asked = contents(&requests[2]);
    assert_eq!(asked[0], ("user".into(), "do it".into()));
    assert!(asked.iter().any(|(r, c)| r == "tool" && c == "hi"));
    // The last answer is kept, not summarized.
    assert!(!asked.contains(&("assistant".into(), "All done.".into())));
    let (role, prompt) = asked.last().unwrap();
    assert_eq!(role, "user");
    assert!(
        prompt.starts_with("CRITICAL: Respond with TEXT ONLY."),
        "{prompt}"
    );
    assert!(
        prompt.ends_with(
            "\n\nAdditional Instructions:\nkeep the file names\n\nMARK_PRE keep X\n\nREMINDER: Do NOT call any tools. Respond with plain text only — an <analysis> block followed by a <summary> block. Tool calls will be rejected and you will fail the task."
        ),
        "{prompt}"
    );
    assert_eq!(requests[2]["tools"], json!([]));
    // The next request starts with the summary, not the history.
    let log_path = p.root().join("state/sessions/s1.jsonl");
    let next = contents(&requests[3]);
    // The summary, the last answer (kept, Claude Code's preserved
    // segment, recorded S90-*), the command's transcript naming each
    // compaction hook run, its synthetic answer, the prompt.
    assert_eq!(next.len(), 5, "{next:?}");
    assert_eq!(next[1], ("assistant".into(), "All done.".into()));
    assert_eq!(next[0].0, "user");
    assert!(
        next[0].1.starts_with(
            "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\nMARK_SUMMARY the user ran echo hi.\n\nIf you need specific details"
        ),
        "{}",
        next[0].1
    );
    assert!(
        next[0].1.contains(&format!(
            "read the full transcript at: {}\n",
            std::fs::canonicalize(&log_path).unwrap().display()
        )) || next[0].1.contains(&format!(
            "read the full transcript at: {}\n",
            log_path.display()
        ))
    );
    let (role, command) = &next[2];
    assert_eq!(role, "user");
    assert!(
        command.starts_with("<local-command-caveat>Caveat: The messages below")
            && command.contains("<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args>keep the file names</command-args>\n\n<local-command-stdout>Compacted PreCompact [")
            && command.contains("echo MARK_PRE keep X] completed successfully: MARK_PRE keep X\nPostCompact [")
            && command.ends_with("; true] completed successfully</local-command-stdout>\n\nContinue from where you left off."),
        "{command}"
    );
    assert_eq!(
        next[3],
        ("assistant".into(), "No response requested.".into())
    );
    assert_eq!(next[4], ("user".into(), "what now?".into()));
    assert!(!requests[3].to_string().contains("echo hi\""));

    // The hooks: PreCompact, SessionStart(compact), PostCompact, in order,
    // with Claude Code's payloads (recorded S90-custom).
    let order = p.order();
    let at = order.iter().position(|e| e == "PreCompact").unwrap();
    assert_eq!(
        order[at..at + 3],
        ["PreCompact", "SessionStart", "PostCompact"]
    );
    let (pre, keys) = p.hook_stdin("PreCompact", 0);
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "hook_event_name",
            "trigger",
            "custom_instructions"
        ]
    );
    assert_eq!(pre["trigger"], "manual");
    assert_eq!(pre["custom_instructions"], "keep the file names");
    assert_eq!(pre["session_id"], "s1");
    // SessionStart: startup (run 1), resume (run 2), compact, resume (run 3).
    let (start, _) = p.hook_stdin("SessionStart", 2);
    assert_eq!(start["source"], "compact");
    let (post, keys) = p.hook_stdin("PostCompact", 0);
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "hook_event_name",
            "trigger",
            "compact_summary"
        ]
    );
    assert_eq!(post["compact_summary"], SUMMARY);

    // The log keeps everything: the history before the compaction, the
    // compaction, what followed.
    let log = p.log("s1");
    let kinds: Vec<&str> = log.iter().filter_map(|e| e["type"].as_str()).collect();
    let c = kinds
        .iter()
        .position(|k| *k == "session/compacted")
        .unwrap();
    assert!(kinds[..c].contains(&"tool/result"));
    assert!(
        log.iter()
            .any(|e| e["type"] == "turn/start" && e["kind"] == "compact")
    );
}

#[test]
fn a_pre_compact_exit_2_keeps_the_history() {
    let p = Project::new(&[("PreCompact", "echo no compaction here >&2; exit 2")], "");
    let one = p.prompt("s2", "one", json!([{"text": "first answer"}]));
    assert_eq!(one.outcome.code, Some(0));
    let blocked = p.prompt("s2", "/compact", json!([{"text": SUMMARY}]));
    // Every prompt of the turn was blocked: exit 3.
    assert_eq!(blocked.outcome.code, Some(3), "{}", blocked.outcome.stderr);
    assert!(blocked.of_type("session/compacted").is_empty());
    let why = blocked.of_type("prompt/blocked");
    assert_eq!(why.len(), 1);
    let reason = why[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Compaction blocked by PreCompact hook: [")
            && reason.ends_with("]: no compaction here"),
        "{reason}"
    );
    assert_eq!(why[0]["plugin"], "hooks-claude");
    let two = p.prompt("s2", "two", json!([{"text": "second answer"}]));
    assert_eq!(two.outcome.code, Some(0));
    // No summary was asked for; the second request has the whole history,
    // the command with its synthetic answer, and its output merged into
    // the next prompt's message (recorded S90-pre-exit2).
    let requests = p.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        contents(&requests[1]),
        vec![
            ("user".to_string(), "one".to_string()),
            ("assistant".to_string(), "first answer".to_string()),
            ("user".to_string(), "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>\n\n<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args></command-args>".to_string()),
            ("assistant".to_string(), "No response requested.".to_string()),
            ("user".to_string(), format!("<local-command-stdout>{reason}</local-command-stdout>\n\ntwo")),
        ]
    );
}

#[test]
fn a_full_context_window_compacts_at_the_end_of_the_turn() {
    let p = Project::new(&[("PreCompact", "true")], "compaction:\n  threshold: 0.5\n");
    let first = p.prompt(
        "s3",
        "one",
        json!([
            {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo hi"}}]},
            {"text": "first answer", "context": {"used": 600, "size": 1000}},
            {"text": SUMMARY},
        ]),
    );
    assert_eq!(first.outcome.code, Some(0), "{}", first.outcome.stderr);
    // The compaction ends the turn that filled the window.
    let kinds: Vec<&str> = first
        .events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    let a = kinds
        .iter()
        .position(|k| *k == "assistant/message")
        .unwrap();
    let c = kinds.iter().position(|k| *k == "session/compacted");
    assert!(c.is_some_and(|c| c > a), "{kinds:?}");
    assert_eq!(first.of_type("session/compacted")[0]["trigger"], "auto");
    let (pre, _) = p.hook_stdin("PreCompact", 0);
    assert_eq!(pre["trigger"], "auto");
    assert_eq!(pre["custom_instructions"], Value::Null);
    // The next turn, in another process, starts from the summary.
    let second = p.prompt("s3", "two", json!([{"text": "second answer"}]));
    assert_eq!(second.outcome.code, Some(0), "{}", second.outcome.stderr);
    assert!(second.of_type("session/compacted").is_empty());
    let requests = p.requests();
    assert_eq!(requests.len(), 4);
    let last = contents(&requests[3]);
    assert_eq!(last.len(), 3, "{last:?}");
    assert!(
        last[0]
            .1
            .contains("Summary:\nMARK_SUMMARY the user ran echo hi.")
    );
    assert_eq!(last[1], ("assistant".into(), "first answer".into()));
    assert_eq!(last[2], ("user".into(), "two".into()));
}

#[test]
fn below_the_threshold_nothing_is_compacted() {
    let p = Project::new(&[], "compaction:\n  threshold: 0.7\n");
    let first = p.prompt(
        "s4",
        "one",
        json!([{"text": "first answer", "context": {"used": 600, "size": 1000}}]),
    );
    assert_eq!(first.outcome.code, Some(0), "{}", first.outcome.stderr);
    assert!(first.of_type("session/compacted").is_empty());
    assert_eq!(p.requests().len(), 1);
}

#[test]
fn a_failed_model_request_runs_stop_failure() {
    let p = Project::new(&[("StopFailure", "true"), ("Stop", "true")], "");
    let failed = p.prompt(
        "s5",
        "do it",
        json!([{"error": {"status": 503, "message": "MARK_DOWN upstream down"}}]),
    );
    assert_eq!(failed.outcome.code, Some(1), "{}", failed.outcome.stderr);
    let (stdin, keys) = p.hook_stdin("StopFailure", 0);
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "effort",
            "hook_event_name",
            "error",
            "last_assistant_message"
        ]
    );
    assert_eq!(stdin["error"], "server_error");
    assert_eq!(
        stdin["last_assistant_message"],
        "API Error: 503 MARK_DOWN upstream down. This is a server-side issue, usually temporary — try again in a moment."
    );
    // Stop is for turns the model finished: it does not run.
    assert!(!p.order().contains(&"Stop".to_string()));
}
