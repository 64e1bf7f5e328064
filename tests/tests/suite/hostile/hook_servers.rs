//! Hook servers and http endpoints that misbehave, over the real `dsh`
//! binary and real servers (issue 14). Each answers as the command hook it
//! stands for would: garbage or a dropped connection is a crashed hook (a
//! non-blocking error: the tool runs), an answer too big to read is a
//! blocking error (the tool does not run), and the next call gets a fresh
//! connection. `dsh check` names the key of a socket or http hook that
//! cannot run.

use serde_json::json;

use crate::suite::hook_servers::{Bridge, Project, bash_calls, pre_tool_use};
use crate::suite::http_hooks::{HttpEndpoint, Reply, pre_decision};

/// A user-run server that answers the n-th request it gets as the n-th
/// entry of its plan says (then `deny`): `garbage` (a line that is not
/// JSON-RPC), `hangup` (close with the request unanswered), `huge_line` (a
/// 33 MiB line), `huge_stdout` (a result whose stdout is 17 MiB), `error`
/// (a JSON-RPC error), `wrong_id`, else a proper deny.
const MISBEHAVING_SERVER: &str = r#"
import json, socket, sys, threading
path, plan = sys.argv[1], sys.argv[2].split(",")
count = [0]
deny = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "proper deny"}
def serve(conn):
    f = conn.makefile("rwb")
    for line in f:
        req = json.loads(line)
        what = plan[count[0]] if count[0] < len(plan) else "deny"
        count[0] += 1
        if what == "hangup":
            conn.close(); return
        if what == "garbage":
            f.write(b"this is not json-rpc\n"); f.flush(); continue
        if what == "huge_line":
            f.write(b"x" * (33 * 1024 * 1024) + b"\n"); f.flush(); continue
        res = {"exit_code": 0, "stdout": json.dumps({"hookSpecificOutput": deny})}
        if what == "huge_stdout":
            res = {"exit_code": 0, "stdout": "y" * (17 * 1024 * 1024)}
        msg = {"jsonrpc": "2.0", "id": req["id"], "result": res}
        if what == "error":
            msg = {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32000, "message": "server says no"}}
        if what == "wrong_id":
            msg["id"] = req["id"] + 1000
        f.write(json.dumps(msg).encode() + b"\n"); f.flush()
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen()
while True:
    threading.Thread(target=serve, args=(srv.accept()[0],), daemon=True).start()
"#;

/// Runs one `Bash` per entry of `plan` against the misbehaving server and
/// checks each call's hook outcome and whether the tool ran.
fn run_plan(plan: &[&str], want: &[(&str, bool)], timeout_s: u64) {
    let commands: Vec<String> = (0..plan.len()).map(|i| format!("touch ran{i}")).collect();
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let project = Project::new(Bridge::Claude, json!({}), bash_calls(&commands), "");
    let server = project.write("server.py", MISBEHAVING_SERVER);
    let socket = project.root().join("s.sock");
    let mut command = std::process::Command::new("python3");
    command.arg(&server).arg(&socket).arg(plan.join(","));
    let bg = dsh_tests::background::Background::start(command);
    dsh_tests::background::wait_until("the server", std::time::Duration::from_secs(30), || {
        std::os::unix::net::UnixStream::connect(&socket).is_ok()
    });
    project.write_hooks(&pre_tool_use(vec![
        json!({"type": "socket", "path": socket, "timeout": timeout_s}),
    ]));
    let turn = project.prompt("go");
    drop(bg);
    let ctx = format!("{plan:?}\n{}", turn.context());
    assert_eq!(turn.outcome.code, Some(0), "{ctx}");
    let results = turn.of_type("hook/result");
    assert_eq!(results.len(), want.len(), "{ctx}");
    for (i, ((outcome, runs), result)) in want.iter().zip(results).enumerate() {
        assert_eq!(result["outcome"], *outcome, "call {i}: {ctx}");
        assert_eq!(
            project.proj().join(format!("ran{i}")).exists(),
            *runs,
            "call {i} ran? {ctx}"
        );
    }
}

#[test]
fn garbage_hangups_and_errors_from_a_socket_server_fail_open_and_the_next_call_reconnects() {
    // garbage: the connection is dropped as broken; hangup: the server
    // closed it mid-request; error: a JSON-RPC error. Each is a crashed
    // (or failed) hook: the tool runs. After each, a fresh connection
    // gets the proper deny.
    run_plan(
        &["garbage", "deny", "hangup", "deny", "error", "deny"],
        &[
            ("non_blocking_error", true),
            ("blocked", false),
            ("non_blocking_error", true),
            ("blocked", false),
            ("non_blocking_error", true),
            ("blocked", false),
        ],
        30,
    );
}

#[test]
fn an_answer_too_big_to_read_is_a_blocking_error() {
    run_plan(
        &["huge_stdout", "huge_line", "deny"],
        &[("blocked", false), ("blocked", false), ("blocked", false)],
        60,
    );
}

#[test]
fn an_answer_to_an_id_nobody_asked_for_is_ignored_and_the_hook_times_out() {
    run_plan(
        &["wrong_id", "deny"],
        &[("timed_out", true), ("blocked", false)],
        2,
    );
}

#[test]
fn a_socket_hook_whose_server_is_not_running_fails_open_naming_the_socket() {
    let project = Project::new(Bridge::Codex, json!({}), bash_calls(&["touch ran"]), "");
    let socket = project.root().join("nobody.sock");
    project.write_hooks(&pre_tool_use(vec![
        json!({"type": "socket", "path": socket}),
    ]));
    let turn = project.prompt("go");
    let ctx = turn.context();
    assert!(project.proj().join("ran").exists(), "{ctx}");
    let result = turn.of_type("hook/result")[0];
    assert_eq!(result["outcome"], "not_started", "{ctx}");
    assert!(
        result["spawn_error"]
            .as_str()
            .unwrap()
            .starts_with(&format!(
                "cannot connect to hook server {}",
                socket.display()
            )),
        "{ctx}"
    );
}

#[test]
fn garbage_huge_and_dropped_http_answers_are_read_as_claude_code_reads_them() {
    let cases = [
        // Not JSON: an error, not context (recorded: S70-plain-text-200).
        (
            Reply::Send(200, "just text".into()),
            "non_blocking_error",
            true,
        ),
        (
            Reply::Send(200, "{broken".into()),
            "non_blocking_error",
            true,
        ),
        // The endpoint hangs up (recorded: S70-closed-no-answer).
        (Reply::Hangup, "non_blocking_error", true),
        // Over 16 MiB: unreadable, so a blocking error.
        (
            Reply::Send(200, "z".repeat(17 * 1024 * 1024)),
            "blocked",
            false,
        ),
        // A proper deny still works after all that.
        (
            Reply::Send(
                200,
                pre_decision("deny", json!({"permissionDecisionReason": "ok"})),
            ),
            "blocked",
            false,
        ),
    ];
    for (reply, outcome, runs) in cases {
        let endpoint = HttpEndpoint::start(vec![reply]);
        let project = Project::new(
            Bridge::Claude,
            pre_tool_use(vec![
                json!({"type": "http", "url": endpoint.url, "timeout": 30}),
            ]),
            bash_calls(&["touch ran"]),
            "",
        );
        let turn = project.prompt("go");
        let ctx = format!("{outcome}\n{}", turn.context());
        assert_eq!(turn.of_type("hook/result")[0]["outcome"], outcome, "{ctx}");
        assert_eq!(project.proj().join("ran").exists(), runs, "{ctx}");
    }
}

#[test]
fn a_server_that_will_not_stay_up_fails_open_at_once_while_it_backs_off() {
    let project = Project::new(
        Bridge::Codex,
        pre_tool_use(vec![
            json!({"type": "socket", "command": "exit 7", "timeout": 60}),
        ]),
        bash_calls(&["touch ran"]),
        "",
    );
    let turn = project.prompt("go");
    let ctx = turn.context();
    assert!(project.proj().join("ran").exists(), "{ctx}");
    let result = turn.of_type("hook/result")[0];
    assert_eq!(result["outcome"], "not_started", "{ctx}");
    let error = result["spawn_error"].as_str().unwrap();
    assert!(
        error.starts_with("hook server `exit 7` is down (exited: exit status: 7); it restarts in "),
        "{ctx}"
    );
    assert!(
        turn.outcome.stderr.contains("restarting in 100 ms"),
        "{ctx}"
    );
}

#[test]
fn dsh_check_names_the_key_of_an_unusable_socket_or_http_hook() {
    let project = Project::new(
        Bridge::Claude,
        pre_tool_use(vec![
            json!({"type": "socket"}),
            json!({"type": "socket", "path": "relative.sock"}),
            json!({"type": "http", "url": "ftp://127.0.0.1/x"}),
            json!({"type": "socket", "path": "/run/ok.sock"}),
        ]),
        bash_calls(&[]),
        "",
    );
    let mut command = std::process::Command::new(&dsh_tests::artifacts::workspace().dsh);
    command
        .arg("check")
        .arg("--config")
        .arg(project.root().join("cordis.yml"))
        .current_dir(project.root());
    let out = dsh_tests::run(command, std::time::Duration::from_secs(60));
    let text = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(out.code, Some(1), "{text}");
    for want in [
        "key `hooks.PreToolUse[0].hooks[0]`: socket hook with neither `path` (a server you run) \
         nor `command` (a server dsh starts); the hook never runs",
        "key `hooks.PreToolUse[0].hooks[1].path`: socket path `relative.sock` is not absolute; \
         the hook never runs",
        "key `hooks.PreToolUse[0].hooks[2].url`: `ftp://127.0.0.1/x` is not an http:// or \
         https:// URL; the hook never runs",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}
