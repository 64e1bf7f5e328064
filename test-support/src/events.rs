//! Reading what a turn did: session events as their log lines' JSON
//! ([`Outcome`], [`events_of`]), JSON-lines files, filters by event type,
//! the turn-balance invariant, and the script steps `model-scripted` reads.

use std::path::Path;

use dsh_host::agent::{Session, TurnOutcome};
use dsh_host::session::TurnEndReason;
use dsh_host::session::events::wire;
use serde_json::{Value, json};

/// A turn's outcome with its events as their log lines' JSON, for
/// snapshotting whole wire values.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Why the turn ended.
    pub reason: TurnEndReason,
    /// The message it ended with, if any.
    pub message: Option<String>,
    /// Its events, as written to the log.
    pub events: Vec<Value>,
}

impl From<TurnOutcome> for Outcome {
    fn from(o: TurnOutcome) -> Self {
        Outcome {
            reason: o.reason,
            message: o.message,
            events: wire(&o.events),
        }
    }
}

/// A session's events as their log lines' JSON.
pub fn events_of(session: &Session) -> Vec<Value> {
    wire(&session.events())
}

/// The JSON values of a JSON-lines file; none if it does not exist.
pub fn read_jsonl(path: impl AsRef<Path>) -> Vec<Value> {
    let path = path.as_ref();
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}: `{l}` is not JSON: {e}", path.display()))
        })
        .collect()
}

/// The `type`s of events, in order.
pub fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The events of type `kind`.
pub fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// Asserts every event of the log sits in exactly one open turn.
pub fn assert_balanced(events: &[Value]) {
    let mut open = false;
    for e in events {
        match e["type"].as_str().unwrap_or_default() {
            "turn/start" => {
                assert!(!open, "nested turn in {events:#?}");
                open = true;
            }
            "turn/end" => {
                assert!(open, "turn/end without start");
                open = false;
            }
            other => assert!(open, "`{other}` outside a turn"),
        }
    }
    assert!(!open, "turn left open");
}

/// A scripted model step calling `Bash` with `command`.
pub fn bash(command: &str) -> Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]})
}

/// A scripted model step answering `t`.
pub fn text(t: &str) -> Value {
    json!({"text": t})
}
