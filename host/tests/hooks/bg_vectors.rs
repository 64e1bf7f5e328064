//! Background `Bash` jobs in the vectors (S260-*, S262-*): each
//! `<task-notification>` Claude Code's model read
//! (`outcome.task_notifications`), compared with `bash-local`'s (its own
//! context, not a hook's); and `claude -p`'s wind-down after the run's last
//! turn ([`wind_down`]).

use serde_json::Value;

use dsh_hook_protocol::vectors::{Sandbox, Vector};

use crate::unify::Bindings;

/// `bash-local`'s notification of a background job that ended: its
/// system message, or the prompt of the turn it opened in a wind-down.
pub fn is_task_notification(m: &Value) -> bool {
    let content = m["content"].as_str().unwrap_or_default();
    (m["source"]["plugin"] == "bash-local" && content.contains("<task-notification>"))
        || (m["role"] == "user" && content.starts_with("<task-notification>"))
}

/// Whether invocation `inv` is a `claude -p` run that winds down after
/// its last turn (not Codex, the interactive CLI, or a run interrupted
/// mid-turn); its session is then made a headless run's, as `dsh prompt`
/// makes it.
pub fn headless(
    claude: bool,
    inv: &Value,
    session: &std::sync::Arc<dsh_host::agent::Session>,
) -> bool {
    let headless = claude
        && inv["argv"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "-p"))
        && !inv["interrupted_when_file"].is_string();
    if headless {
        session.run_headless();
    }
    headless
}

/// `claude -p`'s wind-down after a [`headless`] run's last turn (S262-*,
/// S260-left-running), as `dsh prompt` runs it with its default grace.
pub async fn wind_down(
    headless: bool,
    session: &std::sync::Arc<dsh_host::agent::Session>,
) -> Option<dsh_host::agent::WindDown> {
    if !headless {
        return None;
    }
    let wind = session
        .wind_down(
            dsh_host::agent::DEFAULT_GRACE,
            tokio_util::sync::CancellationToken::new(),
        )
        .await;
    Some(wind)
}

/// The reason the session closes with after invocation `k`: the killed
/// reason when its wind-down killed jobs (no SessionEnd hook ran), else the
/// one its SessionEnd hook was given.
pub fn close_reason(wind: Option<&dsh_host::agent::WindDown>, recorded: String) -> String {
    match wind {
        Some(w) if w.end_reason() != "other" => w.end_reason().to_string(),
        _ => recorded,
    }
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
        // A system message follows the tool results of the step it came
        // in; a wind-down's user message is the prompt of a turn of its
        // own, after the last answer (S262-ends-in-grace).
        let before = if w["role"] == "user" {
            "assistant"
        } else {
            "tool"
        };
        let placed = j.checked_sub(1).is_some_and(|k| msgs[k]["role"] == before)
            && (w["role"] != "user" || j + 1 == msgs.len());
        if m["role"] != w["role"] || !placed {
            fails.push(format!(
                "request {r}: task notification not a `{}` message after a `{before}` one: {}",
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
