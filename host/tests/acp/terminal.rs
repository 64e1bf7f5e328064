//! `Bash` in the editor's terminal, and `TodoWrite` as the editor's plan.
//!
//! The terminal client ([`crate::terminal_client`]) runs each
//! `terminal/create` for real. What is checked: the request (the session's
//! cwd, the local run's environment, the output limit), the terminal shown
//! in the tool call, the result the model read (the terminal's output in
//! the local result's shape, `cd` persisting, the `CLAUDE_ENV_FILE` prelude
//! applied, the editor's own credentials scrubbed, the output cut to its
//! end), the Claude hooks' `tool_response` shape, `terminal/kill` on
//! cancel, on the tool's timeout and on its abort (the model then reads
//! the output so far), `terminal/release` always, no terminal for a call a
//! hook denied, and a client without terminals getting a local run.

use agent_client_protocol::v1::schema::{CancelNotification, PromptRequest, StopReason};
use dsh_plugin_api::credentials::is_credential;
use dsh_test_support::agent::Load;
use serde_json::{Value, json};

use crate::support::{Answer, TestHost, bash, of_kind, text, until, within};
use crate::terminal_client::TerminalClient;

/// A host whose Claude bridge runs `hooks` (a settings.json `hooks` object
/// built from the temp dir).
fn host_with_hooks(script: Value, hooks: impl FnOnce(&std::path::Path) -> Value) -> TestHost {
    TestHost::with_loads(script, |dir| {
        let settings = dir.join("settings.json");
        std::fs::write(&settings, json!({"hooks": hooks(dir)}).to_string()).unwrap();
        vec![Load::builtin(
            "hooks-claude",
            "hooks-claude",
            json!({"config_path": settings}),
        )]
    })
}

/// The tool results the model read, in order.
fn tool_results(host: &TestHost) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for request in host.requests() {
        for m in request["messages"].as_array().cloned().unwrap_or_default() {
            if m["role"] == "tool" {
                let text = m["content"].as_str().unwrap().to_string();
                if !out.contains(&text) {
                    out.push(text);
                }
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_runs_in_the_editor_s_terminal_as_it_would_locally() {
    let host = host_with_hooks(
        json!([
            bash(
                "mkdir -p sub && cd sub && echo \"env=${FROM_ENV_FILE-unset} key=${DSH_EDITOR_API_KEY-unset} \
                 only=${EDITOR_ONLY-unset} dir=$(pwd -P)\"; echo oops >&2; false"
            ),
            bash("cd sub && pwd -P"),
            bash("head -c 40000 /dev/zero | tr '\\0' x"),
            text("done"),
        ]),
        |dir| {
            let post = dir.join("post.jsonl");
            json!({
                "SessionStart": [{"hooks": [{"type": "command", "command":
                    "cat >/dev/null; printf 'export FROM_ENV_FILE=yes\\n' >> \"$CLAUDE_ENV_FILE\""}]}],
                "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                    format!("cat >> '{}'; echo >> '{}'", post.display(), post.display())}]}]
            })
        },
    );
    let mut client = TerminalClient::connect(&host).await;
    let session = client.new_session(&host.project).await;
    assert_eq!(client.prompt(&session, "go").await, StopReason::EndTurn);

    let project = std::fs::canonicalize(&host.project).unwrap();
    let sub = project.join("sub");
    // The model read the terminal's output, shaped as a local result: the
    // prelude applied, the editor's credential gone, its other variable
    // kept, the exit code first (a failed command's `cd` does not persist,
    // as in Claude Code, S238-cd-out-fail); then a `cd sub` that succeeded
    // and persisted; then the end of a long output the terminal cut,
    // behind the truncation marker.
    let results = tool_results(&host);
    assert_eq!(
        results[..2],
        [
            format!(
                "Exit code 1\nenv=yes key=unset only=yes dir={}\noops",
                sub.display()
            ),
            sub.display().to_string(),
        ]
    );
    // (The terminal kept the last 30,000 bytes: the marker says the start
    // is missing; a local run would keep the head and save the whole.)
    let (marker, tail) = results[2].split_once('\n').unwrap();
    assert!(
        marker.starts_with("[... earlier output truncated"),
        "{marker}"
    );
    assert!(tail.len() == 30_000 && tail.bytes().all(|b| b == b'x'));

    // Three terminals, each created, waited for, read and released.
    assert_eq!(
        client.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release"
        ]
        .repeat(3)
    );
    let created = client.params("terminal/create");
    assert_eq!(created[0]["cwd"], json!(host.project));
    assert_eq!(created[1]["cwd"], json!(host.project));
    assert_eq!(created[2]["cwd"], json!(sub));
    assert_eq!(created[0]["sessionId"], json!(session));
    assert_eq!(created[0]["command"], "/bin/bash");
    assert_eq!(created[0]["args"][0], "-c");
    assert_eq!(created[0]["outputByteLimit"], 30_000);
    // The local run's environment: dsh's own, minus credentials.
    let env: Vec<(String, String)> = created[0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let path = env
        .iter()
        .find(|(n, _)| n == "PATH")
        .map(|(_, v)| v.clone());
    assert_eq!(path, std::env::var("PATH").ok());
    let leaked: Vec<&String> = env
        .iter()
        .filter(|(n, v)| is_credential(n, v))
        .map(|(n, _)| n)
        .collect();
    assert!(leaked.is_empty(), "{leaked:?}");
    // Every terminal was released, each the one created for its call.
    let released: Vec<Value> = client
        .params("terminal/release")
        .iter()
        .map(|p| p["terminalId"].clone())
        .collect();
    assert_eq!(released, ["term-1", "term-2", "term-3"]);

    // The editor shows each terminal in its call, right after the call,
    // and keeps it when the call ends.
    let updates = client.take_updates();
    let mut shown = Vec::new();
    for (i, u) in updates.iter().enumerate() {
        if u["content"][0]["type"] == "terminal" {
            let call = u["toolCallId"].clone();
            assert_eq!(u["sessionUpdate"], "tool_call_update", "{u:#}");
            assert_eq!(updates[i - 1]["sessionUpdate"], "tool_call");
            assert_eq!(updates[i - 1]["toolCallId"], call);
            shown.push(u["content"][0]["terminalId"].clone());
            let last = updates.iter().rfind(|f| f["toolCallId"] == call).unwrap();
            assert!(last.get("content").is_none(), "{last:#}");
            assert!(last["status"] == "failed" || last["status"] == "completed");
        }
    }
    assert_eq!(shown, ["term-1", "term-2", "term-3"]);

    // Hooks ran locally, with Claude's tool_response shape.
    let post: Vec<Value> = std::fs::read_to_string(host.dir.path().join("post.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // (The failed first call is PostToolUseFailure's, not PostToolUse's.)
    assert_eq!(post.len(), 2);
    assert_eq!(
        post[0]["tool_input"],
        json!({"command": "cd sub && pwd -P"})
    );
    assert_eq!(
        post[0]["tool_response"],
        json!({"stdout": sub.display().to_string(), "stderr": "", "interrupted": false,
            "isImage": false, "noOutputExpected": false})
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_hooks_get_their_tool_response_from_a_terminal_run() {
    let host = TestHost::with_loads(
        json!([bash("echo hi; echo there >&2"), text("ok")]),
        |dir| {
            let post = dir.join("post.json");
            let hooks = dir.join("hooks.json");
            let hook = json!({"type": "command", "command": format!("cat > '{}'", post.display())});
            std::fs::write(
                &hooks,
                json!({"hooks": {"PostToolUse": [{"hooks": [hook]}]}}).to_string(),
            )
            .unwrap();
            vec![Load::builtin(
                "hooks-codex",
                "hooks-codex",
                json!({"config_path": hooks, "model": "mock-model"}),
            )]
        },
    );
    let client = TerminalClient::connect(&host).await;
    let session = client.new_session(&host.project).await;
    assert_eq!(client.prompt(&session, "go").await, StopReason::EndTurn);
    assert_eq!(
        client.methods().first().map(String::as_str),
        Some("terminal/create")
    );
    let post: Value =
        serde_json::from_str(&std::fs::read_to_string(host.dir.path().join("post.json")).unwrap())
            .unwrap();
    // Codex's shape: the output as one string (the terminal interleaves
    // both streams).
    assert_eq!(post["tool_response"], "hi\nthere");
    client.close().await;
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_mid_run_kills_the_terminal_then_releases_it() {
    let host = TestHost::with_loads(json!([bash("echo $$ > bash.pid; exec sleep 30")]), |_| {
        Vec::new()
    });
    let mut client = TerminalClient::connect(&host).await;
    let session = client.new_session(&host.project).await;
    let prompt = {
        let cx = client.cx.clone();
        let session = session.clone();
        tokio::spawn(async move {
            let request = PromptRequest::new(session, vec!["sleep".into()]);
            cx.send_request(request).block_task().await
        })
    };
    let terminal = within("terminal/create", client.created.recv())
        .await
        .unwrap();
    let pid_file = host.project.join("bash.pid");
    until("the command to write its pid", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    })
    .await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    client
        .cx
        .send_notification(CancelNotification::new(session.clone()))
        .unwrap();
    let answer = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer.stop_reason, StopReason::Cancelled);
    // The cancelled turn drops the call; its terminal is killed, read and
    // released behind it.
    until("terminal/release", || {
        client.methods().iter().any(|m| m == "terminal/release")
    })
    .await;
    assert_eq!(
        client.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ],
    );
    for method in ["terminal/kill", "terminal/release"] {
        assert_eq!(client.params(method)[0]["terminalId"], json!(terminal));
    }
    until("the command to be gone", || !alive(pid)).await;
    let log = host.log(&session);
    assert_eq!(
        of_kind(&log, "tool/result")[0]["content"],
        "the tool call was cancelled"
    );
    assert_eq!(
        of_kind(&log, "turn/end").last().unwrap()["reason"],
        "aborted"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_call_a_hook_denies_creates_no_terminal() {
    let host = host_with_hooks(
        json!([bash("echo forbidden"), bash("echo allowed"), text("ok")]),
        |_| {
            json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "grep -q forbidden && { echo 'no shell here' >&2; exit 2; }; exit 0"}]}]})
        },
    );
    let client = TerminalClient::connect(&host).await;
    let session = client.new_session(&host.project).await;
    assert_eq!(client.prompt(&session, "go").await, StopReason::EndTurn);
    // Only the allowed call reached the editor.
    assert_eq!(
        client.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release"
        ]
    );
    let script = client.params("terminal/create")[0]["args"][1]
        .as_str()
        .unwrap()
        .to_string();
    assert!(script.contains("echo allowed") && !script.contains("forbidden"));
    let log = host.log(&session);
    assert_eq!(of_kind(&log, "tool/denied").len(), 1, "{log:#?}");
    assert_eq!(tool_results(&host)[1], "allowed");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_command_is_killed_in_its_terminal_and_reported_with_its_output() {
    let host = TestHost::with_loads(
        json!([
            {"tool_calls": [{"name": "Bash", "arguments":
                {"command": "echo started; exec sleep 30", "timeout": 1000}}]},
            text("ok"),
        ]),
        |_| Vec::new(),
    );
    let client = TerminalClient::connect(&host).await;
    let session = client.new_session(&host.project).await;
    assert_eq!(client.prompt(&session, "go").await, StopReason::EndTurn);
    assert_eq!(
        client.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    assert_eq!(
        tool_results(&host),
        ["Exit code 143\nCommand timed out after 1s\nstarted"]
    );
    client.close().await;
}

/// Config of [`AbortWhen`].
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
struct AbortWhenConfig {
    /// The tool's abort signal fires once this file exists.
    file: std::path::PathBuf,
}

/// A `tools/execute` listener that hands the tool its own abort signal,
/// fired once a file appears (as a time-limit plugin would fire it).
struct AbortWhen {
    file: std::path::PathBuf,
}

impl dsh_plugin_api::Plugin for AbortWhen {
    type Config = AbortWhenConfig;
    const NAME: &'static str = "abort-when";
    const VERSION: &'static str = "0.0.1";

    fn apply(_host: &dsh_plugin_api::Host, config: AbortWhenConfig) -> Result<Self, String> {
        Ok(AbortWhen { file: config.file })
    }

    async fn execute(
        self: std::sync::Arc<Self>,
        _input: dsh_plugin_api::abi_stable::std_types::RArc<dsh_plugin_api::ExecuteInput>,
        next: dsh_plugin_api::ExecuteNext,
    ) -> Result<dsh_plugin_api::ToolResult, String> {
        let token = tokio_util::sync::CancellationToken::new();
        let (fire, file) = (token.clone(), self.file.clone());
        tokio::spawn(async move {
            until("the abort file", || file.exists()).await;
            fire.cancel();
        });
        next.run(Some(dsh_host::agent::TokenSignal::boxed(token)))
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_s_abort_kills_its_terminal_and_the_model_reads_the_output_so_far() {
    let host = TestHost::with_loads(
        json!([
            bash("echo started; echo $$ > bash.pid; exec sleep 30"),
            text("ok")
        ]),
        |dir| {
            let file = dir.join("project/bash.pid");
            vec![Load::native::<AbortWhen>(
                "abort-when",
                json!({"file": file}),
            )]
        },
    );
    let client = TerminalClient::connect(&host).await;
    let session = client.new_session(&host.project).await;
    assert_eq!(client.prompt(&session, "go").await, StopReason::EndTurn);
    assert_eq!(
        client.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    assert_eq!(
        tool_results(&host),
        ["Command was aborted before completion\nstarted"]
    );
    let log = host.log(&session);
    assert_eq!(
        of_kind(&log, "tool/result")[0]["structured"]["interrupted"],
        true
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_the_editor_cannot_create_is_an_error_result_and_the_turn_goes_on() {
    let host = TestHost::with_loads(json!([bash("echo hi"), text("ok")]), |_| Vec::new());
    let mut client = TerminalClient::connect_with(&host, true).await;
    let session = client.new_session(&host.project).await;
    assert_eq!(client.prompt(&session, "go").await, StopReason::EndTurn);
    // Nothing was created, so nothing is waited for or released.
    assert_eq!(client.methods(), ["terminal/create"]);
    let log = host.log(&session);
    let result = &of_kind(&log, "tool/result")[0];
    assert_eq!(result["is_error"], true);
    let text = result["content"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Failed to start the command: the editor could not run it: terminal/create: Internal error"
        ),
        "{text}"
    );
    // The editor shows no terminal for it, and the call failed.
    let updates = client.take_updates();
    assert!(
        !updates
            .iter()
            .any(|u| u["content"][0]["type"] == "terminal")
    );
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_terminals_gets_a_local_run() {
    let host = TestHost::with_loads(
        json!([bash("echo \"only=${EDITOR_ONLY-unset}\""), text("ok")]),
        |_| Vec::new(),
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    assert_eq!(tool_results(&host), ["only=unset"]);
    assert!(
        !host
            .sent_methods()
            .iter()
            .any(|m| m.starts_with("terminal/")),
        "{:?}",
        host.sent_methods()
    );
    let updates = client.take_updates();
    assert!(
        !updates
            .iter()
            .any(|u| u["content"][0]["type"] == "terminal"),
        "{updates:#?}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todo_write_becomes_the_editor_s_plan() {
    let todos = |second: &str| {
        json!({"todos": [
            {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
            {"content": "Fix the bug", "status": second, "activeForm": "Fixing the bug"}
        ]})
    };
    let first = todos("in_progress");
    let host = TestHost::with_loads(
        json!([
            {"tool_calls": [{"name": "TodoWrite", "arguments": first}]},
            {"tool_calls": [{"name": "TodoWrite", "arguments": todos("pending")}]},
            {"tool_calls": [{"name": "TodoWrite", "arguments": {"todos": [{"content": "x", "status": "done", "activeForm": "X"}]}}]},
            text("done"),
        ]),
        |_| vec![Load::builtin("tools-todo", "tools-todo", json!({}))],
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "plan it").await.unwrap(),
        StopReason::EndTurn
    );
    let updates = client.take_updates();
    let plans: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .collect();
    // Two valid lists, two plans; the refused third list is none.
    assert_eq!(
        plans,
        [
            &json!({"sessionUpdate": "plan", "entries": [
                {"content": "Read the code", "priority": "medium", "status": "completed"},
                {"content": "Fix the bug", "priority": "medium", "status": "in_progress"}
            ]}),
            &json!({"sessionUpdate": "plan", "entries": [
                {"content": "Read the code", "priority": "medium", "status": "completed"},
                {"content": "Fix the bug", "priority": "medium", "status": "pending"}
            ]}),
        ]
    );
    let calls: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert_eq!(calls[0]["kind"], "think");
    let results = tool_results(&host);
    assert_eq!(results[0], dsh_host::todo::RESULT);
    assert_eq!(
        results[1],
        "TodoWrite: `todos[0].status` must be one of pending, in_progress, completed"
    );
    let log = host.log(&session);
    let logged = of_kind(&log, "tool/result");
    assert_eq!(
        logged[1]["structured"],
        json!({"oldTodos": first["todos"], "newTodos": todos("pending")["todos"]})
    );
    client.close().await;
}
