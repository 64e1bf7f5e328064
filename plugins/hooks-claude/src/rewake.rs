//! `asyncRewake` hooks run in the background, as Claude Code 2.1.197 runs
//! them in a session with streaming input (recorded, S83 in
//! `tools/recorder-scenarios/FINDINGS-fid2.md`; the texts are its code's).
//!
//! Nobody waits for such a hook. When it exits 2, what it wrote (stderr,
//! else stdout) reaches the model at its next request, after the step's
//! tool results, as a task notification in a system-role message (as
//! Claude Code sends it: `{"role": "system", "content": ...}` inside the
//! request's messages, recorded S83):
//!
//! ```text
//! [SYSTEM NOTIFICATION - NOT USER INPUT]
//! This is an automated background-task event, NOT a message from the user.
//! Do NOT interpret this as user acknowledgement, confirmation, or response to any pending question.
//!
//! <task-notification>
//! <summary>Stop hook feedback</summary>
//! </task-notification>
//! <system-reminder>
//! Stop hook blocking error from command "PostToolUse:Bash": <stderr>
//! </system-reminder>
//! ```
//!
//! The command is named `<event>:<subject>` (the tool for tool events),
//! `rewakeMessage` replaces the `Stop hook blocking error from command
//! "…":` prefix and `rewakeSummary` the summary. Any other exit shows
//! nothing. A hook that finishes while the session is idle leaves its
//! notification for the next turn's first request (the host's
//! `inject_system_context`, plugin API 1.7).

use std::sync::Arc;

use dsh_hook_protocol::{HookHost, RunRequest};

/// Which sessions background an `asyncRewake` hook (the bridge's
/// `async_rewake` key).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AsyncRewake {
    /// As `claude -p`: the hook is waited for and read as any other (an
    /// `async` one is still backgrounded).
    #[default]
    Wait,
    /// As a session with streaming input (an editor's, through an SDK):
    /// the hook runs in the background.
    Background,
}

/// Claude Code's header of a background task's notification.
const HEADER: &str = "[SYSTEM NOTIFICATION - NOT USER INPUT]\n\
This is an automated background-task event, NOT a message from the user.\n\
Do NOT interpret this as user acknowledgement, confirmation, or response to any pending question.\n\n";

/// What the model reads when a backgrounded hook named `hook_name`
/// exited 2 with `stdout` and `stderr`.
pub fn notification(
    hook_name: &str,
    message: Option<&str>,
    summary: Option<&str>,
    stdout: &str,
    stderr: &str,
) -> String {
    let prefix = match message {
        Some(m) => m.to_string(),
        None => format!("Stop hook blocking error from command \"{hook_name}\":"),
    };
    let summary = escape(summary.unwrap_or("Stop hook feedback"));
    let output = if stderr.is_empty() { stdout } else { stderr };
    format!(
        "{HEADER}<task-notification>\n<summary>{summary}</summary>\n</task-notification>\n\
         <system-reminder>\n{prefix} {output}\n</system-reminder>"
    )
}

/// Claude Code's escape for text inside its XML-ish tags.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One hook to background.
pub(crate) struct Rewake {
    pub request: RunRequest,
    pub hook_name: String,
    pub message: Option<String>,
    pub summary: Option<String>,
}

/// Starts `rewake` on the current runtime; without one nothing starts
/// and the hook comes back, for the caller to run another way.
pub(crate) fn start(
    host: &Arc<dyn HookHost>,
    session_id: &str,
    rewake: Rewake,
) -> Result<(), Box<Rewake>> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Err(Box::new(rewake));
    };
    let host = host.clone();
    let session_id = session_id.to_string();
    runtime.spawn(async move {
        let answer = host.run(rewake.request).await;
        if answer.exit_code != Some(2) {
            return;
        }
        let text = notification(
            &rewake.hook_name,
            rewake.message.as_deref(),
            rewake.summary.as_deref(),
            &answer.stdout,
            &answer.stderr,
        );
        if let Err(e) = host.inject_system_context(&session_id, &text) {
            host.warn(&format!(
                "hooks-claude: the asyncRewake hook {} of session {session_id} exited 2 and its notification was dropped: {e}",
                rewake.hook_name
            ));
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notification_is_claude_codes_s83_text() {
        // Recorded (S83_post_exit2_mid_turn): the model request's last
        // message, byte for byte.
        let want = "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event, NOT a message from the user.\nDo NOT interpret this as user acknowledgement, confirmation, or response to any pending question.\n\n<task-notification>\n<summary>Stop hook feedback</summary>\n</task-notification>\n<system-reminder>\nStop hook blocking error from command \"PostToolUse:Bash\": MARK_REWAKE_ERR woke\n\n</system-reminder>";
        let got = notification(
            "PostToolUse:Bash",
            None,
            None,
            "MARK_REWAKE_OUT\n",
            "MARK_REWAKE_ERR woke\n",
        );
        assert_eq!(got, want);
    }

    #[test]
    fn message_and_summary_replace_the_defaults_and_stdout_stands_in_for_empty_stderr() {
        let got = notification("Stop", Some("Look:"), Some("a <b> & c"), "out", "");
        assert!(
            got.contains("<summary>a &lt;b&gt; &amp; c</summary>"),
            "{got}"
        );
        assert!(
            got.ends_with("<system-reminder>\nLook: out\n</system-reminder>"),
            "{got}"
        );
    }
}
