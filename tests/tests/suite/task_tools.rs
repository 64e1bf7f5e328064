//! Claude Code's task tools (`tools-tasks`) and their TaskCreated /
//! TaskCompleted hooks through the real `dsh prompt`, one process per
//! prompt, real shell hooks; only the model is scripted.
//!
//! What the loop vectors (one host process) cannot show: the list lives
//! on disk per session, so a later `dsh prompt` of the same session (a new
//! process) finds it, with the id a refused TaskCreate took still used
//! (recorded S221, S222), and another session starts empty (S222's third
//! run); the task files are private.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use dsh_tests::{run_dsh, temp_dir};

/// A site with a manifest (bash-local, hooks-claude with `hooks.json`,
/// tools-tasks, a scripted model recording its requests).
pub(crate) struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    /// `hooks(site folder)` as `hooks.json`'s `hooks` object.
    pub(crate) fn new(hooks: impl FnOnce(&Path) -> Value) -> Site {
        let dir = temp_dir();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        std::fs::write(
            dir.path().join("hooks.json"),
            json!({ "hooks": hooks(dir.path()) }).to_string(),
        )
        .unwrap();
        Site { dir }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `dsh prompt --session <session>` with the model answering `script`;
    /// the requests this run made.
    pub(crate) fn prompt(&self, session: &str, script: Value) -> Vec<Value> {
        let before = self.requests().len();
        std::fs::write(self.path("script.json"), script.to_string()).unwrap();
        std::fs::write(
            self.path("cordis.yml"),
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: hooks-claude\n    \
             config: {config_path: hooks.json}\n  - name: tools-tasks\n  - id: model\n    \
             name: model-scripted\n    config: {script: script.json, record: requests.jsonl}\n",
        )
        .unwrap();
        let proj = self.path("proj");
        let manifest = self.path("cordis.yml");
        let out = run_dsh(
            [
                "prompt",
                "--cwd",
                proj.to_str().unwrap(),
                "--session",
                session,
                "--config",
                manifest.to_str().unwrap(),
                "do it",
            ],
            self.dir.path(),
        );
        assert_eq!(
            out.code,
            Some(0),
            "stdout:\n{}\nstderr:\n{}",
            out.stdout,
            out.stderr
        );
        self.requests().split_off(before)
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Each line of a hook's log, parsed.
    pub(crate) fn logged(&self, name: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(name))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// A call of `tool` with `args`.
pub(crate) fn call(tool: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": args}]})
}

/// `(content, is_error)` of every tool message of the last request.
pub(crate) fn results(requests: &[Value]) -> Vec<(String, bool)> {
    requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["content"].as_str().unwrap_or_default().to_string(),
                m["is_error"] == true,
            )
        })
        .collect()
}

/// A hook appending its stdin (one line) to `log`, then running `then`.
pub(crate) fn hook(site: &Path, log: &str, then: &str) -> Value {
    let log = site.join(log);
    json!([{"hooks": [{"type": "command",
        "command": format!("p=$(cat); printf '%s\\n' \"$p\" >> '{}'; {then}", log.display())}]}])
}

#[test]
fn tasks_outlive_the_process_ids_stay_used_and_hooks_refuse_as_recorded() {
    let refuse = "case \"$p\" in *refuse*) echo 'MARK no refusals' >&2; exit 2;; esac";
    let site = Site::new(|root| {
        json!({
            "TaskCreated": hook(root, "created.log", refuse),
            "TaskCompleted": hook(root, "completed.log", "true"),
        })
    });

    let first = site.prompt(
        "s1",
        json!([
            call("TaskCreate", json!({"subject": "first", "description": "d1"})),
            call("TaskCreate", json!({"subject": "refuse me", "description": "d2"})),
            call("TaskUpdate", json!({"taskId": "1", "status": "completed"})),
            {"text": "done"}
        ]),
    );
    // The four tools, with Claude Code's schemas (after `bash-local`'s
    // `TaskOutput` and `TaskStop`, which Claude Code offers too, S260-*).
    let tools: Vec<&str> = first[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.starts_with("Task"))
        .collect();
    assert_eq!(
        tools,
        [
            "TaskOutput",
            "TaskStop",
            "TaskCreate",
            "TaskGet",
            "TaskList",
            "TaskUpdate"
        ]
    );
    let got = results(&first);
    let hook_command = std::fs::read_to_string(site.path("hooks.json")).unwrap();
    let hook_command: Value = serde_json::from_str(&hook_command).unwrap();
    let created_cmd = hook_command["hooks"]["TaskCreated"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        got,
        [
            ("Task #1 created successfully: first".to_string(), false),
            (
                format!("TaskCreated hook feedback:\n[{created_cmd}]: MARK no refusals"),
                true
            ),
            ("Updated task #1 status".to_string(), false),
        ]
    );
    let created = site.logged("created.log");
    let ids: Vec<&str> = created
        .iter()
        .map(|c| c["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["1", "2"]);
    assert_eq!(created[0]["hook_event_name"], "TaskCreated");
    assert_eq!(created[0]["task_subject"], "first");
    assert_eq!(created[0]["task_description"], "d1");
    assert_eq!(created[0]["session_id"], "s1");
    let completed = site.logged("completed.log");
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["task_id"], "1");
    // Each change left the list in the log as a `tasks/plan` record (an
    // editor's plan); the refused task never was in one.
    let plans: Vec<Value> = std::fs::read_to_string(site.path("state/sessions/s1.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tasks/plan")
        .map(|e| e["entries"].clone())
        .collect();
    assert_eq!(
        plans,
        [
            json!([{"content": "first", "status": "pending"}]),
            json!([{"content": "first", "status": "completed"}]),
        ]
    );

    // A new process, the same session: the list is there, and id 2 (the
    // refused task's) is never given again.
    let second = site.prompt(
        "s1",
        json!([
            call("TaskList", json!({})),
            call("TaskCreate", json!({"subject": "third", "description": "d3"})),
            {"text": "done"}
        ]),
    );
    let got = results(&second);
    assert_eq!(got[got.len() - 2].0, "#1 [completed] first");
    assert_eq!(got[got.len() - 1].0, "Task #3 created successfully: third");

    // Another session starts with none.
    let other = site.prompt("s2", json!([call("TaskList", json!({})), {"text": "done"}]));
    assert_eq!(results(&other), [("No tasks found".to_string(), false)]);

    // The files are private.
    let mode = |p: &str| {
        std::fs::metadata(site.path(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("state/tasks/s1"), 0o700);
    assert_eq!(mode("state/tasks/s1/1.json"), 0o600);
    assert!(!site.path("state/tasks/s1/2.json").exists());
}
