//! The user's side of a recorded conversation around `/compact` (Claude
//! Code, `S90-*`, `S110-*`, `S130-*`), compared strictly: the texts the CLI
//! merged into one user message (the command's transcript, its output with
//! the next prompt, a prompt with the summary prompt after it) are one user
//! message of dsh's with exactly those parts, whose recorded neighbours
//! (`No response requested.`, the answer before) are dsh's neighbours; a
//! prompt on its own is a plain user message; the summary prompt after a
//! tool result is a user message of its own right after the tool message.

use serde_json::Value;

/// Where Claude Code's summary prompt starts.
pub const SUMMARY_PROMPT_HEAD: &str = "CRITICAL: Respond with TEXT ONLY.";

/// The messages of request `r`.
fn messages(requests: &[Value], r: usize) -> Vec<Value> {
    requests
        .get(r)
        .and_then(|q| q["messages"].as_array().cloned())
        .unwrap_or_default()
}

/// A message of the user's own (no plugin's source).
fn users(m: &Value) -> bool {
    m["role"] == "user" && m.get("source").is_none()
}

/// The text blocks of a recorded excerpt message, `None` for any other
/// block (elided, tool result).
fn texts(m: &Value) -> Option<Vec<String>> {
    m["content"]
        .as_array()?
        .iter()
        .map(|b| match (b["type"].as_str(), b["text"].as_str()) {
            (Some("text"), Some(t)) => Some(t.to_string()),
            _ => None,
        })
        .collect()
}

/// Whether the group `parts` is the user's side (not hook steering): the
/// CLI's command transcript, or a prompt among the parts.
pub fn is_users(parts: &[String], prompts: &[String]) -> bool {
    parts[0].starts_with("<local-command-")
        // A project slash command's message and expanded text (S185).
        || parts[0].starts_with("<command-message>")
        || parts.iter().any(|p| {
            prompts
                .iter()
                .any(|q| p.strip_suffix('\n').unwrap_or(p) == q)
        })
}

/// `parts` (of `n` recorded text blocks; fewer when the recording elided
/// the summary prompt) as one user message of request `r`, and its
/// recorded neighbours as dsh's.
pub fn check_merged(
    v: &Value,
    r: usize,
    parts: &[String],
    n: usize,
    requests: &[Value],
    fails: &mut Vec<String>,
) {
    let msgs = messages(requests, r);
    let found = msgs.iter().rposition(|m| {
        let got: Vec<String> = m["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(String::from))
            .collect();
        users(m)
            && got.len() == n
            && got.starts_with(parts)
            && got[parts.len()..]
                .iter()
                .all(|rest| rest.starts_with(SUMMARY_PROMPT_HEAD))
            && m["content"] == got.join(dsh_plugin_api::STEERING_PART_SEPARATOR).as_str()
    });
    let Some(j) = found else {
        fails.push(format!(
            "request {r}: no user message of the {n} parts {parts:?}; messages {}",
            Value::Array(msgs)
        ));
        return;
    };
    if parts.len() < n && j + 1 != msgs.len() {
        fails.push(format!(
            "request {r}: the summary prompt is not in the last message: {}",
            Value::Array(msgs.clone())
        ));
    }
    // The recorded neighbours (system messages are not dsh's).
    let Some(excerpt) = v["model_request_excerpts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["request"].as_u64() == Some(r as u64))
    else {
        return;
    };
    let new = excerpt["new_messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let Some(at) = new.iter().position(|m| {
        m["role"] == "user" && texts(m).is_some_and(|t| t.len() == n && t.starts_with(parts))
    }) else {
        return;
    };
    let answer = |m: &Value| {
        (m["role"] == "assistant")
            .then(|| texts(m))
            .flatten()
            .map(|t| t.concat())
    };
    let after = new[at + 1..].iter().find(|m| m["role"] != "system");
    if let Some(want) = after.and_then(answer) {
        let got = msgs.get(j + 1);
        if !got.is_some_and(|m| m["role"] == "assistant" && m["content"] == want.as_str()) {
            fails.push(format!(
                "request {r}: after the message of {parts:?} want the answer {want:?}, got {got:?}"
            ));
        }
    }
    let before = new[..at].iter().rev().find(|m| m["role"] != "system");
    if let Some(want) = before.and_then(answer) {
        let got = j.checked_sub(1).and_then(|k| msgs.get(k));
        if !got.is_some_and(|m| m["role"] == "assistant" && m["content"] == want.as_str()) {
            fails.push(format!(
                "request {r}: before the message of {parts:?} want the answer {want:?}, got {got:?}"
            ));
        }
    }
}

/// A prompt that is a text block of its own: a plain user message.
pub fn check_prompt(r: usize, text: &str, requests: &[Value], fails: &mut Vec<String>) {
    let msgs = messages(requests, r);
    let found = msgs
        .iter()
        .any(|m| users(m) && m["content"] == text && m.get("parts").is_none());
    if !found {
        fails.push(format!(
            "request {r}: no user message {text:?} of its own; messages {}",
            Value::Array(msgs)
        ));
    }
}

/// The summary prompt recorded after a tool result: the last message of
/// the request, the user's, right after the tool message.
pub fn check_summary_request(
    r: usize,
    text: &str,
    placement: &str,
    requests: &[Value],
    fails: &mut Vec<String>,
) {
    let msgs = messages(requests, r);
    let ok = placement.ends_with("after the tool_result block")
        && msgs
            .last()
            .is_some_and(|m| users(m) && m["content"] == text && m.get("parts").is_none())
        && msgs.len() >= 2
        && msgs[msgs.len() - 2]["role"] == "tool";
    if !ok {
        fails.push(format!(
            "request {r}: the summary prompt is not the last message, after the tool message ({placement}); messages {}",
            Value::Array(msgs)
        ));
    }
}

/// Whether a request is a summary request: its last message ends with the
/// summary prompt (a message of its own or the last part of the user's).
pub fn is_summary_request(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| {
            let last_part = m["parts"].as_array().and_then(|p| p.last());
            last_part
                .or(Some(&m["content"]))
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with(SUMMARY_PROMPT_HEAD))
        })
}
