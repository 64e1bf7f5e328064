//! The loop's runtime properties, library-level (no ACP in between): a
//! cancel that arrives before its turn opens is kept, concurrent prompts on
//! one session each get a turn of their own, and a slow reader of the live
//! events loses nothing (the turn waits for it instead).

use std::time::Duration;

use dsh_host::agent::Prompt;
use dsh_host::session::{SessionEvent, TurnEndReason};
use serde_json::json;

use super::harness::{Harness, Outcome, of_kind, text};

/// A generous bound against hangs; never a measurement.
const LIMIT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_before_the_turn_opens_is_not_lost() {
    let h = Harness::new(json!([text("never asked"), text("second")]), &[]);
    let session = h.session().await;
    session.enqueue(Prompt::user("stop before you start"));
    session.cancel();
    let out: Outcome = tokio::time::timeout(LIMIT, session.run_turn())
        .await
        .unwrap()
        .into();
    assert_eq!(out.reason, TurnEndReason::Aborted, "{:?}", out.events);
    assert!(h.requests().is_empty(), "the model was asked");
    // Kept for that turn only: the next prompt runs.
    let out: Outcome = session.prompt(Prompt::user("now go")).await.into();
    assert_eq!(out.reason, TurnEndReason::Completed);
    // A cancel with nothing running or asked for does nothing.
    session.cancel();
    let h2 = Harness::new(json!([text("fine")]), &[]);
    let idle = h2.session().await;
    idle.cancel();
    let out: Outcome = idle.prompt(Prompt::user("go")).await.into();
    assert_eq!(out.reason, TurnEndReason::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_prompts_on_one_session_each_run_in_a_turn_of_their_own() {
    let h = Harness::new(json!([text("a"), text("b"), text("c")]), &[]);
    let session = h.session().await;
    let (one, two, three) = tokio::time::timeout(LIMIT, async {
        tokio::join!(
            session.prompt(Prompt::user("one")),
            session.prompt(Prompt::user("two")),
            session.prompt(Prompt::user("three")),
        )
    })
    .await
    .unwrap();
    let mut prompts = Vec::new();
    for out in [one, two, three] {
        let out: Outcome = out.into();
        assert_eq!(out.reason, TurnEndReason::Completed, "{:?}", out.message);
        let users = of_kind(&out.events, "user/message");
        assert_eq!(users.len(), 1, "{:?}", out.events);
        prompts.push(users[0]["content"].as_str().unwrap().to_string());
    }
    prompts.sort();
    assert_eq!(prompts, ["one", "three", "two"]);
    assert_eq!(h.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_of_live_events_misses_no_tool_call() {
    const CALLS: usize = 1200;
    let calls: Vec<_> = (0..CALLS)
        .map(|i| json!({"name": "NoSuchTool", "arguments": {"i": i}}))
        .collect();
    let h = Harness::new(json!([{"tool_calls": calls}, text("done")]), &[]);
    let session = h.session().await;
    let first = session.events().len();
    let mut live = session.subscribe();
    let turn = tokio::spawn({
        let session = session.clone();
        async move { session.prompt(Prompt::user("call them all")).await }
    });
    let read = async {
        let mut seen = Vec::new();
        while let Some(event) = live.recv().await {
            // A client that reads slowly.
            tokio::time::sleep(Duration::from_millis(1)).await;
            let end = matches!(event.event, SessionEvent::TurnEnd { .. });
            seen.push((*event).clone());
            if end {
                break;
            }
        }
        seen
    };
    let seen = tokio::time::timeout(LIMIT, read).await.unwrap();
    let out = tokio::time::timeout(LIMIT, turn).await.unwrap().unwrap();
    assert_eq!(out.reason, TurnEndReason::Completed, "{:?}", out.message);
    let called: Vec<&str> = seen
        .iter()
        .filter_map(|e| match &e.event {
            SessionEvent::ToolCall { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let expected: Vec<String> = (1..=CALLS).map(|i| format!("call_1_{i}")).collect();
    assert_eq!(called, expected);
    // Every logged event of the turn, in the log's order.
    assert_eq!(seen, session.events()[first..first + seen.len()]);
    assert_eq!(seen.len(), out.events.len());
}
