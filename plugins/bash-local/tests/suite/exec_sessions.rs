//! Codex's `exec_command` past its `yield_time_ms` and `write_stdin`, over
//! real processes: the running session, polls, Ctrl-C, refused input, the
//! end of the session. (The recorded flows run through the loop in
//! `host/tests/hooks`, vectors `C207-*`, `C208-*`.)

use std::path::Path;

use dsh_bash_local::exec::store::ExecSessions;
use dsh_bash_local::exec::{self, ExecContext, write_stdin};
use dsh_plugin_api::ToolResult;
use dsh_plugin_api::sdk::codex_exec::ExecStructured;
use serde_json::json;

use super::support::*;

/// Commands run with `HOME` at `home`, so the login shell reads no
/// profile of this machine's.
fn context(home: &Path) -> ExecContext {
    ExecContext {
        env_allow: Vec::new(),
        env: [("HOME".to_string(), home.display().to_string())].into(),
        sandbox: None,
        processes: ExecSessions::default(),
    }
}

async fn exec(ctx: &ExecContext, args: serde_json::Value, cwd: &Path) -> ToolResult {
    let call = tool_call("exec_command", &args.to_string(), cwd);
    tokio::time::timeout(FINISH, exec::run(&call, ctx))
        .await
        .expect("finished")
}

async fn write(ctx: &ExecContext, args: serde_json::Value, cwd: &Path) -> ToolResult {
    let call = tool_call("write_stdin", &args.to_string(), cwd);
    tokio::time::timeout(FINISH, write_stdin::run(&call, ctx))
        .await
        .expect("finished")
}

fn structured(result: &ToolResult) -> ExecStructured {
    ExecStructured::parse(result.structured.as_ref().expect("structured").as_str())
        .expect("an exec result")
}

/// The line after `Wall time` in Codex's framing.
fn status_line(result: &ToolResult) -> String {
    result
        .text_content()
        .lines()
        .nth(2)
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_past_its_yield_keeps_running_until_a_poll_sees_it_end() {
    let (_d, dir) = temp_dir();
    let ctx = context(&dir);
    let go = dir.join("go");
    let cmd = format!(
        "echo start; while [ ! -e '{}' ]; do sleep 0.02; done; echo end",
        go.display()
    );
    let first = exec(&ctx, json!({"cmd": cmd, "yield_time_ms": 250}), &dir).await;
    let running = structured(&first);
    let id = running.running_session_id.expect("still running");
    assert!((1000..100_000).contains(&id), "{id}");
    assert_eq!(
        status_line(&first),
        format!("Process running with session ID {id}")
    );
    assert_eq!(running.output, "start\n");
    assert_eq!(ctx.processes.count("s-1"), 1);

    std::fs::write(&go, "").unwrap();
    let poll = write(&ctx, json!({"session_id": id, "chars": ""}), &dir).await;
    let ended = structured(&poll);
    assert_eq!(status_line(&poll), "Process exited with code 0");
    assert_eq!(ended.output, "end\n", "only what came since the last call");
    let started_by = ended.finished_call.expect("the call that started it");
    assert_eq!(started_by.call_id, "call-1");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&started_by.arguments).unwrap()["cmd"],
        cmd
    );
    assert_eq!(ctx.processes.count("s-1"), 0);

    let again = write(&ctx, json!({"session_id": id, "chars": ""}), &dir).await;
    assert!(again.is_error);
    assert_eq!(
        again.text_content(),
        format!("write_stdin failed: Unknown process id {id}")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_ends_within_its_yield_is_not_kept() {
    let (_d, dir) = temp_dir();
    let ctx = context(&dir);
    let done = exec(&ctx, json!({"cmd": "echo quick; exit 3"}), &dir).await;
    assert_eq!(status_line(&done), "Process exited with code 3");
    assert_eq!(
        structured(&done),
        ExecStructured {
            output: "quick\n".into(),
            ..Default::default()
        }
    );
    assert_eq!(ctx.processes.count("s-1"), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_interrupts_and_other_input_is_refused_in_codexs_words() {
    let (_d, dir) = temp_dir();
    let ctx = context(&dir);
    let first = exec(
        &ctx,
        json!({"cmd": "echo s; sleep 30; echo never", "yield_time_ms": 250}),
        &dir,
    )
    .await;
    let id = structured(&first).running_session_id.expect("running");

    let refused = write(&ctx, json!({"session_id": id, "chars": "hello\n"}), &dir).await;
    assert!(refused.is_error);
    assert_eq!(
        refused.text_content(),
        "write_stdin failed: stdin is closed for this session; rerun exec_command with \
         tty=true to keep stdin open"
    );
    assert_eq!(ctx.processes.count("s-1"), 1, "the process stays");

    let stopped = write(
        &ctx,
        json!({"session_id": id, "chars": "\u{3}", "yield_time_ms": 5000}),
        &dir,
    )
    .await;
    assert_eq!(status_line(&stopped), "Process exited with code 130");
    assert_eq!(structured(&stopped).output, "");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_the_session_kills_what_still_runs() {
    let (_d, dir) = temp_dir();
    let ctx = context(&dir);
    let pid_file = dir.join("pid");
    let cmd = format!("echo $$ > '{}'; sleep 30", pid_file.display());
    let first = exec(&ctx, json!({"cmd": cmd, "yield_time_ms": 250}), &dir).await;
    assert!(structured(&first).running_session_id.is_some());
    let pid = read_pid(&pid_file).await;
    assert!(pid_alive(pid));
    ctx.processes.end_session("s-1");
    assert_dies(pid).await;
    assert_eq!(ctx.processes.count("s-1"), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_arguments_fail_with_serdes_message() {
    let (_d, dir) = temp_dir();
    let ctx = context(&dir);
    let call = tool_call("exec_command", r#"{"cmd": 5}"#, &dir);
    let bad = exec::run(&call, &ctx).await;
    assert!(bad.is_error);
    assert_eq!(
        bad.text_content(),
        "failed to parse function arguments: invalid type: integer `5`, expected a string at \
         line 1 column 9"
    );
    let bad = write(&ctx, json!({"chars": ""}), &dir).await;
    assert!(bad.is_error);
    assert_eq!(
        bad.text_content(),
        "failed to parse function arguments: missing field `session_id` at line 1 column 12"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_on_a_terminal_reads_what_is_typed_and_ctrl_c_stops_it() {
    let (_d, dir) = temp_dir();
    let ctx = context(&dir);
    let first = exec(
        &ctx,
        json!({"cmd": "read line; echo got-$line; sleep 30", "tty": true, "yield_time_ms": 250}),
        &dir,
    )
    .await;
    let id = structured(&first)
        .running_session_id
        .expect("waiting for input");
    let typed = write(
        &ctx,
        json!({"session_id": id, "chars": "hello\n", "yield_time_ms": 1000}),
        &dir,
    )
    .await;
    // The terminal echoes the line and ends lines with CR LF (C208-tty).
    assert_eq!(structured(&typed).output, "hello\r\ngot-hello\r\n");
    assert_eq!(
        status_line(&typed),
        format!("Process running with session ID {id}")
    );
    let stopped = write(
        &ctx,
        json!({"session_id": id, "chars": "\u{3}", "yield_time_ms": 5000}),
        &dir,
    )
    .await;
    assert_eq!(status_line(&stopped), "Process exited with code 130");
    assert_eq!(ctx.processes.count("s-1"), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn input_a_terminal_does_not_take_never_holds_the_call() {
    let (_d, dir) = temp_dir();
    let ctx = context(&dir);
    let first = exec(
        &ctx,
        json!({"cmd": "sleep 30", "tty": true, "yield_time_ms": 250}),
        &dir,
    )
    .await;
    let id = structured(&first).running_session_id.expect("running");
    // Far more than a terminal's input buffer, to a process that never
    // reads: the call still answers after its wait (`write` is bounded by
    // FINISH).
    let flood = "x".repeat(1 << 20);
    let typed = write(
        &ctx,
        json!({"session_id": id, "chars": flood, "yield_time_ms": 250}),
        &dir,
    )
    .await;
    assert_eq!(
        status_line(&typed),
        format!("Process running with session ID {id}")
    );
    ctx.processes.end_session("s-1");
    assert_eq!(ctx.processes.count("s-1"), 0);
}
