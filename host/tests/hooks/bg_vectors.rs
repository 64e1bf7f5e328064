//! Background `Bash` jobs in the vectors (S260-*): each `<task-notification>`
//! Claude Code's model read (`outcome.task_notifications`), compared with
//! `bash-local`'s (its own context, not a hook's).

use serde_json::Value;

use dsh_hook_protocol::vectors::{Sandbox, Vector};

use crate::unify::Bindings;

/// `bash-local`'s notification of a background job that ended.
pub fn is_task_notification(m: &Value) -> bool {
    m["source"]["plugin"] == "bash-local"
        && m["content"]
            .as_str()
            .is_some_and(|c| c.contains("<task-notification>"))
}

/// Each notification the recording's model read: in that request, in
/// that role, right after the tool results of the step it came in, and no
/// other.
pub fn check(
    v: &Vector,
    sb: &Sandbox,
    requests: &[Value],
    b: &mut Bindings,
    fails: &mut Vec<String>,
) {
    let want = v.json["outcome"]["task_notifications"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut seen = 0;
    for (r, j, msgs) in crate::support::first_appearances(requests, is_task_notification) {
        let m = &msgs[j];
        let Some(w) = want.get(seen) else {
            fails.push(format!(
                "request {r}: a task notification the CLI never sent: {m}"
            ));
            continue;
        };
        seen += 1;
        let text = sb.subst(w["text"].as_str().unwrap_or_default());
        let got = m["content"].as_str().unwrap_or_default();
        if w["request"] != serde_json::json!(r) || !b.match_str(&text, got) {
            fails.push(format!(
                "request {r}: task notification want {w} got {got:?}"
            ));
        }
        let after_results = j.checked_sub(1).is_some_and(|k| msgs[k]["role"] == "tool");
        if m["role"] != w["role"] || !after_results {
            fails.push(format!(
                "request {r}: task notification not a `{}` message after the tool results: {}",
                w["role"],
                Value::Array(msgs.clone())
            ));
        }
    }
    if seen != want.len() {
        fails.push(format!(
            "task notifications: want {} got {seen}",
            want.len()
        ));
    }
}
