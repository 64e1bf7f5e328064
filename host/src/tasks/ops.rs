//! What each task tool reads from its arguments and answers: the text the
//! model reads and the structured response (Claude Code's `tool_response`),
//! byte for byte as Claude Code 2.1.197 gives them (vectors `S220-*`,
//! `S221-*`, `S185-task*`).
//!
//! - `TaskCreate`: `Task #<id> created successfully: <subject>`, response
//!   `{task: {id, subject}}`; a missing `description` is the subject (as
//!   Claude Code coerces it).
//! - `TaskGet`: `Task #<id>: <subject>`, `Status:`, `Description:`, then
//!   `Blocked by: #a, #b` and `Blocks: …` when not empty; response
//!   `{task: {id, subject, description, status, blocks, blockedBy}}`, or
//!   `Task not found` and `{task: null}`.
//! - `TaskList`: one line per task, `#<id> [<status>] <subject>`, then
//!   ` (<owner>)` and ` [blocked by #a, …]` (blockers that are completed
//!   left out), or `No tasks found`; response `{tasks: [{id, subject,
//!   status, owner?, blockedBy}]}`.
//! - `TaskUpdate`: `Updated task #<id> <fields>` (the changed fields joined
//!   by `, `: subject, description, activeForm, owner, metadata, status,
//!   then blocks and blockedBy when something was added; a value equal to
//!   the old one is no change), response `{success, taskId, updatedFields,
//!   statusChange?}`; `deleted` removes the task (`updatedFields:
//!   ["deleted"]`); a missing task or a refused completion answers
//!   `{success: false, …, error}` with the error as its text (not an
//!   error result).

use serde_json::{Map, Value, json};

use super::store::{Store, StoreError, Task};

/// The statuses a task may have.
pub const STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

/// A call's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// What the model reads.
    pub text: String,
    /// The structured response.
    pub response: Value,
}

/// Why a call's arguments were refused: the tool, the key and what it
/// must be.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{tool}: `{key}` {problem}")]
pub struct ArgsError {
    tool: &'static str,
    key: String,
    problem: &'static str,
}

fn refuse(tool: &'static str, key: &str, problem: &'static str) -> ArgsError {
    ArgsError {
        tool,
        key: key.to_string(),
        problem,
    }
}

/// The arguments as an object whose keys are all among `known`.
fn object<'a>(
    tool: &'static str,
    args: &'a Value,
    known: &[&str],
) -> Result<&'a Map<String, Value>, ArgsError> {
    let map = args
        .as_object()
        .ok_or_else(|| refuse(tool, "arguments", "must be an object"))?;
    if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(refuse(tool, key, "is not an argument of this tool"));
    }
    Ok(map)
}

fn text(
    tool: &'static str,
    map: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, ArgsError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(refuse(tool, key, "must be a string")),
    }
}

fn texts(
    tool: &'static str,
    map: &Map<String, Value>,
    key: &str,
) -> Result<Option<Vec<String>>, ArgsError> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| refuse(tool, key, "must be an array of strings"))
            })
            .collect::<Result<_, _>>()
            .map(Some),
        Some(_) => Err(refuse(tool, key, "must be an array of strings")),
    }
}

fn metadata(
    tool: &'static str,
    map: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, ArgsError> {
    match map.get("metadata") {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m.clone())),
        Some(_) => Err(refuse(tool, "metadata", "must be an object")),
    }
}

/// `TaskCreate`'s arguments, as a pending task without its id.
pub fn parse_create(args: &Value) -> Result<Task, ArgsError> {
    const TOOL: &str = "TaskCreate";
    let map = object(
        TOOL,
        args,
        &["subject", "description", "activeForm", "metadata"],
    )?;
    let subject =
        text(TOOL, map, "subject")?.ok_or_else(|| refuse(TOOL, "subject", "is required"))?;
    let description = text(TOOL, map, "description")?.unwrap_or_else(|| subject.clone());
    Ok(Task {
        id: String::new(),
        subject,
        description,
        active_form: text(TOOL, map, "activeForm")?,
        status: "pending".into(),
        owner: None,
        blocks: Vec::new(),
        blocked_by: Vec::new(),
        metadata: metadata(TOOL, map)?,
    })
}

/// `TaskGet`'s task id.
pub fn parse_get(args: &Value) -> Result<String, ArgsError> {
    let map = object("TaskGet", args, &["taskId"])?;
    text("TaskGet", map, "taskId")?.ok_or_else(|| refuse("TaskGet", "taskId", "is required"))
}

/// `TaskList` takes nothing.
pub fn parse_list(args: &Value) -> Result<(), ArgsError> {
    object("TaskList", args, &[]).map(|_| ())
}

/// `TaskUpdate`'s arguments.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Update {
    pub task_id: String,
    pub subject: Option<String>,
    pub description: Option<String>,
    pub active_form: Option<String>,
    /// One of [`STATUSES`] or `deleted`.
    pub status: Option<String>,
    pub add_blocks: Option<Vec<String>>,
    pub add_blocked_by: Option<Vec<String>>,
    pub owner: Option<String>,
    pub metadata: Option<Map<String, Value>>,
}

/// Reads `TaskUpdate`'s arguments.
pub fn parse_update(args: &Value) -> Result<Update, ArgsError> {
    const TOOL: &str = "TaskUpdate";
    let map = object(
        TOOL,
        args,
        &[
            "taskId",
            "subject",
            "description",
            "activeForm",
            "status",
            "addBlocks",
            "addBlockedBy",
            "owner",
            "metadata",
        ],
    )?;
    let status = text(TOOL, map, "status")?;
    if let Some(s) = &status
        && !STATUSES.contains(&s.as_str())
        && s != "deleted"
    {
        return Err(refuse(
            TOOL,
            "status",
            "must be one of pending, in_progress, completed, deleted",
        ));
    }
    Ok(Update {
        task_id: text(TOOL, map, "taskId")?.ok_or_else(|| refuse(TOOL, "taskId", "is required"))?,
        subject: text(TOOL, map, "subject")?,
        description: text(TOOL, map, "description")?,
        active_form: text(TOOL, map, "activeForm")?,
        status,
        add_blocks: texts(TOOL, map, "addBlocks")?,
        add_blocked_by: texts(TOOL, map, "addBlockedBy")?,
        owner: text(TOOL, map, "owner")?,
        metadata: metadata(TOOL, map)?,
    })
}

fn ids(list: &[String]) -> String {
    list.iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A created task's answer.
pub fn created(id: &str, subject: &str) -> Answer {
    Answer {
        text: format!("Task #{id} created successfully: {subject}"),
        response: json!({"task": {"id": id, "subject": subject}}),
    }
}

/// `TaskGet`'s answer.
pub fn got(task: Option<&Task>) -> Answer {
    let Some(t) = task else {
        return Answer {
            text: "Task not found".into(),
            response: json!({"task": null}),
        };
    };
    let mut lines = vec![
        format!("Task #{}: {}", t.id, t.subject),
        format!("Status: {}", t.status),
        format!("Description: {}", t.description),
    ];
    if !t.blocked_by.is_empty() {
        lines.push(format!("Blocked by: {}", ids(&t.blocked_by)));
    }
    if !t.blocks.is_empty() {
        lines.push(format!("Blocks: {}", ids(&t.blocks)));
    }
    Answer {
        text: lines.join("\n"),
        response: json!({"task": {"id": t.id, "subject": t.subject,
            "description": t.description, "status": t.status, "blocks": t.blocks,
            "blockedBy": t.blocked_by}}),
    }
}

/// Whether a task is the model's (Claude Code hides `metadata._internal`).
fn listed(t: &Task) -> bool {
    !t.metadata
        .as_ref()
        .and_then(|m| m.get("_internal"))
        .is_some_and(truthy)
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// `TaskList`'s answer.
pub fn listing(tasks: &[Task]) -> Answer {
    let tasks: Vec<&Task> = tasks.iter().filter(|t| listed(t)).collect();
    let done: Vec<&str> = tasks
        .iter()
        .filter(|t| t.status == "completed")
        .map(|t| t.id.as_str())
        .collect();
    let mut entries = Vec::new();
    let mut lines = Vec::new();
    for t in &tasks {
        let open: Vec<String> = t
            .blocked_by
            .iter()
            .filter(|b| !done.contains(&b.as_str()))
            .cloned()
            .collect();
        let mut entry = Map::new();
        entry.insert("id".into(), json!(t.id));
        entry.insert("subject".into(), json!(t.subject));
        entry.insert("status".into(), json!(t.status));
        if let Some(owner) = &t.owner {
            entry.insert("owner".into(), json!(owner));
        }
        entry.insert("blockedBy".into(), json!(open));
        entries.push(Value::Object(entry));
        let owner = t
            .owner
            .as_deref()
            .filter(|o| !o.is_empty())
            .map(|o| format!(" ({o})"))
            .unwrap_or_default();
        let blocked = if open.is_empty() {
            String::new()
        } else {
            format!(" [blocked by {}]", ids(&open))
        };
        lines.push(format!(
            "#{} [{}] {}{owner}{blocked}",
            t.id, t.status, t.subject
        ));
    }
    Answer {
        text: if lines.is_empty() {
            "No tasks found".into()
        } else {
            lines.join("\n")
        },
        response: json!({"tasks": entries}),
    }
}

/// A `TaskUpdate` that changed nothing: `error` is its text.
pub fn unsuccessful(id: &str, error: &str) -> Answer {
    Answer {
        text: error.to_string(),
        response: json!({"success": false, "taskId": id, "updatedFields": [], "error": error}),
    }
}

/// A `TaskUpdate` to `deleted`: whether the task was removed.
pub fn deleted(id: &str, from: &str, removed: bool) -> Answer {
    if !removed {
        return unsuccessful(id, "Failed to delete task");
    }
    Answer {
        text: format!("Updated task #{id} deleted"),
        response: json!({"success": true, "taskId": id, "updatedFields": ["deleted"],
            "statusChange": {"from": from, "to": "deleted"}}),
    }
}

/// Applies `update` (not a deletion) to the task `before` of `list`, as
/// Claude Code does: the fields first, then the blocks each way.
pub fn apply(
    store: &Store,
    list: &str,
    before: &Task,
    update: &Update,
) -> Result<Answer, StoreError> {
    let id = update.task_id.as_str();
    let mut fields: Vec<&str> = Vec::new();
    let mut next = before.clone();
    let changed = |new: &Option<String>, old: Option<&str>| {
        new.as_deref()
            .filter(|n| Some(*n) != old)
            .map(str::to_string)
    };
    if let Some(s) = changed(&update.subject, Some(&before.subject)) {
        next.subject = s;
        fields.push("subject");
    }
    if let Some(d) = changed(&update.description, Some(&before.description)) {
        next.description = d;
        fields.push("description");
    }
    if let Some(a) = changed(&update.active_form, before.active_form.as_deref()) {
        next.active_form = Some(a);
        fields.push("activeForm");
    }
    if let Some(o) = changed(&update.owner, before.owner.as_deref()) {
        next.owner = Some(o);
        fields.push("owner");
    }
    if let Some(m) = &update.metadata {
        let mut merged = before.metadata.clone().unwrap_or_default();
        for (k, v) in m {
            if v.is_null() {
                merged.remove(k);
            } else {
                merged.insert(k.clone(), v.clone());
            }
        }
        next.metadata = Some(merged);
        fields.push("metadata");
    }
    let mut status_change = None;
    if let Some(s) = changed(&update.status, Some(&before.status)) {
        status_change = Some(json!({"from": before.status, "to": s}));
        next.status = s;
        fields.push("status");
    }
    if !fields.is_empty() {
        store.update(list, id, |t| {
            t.subject = next.subject.clone();
            t.description = next.description.clone();
            t.active_form = next.active_form.clone();
            t.owner = next.owner.clone();
            t.metadata = next.metadata.clone();
            t.status = next.status.clone();
        })?;
    }
    let new = |add: &Option<Vec<String>>, have: &[String]| -> Vec<String> {
        add.iter()
            .flatten()
            .filter(|b| !have.contains(b))
            .cloned()
            .collect()
    };
    let blocks = new(&update.add_blocks, &before.blocks);
    for b in &blocks {
        store.link(list, id, b)?;
    }
    if !blocks.is_empty() {
        fields.push("blocks");
    }
    let blocked_by = new(&update.add_blocked_by, &before.blocked_by);
    for b in &blocked_by {
        store.link(list, b, id)?;
    }
    if !blocked_by.is_empty() {
        fields.push("blockedBy");
    }
    let mut response = Map::new();
    response.insert("success".into(), json!(true));
    response.insert("taskId".into(), json!(id));
    response.insert("updatedFields".into(), json!(fields));
    if let Some(change) = status_change {
        response.insert("statusChange".into(), change);
    }
    Ok(Answer {
        text: format!("Updated task #{id} {}", fields.join(", ")),
        response: Value::Object(response),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_refused_by_key() {
        assert_eq!(
            parse_create(&json!({"description": "d"}))
                .unwrap_err()
                .to_string(),
            "TaskCreate: `subject` is required"
        );
        assert_eq!(
            parse_update(&json!({"taskId": "1", "status": "done"}))
                .unwrap_err()
                .to_string(),
            "TaskUpdate: `status` must be one of pending, in_progress, completed, deleted"
        );
        assert_eq!(
            parse_list(&json!({"x": 1})).unwrap_err().to_string(),
            "TaskList: `x` is not an argument of this tool"
        );
        assert_eq!(
            parse_create(&json!({"subject": "s"})).unwrap().description,
            "s"
        );
    }

    #[test]
    fn a_list_leaves_out_completed_blockers_and_shows_owners() {
        let t = |id: &str, status: &str, owner: Option<&str>, by: &[&str]| Task {
            id: id.into(),
            subject: format!("t{id}"),
            description: String::new(),
            active_form: None,
            status: status.into(),
            owner: owner.map(Into::into),
            blocks: Vec::new(),
            blocked_by: by.iter().map(|s| s.to_string()).collect(),
            metadata: None,
        };
        let a = listing(&[
            t("1", "completed", Some("alice"), &[]),
            t("2", "pending", None, &["1", "3"]),
            t("3", "pending", None, &[]),
        ]);
        assert_eq!(
            a.text,
            "#1 [completed] t1 (alice)\n#2 [pending] t2 [blocked by #3]\n#3 [pending] t3"
        );
        assert_eq!(a.response["tasks"][1]["blockedBy"], json!(["3"]));
        assert_eq!(listing(&[]).text, "No tasks found");
    }
}
