//! A subagent whose model request fails, with hostile parts, over the real
//! `dsh` binary (`dsh prompt`), real shell hooks and a real session log;
//! only the model is scripted. The error text is large and full of quoting
//! (quotes, backslashes, newlines, a shell substitution, non-ASCII) and the
//! subagent's StopFailure hook never ends by itself: its `timeout` cuts it
//! off, the `Agent` call completes with the whole text (recorded S180: a
//! failed subagent's call completes with its error), byte for byte in the
//! hook payloads and what the model reads, and the parent's turn goes on.

use serde_json::{Value, json};

use crate::suite::compaction::Project;

#[test]
fn a_failed_subagent_with_a_hostile_error_and_a_hanging_stop_failure_hook() {
    let p = Project::new(
        &[
            ("StopFailure", "sleep 60"),
            ("PostToolUse", "true"),
            ("PostToolUseFailure", "true"),
        ],
        "",
    );
    // The StopFailure hook hangs: its handler's `timeout` (1 s) ends it.
    let hooks_file = p.root().join("hooks.json");
    let mut hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(&hooks_file).unwrap()).unwrap();
    hooks["hooks"]["StopFailure"][0]["hooks"][0]["timeout"] = json!(1);
    std::fs::write(&hooks_file, hooks.to_string()).unwrap();

    let piece = "line \"quoted\" \\back\\slash $(rm -rf ~) `id` é ✓ ";
    let message: String = std::iter::repeat_n(piece, 500)
        .collect::<Vec<_>>()
        .join("\n");
    let run = p.prompt(
        "s1",
        "delegate",
        json!([
            {"tool_calls": [{"name": "Agent", "arguments": {"description": "Sub task",
                "prompt": "Say hi please"}}]},
            {"error": {"status": 503, "message": message}},
            {"text": "done"},
        ]),
    );
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    assert_eq!(p.order(), ["StopFailure", "PostToolUse"]);

    let shown = format!(
        "API Error: 503 {message}. This is a server-side issue, usually temporary — \
         try again in a moment."
    );
    let (failure, _) = p.hook_stdin("StopFailure", 0);
    assert_eq!(failure["last_assistant_message"], shown.as_str());
    let (post, _) = p.hook_stdin("PostToolUse", 0);
    assert_eq!(
        post["tool_response"]["content"],
        json!([{"type": "text", "text": shown}])
    );
    let requests = p.requests();
    assert_eq!(requests.len(), 3, "main, subagent, main");
    let tool = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    let content = tool["content"].as_str().unwrap_or_default();
    assert!(
        content.starts_with(&format!("{shown}\nagentId: ")),
        "{:.300}",
        content
    );
    let end = run.of_type("turn/end");
    assert_eq!(end.last().unwrap()["reason"], "completed", "{end:?}");
}
