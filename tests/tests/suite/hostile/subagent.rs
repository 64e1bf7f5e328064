//! A SubagentStop hook that blocks every time the subagent would stop,
//! over the real `dsh` binary, a real shell hook and a real session log;
//! only the model is scripted. It cannot keep the subagent going for ever:
//! as Claude Code does (recorded `S173-substop-block-always`), 8 blocks in
//! a row are honoured, the 9th is overridden and the `Agent` tool returns
//! the subagent's 9th answer; the parent's turn then ends normally.

use serde_json::json;

use crate::suite::compaction::Project;

#[test]
fn a_subagent_stop_hook_that_always_blocks_gives_way_after_eight() {
    let p = Project::new(
        &[(
            "SubagentStop",
            r#"printf '%s' '{"decision": "block", "reason": "again"}'"#,
        )],
        "",
    );
    let mut script = vec![json!({"tool_calls": [{"name": "Agent", "arguments":
        {"description": "Sub task", "prompt": "Say hi please", "subagent_type": "general-purpose"}}]})];
    script.extend((1..=12).map(|k| json!({"text": format!("sub {k}")})));
    let run = p.prompt("s1", "do it", json!(script));
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    // Nine firings: stop_hook_active false, then true.
    let stops: Vec<_> = p.order();
    assert_eq!(stops.len(), 9, "{stops:?}");
    for n in 0..9 {
        let (stdin, _) = p.hook_stdin("SubagentStop", n);
        assert_eq!(stdin["stop_hook_active"], n > 0, "firing {n}");
        assert_eq!(stdin["last_assistant_message"], format!("sub {}", n + 1));
    }
    // The parent's request, the subagent's nine, the parent's last.
    let requests = p.requests();
    assert_eq!(requests.len(), 11);
    let feedback = requests[9]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["content"] == "Stop hook feedback:\nagain")
        .count();
    assert_eq!(feedback, 8, "{}", requests[9]);
    let results = run.of_type("tool/result");
    assert_eq!(results.len(), 1);
    let content = results[0]["content"].as_str().unwrap_or_default();
    assert!(content.starts_with("sub 9\n"), "{content}");
    let end = run.of_type("turn/end");
    assert_eq!(end.last().unwrap()["reason"], "completed", "{end:?}");
}
