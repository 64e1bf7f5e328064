//! Hostile inputs for background `Bash` jobs and `TaskOutput` / `TaskStop`,
//! over the real `dsh prompt`: task ids that are not ids (paths, empty,
//! numbers, absent), a job that writes bytes that are not UTF-8, a job
//! that forks children and grandchildren and is still running when the
//! process ends, an output folder that cannot be made. Each is refused by
//! name before any hook, read as the CLI reads it, or leaves nothing
//! running.

use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_tests::{run_dsh, temp_dir};
use serde_json::{Value, json};

use crate::suite::task_tools::{call, results};

/// A folder with a project, a `PreToolUse` hook logging every call (and
/// adding a line to `proj/calls`, which a job can wait on), and
/// `bash-local` writing job output to `background_dir`.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let dir = temp_dir();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        let log = dir.path().join("pre.log");
        let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
            "command": format!("cat >> '{log}'; echo >> '{log}'; echo x >> '{calls}'",
                log = log.display(), calls = dir.path().join("proj/calls").display())}]}]}});
        std::fs::write(dir.path().join("hooks.json"), hooks.to_string()).unwrap();
        Site { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `dsh prompt` with the model answering `script`; its requests and
    /// the process's outcome. Its wind-down waits 100 ms for jobs still
    /// running, then kills them (`wind_down_grace_ms`).
    fn prompt(&self, script: Value, background_dir: &Path) -> (Vec<Value>, dsh_tests::Outcome) {
        std::fs::write(self.path("script.json"), script.to_string()).unwrap();
        std::fs::write(
            self.path("cordis.yml"),
            format!(
                "state_dir: state\nwind_down_grace_ms: 100\nplugins:\n  - name: bash-local\n    \
                 config: {}\n  - name: \
                 hooks-claude\n    config: {{config_path: hooks.json}}\n  - id: model\n    \
                 name: model-scripted\n    config: {{script: script.json, record: requests.jsonl}}\n",
                json!({"background_dir": background_dir})
            ),
        )
        .unwrap();
        let proj = self.path("proj");
        let manifest = self.path("cordis.yml");
        let out = run_dsh(
            [
                "prompt",
                "--cwd",
                proj.to_str().unwrap(),
                "--config",
                manifest.to_str().unwrap(),
                "do it",
            ],
            self.dir.path(),
        );
        let requests = std::fs::read_to_string(self.path("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (requests, out)
    }

    /// The tool names the PreToolUse hook heard, in order.
    fn hooked(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("pre.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["tool_name"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }
}

fn bg(command: &str) -> Value {
    call(
        "Bash",
        json!({"command": command, "description": "job", "run_in_background": true}),
    )
}

/// `/proc/<pid>/stat`'s state letter, `None` once the process is gone.
fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    after.trim_start().chars().next()
}

fn pid_in(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn task_ids_that_are_not_ids_are_refused_before_any_hook() {
    let site = Site::new();
    let bg_dir = site.path("bg");
    let (requests, out) = site.prompt(
        json!([
            call("TaskOutput", json!({"task_id": "../../../etc/passwd", "block": false})),
            call("TaskOutput", json!({"task_id": "", "block": true, "timeout": 10})),
            call("TaskOutput", json!({"task_id": 5})),
            call("TaskOutput", json!({"block": true})),
            call("TaskStop", json!({"shell_id": "nosuch"})),
            call("TaskStop", json!({})),
            call("TaskStop", json!({"task_id": "x", "pid": 1})),
            {"text": "ok"}
        ]),
        &bg_dir,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let got = results(&requests);
    let texts: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "<tool_use_error>No task found with ID: ../../../etc/passwd</tool_use_error>",
            "<tool_use_error>No task found with ID: </tool_use_error>",
            "<tool_use_error>InputValidationError: TaskOutput failed due to the following issue:\n\
             The parameter `task_id` type is expected as `string` but provided as `number`\
             </tool_use_error>",
            "<tool_use_error>InputValidationError: TaskOutput failed due to the following issue:\n\
             The required parameter `task_id` is missing</tool_use_error>",
            "<tool_use_error>No task found with ID: nosuch</tool_use_error>",
            "<tool_use_error>Missing required parameter: task_id</tool_use_error>",
            "<tool_use_error>InputValidationError: TaskStop failed due to the following issue:\n\
             An unexpected parameter `pid` was provided</tool_use_error>",
        ]
    );
    assert!(got.iter().all(|(_, is_error)| *is_error));
    // Refused before any hook heard of them; nothing was made.
    assert!(site.hooked().is_empty(), "{:?}", site.hooked());
    assert!(!bg_dir.exists());
}

#[test]
fn a_job_writing_bytes_that_are_not_utf8_is_read_with_replacement_characters() {
    let site = Site::new();
    let bg_dir = site.path("bg");
    let (requests, out) = site.prompt(
        json!([
            // Ends once the `TaskOutput` call's hook ran (the second call).
            bg(r"while [ $(wc -l < calls) -lt 2 ]; do sleep 0.01; done; printf 'MARK_A\377\376MARK_B\n'; printf '\303' "),
            call("TaskOutput", json!({"task_id": "$BG_ID", "block": true, "timeout": 30000})),
            {"text": "ok"}
        ]),
        &bg_dir,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let got = results(&requests);
    assert!(
        got[1]
            .0
            .ends_with("<output>\nMARK_A\u{FFFD}\u{FFFD}MARK_B\n\u{FFFD}\n</output>"),
        "{:?}",
        got[1]
    );
    // The file keeps the bytes as written.
    let file = std::fs::read_dir(&bg_dir)
        .unwrap()
        .flatten()
        .flat_map(|slug| std::fs::read_dir(slug.path()).unwrap().flatten())
        .map(|session| session.path().join("tasks"))
        .flat_map(|tasks| std::fs::read_dir(tasks).unwrap().flatten())
        .map(|e| e.path())
        .next()
        .expect("an output file");
    assert_eq!(std::fs::read(file).unwrap(), b"MARK_A\xff\xfeMARK_B\n\xc3");
}

#[test]
fn a_job_that_forks_leaves_nothing_running_when_dsh_prompt_ends() {
    let site = Site::new();
    let proj = site.path("proj");
    let (_requests, out) = site.prompt(
        json!([
            bg("echo $$ > shell.pid; sleep 300 & echo $! > child.pid; \
                (sleep 300 & echo $! > grandchild.pid; wait) & wait"),
            call("Bash", json!({"command": "while [ ! -s grandchild.pid ]; do sleep 0.01; done"})),
            {"text": "ok"}
        ]),
        &site.path("bg"),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for name in ["shell.pid", "child.pid", "grandchild.pid"] {
        let pid = pid_in(&proj.join(name));
        // Killed when the session ended; whoever reaps it now (the
        // process that ran `dsh` is gone), it runs no more.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while matches!(proc_state(pid), Some(s) if s != 'Z') {
            assert!(
                std::time::Instant::now() < deadline,
                "{name} ({pid}) still running"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[test]
fn an_output_folder_that_cannot_be_made_is_named_and_runs_nothing() {
    let site = Site::new();
    // The output root is a file.
    let blocked = site.path("not-a-folder");
    std::fs::write(&blocked, "x").unwrap();
    let (requests, out) = site.prompt(json!([bg("touch ran.txt"), {"text": "ok"}]), &blocked);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let got = results(&requests);
    assert!(got[0].1, "{got:?}");
    assert!(
        got[0].0.starts_with(&format!(
            "Bash: cannot create the background output file {}/",
            blocked.display()
        )),
        "{got:?}"
    );
    assert!(!site.path("proj/ran.txt").exists());
    assert_eq!(std::fs::read_to_string(&blocked).unwrap(), "x");
}

#[test]
fn an_output_root_that_is_a_symlink_or_open_to_others_is_refused_by_name() {
    use std::os::unix::fs::PermissionsExt as _;
    let site = Site::new();
    // Someone pointed the shared root elsewhere: a symlink to a folder.
    let elsewhere = site.path("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = site.path("link-root");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    // Or made it open to everyone.
    let open = site.path("open-root");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    for root in [&link, &open] {
        let (requests, out) = site.prompt(json!([bg("touch ran.txt"), {"text": "ok"}]), root);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let got = results(&requests);
        assert!(got[0].1, "{got:?}");
        assert!(
            got[0].0.contains(&format!(
                "{} is not a private folder of this user",
                root.display()
            )),
            "{got:?}"
        );
        assert!(!site.path("proj/ran.txt").exists());
    }
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}
