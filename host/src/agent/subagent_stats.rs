//! The `toolStats` of Claude Code's `Agent` tool response: what the
//! subagent's tool calls did, counted from its session's events.
//!
//! Recorded (vector `S183-child-tool-stats`, a subagent calling `Read`,
//! `Write` of a new 3-line file, `Edit` of one line into two, and `Bash`):
//! `{"readCount":1,"searchCount":0,"bashCount":1,"editFileCount":2,
//! "linesAdded":6,"linesRemoved":1,"otherToolCount":0}`, after `usage`, and
//! only when the subagent called a tool (`S1-all-events` and `S180-*`
//! without one have no `toolStats`). `Write` and `Edit` count as edits;
//! their lines are the `+`/`-` lines of the result's `structuredPatch`, or
//! for a created file the pieces of its content split at `\n` (Claude
//! Code's count: `one\ntwo\nthree\n` adds 4). `searchCount` stays 0: dsh
//! has none of Claude Code's search tools (`Grep`, `Glob`).

use serde_json::{Value, json};

use crate::session::{LoggedEvent, SessionEvent};

/// The subagent's `toolStats`, or `None` when it called no tool.
pub(crate) fn tool_stats(events: &[LoggedEvent]) -> Option<Value> {
    let mut read = 0u64;
    let mut bash = 0u64;
    let mut edits = 0u64;
    let mut other = 0u64;
    let mut added = 0u64;
    let mut removed = 0u64;
    let mut any = false;
    for e in events {
        match &e.event {
            SessionEvent::ToolCall { name, .. } => {
                any = true;
                match name.as_str() {
                    "Read" => read += 1,
                    "Bash" => bash += 1,
                    "Write" | "Edit" => edits += 1,
                    _ => other += 1,
                }
            }
            SessionEvent::ToolResult {
                name,
                is_error: false,
                structured: Some(s),
                ..
            } if name == "Write" || name == "Edit" => {
                let (a, r) = lines_changed(s);
                added += a;
                removed += r;
            }
            _ => {}
        }
    }
    any.then(|| {
        json!({
            "readCount": read,
            "searchCount": 0,
            "bashCount": bash,
            "editFileCount": edits,
            "linesAdded": added,
            "linesRemoved": removed,
            "otherToolCount": other,
        })
    })
}

/// The lines a `Write` or `Edit` result added and removed.
fn lines_changed(structured: &Value) -> (u64, u64) {
    let hunks = structured["structuredPatch"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if hunks.is_empty() {
        if structured["type"] == "create" {
            let content = structured["content"].as_str().unwrap_or_default();
            return (content.split('\n').count() as u64, 0);
        }
        return (0, 0);
    }
    let lines = hunks
        .iter()
        .flat_map(|h| h["lines"].as_array().cloned().unwrap_or_default());
    let mut added = 0;
    let mut removed = 0;
    for l in lines {
        match l.as_str().and_then(|l| l.chars().next()) {
            Some('+') => added += 1,
            Some('-') => removed += 1,
            _ => {}
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_created_file_counts_its_pieces_and_an_edit_its_diff_lines() {
        // What the subagent of S183-child-tool-stats got back.
        assert_eq!(
            lines_changed(&json!({"type": "create", "content": "one\ntwo\nthree\n",
                "structuredPatch": []})),
            (4, 0)
        );
        assert_eq!(
            lines_changed(&json!({"structuredPatch": [{"oldStart": 1, "oldLines": 2,
                "newStart": 1, "newLines": 3, "lines": [" alpha", "-beta", "+beta1", "+beta2"]}]})),
            (2, 1)
        );
        assert_eq!(tool_stats(&[]), None);
    }
}
