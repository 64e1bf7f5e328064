//! The `NotebookEdit` tool: replace, insert or delete one cell of a Jupyter
//! notebook, as Claude Code 2.1.197 does it (read from its bundled source,
//! confirmed by the recorded `S293-edits`).
//!
//! - `replace` (the default) sets the cell's source (as one string); a
//!   code cell loses its outputs and execution count; a `cell_type` given
//!   changes the cell's type. Replacing past the last cell inserts.
//! - `insert` puts a new cell after `cell_id` (or first), with a fresh
//!   8-hex-digit id in notebooks of format 4.5 and later.
//! - `delete` removes the cell.
//! - `cell_id` may also be `cell-N`, the N-th cell (what `Read` calls a
//!   cell without an id).
//!
//! The notebook is written back as JSON with one-space indents and its
//! keys in their order, no final newline. The model reads `Updated cell
//! <id> with <source>`, `Inserted cell <id> with <source>` or `Deleted cell
//! <id>`. Refused before any hook ([`refusal`], in Claude Code's words):
//! not a `.ipynb`, an insert without `cell_type`, a notebook the session has
//! not read, a missing or invalid notebook, no `cell_id` outside an insert,
//! a cell that is not there.

use std::path::{Path, PathBuf};

use dsh_plugin_api::{ToolResult, ToolSpec};
use serde_json::{Map, Value, json};

use crate::seen::ReadLog;

/// The tool's name.
pub const TOOL_NAME: &str = "NotebookEdit";

/// Claude Code's description of the tool.
const DESCRIPTION: &str = "Replaces, inserts, or deletes a single cell in a Jupyter notebook (.ipynb file).

Usage:
- You must use the Read tool on the notebook in this conversation before editing \u{2014} this tool will fail otherwise.
- `notebook_path` must be an absolute path.
- `cell_id` is the `id` attribute shown in the Read tool's `<cell id=\"...\">` output. It is required for `replace` and `delete`.
- `edit_mode` defaults to `replace`. Use `insert` to add a new cell after the cell with the given `cell_id` (or at the beginning of the notebook if `cell_id` is omitted) \u{2014} `cell_type` is required when inserting. Use `delete` to remove the cell.";

/// The input schema as Claude Code checks it.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "notebook_path": {"type": "string", "description": "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)"},
            "cell_id": {"type": "string", "description": "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified."},
            "new_source": {"type": "string", "description": "The new source for the cell"},
            "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required."},
            "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description": "The type of edit to make (replace, insert, delete). Defaults to replace."}
        },
        "required": ["notebook_path", "new_source"],
        "additionalProperties": false
    })
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    dsh_plugin_api::sdk::claude_input::tool_spec(TOOL_NAME, DESCRIPTION, schema())
}

/// The call's notebook, resolved against `cwd`.
pub fn path(args: &Value, cwd: &Path) -> Option<PathBuf> {
    let given = args.get("notebook_path")?.as_str()?;
    Some(crate::search_path::resolve(cwd, given))
}

/// The index `cell-N` names.
fn numbered(id: &str) -> Option<usize> {
    id.strip_prefix("cell-")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
}

/// Why Claude Code refuses the call before any hook hears of it (the
/// schema is checked before).
pub fn refusal(args: &Value, cwd: &Path, session: &str, log: &ReadLog) -> Option<String> {
    let path = path(args, cwd)?;
    let mode = args["edit_mode"].as_str().unwrap_or("replace");
    let text = if path.extension().is_none_or(|e| e != "ipynb") {
        "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the FileEdit tool.".to_string()
    } else if mode == "insert" && args.get("cell_type").is_none() {
        "Cell type is required when using edit_mode=insert.".to_string()
    } else if !log.knows(session, &path) {
        crate::claude_input::NOT_READ.to_string()
    } else {
        match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                "Notebook file does not exist.".to_string()
            }
            Err(_) => return None,
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Err(_) => "Notebook is not valid JSON.".to_string(),
                Ok(nb) => cell_refusal(args, &nb, mode)?,
            },
        }
    };
    Some(format!("<tool_use_error>{text}</tool_use_error>"))
}

fn cell_refusal(args: &Value, nb: &Value, mode: &str) -> Option<String> {
    let cells = nb["cells"].as_array().map_or(&[][..], Vec::as_slice);
    let Some(id) = args["cell_id"].as_str() else {
        return (mode != "insert")
            .then(|| "Cell ID must be specified when not inserting a new cell.".to_string());
    };
    if cells.iter().any(|c| c["id"] == id) {
        return None;
    }
    match numbered(id) {
        Some(n) if n < cells.len() => None,
        Some(n) => Some(format!("Cell with index {n} does not exist in notebook.")),
        None => Some(format!("Cell with ID \"{id}\" not found in notebook.")),
    }
}

/// A cell's source as one string.
fn source_of(cell: &Value) -> Option<String> {
    match &cell["source"] {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(parts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// `nb` as Claude Code writes it: `JSON.stringify(nb, null, 1)`.
fn written(nb: &Value) -> String {
    use serde::Serialize as _;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    match nb.serialize(&mut ser) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => nb.to_string(),
    }
}

/// What an edit did.
struct Edited {
    mode: &'static str,
    cell_id: Option<String>,
    old_source: Option<String>,
    cell_type: String,
    language: String,
    original: String,
    updated: String,
}

/// The edit, on the notebook's text `original`.
fn edit(args: &Value, original: String) -> Result<Edited, String> {
    let mut nb: Value =
        serde_json::from_str(&original).map_err(|_| "Notebook is not valid JSON.".to_string())?;
    let new_source = args["new_source"].as_str().unwrap_or_default().to_string();
    let id = args["cell_id"].as_str();
    let mut cell_type = args["cell_type"].as_str().map(String::from);
    let asked = args["edit_mode"].as_str().unwrap_or("replace");
    let count = nb["cells"].as_array().map_or(0, Vec::len);
    let mut at: i64 = match id {
        None => 0,
        Some(id) => nb["cells"]
            .as_array()
            .and_then(|cells| cells.iter().position(|c| c["id"] == id))
            .or_else(|| numbered(id))
            .map_or(-1, |i| i as i64),
    };
    // After the named cell; first when none is named.
    if asked == "insert" && id.is_some() {
        at += 1;
    }
    let mode: &'static str = match asked {
        "replace" if at == count as i64 => {
            cell_type.get_or_insert_with(|| "code".into());
            "insert"
        }
        "insert" => "insert",
        "delete" => "delete",
        _ => "replace",
    };
    let language = nb["metadata"]["language_info"]["name"]
        .as_str()
        .unwrap_or("python")
        .to_string();
    let format = (
        nb["nbformat"].as_f64().unwrap_or(0.0),
        nb["nbformat_minor"].as_f64().unwrap_or(0.0),
    );
    let has_ids = format.0 > 4.0 || (format.0 == 4.0 && format.1 >= 5.0);
    let new_id = match (has_ids, mode) {
        (true, "insert") => Some(uuid::Uuid::new_v4().simple().to_string()[..8].to_string()),
        (true, _) => id.map(String::from),
        (false, _) => None,
    };
    let cells = nb["cells"]
        .as_array_mut()
        .ok_or("Notebook file is not a valid Jupyter notebook.")?;
    let index = usize::try_from(at).map_err(|_| "Cell not found in notebook.".to_string())?;
    let mut old_source = None;
    match mode {
        "delete" => {
            let cell = cells.get(index).ok_or("Cell not found in notebook.")?;
            old_source = source_of(cell);
            cells.remove(index);
        }
        "insert" => {
            let mut cell = Map::new();
            let markdown = cell_type.as_deref() == Some("markdown");
            cell.insert(
                "cell_type".into(),
                json!(if markdown { "markdown" } else { "code" }),
            );
            if let Some(id) = &new_id {
                cell.insert("id".into(), json!(id));
            }
            cell.insert("source".into(), json!(new_source));
            cell.insert("metadata".into(), json!({}));
            if !markdown {
                cell.insert("execution_count".into(), Value::Null);
                cell.insert("outputs".into(), json!([]));
            }
            if index > cells.len() {
                return Err("Cell not found in notebook.".into());
            }
            cells.insert(index, Value::Object(cell));
        }
        _ => {
            let cell = cells
                .get_mut(index)
                .and_then(Value::as_object_mut)
                .ok_or("Cell not found in notebook.")?;
            old_source = source_of(&Value::Object(cell.clone()));
            cell.insert("source".into(), json!(new_source));
            if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
                cell.insert("execution_count".into(), Value::Null);
                cell.insert("outputs".into(), json!([]));
            }
            if let Some(t) = &cell_type
                && cell.get("cell_type").and_then(Value::as_str) != Some(t.as_str())
            {
                cell.insert("cell_type".into(), json!(t));
            }
        }
    }
    let updated = written(&nb);
    Ok(Edited {
        mode,
        cell_id: new_id,
        old_source,
        cell_type: cell_type.unwrap_or_else(|| "code".into()),
        language,
        original,
        updated,
    })
}

/// The tool body: edits the notebook on disk.
pub async fn notebook_edit_tool(args: &Value, cwd: &Path) -> ToolResult {
    let Some(path) = path(args, cwd) else {
        return ToolResult::error(
            "<tool_use_error>NotebookEdit: `notebook_path` must be a string</tool_use_error>",
        );
    };
    let args = args.clone();
    let target = path.clone();
    let done = tokio::task::spawn_blocking(move || {
        let original = std::fs::read_to_string(&target).map_err(|e| e.to_string())?;
        let edited = edit(&args, original)?;
        std::fs::write(&target, &edited.updated).map_err(|e| e.to_string())?;
        Ok::<_, String>((edited, args))
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    match done {
        Ok((edited, args)) => to_tool_result(&args, &path, &edited),
        Err(e) => ToolResult::error(e),
    }
}

fn to_tool_result(args: &Value, path: &Path, edited: &Edited) -> ToolResult {
    let new_source = args["new_source"].as_str().unwrap_or_default();
    let id = edited.cell_id.as_deref().unwrap_or("undefined");
    let text = match edited.mode {
        "insert" => format!("Inserted cell {id} with {new_source}"),
        "delete" => format!("Deleted cell {id}"),
        _ => format!("Updated cell {id} with {new_source}"),
    };
    let mut data = Map::new();
    data.insert("new_source".into(), json!(new_source));
    if let Some(old) = &edited.old_source {
        data.insert("old_source".into(), json!(old));
    }
    data.insert("cell_type".into(), json!(edited.cell_type));
    data.insert("language".into(), json!(edited.language));
    data.insert("edit_mode".into(), json!(edited.mode));
    if let Some(id) = &edited.cell_id {
        data.insert("cell_id".into(), json!(id));
    }
    data.insert("error".into(), json!(""));
    data.insert("notebook_path".into(), json!(path.to_string_lossy()));
    data.insert("original_file".into(), json!(edited.original));
    data.insert("updated_file".into(), json!(edited.updated));
    ToolResult::text(text).with_structured(Value::Object(data).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nb() -> String {
        json!({"cells": [
            {"cell_type": "markdown", "id": "c1", "metadata": {}, "source": ["# T\n", "x"]},
            {"cell_type": "code", "execution_count": 1, "id": "c2", "metadata": {},
             "outputs": [{"output_type": "stream", "text": ["1\n"]}], "source": ["print(1)"]},
        ], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5})
        .to_string()
    }

    #[test]
    fn replace_clears_a_code_cells_outputs_and_keeps_key_order() {
        let done = edit(&json!({"cell_id": "c2", "new_source": "print(2)"}), nb()).expect("edit");
        assert_eq!(done.mode, "replace");
        assert_eq!(done.old_source.as_deref(), Some("print(1)"));
        let after: Value = serde_json::from_str(&done.updated).expect("json");
        assert_eq!(
            after["cells"][1],
            json!({"cell_type": "code", "execution_count": null, "id": "c2", "metadata": {},
                "outputs": [], "source": "print(2)"})
        );
        assert!(
            done.updated
                .starts_with("{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",")
        );
        assert!(!done.updated.ends_with('\n'));
    }

    #[test]
    fn insert_after_a_cell_or_first_with_a_fresh_id() {
        let done = edit(
            &json!({"cell_id": "c1", "edit_mode": "insert", "cell_type": "code", "new_source": "y"}),
            nb(),
        )
        .expect("edit");
        let after: Value = serde_json::from_str(&done.updated).expect("json");
        let id = done.cell_id.expect("id");
        assert_eq!(id.len(), 8);
        assert_eq!(after["cells"][1]["id"], json!(id));
        let keys: Vec<&String> = after["cells"][1]
            .as_object()
            .expect("cell")
            .keys()
            .collect();
        assert_eq!(
            keys,
            [
                "cell_type",
                "id",
                "source",
                "metadata",
                "execution_count",
                "outputs"
            ]
        );
        let first = edit(
            &json!({"edit_mode": "insert", "cell_type": "markdown", "new_source": "m"}),
            nb(),
        )
        .expect("edit");
        let after: Value = serde_json::from_str(&first.updated).expect("json");
        assert_eq!(after["cells"][0]["source"], "m");
    }

    #[test]
    fn refusals_in_claude_codes_words() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path();
        std::fs::write(cwd.join("nb.ipynb"), nb()).expect("write");
        let log = ReadLog::default();
        let refuse = |args: Value| refusal(&args, cwd, "s", &log);
        assert_eq!(
            refuse(json!({"notebook_path": "nb.ipynb", "cell_id": "c2", "new_source": "z"}))
                .as_deref(),
            Some(
                "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
            )
        );
        log.know("s", &cwd.join("nb.ipynb"));
        assert_eq!(
            refuse(json!({"notebook_path": "nb.ipynb", "cell_id": "nope", "new_source": "z"}))
                .as_deref(),
            Some("<tool_use_error>Cell with ID \"nope\" not found in notebook.</tool_use_error>")
        );
        assert_eq!(
            refuse(json!({"notebook_path": "nb.ipynb", "cell_id": "cell-7", "new_source": "z"}))
                .as_deref(),
            Some("<tool_use_error>Cell with index 7 does not exist in notebook.</tool_use_error>")
        );
        assert_eq!(
            refuse(json!({"notebook_path": "nb.ipynb", "cell_id": "cell-1", "new_source": "z"})),
            None
        );
        assert!(
            refuse(json!({"notebook_path": "x.txt", "new_source": "z"}))
                .is_some_and(|t| t.contains("must be a Jupyter notebook"))
        );
        assert!(
            refuse(json!({"notebook_path": "nb.ipynb", "edit_mode": "insert", "new_source": "z"}))
                .is_some_and(|t| t.contains("Cell type is required"))
        );
    }
}
