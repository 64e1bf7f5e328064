//! TaskCreated and TaskCompleted: the task tools' events (`tools-tasks`
//! asks through the `task-events` service, which the bridge provides).
//!
//! Recorded (vectors `S185-task*`, `S220-*`, `S221-*`, `S223-subagent`,
//! `FINDINGS-tasktools.md`): TaskCreated fires when `TaskCreate` has given
//! the task its id, between the call's PreToolUse and PostToolUse;
//! TaskCompleted when `TaskUpdate` moves a task to `completed` from another
//! status. Payload `{session_id, transcript_path, cwd, prompt_id,
//! hook_event_name, task_id, task_subject, task_description}`, the main
//! session's ids for a subagent's call too (no `agent_id`). Matchers are
//! ignored: every hook of the event runs (`S221-matcher`).
//!
//! A hook blocks with exit 2 (`[command]: <stderr>`, or `No stderr output`)
//! or `decision: "block"` (its `reason`); each block is Claude Code's
//! `TaskCreated hook feedback:\n<why>` (`TaskCompleted …`), the blocks of
//! one firing joined by a newline in the order the hooks finished
//! (`S221-two-hooks`). That text is the refusal the tool acts on. Plain
//! stdout, `continue: false` and exit 1 change nothing; a
//! `hookSpecificOutput` (an `additionalContext`) fails Claude Code's
//! output check and counts for nothing (a non-blocking error,
//! `S185-task*-context`). As for Stop, a TaskCompleted hook that exits 2
//! with no stdout and a stderr saying its script is missing (`no such
//! file`, `can't open`) does not block.

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::services::task_events::{
    METHOD_COMPLETED, METHOD_CREATED, TaskEvent, TaskVerdict,
};
use dsh_plugin_api::{ConfigProblem, SessionRef};
use serde_json::Value;

use super::{completion, head, is_subagent, prompt_id, read};
use crate::ClaudeBridge;

/// The event of a created task.
pub const CREATED: &str = "TaskCreated";
/// The event of a task about to be completed.
pub const COMPLETED: &str = "TaskCompleted";

/// The stdin payload; `main` is the session whose ids the hooks are told
/// (a subagent's parent).
pub fn payload(main: &SessionRef, event: &str, event_in: &TaskEvent) -> Value {
    let mut m = head(main);
    prompt_id(&mut m, main);
    m.insert("hook_event_name".into(), event.into());
    m.insert("task_id".into(), event_in.task_id.as_str().into());
    m.insert("task_subject".into(), event_in.subject.as_str().into());
    m.insert(
        "task_description".into(),
        event_in.description.as_str().into(),
    );
    Value::Object(m)
}

/// A warning per hook file with TaskCreated or TaskCompleted hooks, for a
/// host that offers no task tools (`task_tools` unset): they never run.
pub fn unfired(hooks: &[crate::ClaudeHook]) -> Vec<ConfigProblem> {
    super::unfired_without(hooks, &[CREATED, COMPLETED], "task tools", "tools-tasks")
}

/// Whether an exit-2 answer is Claude Code's "hook script appears to be
/// missing" case, which does not block TaskCompleted.
fn missing_script(stdout: &str, stderr: &str) -> bool {
    let lower = stderr.to_lowercase();
    stdout.trim().is_empty() && (lower.contains("no such file") || lower.contains("can't open"))
}

impl ClaudeBridge {
    /// Answers one `task-events` call: runs the event's hooks and refuses
    /// with Claude Code's feedback text when one blocks.
    pub async fn on_task_event(&self, method: &str, args: Value) -> Result<Value, String> {
        let event = match method {
            METHOD_CREATED => CREATED,
            METHOD_COMPLETED => COMPLETED,
            other => return Err(format!("task-events: unknown method `{other}`")),
        };
        let input: TaskEvent = serde_json::from_value(args)
            .map_err(|e| format!("task-events: `{method}` arguments: {e}"))?;
        let verdict = TaskVerdict {
            feedback: self.fire_task_event(event, &input).await,
        };
        serde_json::to_value(verdict).map_err(|e| e.to_string())
    }

    /// Runs `event`'s hooks for `input`; the joined feedback of those that
    /// blocked.
    pub async fn fire_task_event(&self, event: &str, input: &TaskEvent) -> Option<String> {
        let session = input.session.to_ref();
        if !self.has_hooks(&session, event) {
            return None;
        }
        let main = is_subagent(&session)
            .then(|| self.running_subagent(&session.session_id))
            .flatten()
            .map_or_else(|| session.clone(), |info| info.parent);
        let payload = payload(&main, event, input);
        let mut runs = self.fire(event, &session, &[], &payload).await;
        let mut blocks = Vec::new();
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, event);
            if reading
                .json
                .as_ref()
                .is_some_and(|j| j.contains_key("hookSpecificOutput"))
            {
                run.outcome = Outcome::NonBlockingError;
                run.detail = Some(format!(
                    "Hook JSON output validation failed: {event} takes no hookSpecificOutput"
                ));
                continue;
            }
            let why = if reading.blocked {
                if event == COMPLETED && missing_script(&run.answer.stdout, &run.answer.stderr) {
                    run.outcome = Outcome::NonBlockingError;
                    None
                } else {
                    let stderr = if run.answer.stderr.is_empty() {
                        "No stderr output"
                    } else {
                        run.answer.stderr.as_str()
                    };
                    Some(format!("[{}]: {stderr}", run.command))
                }
            } else if reading.decision() == Some("block") {
                run.outcome = Outcome::Blocked;
                Some(reading.reason().unwrap_or_default().to_string())
            } else {
                None
            };
            blocks.extend(why.map(|w| format!("{event} hook feedback:\n{w}")));
        }
        self.record(&session, event, &runs);
        (!blocks.is_empty()).then(|| blocks.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_hooks_without_task_tools_are_warned_about_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.json");
        let hook = serde_json::json!([{"hooks": [{"type": "command", "command": "true"}]}]);
        std::fs::write(
            &file,
            serde_json::json!({"hooks": {"TaskCreated": hook, "TaskCompleted": hook,
                "Stop": hook}})
            .to_string(),
        )
        .unwrap();
        let loaded = crate::config::load(&crate::Config {
            config_path: crate::ConfigPaths::One(file.display().to_string()),
            ..crate::Config::default()
        });
        let warned: Vec<String> = unfired(&loaded.hooks)
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(
            warned[0].contains("TaskCreated, TaskCompleted") && warned[0].contains("tools-tasks"),
            "{warned:?}"
        );
    }

    #[test]
    fn worktree_hooks_without_worktree_tools_are_warned_about_too() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.json");
        let hook = serde_json::json!([{"hooks": [{"type": "command", "command": "true"}]}]);
        std::fs::write(
            &file,
            serde_json::json!({"hooks": {"WorktreeCreate": hook, "TaskCreated": hook}}).to_string(),
        )
        .unwrap();
        let loaded = crate::config::load(&crate::Config {
            config_path: crate::ConfigPaths::One(file.display().to_string()),
            ..crate::Config::default()
        });
        let events = [
            crate::events::worktree::CREATE,
            crate::events::worktree::REMOVE,
        ];
        let warned: Vec<String> = crate::events::unfired_without(
            &loaded.hooks,
            &events,
            "worktree tools",
            "tools-worktree",
        )
        .iter()
        .map(|p| p.to_string())
        .collect();
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(
            warned[0].contains("never run: WorktreeCreate (")
                && warned[0].contains("`tools-worktree`"),
            "{warned:?}"
        );
    }

    #[test]
    fn a_missing_script_is_told_by_its_stderr() {
        assert!(missing_script(
            "",
            "bash: x.sh: No such file or directory\n"
        ));
        assert!(missing_script(" \n", "sh: 0: can't open x.sh"));
        assert!(!missing_script("{}", "No such file"));
        assert!(!missing_script("", "denied"));
    }
}
