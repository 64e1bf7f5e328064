//! Codex's sub-agents (`subagent_tools: codex`): `spawn_agent` returns at
//! once, the child runs in its own session, SubagentStart/SubagentStop run
//! with Codex 0.171.0's payloads and outcomes, the child's own events name
//! the main session, and the parent reads `wait_agent`'s status and the
//! `<subagent_notification>` after it (recorded: C180–C182 in
//! `tools/recorder-scenarios/FINDINGS-csub.md`).

use std::time::Duration;

use dsh_host::agent::{AgentOptions, Prompt};
use dsh_host::session::TurnEndReason;
use serde_json::{Value, json};

use crate::support::{AgentHost, Load, Outcome, within};

/// A generous bound against hangs; never a measurement.
const LIMIT: Duration = Duration::from_secs(60);

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_agent_runs_a_child_with_codex_subagent_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let cap = root.join("cap");
    std::fs::create_dir_all(&cap).unwrap();
    // Each hook appends its stdin as one line to <event>.jsonl; SubagentStart
    // answers with context, SubagentStop blocks once.
    let hook = |name: &str, after: &str| {
        let path = cap.join(format!("{name}.sh"));
        crate::support::script(
            &path,
            &format!(
                "p=$(cat); printf '%s\\n' \"$p\" >> {cap}/{name}.jsonl\n{after}",
                cap = cap.display()
            ),
        );
        json!([{"hooks": [{"type": "command", "command": path.display().to_string()}]}])
    };
    let hooks = json!({"hooks": {
        "SubagentStart": hook("start", r#"printf '%s' '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"start context MARK_CTX"}}'"#),
        "SubagentStop": hook("stop", r#"case "$p" in *'"stop_hook_active":false'*) printf '%s' '{"decision":"block","reason":"keep going MARK_BLOCK"}';; esac"#),
        "UserPromptSubmit": hook("ups", ""),
        "PreModelRequest": hook("pmr", ""),
        "PreToolUse": hook("pre", ""),
        "Stop": hook("main_stop", "")
    }});
    let file = root.join("hooks.json");
    std::fs::write(&file, hooks.to_string()).unwrap();
    let bridge = Load::builtin(
        "hooks-codex",
        "hooks-codex",
        json!({"config_path": file, "model": "mock-model", "spawn_agent": true}),
    );
    let model = Load::builtin(
        "model",
        "model-scripted",
        json!({
            "script": [
                {"tool_calls": [{"name": "spawn_agent", "arguments": {"message": "child task MARK_CHILD"}}]},
                {"tool_calls": [{"name": "wait_agent", "arguments": {"targets": ["$AGENT_ID"], "timeout_ms": 60000}}]},
                {"text": "main done"}
            ],
            "subagent_script": [{"text": "child answer 1"}, {"text": "child answer 2"}],
            "record": root.join("requests.jsonl"),
        }),
    );
    let options = AgentOptions {
        codex_subagents: true,
        ..AgentOptions::default()
    };
    let host = AgentHost::with_options(&root, json!({}), vec![bridge], model, options);
    let session = host.session().await;
    let out: Outcome = within(
        "the main turn",
        LIMIT,
        session.prompt(Prompt::user("spawn a helper")),
    )
    .await
    .into();
    assert_eq!(out.reason, TurnEndReason::Completed, "{:?}", out.events);
    let main = session.session_ref();
    let main_id = main.session_id.to_string();

    // SubagentStart: Codex's keys, the main session's id, the child's turn.
    let start = lines(&cap.join("start.jsonl"));
    assert_eq!(start.len(), 1, "{start:?}");
    let s = &start[0];
    assert_eq!(
        keys(s),
        [
            "session_id",
            "turn_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "model",
            "permission_mode",
            "agent_id",
            "agent_type"
        ]
    );
    assert_eq!(s["session_id"], main_id.as_str());
    assert_eq!(s["agent_type"], "default");
    let child_id = s["agent_id"].as_str().unwrap().to_string();
    assert_ne!(child_id, main_id);

    // The child's UserPromptSubmit: the main id, the agent after turn_id,
    // the same turn as SubagentStart.
    let ups = lines(&cap.join("ups.jsonl"));
    let child_ups = ups
        .iter()
        .find(|u| u["prompt"] == "child task MARK_CHILD")
        .unwrap_or_else(|| panic!("no child UserPromptSubmit: {ups:?}"));
    assert_eq!(
        keys(child_ups)[..4],
        ["session_id", "turn_id", "agent_id", "agent_type"]
    );
    assert_eq!(child_ups["session_id"], main_id.as_str());
    assert_eq!(child_ups["agent_id"], child_id.as_str());
    assert_eq!(child_ups["turn_id"], s["turn_id"]);
    assert_eq!(child_ups["transcript_path"], s["transcript_path"]);

    // The child's PreModelRequest: its own id as thread_id.
    let pmr = lines(&cap.join("pmr.jsonl"));
    let child_pmr: Vec<&Value> = pmr
        .iter()
        .filter(|p| p["thread_id"] == child_id.as_str())
        .collect();
    assert_eq!(child_pmr.len(), 2, "{pmr:?}");
    assert_eq!(child_pmr[0]["session_id"], main_id.as_str());
    assert_eq!(child_pmr[0]["agent_id"], child_id.as_str());

    // SubagentStop twice (blocked once), never the child's Stop.
    let stop = lines(&cap.join("stop.jsonl"));
    assert_eq!(stop.len(), 2, "{stop:?}");
    assert_eq!(
        keys(&stop[0]),
        [
            "session_id",
            "turn_id",
            "transcript_path",
            "agent_transcript_path",
            "cwd",
            "hook_event_name",
            "model",
            "permission_mode",
            "stop_hook_active",
            "agent_id",
            "agent_type",
            "last_assistant_message"
        ]
    );
    assert_eq!(stop[0]["transcript_path"], main.log_path.as_str());
    assert_eq!(stop[0]["agent_transcript_path"], s["transcript_path"]);
    assert_eq!(stop[0]["stop_hook_active"], false);
    assert_eq!(stop[0]["last_assistant_message"], "child answer 1");
    assert_eq!(stop[1]["stop_hook_active"], true);
    assert_eq!(stop[1]["last_assistant_message"], "child answer 2");
    let main_stops = lines(&cap.join("main_stop.jsonl"));
    assert_eq!(main_stops.len(), 1, "the child ran Stop: {main_stops:?}");
    assert_eq!(main_stops[0]["last_assistant_message"], "main done");

    // wait_agent's tool name as Codex gives it to PreToolUse.
    let pre = lines(&cap.join("pre.jsonl"));
    let names: Vec<&str> = pre
        .iter()
        .map(|p| p["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["spawn_agent", "multi_agent_v1wait_agent"]);

    // What the models read.
    let requests = host.requests();
    let child_reqs: Vec<&Value> = requests
        .iter()
        .filter(|r| {
            r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["content"] == "child task MARK_CHILD")
        })
        .collect();
    assert_eq!(child_reqs.len(), 2, "{requests:?}");
    // The child is offered no sub-agent tools; the parent is.
    let names = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let child_tools = names(child_reqs[0]);
    assert!(child_tools.contains(&"Bash".to_string()), "{child_tools:?}");
    assert!(
        !child_tools
            .iter()
            .any(|t| t == "spawn_agent" || t == "wait_agent"),
        "{child_tools:?}"
    );
    let parent_tools = names(&requests[0]);
    assert!(parent_tools.contains(&"spawn_agent".to_string()));
    assert!(parent_tools.contains(&"wait_agent".to_string()));
    let first: Vec<(&str, &str)> = child_reqs[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let ctx = first
        .iter()
        .position(|(_, c)| *c == "start context MARK_CTX")
        .unwrap_or_else(|| panic!("no SubagentStart context: {first:?}"));
    let prompt = first
        .iter()
        .position(|(_, c)| *c == "child task MARK_CHILD")
        .unwrap();
    assert!(ctx < prompt, "the context follows the prompt: {first:?}");
    assert_eq!(first[ctx].0, "developer");
    let second = child_reqs[1]["messages"].as_array().unwrap();
    assert!(
        second
            .iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c
                .starts_with("<hook_prompt hook_run_id=\"subagent-stop:")
                && c.ends_with(">keep going MARK_BLOCK</hook_prompt>"))),
        "{second:?}"
    );
    let last = requests.last().unwrap()["messages"].as_array().unwrap();
    let n = last.len();
    let spawned: Value =
        serde_json::from_str(last[n - 4]["content"].as_str().unwrap()).unwrap_or(Value::Null);
    assert_eq!(spawned["agent_id"], child_id.as_str(), "{last:?}");
    assert!(spawned["nickname"].is_string(), "{last:?}");
    assert_eq!(last[n - 2]["role"], "tool", "{last:?}");
    assert_eq!(
        last[n - 2]["content"],
        json!({"status": {child_id.as_str(): {"completed": "child answer 2"}}, "timed_out": false})
            .to_string()
    );
    assert_eq!(last[n - 1]["role"], "user");
    assert_eq!(
        last[n - 1]["content"],
        format!(
            "<subagent_notification>\n{{\"agent_path\":\"{child_id}\",\"status\":{{\"completed\":\"child answer 2\"}}}}\n</subagent_notification>"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_agent_is_offered_only_when_the_agent_is_told_to() {
    let offered = |codex_subagents: bool| async move {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let model = Load::builtin(
            "model",
            "model-scripted",
            json!({"script": [{"text": "hi"}], "record": root.join("requests.jsonl")}),
        );
        let options = AgentOptions {
            codex_subagents,
            ..AgentOptions::default()
        };
        let host = AgentHost::with_options(&root, json!({}), vec![], model, options);
        let session = host.session().await;
        let _: Outcome = within("a turn", LIMIT, session.prompt(Prompt::user("hello")))
            .await
            .into();
        let tools: Vec<String> = host.requests()[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert!(tools.contains(&"Agent".to_string()), "{tools:?}");
        tools
    };
    let off = offered(false).await;
    assert!(
        !off.iter().any(|t| t == "spawn_agent" || t == "wait_agent"),
        "{off:?}"
    );
    let on = offered(true).await;
    assert!(on.contains(&"spawn_agent".to_string()), "{on:?}");
    assert!(on.contains(&"wait_agent".to_string()), "{on:?}");
}
