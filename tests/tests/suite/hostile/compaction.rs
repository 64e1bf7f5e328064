//! Compaction under bad input: a `compaction:` block that is not a share or
//! has a key dsh does not know is refused naming the file and the key;
//! `/compact` with nothing to summarize ends the turn `completed` with
//! Claude Code's `Not enough messages to compact.` (its run succeeds,
//! `S110-one-exchange`; `dsh prompt` exits 0) and asks no model; a model
//! that fails the summary request ends the turn `error` and loses nothing
//! (the next request still has the whole history).

use serde_json::json;

use crate::suite::compaction::Project;

#[test]
fn a_bad_compaction_block_is_refused_naming_the_key() {
    for (block, needle) in [
        ("compaction:\n  threshold: 2\n", "compaction.threshold"),
        ("compaction:\n  threshold: 0\n", "compaction.threshold"),
        ("compaction:\n  treshold: 0.5\n", "treshold"),
        ("compaction:\n  auto: maybe\n", "auto"),
    ] {
        let p = Project::new(&[], block);
        let run = p.prompt("h1", "hello", json!([{"text": "hi"}]));
        assert_ne!(run.outcome.code, Some(0), "{block}");
        assert!(
            run.outcome.stderr.contains(needle) && run.outcome.stderr.contains("cordis.yml"),
            "{block}: {}",
            run.outcome.stderr
        );
        // Nothing ran: no session was created.
        assert!(p.requests().is_empty(), "{block}");
        assert!(
            !p.root().join("state/sessions/h1.jsonl").exists(),
            "{block}"
        );
    }
}

#[test]
fn compact_with_nothing_to_summarize_succeeds_saying_so_and_asks_no_model() {
    let p = Project::new(&[("PreCompact", "true")], "");
    let run = p.prompt("h2", "/compact", json!([{"text": "never"}]));
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    let end = run.of_type("turn/end");
    assert_eq!(end[0]["reason"], "completed");
    assert_eq!(end[0]["message"], "Not enough messages to compact.");
    assert!(run.of_type("session/compacted").is_empty());
    assert!(p.requests().is_empty());
    // PreCompact is not asked about an empty conversation.
    assert!(p.order().is_empty());
}

#[test]
fn a_failed_summary_request_keeps_the_history() {
    let p = Project::new(&[("PostCompact", "true")], "");
    let one = p.prompt(
        "h3",
        "one",
        json!([
            {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo hi"}}]},
            {"text": "first answer"},
        ]),
    );
    assert_eq!(one.outcome.code, Some(0), "{}", one.outcome.stderr);
    let failed = p.prompt(
        "h3",
        "/compact",
        json!([{"error": {"status": 500, "message": "summary server down"}}]),
    );
    assert_eq!(failed.outcome.code, Some(1), "{}", failed.outcome.stderr);
    let end = failed.of_type("turn/end");
    assert_eq!(
        end[0]["message"],
        "model request refused: HTTP 500: summary server down"
    );
    assert!(failed.of_type("session/compacted").is_empty());
    // PostCompact runs only after a compaction.
    assert!(!p.order().contains(&"PostCompact".to_string()));
    let two = p.prompt("h3", "two", json!([{"text": "second answer"}]));
    assert_eq!(two.outcome.code, Some(0), "{}", two.outcome.stderr);
    let requests = p.requests();
    // one (a tool step and its answer), the failed summary request, two.
    assert_eq!(requests.len(), 4);
    let last: Vec<(String, String)> = requests[3]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().into(),
                m["content"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        last,
        vec![
            ("user".to_string(), "one".to_string()),
            ("assistant".to_string(), String::new()),
            ("tool".to_string(), "hi".to_string()),
            ("assistant".to_string(), "first answer".to_string()),
            ("user".to_string(), "two".to_string()),
        ]
    );
}

/// Claude Code keeps the last answer and summarizes what came before it:
/// after one exchange there is nothing before it with an answer, so
/// `/compact` answers `Not enough messages to compact.` once PreCompact has
/// run, and asks no model; the run succeeds, as Claude Code's does
/// (recorded `S110-one-exchange`).
#[test]
fn one_exchange_is_not_enough_to_compact() {
    let p = Project::new(&[("PreCompact", "true")], "");
    let one = p.prompt("h4", "one", json!([{"text": "first answer"}]));
    assert_eq!(one.outcome.code, Some(0), "{}", one.outcome.stderr);
    let run = p.prompt("h4", "/compact", json!([{"text": "never"}]));
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    let end = run.of_type("turn/end");
    assert_eq!(end[0]["reason"], "completed");
    assert_eq!(end[0]["message"], "Not enough messages to compact.");
    assert!(run.of_type("session/compacted").is_empty());
    assert_eq!(p.order(), ["PreCompact"]);
    assert_eq!(p.requests().len(), 1);
}
