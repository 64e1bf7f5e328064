//! `tool_input` as Claude Code hands it to hooks: the model's arguments as
//! its tool's input schema parsed them.
//!
//! Recorded (vectors `S183-child-tool-stats`, `S186-timeout-first`): the
//! keys of a built-in tool's input come in its schema's property order,
//! whatever order the model wrote them in (a `Bash` call written `timeout,
//! description, command` reaches PreToolUse and PostToolUseFailure as
//! `command, timeout, description`), with a default filled in where the
//! schema has one (`Edit`'s `replace_all: false`; `TaskCreate`'s
//! `description`, its subject, `S220-invalid`). PostToolBatch lists a
//! `Bash` call's input as `command, description, timeout` (`S186-*`).
//! Keys a schema does not name stay after the ones it does, in the model's
//! order; a tool Claude Code does not have (an MCP tool) keeps its input
//! as written.

use serde_json::{Map, Value};

use super::claude_tool_name;

/// Claude Code 2.1.197's schema property order of its tools dsh has (the
/// recorded requests' `tools`).
fn schema_order(tool: &str) -> Option<&'static [&'static str]> {
    Some(match tool {
        "Bash" => &[
            "command",
            "timeout",
            "description",
            "run_in_background",
            "dangerouslyDisableSandbox",
        ],
        "Read" => &["file_path", "offset", "limit", "pages"],
        "Edit" => &["file_path", "old_string", "new_string", "replace_all"],
        "Write" => &["file_path", "content"],
        "Glob" => &["pattern", "path"],
        "Skill" => &["skill", "args"],
        "NotebookEdit" => &[
            "notebook_path",
            "cell_id",
            "new_source",
            "cell_type",
            "edit_mode",
        ],
        "Grep" => &[
            "pattern",
            "path",
            "glob",
            "output_mode",
            "-B",
            "-A",
            "-C",
            "context",
            "-n",
            "-i",
            "-o",
            "type",
            "head_limit",
            "offset",
            "multiline",
        ],
        "TaskCreate" => &["subject", "description", "activeForm", "metadata"],
        "TaskGet" => &["taskId"],
        "TaskUpdate" => &[
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
        "Agent" => &[
            "description",
            "prompt",
            "subagent_type",
            "model",
            "run_in_background",
            "isolation",
        ],
        _ => return None,
    })
}

/// The order PostToolBatch lists a tool's input in, where it differs from
/// the schema's.
fn batch_order(tool: &str) -> Option<&'static [&'static str]> {
    match tool {
        "Bash" => Some(&[
            "command",
            "description",
            "timeout",
            "run_in_background",
            "dangerouslyDisableSandbox",
        ]),
        _ => schema_order(tool),
    }
}

/// `args` (the call's arguments) as hooks get them: in the schema's order,
/// or PostToolBatch's when `for_batch`.
fn ordered(name: &str, args: &str, for_batch: bool, cwd: Option<&str>) -> Value {
    let Ok(Value::Object(given)) = serde_json::from_str::<Value>(args) else {
        return serde_json::from_str(args).unwrap_or_else(|_| Value::String(args.to_string()));
    };
    let tool = claude_tool_name(name);
    let order = if for_batch {
        batch_order(tool)
    } else {
        schema_order(tool)
    };
    let Some(order) = order else {
        return Value::Object(given);
    };
    let mut given = given;
    // Values the model wrote in strings, read as Claude Code reads them
    // (`timeout: "5"` is `5`, S239-*).
    dsh_plugin_api::sdk::claude_input::coerce_builtin(tool, &mut given);
    // A file tool's relative path, as the path it names (S239-numbers).
    let path_key = match tool {
        "Read" | "Write" | "Edit" => Some("file_path"),
        // (S293)
        "NotebookEdit" => Some("notebook_path"),
        _ => None,
    };
    if let (Some(key), Some(cwd)) = (path_key, cwd)
        && cwd.starts_with('/')
        && let Some(Value::String(path)) = given.get(key)
        && !path.is_empty()
        && !path.starts_with('/')
    {
        let absolute = std::path::Path::new(cwd).join(path);
        given.insert(key.into(), absolute.to_string_lossy().into_owned().into());
    }
    if tool == "Edit" && !given.contains_key("replace_all") {
        given.insert("replace_all".into(), false.into());
    }
    // A `TaskCreate` without a description has its subject as one
    // (`S220-invalid`).
    if tool == "TaskCreate"
        && !given.contains_key("description")
        && let Some(subject) = given.get("subject").cloned()
    {
        given.insert("description".into(), subject);
    }
    let mut out = Map::new();
    for key in order {
        if let Some(v) = given.shift_remove(*key) {
            out.insert((*key).to_string(), v);
        }
    }
    out.extend(given);
    Value::Object(out)
}

/// The `tool_input` of PreToolUse, PostToolUse, PostToolUseFailure and
/// PermissionRequest.
pub fn for_hooks(name: &str, args: &str) -> Value {
    ordered(name, args, false, None)
}

/// [`for_hooks`] of a call, a file tool's relative path made absolute in
/// the call's folder, as Claude Code hands it on.
pub fn for_call(call: &dsh_plugin_api::ToolCall) -> Value {
    ordered(
        &call.name,
        &call.arguments,
        false,
        Some(call.session.cwd.as_str()),
    )
}

/// The `tool_input` of a call in PostToolBatch's list.
pub fn for_batch(name: &str, args: &str) -> Value {
    ordered(name, args, true, None)
}

/// [`for_batch`] of a call, a file tool's relative path made absolute.
pub fn for_batch_call(call: &dsh_plugin_api::ToolCall) -> Value {
    ordered(
        &call.name,
        &call.arguments,
        true,
        Some(call.session.cwd.as_str()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn schema_order_default_and_the_batch_order_as_recorded() {
        // S186-timeout-first: the model wrote timeout, description, command.
        let args = r#"{"timeout":1000,"description":"d","command":"sleep 20"}"#;
        assert_eq!(
            keys(&for_hooks("Bash", args)),
            ["command", "timeout", "description"]
        );
        assert_eq!(
            keys(&for_batch("Bash", args)),
            ["command", "description", "timeout"]
        );
        // S183-child-tool-stats: Edit gets its default.
        let edit = for_hooks(
            "Edit",
            r#"{"file_path":"f","old_string":"a","new_string":"b"}"#,
        );
        assert_eq!(
            keys(&edit),
            ["file_path", "old_string", "new_string", "replace_all"]
        );
        assert_eq!(edit["replace_all"], false);
        // The old name of the subagent tool is the same tool.
        assert_eq!(
            keys(&for_hooks("Task", r#"{"prompt":"p","description":"d"}"#)),
            ["description", "prompt"]
        );
        // Unknown keys after, an MCP tool's input as written.
        assert_eq!(
            keys(&for_hooks("Read", r#"{"zz":1,"file_path":"f"}"#)),
            ["file_path", "zz"]
        );
        assert_eq!(
            keys(&for_hooks("mcp__s__t", r#"{"b":1,"a":2}"#)),
            ["b", "a"]
        );
        assert_eq!(
            for_hooks("Bash", "not json"),
            Value::String("not json".into())
        );
    }
}
