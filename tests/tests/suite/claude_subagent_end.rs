//! A subagent whose model request fails, over the real `dsh` binary (`dsh
//! prompt`), real Claude Code hooks (shell scripts) and a real session log;
//! only the model is scripted.
//!
//! Recorded (`S180-*`, `tools/recorder-scenarios/FINDINGS-csub2.md`): no
//! SubagentStop fires; the subagent's StopFailure hooks run with the main
//! session's ids and `agent_id`/`agent_type` before `effort`, without
//! MessageDisplay; then the `Agent` call *completes*: PostToolUse (not
//! PostToolUseFailure) with `status: "completed"`, the error's text as the
//! answer and the usage of a failed request, and the model reads that text.

use serde_json::json;

use super::compaction::Project;

/// Claude Code's text for the scripted failure (no gateway configured).
const SHOWN: &str = "API Error: 500 MARK_SUB down. This is a server-side issue, usually \
                     temporary — try again in a moment.";

#[test]
fn a_subagent_whose_model_request_fails_completes_its_agent_call_with_the_error() {
    let events = [
        "StopFailure",
        "SubagentStop",
        "PostToolUse",
        "PostToolUseFailure",
        "MessageDisplay",
        "Stop",
    ];
    let hooks: Vec<(&str, &str)> = events.iter().map(|e| (*e, "true")).collect();
    let p = Project::new(&hooks, "");
    let run = p.prompt(
        "s1",
        "delegate",
        json!([
            {"tool_calls": [{"name": "Agent", "arguments": {"description": "Sub task",
                "prompt": "Say hi please", "subagent_type": "general-purpose"}}]},
            {"error": {"status": 500, "message": "MARK_SUB down"}},
            {"text": "done"},
        ]),
    );
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    // The main turn's final answer shows (MessageDisplay) and stops (Stop);
    // the subagent has its StopFailure and nothing else.
    assert_eq!(
        p.order(),
        ["StopFailure", "PostToolUse", "MessageDisplay", "Stop"]
    );

    let (failure, keys) = p.hook_stdin("StopFailure", 0);
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "agent_id",
            "agent_type",
            "effort",
            "hook_event_name",
            "error",
            "last_assistant_message"
        ]
    );
    assert_eq!(failure["session_id"], "s1", "the main session's id");
    assert_eq!(failure["agent_type"], "general-purpose");
    assert_eq!(failure["error"], "server_error");
    assert_eq!(failure["last_assistant_message"], SHOWN);
    let log = p.root().join("state/sessions/s1.jsonl");
    assert_eq!(failure["transcript_path"], log.display().to_string());

    let (post, _) = p.hook_stdin("PostToolUse", 0);
    assert_eq!(post["tool_name"], "Agent");
    let response = &post["tool_response"];
    assert_eq!(response["status"], "completed", "{response}");
    assert_eq!(response["agentId"], failure["agent_id"], "{response}");
    assert_eq!(
        response["content"],
        json!([{"type": "text", "text": SHOWN}])
    );
    assert_eq!(response["totalTokens"], 0, "{response}");
    assert_eq!(response["usage"]["service_tier"], json!(null), "{response}");
    assert_eq!(response["usage"]["iterations"], json!(null), "{response}");
    assert!(response.get("toolStats").is_none(), "{response}");

    // The model reads the same text, then the usage note, as a result that
    // is no error.
    let requests = p.requests();
    assert_eq!(requests.len(), 3, "main, subagent, main");
    let tool = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap_or_else(|| panic!("no tool message in {}", requests[2]));
    let content = tool["content"].as_str().unwrap_or_default();
    assert!(
        content.starts_with(&format!("{SHOWN}\nagentId: ")),
        "{content}"
    );
    assert!(tool.get("is_error").is_none_or(|e| e == false), "{tool}");
}
