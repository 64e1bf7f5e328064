//! `tools-todo`: the built-in plugin offering Claude Code's `TodoWrite`,
//! the model's task list for the session.
//!
//! Input `{todos: [{content, status: pending|in_progress|completed,
//! activeForm}]}`, the whole list every time. The model reads Claude Code's
//! own answer ([`RESULT`]); the structured result is Claude's
//! `tool_response` `{oldTodos, newTodos}`, `oldTodos` being the list this
//! session's previous call left (a list whose every item is completed is
//! cleared, as Claude Code clears it). Lists live in memory, per session:
//! a restarted daemon starts each session's list empty.
//!
//! Over ACP each successful call becomes a `plan` update (see
//! `acp::tool_view::plan`). Opt-in: a manifest that does not list
//! `tools-todo` offers no `TodoWrite`, so the tool lists models see (and
//! the recorded vectors) stay as they were.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::ffi::AbortSignalBox;
use dsh_plugin_api::{Host, NoConfig, Plugin, ToolCall, ToolResult, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The tool's name.
pub const TOOL_NAME: &str = "TodoWrite";

/// What the model reads after a successful call (Claude Code's text).
pub const RESULT: &str = "Todos have been modified successfully. Ensure that you continue to use \
    the todo list to track your progress. Please proceed with the current tasks if applicable";

/// The statuses an item may have.
const STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

/// One item, in Claude Code's key order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// The item in the present continuous ("Running the tests").
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

/// Why a call's arguments were refused: the key and what it must be.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("TodoWrite: `{key}` must be {expected}")]
pub struct TodoArgsError {
    key: String,
    expected: &'static str,
}

fn refuse(key: impl Into<String>, expected: &'static str) -> TodoArgsError {
    TodoArgsError {
        key: key.into(),
        expected,
    }
}

/// Parses and validates the tool's arguments.
pub fn parse(arguments: &Value) -> Result<Vec<Todo>, TodoArgsError> {
    let todos = arguments
        .get("todos")
        .and_then(Value::as_array)
        .ok_or_else(|| refuse("todos", "an array of todo items"))?;
    todos
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let text = |key: &str| {
                item.get(key)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            };
            let content = text("content")
                .ok_or_else(|| refuse(format!("todos[{i}].content"), "a non-empty string"))?;
            let status = text("status")
                .filter(|s| STATUSES.contains(&s.as_str()))
                .ok_or_else(|| {
                    refuse(
                        format!("todos[{i}].status"),
                        "one of pending, in_progress, completed",
                    )
                })?;
            let active_form = text("activeForm")
                .ok_or_else(|| refuse(format!("todos[{i}].activeForm"), "a non-empty string"))?;
            Ok(Todo {
                content,
                status,
                active_form,
            })
        })
        .collect()
}

/// The tool as advertised to the model (Claude Code's input schema).
pub fn spec() -> ToolSpec {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The updated todo list",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": STATUSES},
                        "activeForm": {"type": "string", "minLength": 1}
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["todos"],
        "additionalProperties": false
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Creates and updates a structured task list for the current session: send \
            the whole list each time. Use it for multi-step work, to track progress and show the \
            user the plan; keep exactly one item in_progress while working, and mark items \
            completed as soon as they are done."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// Each session's current list.
#[derive(Default)]
struct Lists(Mutex<HashMap<String, Vec<Todo>>>);

impl Lists {
    /// Replaces `session`'s list with `todos` (cleared when all are
    /// completed); the list it had.
    fn replace(&self, session: &str, todos: &[Todo]) -> Vec<Todo> {
        let kept = if todos.iter().all(|t| t.status == "completed") {
            Vec::new()
        } else {
            todos.to_vec()
        };
        let mut lists = self.0.lock().unwrap_or_else(|p| p.into_inner());
        lists.insert(session.to_string(), kept).unwrap_or_default()
    }
}

/// One call.
fn run(lists: &Lists, call: &ToolCall) -> ToolResult {
    let arguments: Value = match serde_json::from_str(&call.arguments) {
        Ok(v) => v,
        Err(e) => return ToolResult::error(format!("TodoWrite: arguments are not JSON: {e}")),
    };
    let todos = match parse(&arguments) {
        Ok(todos) => todos,
        Err(e) => return ToolResult::error(e.to_string()),
    };
    let old = lists.replace(call.session.session_id.as_str(), &todos);
    let response = json!({"oldTodos": old, "newTodos": todos});
    ToolResult::text(RESULT).with_structured(response.to_string())
}

/// The plugin.
pub struct TodoTools;

impl Plugin for TodoTools {
    type Config = NoConfig;
    const NAME: &'static str = "tools-todo";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn apply(host: &Host, _config: NoConfig) -> Result<Self, String> {
        let lists = Arc::new(Lists::default());
        host.register_tool(
            spec(),
            move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                let lists = lists.clone();
                async move { run(&lists, &call) }
            },
        )?;
        Ok(TodoTools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_items_are_refused_by_key() {
        let e = parse(&json!({"todos": [
            {"content": "a", "status": "pending", "activeForm": "A"},
            {"content": "b", "status": "done", "activeForm": "B"}
        ]}))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "TodoWrite: `todos[1].status` must be one of pending, in_progress, completed"
        );
        assert!(parse(&json!({})).is_err());
        assert!(
            parse(&json!({"todos": [{"content": "", "status": "pending", "activeForm": "x"}]}))
                .is_err()
        );
    }

    #[test]
    fn the_old_list_is_the_previous_call_s_and_a_finished_list_clears() {
        let lists = Lists::default();
        let todo = |status: &str| Todo {
            content: "x".into(),
            status: status.into(),
            active_form: "X".into(),
        };
        assert!(lists.replace("s", &[todo("pending")]).is_empty());
        assert_eq!(lists.replace("s", &[todo("completed")]), [todo("pending")]);
        assert!(lists.replace("s", &[todo("pending")]).is_empty());
        assert!(lists.replace("other", &[]).is_empty());
    }
}
