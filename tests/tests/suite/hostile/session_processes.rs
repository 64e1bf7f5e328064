//! Sessions and the processes around them, with the real `dsh` binary and
//! a `Bash` tool that writes its pid and sleeps, so the test acts mid-tool:
//!
//! - while one `dsh prompt --session X` runs, a second is refused (exit 4),
//!   `dsh sessions show X` only reads, `repair` and ACP `session/load` are
//!   refused, and the log's bytes do not change;
//! - a `dsh prompt` killed with SIGKILL mid-tool resumes (against the
//!   OpenAI-compatible mock) with a request in which every tool call has
//!   its result;
//! - SIGINT and SIGTERM to `dsh prompt` running a tool or a hook end the
//!   turn `aborted`, exit 128 + the signal, and leave nothing running.

use std::path::Path;

use dsh_tests::acp_stdio::AcpStdio;
use dsh_tests::background::{Background, alive, kill_if_alive, wait_for_pid, wait_until};
use dsh_tests::openai_mock::{OpenAiMock, Reply, tool_calls_answered};
use serde_json::{Value, json};

use super::session_support::{Project, WAIT, kinds, shown};

/// A `Bash` call that writes its shell's pid to `pidfile`, then becomes
/// `sleep 30` (same pid).
fn sleeper(pidfile: &Path) -> String {
    format!(
        "{{name: Bash, arguments: {{command: 'echo $$ > {}; exec sleep 30'}}}}",
        pidfile.display()
    )
}

#[test]
fn one_writer_per_session_log_while_a_prompt_runs() {
    let project = Project::new("");
    let pidfile = project.path("tool.pid");
    project.script(&format!(
        "- tool_calls: [{}]\n- text: done\n",
        sleeper(&pidfile)
    ));
    let first = Background::start(project.command(&["prompt", "--session", "busy", "go"]));
    let tool = wait_for_pid(&pidfile, WAIT);
    let log = project.log("busy");
    let before = std::fs::read(&log).unwrap();

    let second = project.prompt("busy", "me too");
    assert_eq!(second.code, Some(4), "{}", shown(&second));
    assert!(
        second.stderr.contains("busy.jsonl")
            && second.stderr.contains("in use by another dsh process"),
        "{}",
        shown(&second)
    );

    let show = project.dsh(&["sessions", "show", "busy"]);
    assert_eq!(show.code, Some(0), "{}", shown(&show));
    assert_eq!(show.stdout.as_bytes(), &before[..], "shown as it stands");
    assert!(show.stderr.contains("in use"), "{}", shown(&show));
    let shown_events: Vec<Value> = show
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        kinds(&shown_events).last(),
        Some(&"tool/call"),
        "no repair, no `interrupted` added"
    );

    let repair = project.dsh(&["sessions", "repair", "busy"]);
    assert_eq!(repair.code, Some(4), "{}", shown(&repair));
    let help = project.dsh(&["prompt", "--help"]);
    assert!(
        help.stdout
            .contains("4 the session is in use by another dsh process"),
        "the exit code is documented: {}",
        shown(&help)
    );

    let mut acp = AcpStdio::start(&project.path("cordis.yml"), project.root());
    let load = acp.request(
        "session/load",
        json!({"sessionId": "busy", "cwd": project.root(), "mcpServers": []}),
    );
    assert_eq!(load["error"]["code"], -32602, "{load}");
    assert!(
        load["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("in use by another dsh process"),
        "{load}"
    );
    assert_eq!(acp.close(), Some(0));

    assert_eq!(std::fs::read(&log).unwrap(), before, "nobody else wrote");
    let names: Vec<String> = std::fs::read_dir(project.path("state/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["busy.jsonl"]);

    // The first finishes its turn once its tool ends; then the log is free.
    kill_if_alive(tool);
    let done = first.wait(WAIT);
    assert_eq!(done.code, Some(0), "{}", shown(&done));
    project.script("- text: free again\n");
    let third = project.prompt("busy", "now?");
    assert_eq!(third.code, Some(0), "{}", shown(&third));
}

#[test]
fn a_prompt_killed_mid_tool_resumes_with_a_result_for_every_call() {
    let project = Project::new("");
    let pidfile = project.path("tool.pid");
    // Two calls: the first is cut off mid-run, the second never starts.
    project.script(&format!(
        "- tool_calls: [{}, {{name: Bash, arguments: {{command: 'echo second'}}}}]\n",
        sleeper(&pidfile)
    ));
    let crashed = Background::start(project.command(&["prompt", "--session", "crashed", "go"]));
    let tool = wait_for_pid(&pidfile, WAIT);
    crashed.signal(libc::SIGKILL);
    let killed = crashed.wait(WAIT);
    assert_eq!(killed.code, None, "killed by the signal");
    kill_if_alive(tool);

    let mock = OpenAiMock::start(vec![Reply::text("resumed fine")]);
    std::fs::write(
        project.path("openai.yml"),
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-openai\n    config: {{ base_url: '{}', model: mock-model, api_key_env: MOCK_OPENAI_KEY, max_retries: 0 }}\n",
            mock.base_url
        ),
    )
    .unwrap();
    let mut resume = project.command(&[
        "prompt",
        "--config",
        "openai.yml",
        "--session",
        "crashed",
        "and now?",
    ]);
    resume.env("MOCK_OPENAI_KEY", "sk-mock");
    let resumed = dsh_tests::run(resume, super::session_support::DSH_TIMEOUT);
    assert_eq!(resumed.code, Some(0), "{}", shown(&resumed));
    assert!(
        resumed.stdout.contains("resumed fine"),
        "{}",
        shown(&resumed)
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0].body;
    if let Err(broken) = tool_calls_answered(request) {
        panic!("the API would answer 400: {broken}\n{request:#}");
    }
    let roles: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user"]);
    for m in &request["messages"].as_array().unwrap()[2..4] {
        let content = m["content"].as_str().unwrap();
        assert!(
            content.starts_with("Error: the tool call was interrupted"),
            "{m}"
        );
    }

    // The results are real events in the log, before the turn's end.
    let events = project.events("crashed");
    let first_end = events.iter().position(|e| e["type"] == "turn/end").unwrap();
    let closing: Vec<(&str, bool)> = events[first_end - 2..=first_end]
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["is_error"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        closing,
        [
            ("tool/result", true),
            ("tool/result", true),
            ("turn/end", false)
        ]
    );
    assert_eq!(events[first_end]["reason"], "interrupted");
}

/// What is running when the signal arrives.
#[derive(Debug, Clone, Copy)]
enum Running {
    /// The `Bash` tool's `sleep`.
    Tool,
    /// A Claude Code `PreToolUse` hook's `sleep`.
    Hook,
}

#[test]
fn sigint_and_sigterm_end_the_turn_aborted_and_leave_nothing_running() {
    for (signal, running) in [
        (libc::SIGINT, Running::Tool),
        (libc::SIGTERM, Running::Tool),
        (libc::SIGINT, Running::Hook),
        (libc::SIGTERM, Running::Hook),
    ] {
        let case = format!("signal {signal} while the {running:?} runs");
        let project = match running {
            Running::Tool => Project::new(""),
            Running::Hook => Project::with_claude_hooks("", |project| {
                let command = format!(
                    "echo $$ > {}; exec sleep 30",
                    project.path("hook.pid").display()
                );
                json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": command}
                ]}]}})
            }),
        };
        let toolpid = project.path("tool.pid");
        project.script(&format!(
            "- tool_calls: [{}]\n- text: never\n",
            sleeper(&toolpid)
        ));
        let pidfile = match running {
            Running::Tool => toolpid.clone(),
            Running::Hook => project.path("hook.pid"),
        };
        let prompt = Background::start(project.command(&["prompt", "--session", "sig", "go"]));
        let pid = wait_for_pid(&pidfile, WAIT);
        prompt.signal(signal);
        let out = prompt.wait(WAIT);
        assert_eq!(out.code, Some(128 + signal), "{case}: {}", shown(&out));
        wait_until(&format!("{case}: pid {pid} to be gone"), WAIT, || {
            !alive(pid)
        });
        if let Running::Hook = running {
            assert!(!toolpid.exists(), "{case}: the tool never started");
        }
        let events = project.events("sig");
        let last = events.last().unwrap();
        assert_eq!(
            (last["type"].as_str(), last["reason"].as_str()),
            (Some("turn/end"), Some("aborted")),
            "{case}: {events:#?}"
        );
        kill_if_alive(pid);
    }
}
