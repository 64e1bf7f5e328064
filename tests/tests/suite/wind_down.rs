//! `dsh prompt`'s wind-down over the real binary, real background `Bash`
//! jobs and real Claude hooks (shell scripts), as `claude -p` winds down
//! (recorded `S262-ends-in-grace`, `S260-left-running`;
//! `tools/recorder-scenarios/FINDINGS-wind.md`):
//!
//! - a job that ends within the grace re-invokes the model: a second turn
//!   whose one prompt is the bare `<task-notification>` (a user message, no
//!   UserPromptSubmit), Stop again with no job listed, then SessionEnd;
//! - a job still running when the grace runs out is killed and the run
//!   ends with no SessionEnd hook;
//! - SIGINT while the run waits ends the wait: the job is killed as the
//!   session ends (SessionEnd runs, as for any interrupted run) and `dsh`
//!   exits 130.
//!
//! No wall clock is asserted: the first job ends only once `dsh` has
//! written that it winds down (its debug line, read by the job from the
//! run's stderr file), under a grace of ten minutes; the second never ends
//! by itself, under a grace of 100 ms (`wind_down_grace_ms`).

use std::process::{Command, Stdio};
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use serde_json::{Value, json};

use super::compaction::Project;

/// `dsh prompt --json --session s1 go` in `p`, its stderr (with the
/// wind-down's debug lines) written to `<root>/stderr.log`; exit code and
/// stdout's events.
fn prompt(p: &Project, script: Value) -> (Option<i32>, Vec<Value>) {
    finish(start(p, script))
}

/// [`prompt`], started.
fn start(p: &Project, script: Value) -> std::process::Child {
    p.write_manifest(&script);
    let stderr = std::fs::File::create(p.root().join("stderr.log")).unwrap();
    let mut command = Command::new(&workspace().dsh);
    command
        .args(["prompt", "--config"])
        .arg(p.root().join("cordis.yml"))
        .arg("--cwd")
        .arg(p.proj())
        .args(["--session", "s1", "--json", "go"])
        .current_dir(p.root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DSH_") {
            command.env_remove(key);
        }
    }
    command
        .env("HOME", p.root().join("home"))
        .env("SHELL", "/bin/sh")
        .env("DSH_LOG", "warn,dsh_host::agent::wind_down=debug");
    command.spawn().unwrap()
}

/// Waits for a [`start`]ed run (killing it after two minutes): exit code
/// and stdout's events.
fn finish(child: std::process::Child) -> (Option<i32>, Vec<Value>) {
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(output) = rx.recv_timeout(Duration::from_secs(120)) else {
        // SAFETY: plain syscall on the child we started and have not reaped.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        panic!("dsh prompt did not finish; killed it");
    };
    let output = output.unwrap();
    let events = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (output.status.code(), events)
}

fn bg(command: &str) -> Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {
        "command": command, "description": "background job", "run_in_background": true}}]})
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[test]
fn a_job_that_ends_in_the_grace_re_invokes_the_model_then_session_end_runs() {
    let p = Project::new(
        &[("UserPromptSubmit", ""), ("Stop", ""), ("SessionEnd", "")],
        "wind_down_grace_ms: 600000\n",
    );
    let wait = format!(
        "until grep -q 'winding down' {}; do sleep 0.01; done; echo MARK_BG_END",
        p.root().join("stderr.log").display()
    );
    let (code, events) = prompt(
        &p,
        json!([bg(&wait), {"text": "All done."}, {"text": "MARK_SECOND_DONE"}]),
    );
    let stderr = std::fs::read_to_string(p.root().join("stderr.log")).unwrap();
    assert_eq!(code, Some(0), "{stderr}");
    // Two turns, both completed; the second's one prompt is the job's
    // notification, from bash-local.
    let ends: Vec<&str> = of_type(&events, "turn/end")
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["completed", "completed"], "{events:?}");
    let prompts = of_type(&events, "user/message");
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert_eq!(prompts[0]["content"], "go");
    assert_eq!(
        prompts[1]["source"],
        json!({"kind": "plugin", "plugin": "bash-local"})
    );
    let notification = prompts[1]["content"].as_str().unwrap();
    let (stop0, _) = p.hook_stdin("Stop", 0);
    let id = stop0["background_tasks"][0]["id"].as_str().unwrap();
    assert!(
        notification.starts_with(&format!(
            "<task-notification>\n<task-id>{id}</task-id>\n<tool-use-id>call_1_1</tool-use-id>\n<output-file>"
        )) && notification.ends_with(&format!(
            "/s1/tasks/{id}.output</output-file>\n<status>completed</status>\n<summary>Background \
             command \"background job\" completed (exit code 0)</summary>\n</task-notification>"
        )),
        "{notification}"
    );
    // The model read it as the last message, a user one after its answer.
    let requests = p.requests();
    assert_eq!(requests.len(), 3);
    let messages = requests[2]["messages"].as_array().unwrap();
    let tail: Vec<(&str, &str)> = messages[messages.len() - 2..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(tail, [("assistant", "All done."), ("user", notification)]);
    // No UserPromptSubmit for it; Stop again with no job; then SessionEnd.
    assert_eq!(
        p.order(),
        ["UserPromptSubmit", "Stop", "Stop", "SessionEnd"]
    );
    assert_eq!(
        stop0["background_tasks"],
        json!([{"id": id, "type": "shell", "status": "running",
            "description": "background job", "command": wait}])
    );
    let (stop1, _) = p.hook_stdin("Stop", 1);
    assert_eq!(stop1["background_tasks"], json!([]));
    assert_eq!(stop1["last_assistant_message"], "MARK_SECOND_DONE");
    let (end, _) = p.hook_stdin("SessionEnd", 0);
    assert_eq!(end["reason"], "other");
}

#[test]
fn a_job_still_running_after_the_grace_is_killed_and_no_session_end_hook_runs() {
    let p = Project::new(
        &[("Stop", ""), ("SessionEnd", "")],
        "wind_down_grace_ms: 100\n",
    );
    let (code, events) = prompt(
        &p,
        json!([bg("echo $$ > job.pid; sleep 300; touch late.txt"), {"text": "All done."},
            {"text": "MARK_SECOND_DONE"}]),
    );
    let stderr = std::fs::read_to_string(p.root().join("stderr.log")).unwrap();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(of_type(&events, "turn/end").len(), 1, "{events:?}");
    assert_eq!(p.requests().len(), 2);
    // Stop listed it; no SessionEnd hook ran.
    assert_eq!(p.order(), ["Stop"]);
    let (stop, _) = p.hook_stdin("Stop", 0);
    assert_eq!(stop["background_tasks"][0]["status"], "running", "{stop}");
    // Killed (and reaped) before `dsh prompt` exited.
    let pid = std::fs::read_to_string(p.proj().join("job.pid")).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    assert!(stat.is_err(), "job {pid} outlived the run: {stat:?}");
    assert!(!p.proj().join("late.txt").exists());
}

#[test]
fn sigint_while_the_run_waits_ends_it_and_kills_the_job() {
    let p = Project::new(
        &[("Stop", ""), ("SessionEnd", "")],
        "wind_down_grace_ms: 600000\n",
    );
    let child = start(
        &p,
        json!([bg("echo $$ > job.pid; sleep 300; touch late.txt"), {"text": "All done."},
            {"text": "MARK_SECOND_DONE"}]),
    );
    let log = p.root().join("stderr.log");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("winding down")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "never wound down: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: plain syscall on the child we started and have not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let (code, events) = finish(child);
    assert_eq!(
        code,
        Some(130),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
    assert_eq!(of_type(&events, "turn/end").len(), 1, "{events:?}");
    assert_eq!(p.order(), ["Stop", "SessionEnd"]);
    let (end, _) = p.hook_stdin("SessionEnd", 0);
    assert_eq!(end["reason"], "other");
    let pid = std::fs::read_to_string(p.proj().join("job.pid")).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    assert!(stat.is_err(), "job {pid} outlived the run: {stat:?}");
    assert!(!p.proj().join("late.txt").exists());
}
