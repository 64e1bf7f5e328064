//! The example plugins (`plugins/examples/*`), loaded from their `.so`
//! files through the real loader and driven at seam level.

use std::sync::{Arc, Mutex};

use abi_stable::std_types::RResult;
use dsh_host::plugins::PluginStatus;
use dsh_plugin_api::{PreToolDecision, Seam, SeamInput, SeamOutput, ToolResult};
use dsh_tests::host::{terminal, tool_call};
use dsh_tests::{TestHost, TestSignal, example};
use serde_json::json;

fn entry(id: &str, example_name: &str, config: &str) -> String {
    format!(
        "  - id: {id}\n    path: {}\n    config: {config}\n",
        example(example_name).display()
    )
}

#[test]
fn examples_load_and_register_their_seams() {
    let host = TestHost::load(&format!(
        "plugins:\n{}{}{}",
        entry("gate", "policy-gate", "{deny: [\"rm -rf /*\"]}"),
        entry("timeout", "timeout", "{}"),
        entry("audit", "audit", "{}"),
    ));
    assert!(
        host.host.problems().is_empty(),
        "{:?}",
        host.host.problems()
    );
    assert!(host.host.all_applied());
    for (id, name, seam, description) in [
        (
            "gate",
            "policy-gate",
            Seam::PreExecute,
            "Denies tool calls whose command matches a configured pattern",
        ),
        (
            "timeout",
            "timeout",
            Seam::Execute,
            "Gives every tool call a time limit, on the host's timer",
        ),
        (
            "audit",
            "audit",
            Seam::ToolResult,
            "Appends one JSON line per tool result to a file",
        ),
    ] {
        let record = host.record(id);
        assert_eq!(record.status, PluginStatus::Applied);
        assert_eq!(record.name, name);
        assert_eq!(record.version, "0.1.0");
        assert_eq!(record.description.as_deref(), Some(description));
        assert_eq!(record.seams, vec![seam.name().to_string()]);
        assert_eq!(host.host.seams_of(id), vec![seam]);
    }
}

#[test]
fn policy_gate_denies_matching_commands_and_passes_the_rest() {
    let host = TestHost::load(&format!(
        "plugins:\n{}",
        entry(
            "gate",
            "policy-gate",
            "{deny: [\"rm -rf /*\", \"*sudo *\"], tools: [Bash]}"
        )
    ));
    let deny = |command: &str, pattern: &str| PreToolDecision::Deny {
        reason: format!("policy-gate: `{command}` matches denied pattern `{pattern}`").into(),
    };
    let bash = |command: &str| tool_call("c1", "Bash", json!({ "command": command }));
    assert_eq!(
        host.pre_execute(&bash("rm -rf /")),
        Ok(deny("rm -rf /", "rm -rf /*"))
    );
    assert_eq!(
        host.pre_execute(&bash("cd x && sudo make install")),
        Ok(deny("cd x && sudo make install", "*sudo *"))
    );
    assert_eq!(
        host.pre_execute(&bash("ls -la")),
        Ok(PreToolDecision::allow())
    );
    // Only the configured tools are watched, and only their `command`.
    let write = tool_call("c2", "Write", json!({ "command": "rm -rf /" }));
    assert_eq!(host.pre_execute(&write), Ok(PreToolDecision::allow()));
    let no_command = tool_call("c3", "Bash", json!({ "script": "rm -rf /" }));
    assert_eq!(host.pre_execute(&no_command), Ok(PreToolDecision::allow()));
}

#[test]
fn policy_gate_refuses_an_empty_pattern_at_apply() {
    let host = TestHost::load(&format!(
        "plugins:\n{}",
        entry("gate", "policy-gate", "{deny: [\"ls\", \" \"]}")
    ));
    assert_eq!(
        host.record("gate").status,
        PluginStatus::Failed("apply failed: config `deny`: empty pattern".into())
    );
    assert!(host.host.seams_of("gate").is_empty());
}

#[test]
fn timeout_abandons_a_dispatch_that_never_finishes_and_fires_its_signal() {
    let host = TestHost::load(&format!(
        "plugins:\n{}",
        entry("timeout", "timeout", "{millis: 50}")
    ));
    let (fired_tx, fired_rx) = std::sync::mpsc::channel();
    let fired_tx = Arc::new(Mutex::new(fired_tx));
    // The core dispatch stand-in: hands the signal it got to a task that
    // reports when it fires, then never finishes.
    let dispatch = terminal(move |input| {
        let fired_tx = fired_tx.clone();
        async move {
            if let SeamInput::Execute(exec) = input {
                let signal = exec.signal.clone();
                tokio::spawn(async move {
                    signal.aborted().await;
                    let sent = fired_tx.lock().map(|tx| tx.send(signal.is_aborted()));
                    drop(sent);
                });
            }
            std::future::pending::<RResult<SeamOutput, abi_stable::std_types::RString>>().await
        }
    });
    let original = TestSignal::default();
    let call = tool_call("c1", "Bash", json!({ "command": "sleep 1000" }));
    let result = host.execute(&call, original.boxed(), dispatch);
    assert_eq!(
        result,
        Ok(ToolResult::error("tool `Bash` timed out after 50 ms"))
    );
    let fired = fired_rx.recv_timeout(dsh_tests::host::DISPATCH_TIMEOUT);
    assert_eq!(
        fired,
        Ok(true),
        "the replacement signal fires at the deadline"
    );
    assert!(
        !dsh_plugin_api::ffi::AbortSignal::is_aborted(&original),
        "the caller's own signal is untouched"
    );
}

#[test]
fn timeout_passes_a_prompt_result_through_and_forwards_the_callers_abort() {
    let host = TestHost::load(&format!(
        "plugins:\n{}",
        entry("timeout", "timeout", "{millis: 600000}")
    ));
    let call = tool_call("c1", "Bash", json!({ "command": "true" }));
    let done = terminal(|_| async { RResult::ROk(SeamOutput::Execute(ToolResult::text("done"))) });
    let result = host.execute(&call, TestSignal::default().boxed(), done);
    assert_eq!(result, Ok(ToolResult::text("done")));

    // The replacement signal also fires when the caller's does.
    let until_aborted = terminal(|input| async move {
        let SeamInput::Execute(exec) = input else {
            return RResult::RErr("not an execute input".into());
        };
        exec.signal.aborted().await;
        let text = format!("aborted: {}", exec.signal.is_aborted());
        RResult::ROk(SeamOutput::Execute(ToolResult::error(text)))
    });
    let original = TestSignal::default();
    original.fire();
    let result = host.execute(&call, original.boxed(), until_aborted);
    assert_eq!(result, Ok(ToolResult::error("aborted: true")));
}

#[test]
fn audit_appends_one_json_line_per_tool_result() {
    let host = TestHost::load(&format!(
        "plugins:\n{}",
        entry("audit", "audit", "{path: audit/tools.jsonl}")
    ));
    let ls = tool_call(
        "c1",
        "Bash",
        json!({ "command": "ls", "description": "List" }),
    );
    assert_eq!(
        host.tool_result(&ls, ToolResult::text("a\nb"), false),
        vec![]
    );
    let rm = tool_call("c2", "Bash", json!({ "command": "rm -rf /" }));
    assert_eq!(
        host.tool_result(&rm, ToolResult::error("denied: policy"), true),
        vec![]
    );

    let text = std::fs::read_to_string(host.state_dir().join("audit/tools.jsonl"))
        .expect("the audit file");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(
        lines,
        vec![
            json!({"session_id": "ses_test", "call_id": "c1", "tool": "Bash",
                   "arguments": {"command": "ls", "description": "List"},
                   "denied": false, "is_error": false, "result": "a\nb"}),
            json!({"session_id": "ses_test", "call_id": "c2", "tool": "Bash",
                   "arguments": {"command": "rm -rf /"},
                   "denied": true, "is_error": true, "result": "denied: policy"}),
        ]
    );
    assert!(text.ends_with('\n'));
}

#[test]
fn audit_write_failure_is_contained_and_reported() {
    // The state directory itself is a folder, so it cannot be appended to.
    let host = TestHost::load(&format!(
        "plugins:\n{}",
        entry("audit", "audit", "{path: .}")
    ));
    let call = tool_call("c1", "Bash", json!({ "command": "ls" }));
    let failures = host.tool_result(&call, ToolResult::text("x"), false);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(&*failures[0].plugin, "audit");
    let prefix = format!(
        "{}: cannot append audit line: ",
        host.state_dir().join(".").display()
    );
    assert!(failures[0].message.starts_with(&prefix), "{failures:?}");
}
