//! The `dsh` binary as a user runs it: `prompt`, `sessions`, and a crash
//! mid-turn followed by a resume.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const DSH: &str = env!("CARGO_BIN_EXE_dsh");

fn manifest(dir: &Path, script: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("script.yml"), script).unwrap();
    let path = dir.join("cordis.yml");
    std::fs::write(
        &path,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n",
    )
    .unwrap();
    path
}

fn dsh(args: &[&str]) -> std::process::Output {
    Command::new(DSH)
        .args(args)
        .env_remove("DSH_STATE_DIR")
        .output()
        .unwrap()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn prompt_on_the_default_manifest_shows_the_tool_call_and_its_result() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(DSH)
        .current_dir(repo)
        .env("DSH_STATE_DIR", state.path())
        .args(["prompt", "list the files"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("* Bash {\"command\":\"ls\""), "{stdout}");
    assert!(
        stdout.contains("result: ") && stdout.contains("cordis.yml"),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with("[turn completed]"), "{stdout}");
}

#[test]
fn prompt_json_prints_one_balanced_turn() {
    let dir = tempfile::tempdir().unwrap();
    let config = manifest(
        dir.path(),
        "- tool_calls: [{name: Bash, arguments: {command: 'echo hi'}}]\n- text: bye\n",
    );
    let out = dsh(&[
        "prompt",
        "--json",
        "--config",
        config.to_str().unwrap(),
        "--cwd",
        dir.path().to_str().unwrap(),
        "go",
    ]);
    assert!(out.status.success());
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "turn/start",
            "user/message",
            "step/start",
            "assistant/message",
            "tool/call",
            "tool/result",
            "step/end",
            "step/start",
            "assistant/message",
            "step/end",
            "turn/end"
        ]
    );
    assert_eq!(events[5]["content"], "hi");
}

#[test]
fn a_process_killed_mid_turn_leaves_an_interrupted_turn_and_the_session_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("tool.pid");
    let script = format!(
        "- tool_calls: [{{name: Bash, arguments: {{command: 'echo $$ > {}; exec sleep 60'}}}}]\n",
        pidfile.display()
    );
    let config = manifest(dir.path(), &script);
    let config = config.to_str().unwrap();
    let mut child = Command::new(DSH)
        .args([
            "prompt",
            "--config",
            config,
            "--cwd",
            dir.path().to_str().unwrap(),
            "--session",
            "crashy",
            "go",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the tool to start", || {
        pidfile.exists() && !std::fs::read_to_string(&pidfile).unwrap().is_empty()
    });
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let tool_pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: plain kill(2) on a pid this test's own tool call started.
    unsafe { libc::kill(tool_pid, libc::SIGKILL) };

    let show = dsh(&["sessions", "show", "crashy", "--config", config]);
    let text = String::from_utf8_lossy(&show.stdout);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn/end");
    assert_eq!(last["reason"], "interrupted");

    // A new process reads its script afresh: this time it only talks.
    std::fs::write(dir.path().join("script.yml"), "- text: resumed fine\n").unwrap();
    let out = dsh(&[
        "prompt",
        "--config",
        config,
        "--session",
        "crashy",
        "and now?",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("resumed fine"), "{stdout}");
    let list =
        String::from_utf8_lossy(&dsh(&["sessions", "list", "--config", config]).stdout).to_string();
    assert!(
        list.contains("crashy") && list.contains("completed"),
        "{list}"
    );
}

#[test]
fn prompt_connects_the_manifest_s_mcp_servers_and_reports_one_that_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = manifest(
        dir.path(),
        "- tool_calls: [{name: mcp__fix__echo, arguments: {text: hi}}]\n- text: bye\n",
    );
    let fixture = dsh_test_support::artifacts::mcp_fixture();
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "mcp_servers:\n  fix:\n    command: {}\n  bad:\n    command: {}\n",
        fixture.display(),
        dir.path().join("missing-server").display()
    ));
    std::fs::write(&config, text).unwrap();
    let out = dsh(&[
        "prompt",
        "--config",
        config.to_str().unwrap(),
        "--cwd",
        dir.path().to_str().unwrap(),
        "echo",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("result: echo: hi"), "{stdout}");
    assert!(
        stderr.contains("dsh: MCP server `bad`: cannot start `"),
        "{stderr}"
    );
    assert!(stdout.trim_end().ends_with("[turn completed]"), "{stdout}");
}
