//! The input Claude Code 2.1.197's `Read`, `Write` and `Edit` take, as it
//! checks a call before any hook hears of it (recorded `S239-files`,
//! `S239-numbers`, `S239-edit-checks`): the schemas its checks read, the
//! properties that also take their value in a string (`offset: "2"`,
//! `replace_all: "true"`), worded by [`dsh_plugin_api::sdk::claude_input`];
//! then what `Edit` and `Write` check of the file itself ([`refusal`]).

use std::path::Path;

use dsh_plugin_api::services::input_check::CheckRequest;
use serde_json::{Value, json};

use crate::error::FsToolError;
use crate::seen::ReadLog;

/// Claude Code's text for an existing file the session has not read.
pub const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

/// Why Claude Code refuses the call before any hook hears of it: input
/// that does not fit the schema; an `Edit` that changes nothing, of a
/// missing file, of a file the session has not read, or whose
/// `old_string` is not there or not unique; a `Write` over a file the
/// session has not read. Each in Claude Code's words, in a
/// `<tool_use_error>`.
pub fn refusal(tool: &str, request: &CheckRequest, log: &ReadLog) -> Option<String> {
    let checked = dsh_plugin_api::sdk::claude_input::refusal(
        tool,
        &schema(tool),
        &request.arguments,
        lenient(tool),
    );
    if checked.is_some() {
        return checked;
    }
    let args = coerced(tool, request.arguments.clone());
    let cwd = Path::new(&request.cwd);
    let text = match tool {
        "Edit" => edit_refusal(&args, cwd, &request.session_id, log),
        "Write" => write_refusal(&args, cwd, &request.session_id, log),
        _ => None,
    }?;
    Some(format!("<tool_use_error>{text}</tool_use_error>"))
}

fn edit_refusal(args: &Value, cwd: &Path, session: &str, log: &ReadLog) -> Option<String> {
    // Arguments the tool cannot read are its own to refuse.
    let edit = crate::edit::parse(args, cwd).ok()?;
    if edit.old_string == edit.new_string {
        return Some(FsToolError::NoChange.to_string());
    }
    match std::fs::metadata(&edit.path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !edit.old_string.is_empty() => Some(
            FsToolError::ReadMissing {
                cwd: cwd.to_path_buf(),
            }
            .to_string(),
        ),
        Ok(meta) if meta.is_file() && !edit.old_string.is_empty() => {
            if !log.knows(session, &edit.path) {
                return Some(NOT_READ.to_string());
            }
            let text = std::fs::read_to_string(&edit.path).ok()?;
            match text.matches(&edit.old_string).count() {
                0 => Some(FsToolError::StringNotFound(edit.old_string).to_string()),
                1 => None,
                _ if edit.replace_all => None,
                count => Some(
                    FsToolError::NotUnique {
                        count,
                        old: edit.old_string,
                    }
                    .to_string(),
                ),
            }
        }
        _ => None,
    }
}

fn write_refusal(args: &Value, cwd: &Path, session: &str, log: &ReadLog) -> Option<String> {
    let path = crate::args::Args::new("Write", args)
        .and_then(|a| a.file_path(cwd))
        .ok()?;
    let exists = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
    (exists && !log.knows(session, &path)).then(|| NOT_READ.to_string())
}

/// The tool's schema as Claude Code checks it.
pub fn schema(tool: &str) -> Value {
    let (properties, required) = match tool {
        "Read" => (
            json!({"file_path": {"type": "string"}, "offset": {"type": "number"},
                "limit": {"type": "number"}, "pages": {"type": "string"}}),
            json!(["file_path"]),
        ),
        "Write" => (
            json!({"file_path": {"type": "string"}, "content": {"type": "string"}}),
            json!(["file_path", "content"]),
        ),
        _ => (
            json!({"file_path": {"type": "string"}, "old_string": {"type": "string"},
                "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}}),
            json!(["file_path", "old_string", "new_string"]),
        ),
    };
    json!({"type": "object", "properties": properties, "required": required,
        "additionalProperties": false})
}

/// The properties that take their value in a string too.
pub fn lenient(tool: &str) -> &'static [&'static str] {
    match tool {
        "Read" => &["offset", "limit"],
        "Edit" => &["replace_all"],
        _ => &[],
    }
}

/// `args` with the lenient properties' strings read as what they stand for.
pub fn coerced(tool: &str, args: Value) -> Value {
    match lenient(tool) {
        [] => args,
        names => dsh_plugin_api::sdk::claude_input::coerced(&schema(tool), &args, names),
    }
}
