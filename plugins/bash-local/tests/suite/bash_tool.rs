//! The `Bash` tool body: Claude-shaped results, errors, timeout and abort.

use std::path::Path;

use dsh_bash_local::Config;
use dsh_bash_local::bash::{NO_OUTPUT, abort_future, bash_tool};
use dsh_plugin_api::ToolResult;
use serde_json::{Value, json};

use super::support::*;

async fn bash(args: Value, cwd: &Path) -> ToolResult {
    bash_with(args, cwd, &Config::default()).await
}

async fn bash_with(args: Value, cwd: &Path, config: &Config) -> ToolResult {
    tokio::time::timeout(
        FINISH,
        bash_tool(&args, cwd, config, std::future::pending()),
    )
    .await
    .expect("finished")
}

fn structured(result: &ToolResult) -> Value {
    serde_json::from_str(result.structured.as_ref().expect("structured").as_str()).expect("json")
}

#[tokio::test(flavor = "multi_thread")]
async fn success_matches_claudes_tool_response() {
    let (_d, dir) = temp_dir();
    let result = bash(
        json!({"command": "echo hi", "description": "Print hi"}),
        &dir,
    )
    .await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "hi");
    // Byte-for-byte the recorded PostToolUse tool_response (S1-bash-only).
    assert_eq!(
        result.structured.as_ref().expect("structured").as_str(),
        r#"{"stdout":"hi","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}"#
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn failure_is_exit_code_then_output() {
    let (_d, dir) = temp_dir();
    // The recorded PostToolUseFailure error (S1-all-events).
    let result = bash(json!({"command": "ls /nonexistent_dir"}), &dir).await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "Exit code 2\nls: cannot access '/nonexistent_dir': No such file or directory"
    );
    let result = bash(json!({"command": "echo out; echo err >&2; exit 3"}), &dir).await;
    assert_eq!(result.text_content(), "Exit code 3\nout\nerr");
    // One pipe for both streams, as Claude Code runs commands (S237).
    assert_eq!(
        structured(&result),
        json!({"stdout": "out\nerr", "stderr": "", "interrupted": false,
        "isImage": false, "noOutputExpected": false})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_and_stderr_are_read_as_the_command_interleaved_them() {
    let (_d, dir) = temp_dir();
    // Recorded S237-ok / S237-fail: Claude Code's model and PostToolUse
    // read the two streams in the order they were written, all in `stdout`.
    let mixed = "echo MARK_E1 >&2; echo MARK_O1; echo MARK_E2 >&2; echo MARK_O2";
    let result = bash(json!({"command": mixed}), &dir).await;
    assert_eq!(
        (result.is_error, result.text_content().as_str()),
        (false, "MARK_E1\nMARK_O1\nMARK_E2\nMARK_O2")
    );
    assert_eq!(
        structured(&result),
        json!({"stdout": "MARK_E1\nMARK_O1\nMARK_E2\nMARK_O2", "stderr": "",
        "interrupted": false, "isImage": false, "noOutputExpected": false})
    );
    let result = bash(json!({"command": format!("{mixed}; exit 3")}), &dir).await;
    assert_eq!(
        (result.is_error, result.text_content().as_str()),
        (true, "Exit code 3\nMARK_E1\nMARK_O1\nMARK_E2\nMARK_O2")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn success_with_stderr_shows_both_and_no_output_says_so() {
    let (_d, dir) = temp_dir();
    let result = bash(json!({"command": "echo out; echo warn >&2"}), &dir).await;
    assert_eq!(
        (result.is_error, result.text_content().as_str()),
        (false, "out\nwarn")
    );
    let result = bash(json!({"command": "true"}), &dir).await;
    assert_eq!(
        (result.is_error, result.text_content().as_str()),
        (false, NO_OUTPUT)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_bash_in_the_session_cwd() {
    let (_d, dir) = temp_dir();
    let result = bash(
        json!({"command": "pwd; echo ${BASH_VERSION:+is-bash}"}),
        &dir,
    )
    .await;
    assert_eq!(result.text_content(), format!("{}\nis-bash", dir.display()));
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_are_error_results() {
    let (_d, dir) = temp_dir();
    let cases = [
        (json!("echo hi"), "JSON object"),
        (json!({}), "missing required parameter `command`"),
        (json!({"command": 5}), "`command` must be a string"),
        (json!({"command": "x", "timeout": "soon"}), "`timeout`"),
        (
            json!({"command": "x", "run_in_background": true}),
            "run_in_background needs a session",
        ),
    ];
    for (args, expected) in cases {
        let result = bash(args.clone(), &dir).await;
        assert!(result.is_error, "{args}");
        assert!(
            result.text_content().contains(expected),
            "{args}: {}",
            result.text_content()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_session_cwd_is_an_error_result() {
    let (_d, dir) = temp_dir();
    let result = bash(json!({"command": "true"}), &dir.join("gone")).await;
    assert!(result.is_error);
    assert!(
        result.text_content().contains("does not exist"),
        "{}",
        result.text_content()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_is_an_interrupted_error() {
    let (_d, dir) = temp_dir();
    let result = bash(
        json!({"command": "echo before; sleep 30", "timeout": 300}),
        &dir,
    )
    .await;
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "Exit code 143\nCommand timed out after 0.3s\nbefore"
    );
    assert_eq!(structured(&result)["interrupted"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_signal_kills_the_command_and_reports_interrupted() {
    let (_d, dir) = temp_dir();
    let signal = TestSignal::default();
    let command = "echo started; sleep 30 & echo $! > grandchild.pid; wait";
    let args = json!({"command": command});
    let config = Config::default();
    let body = bash_tool(&args, &dir, &config, abort_future(signal.boxed()));
    let firing = async {
        let pid = read_pid(&dir.join("grandchild.pid")).await;
        signal.fire();
        pid
    };
    let (result, pid) = tokio::time::timeout(FINISH, async { tokio::join!(body, firing) })
        .await
        .expect("finished");
    assert!(result.is_error);
    assert_eq!(
        result.text_content(),
        "Command was aborted before completion\nstarted"
    );
    assert_eq!(structured(&result)["interrupted"], true);
    assert_dies(pid).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_already_fired_signal_interrupts_at_once() {
    let (_d, dir) = temp_dir();
    let signal = TestSignal::default();
    signal.fire();
    let config = Config::default();
    let result = tokio::time::timeout(
        FINISH,
        bash_tool(
            &json!({"command": "sleep 30"}),
            &dir,
            &config,
            abort_future(signal.boxed()),
        ),
    )
    .await
    .expect("finished");
    assert!(result.is_error);
    assert_eq!(structured(&result)["interrupted"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn long_output_keeps_its_head_within_the_cap() {
    // Claude Code keeps the head (S261-*); without a session there is no
    // folder to save the rest in, so the model reads the head.
    let (_d, dir) = temp_dir();
    let config = Config {
        max_output_bytes: 100,
        ..Config::default()
    };
    let result = bash_with(json!({"command": "seq 1 100000"}), &dir, &config).await;
    let text = result.text_content();
    assert!(text.starts_with("1\n2\n3\n"), "{text}");
    assert_eq!(text.len(), 100, "{text}");
    assert_eq!(structured(&result)["stdout"], text.as_str());
    // A failed command's text keeps its head too.
    let result = bash_with(json!({"command": "seq 1 100000; exit 4"}), &dir, &config).await;
    assert!(result.is_error);
    assert!(
        result.text_content().starts_with("Exit code 4\n1\n2\n"),
        "{}",
        result.text_content()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shell_is_configurable() {
    let (_d, dir) = temp_dir();
    let config = Config {
        shell: "/bin/sh".into(),
        ..Config::default()
    };
    let result = bash_with(
        json!({"command": "echo ${BASH_VERSION:-not-bash}"}),
        &dir,
        &config,
    )
    .await;
    assert_eq!(result.text_content(), "not-bash");
}
