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
///
/// `held` is the file as the session's editor holds it, when it offers its
/// files (`Some(None)`: it has no such file); `None` reads the disk.
pub fn refusal(
    tool: &str,
    request: &CheckRequest,
    log: &ReadLog,
    held: Option<Option<String>>,
) -> Option<String> {
    let checked = dsh_plugin_api::sdk::claude_input::refusal(
        tool,
        &schema(tool),
        &request.arguments,
        dsh_plugin_api::sdk::claude_input::builtin_lenient(tool),
    );
    if checked.is_some() {
        return checked;
    }
    let args = coerced(tool, request.arguments.clone());
    let cwd = Path::new(&request.cwd);
    let text = match tool {
        "Edit" => edit_refusal(&args, cwd, &request.session_id, log, held),
        "Write" => write_refusal(&args, cwd, &request.session_id, log, held),
        "Glob" => crate::glob::refusal(&args, cwd),
        "NotebookEdit" => {
            return crate::notebook_edit::refusal(&args, cwd, &request.session_id, log);
        }
        "Grep" => crate::grep::refusal(&args, cwd),
        _ => None,
    }?;
    Some(format!("<tool_use_error>{text}</tool_use_error>"))
}

/// What the file holds: `Some(text)`, `None` when there is no such file;
/// `Err(())` when it is something the tool must judge itself (a folder, a
/// device, unreadable).
fn content(path: &Path, held: Option<Option<String>>) -> Result<Option<String>, ()> {
    if let Some(held) = held {
        return Ok(held);
    }
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Ok(meta) if meta.is_file() => std::fs::read_to_string(path).map(Some).map_err(|_| ()),
        _ => Err(()),
    }
}

fn edit_refusal(
    args: &Value,
    cwd: &Path,
    session: &str,
    log: &ReadLog,
    held: Option<Option<String>>,
) -> Option<String> {
    // Arguments the tool cannot read are its own to refuse.
    let edit = crate::edit::parse(args, cwd).ok()?;
    if edit.old_string == edit.new_string {
        return Some(FsToolError::NoChange.to_string());
    }
    if edit.old_string.is_empty() {
        return None; // creating a file: the tool's to judge
    }
    let Some(text) = content(&edit.path, held).ok()? else {
        return Some(
            FsToolError::ReadMissing {
                cwd: cwd.to_path_buf(),
            }
            .to_string(),
        );
    };
    if !log.knows(session, &edit.path) {
        return Some(NOT_READ.to_string());
    }
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

fn write_refusal(
    args: &Value,
    cwd: &Path,
    session: &str,
    log: &ReadLog,
    held: Option<Option<String>>,
) -> Option<String> {
    let path = crate::args::Args::new("Write", args)
        .and_then(|a| a.file_path(cwd))
        .ok()?;
    let exists = match held {
        Some(held) => held.is_some(),
        None => std::fs::metadata(&path).is_ok_and(|m| m.is_file()),
    };
    (exists && !log.knows(session, &path)).then(|| NOT_READ.to_string())
}

/// The file an `Edit` or `Write` call names as the session's editor holds
/// it, when the editor offers its files (see [`refusal`]'s `held`).
pub(crate) async fn held(
    host: &dsh_plugin_api::Host,
    request: &CheckRequest,
) -> Option<Option<String>> {
    let path = crate::args::Args::new("Edit", &request.arguments)
        .and_then(|a| a.file_path(Path::new(&request.cwd)))
        .ok()?;
    let editor = crate::editor::Editor {
        host,
        session_id: &request.session_id,
    };
    match editor.read(&path).await? {
        crate::editor::EditorRead::Text(text) => Some(Some(text)),
        crate::editor::EditorRead::Failed(_) => Some(None),
    }
}

/// The tool's schema as Claude Code checks it.
pub fn schema(tool: &str) -> Value {
    let (properties, required) = match tool {
        "Glob" => return crate::glob::schema(),
        "Grep" => return crate::grep::schema(),
        "NotebookEdit" => return crate::notebook_edit::schema(),
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

/// `args` with the lenient properties' strings read as what they stand for.
pub fn coerced(tool: &str, mut args: Value) -> Value {
    if let Some(map) = args.as_object_mut() {
        dsh_plugin_api::sdk::claude_input::coerce_builtin(tool, map);
    }
    args
}
