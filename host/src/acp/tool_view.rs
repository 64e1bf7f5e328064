//! How a tool call looks in the editor beyond its title: where it works
//! (`locations`, always absolute, `Read` with its first line), what it
//! changes (`Edit`/`Write` as `diff` content the editor can review), and
//! the plan a `TodoWrite` writes (as Claude Code's ACP adapter shows it:
//! every entry `medium` priority, its status as is), and the plan the task
//! tools' list makes (`tasks/plan` records, [`task_plan`]).
//!
//! Paths are resolved against the session's working directory the way the
//! file tools resolve them. No I/O: an `Edit` shows the text it replaces
//! and the text it puts in, a `Write` the whole new file (its old text is
//! not read here).

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, ToolCallContent, ToolCallLocation,
};
use serde_json::Value;

/// `file_path` of `arguments`, absolute (against `cwd` when relative).
fn file_path(arguments: &Value, cwd: &Path) -> Option<PathBuf> {
    let path = Path::new(arguments.get("file_path")?.as_str()?);
    if path.as_os_str().is_empty() {
        return None;
    }
    Some(if path.is_absolute() || cwd.as_os_str().is_empty() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    })
}

/// Where the call works: its file, absolute; `Read` from its `offset`.
pub(crate) fn locations(name: &str, arguments: &Value, cwd: &Path) -> Vec<ToolCallLocation> {
    let Some(path) = file_path(arguments, cwd) else {
        return Vec::new();
    };
    let mut location = ToolCallLocation::new(path);
    if name == "Read" {
        // `offset` is 1-based; without one the read starts at line 1.
        let line = arguments
            .get("offset")
            .and_then(Value::as_u64)
            .filter(|l| *l > 0)
            .unwrap_or(1);
        location = location.line(u32::try_from(line).unwrap_or(u32::MAX));
    }
    vec![location]
}

/// The change an `Edit` or `Write` makes, as a diff.
pub(crate) fn diff_content(name: &str, arguments: &Value, cwd: &Path) -> Vec<ToolCallContent> {
    let text = |k: &str| arguments.get(k).and_then(Value::as_str).map(str::to_string);
    let Some(path) = file_path(arguments, cwd) else {
        return Vec::new();
    };
    let diff = match name {
        "Edit" => match (text("old_string"), text("new_string")) {
            (Some(old), Some(new)) => Diff::new(path, new).old_text(old),
            _ => return Vec::new(),
        },
        "Write" => match text("content") {
            Some(new) => Diff::new(path, new),
            None => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    vec![ToolCallContent::Diff(diff)]
}

/// Whether a successful result keeps the call's diff on screen rather than
/// replacing it with the tool's text.
pub(crate) fn keeps_diff(name: &str) -> bool {
    matches!(name, "Edit" | "Write")
}

/// The plan a `TodoWrite` call writes: `{todos: [{content, status}]}`.
/// `None` for any other tool or for arguments that are not a todo list.
pub(crate) fn plan(name: &str, arguments: &Value) -> Option<Plan> {
    if name != "TodoWrite" {
        return None;
    }
    let todos = arguments.get("todos")?.as_array()?;
    let entries = todos
        .iter()
        .map(|todo| {
            entry(
                todo.get("content")?.as_str()?,
                todo.get("status")?.as_str()?,
            )
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Plan::new(entries))
}

/// One plan entry as Claude Code's adapter shows it: `medium` priority,
/// the status as is (`None` for a status that is none of the three).
fn entry(content: &str, status: &str) -> Option<PlanEntry> {
    let status = match status {
        "pending" => PlanEntryStatus::Pending,
        "in_progress" => PlanEntryStatus::InProgress,
        "completed" => PlanEntryStatus::Completed,
        _ => return None,
    };
    Some(PlanEntry::new(content, PlanEntryPriority::Medium, status))
}

/// The plan a `tasks/plan` record shows ([`crate::tasks::PlanRecord`]),
/// entries as for `TodoWrite`. `None` for any other record.
pub(crate) fn task_plan(record: &Value) -> Option<Plan> {
    let record = crate::tasks::PlanRecord::read(record)?;
    let entries = record
        .entries
        .iter()
        .map(|e| entry(&e.content, &e.status))
        .collect::<Option<Vec<_>>>()?;
    Some(Plan::new(entries))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_list_record_is_a_plan_and_nothing_else_is() {
        let record = json!({"type": "tasks/plan", "entries": [
            {"content": "a", "status": "completed"}, {"content": "b", "status": "pending"}]});
        assert_eq!(
            wire(task_plan(&record).unwrap()),
            json!({"entries": [
                {"content": "a", "priority": "medium", "status": "completed"},
                {"content": "b", "priority": "medium", "status": "pending"}]})
        );
        assert!(task_plan(&json!({"type": "hook/invoked", "entries": []})).is_none());
        assert!(task_plan(&json!({"type": "tasks/plan"})).is_none());
    }

    fn wire<T: serde::Serialize>(v: T) -> Value {
        serde_json::to_value(v).unwrap()
    }

    #[test]
    fn relative_paths_become_absolute_and_read_carries_its_line() {
        let cwd = Path::new("/work/p");
        assert_eq!(
            wire(locations(
                "Read",
                &json!({"file_path": "src/a.rs", "offset": 40}),
                cwd
            )),
            json!([{"path": "/work/p/src/a.rs", "line": 40}])
        );
        assert_eq!(
            wire(locations("Read", &json!({"file_path": "/etc/hosts"}), cwd)),
            json!([{"path": "/etc/hosts", "line": 1}])
        );
        assert_eq!(
            wire(locations("Edit", &json!({"file_path": "b.rs"}), cwd)),
            json!([{"path": "/work/p/b.rs"}])
        );
        assert!(locations("Bash", &json!({"command": "ls"}), cwd).is_empty());
    }

    #[test]
    fn edit_and_write_are_diffs() {
        let cwd = Path::new("/work/p");
        assert_eq!(
            wire(diff_content(
                "Edit",
                &json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"}),
                cwd
            )),
            json!([{"type": "diff", "path": "/work/p/a.rs", "oldText": "x", "newText": "y"}])
        );
        assert_eq!(
            wire(diff_content(
                "Write",
                &json!({"file_path": "/n.txt", "content": "new"}),
                cwd
            )),
            json!([{"type": "diff", "path": "/n.txt", "newText": "new"}])
        );
        assert!(diff_content("Read", &json!({"file_path": "a"}), cwd).is_empty());
    }

    #[test]
    fn a_todo_list_is_a_plan_of_medium_entries() {
        let todos = json!({"todos": [
            {"content": "Read", "status": "completed", "activeForm": "Reading"},
            {"content": "Fix", "status": "in_progress", "activeForm": "Fixing"},
            {"content": "Test", "status": "pending", "activeForm": "Testing"}
        ]});
        assert_eq!(
            wire(plan("TodoWrite", &todos).unwrap()),
            json!({"entries": [
                {"content": "Read", "priority": "medium", "status": "completed"},
                {"content": "Fix", "priority": "medium", "status": "in_progress"},
                {"content": "Test", "priority": "medium", "status": "pending"}
            ]})
        );
        assert!(plan("Bash", &todos).is_none());
        assert!(
            plan(
                "TodoWrite",
                &json!({"todos": [{"content": "x", "status": "done"}]})
            )
            .is_none()
        );
    }
}
