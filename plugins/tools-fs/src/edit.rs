//! The `Edit` tool: exact string replacement in one file.
//!
//! Rules, as in Claude Code: `old_string` must differ from `new_string`;
//! it must occur in the file, exactly once unless `replace_all`. An empty
//! `old_string` creates the file with `new_string` when it does not exist
//! (or is empty), and is refused on a file with content. Files that are
//! not UTF-8 are refused rather than corrupted. No quote normalization and
//! no read-before-edit rule.
//!
//! Structured response, as Claude Code's:
//! `{"filePath","oldString","newString","originalFile","structuredPatch","userModified":false,"replaceAll"}`.

use std::path::{Path, PathBuf};

use dsh_plugin_api::{ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::args::Args;
use crate::editor::{Editor, EditorRead};
use crate::error::FsToolError;
use crate::patch::structured_patch;

/// The tool's name.
pub const TOOL_NAME: &str = "Edit";

/// A validated edit request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRequest {
    /// The resolved path.
    pub path: PathBuf,
    /// Text to find.
    pub old_string: String,
    /// Its replacement.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: bool,
}

/// What a successful edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOutput {
    /// The request.
    pub request: EditRequest,
    /// The file before (empty when created).
    pub original: String,
    /// The file after.
    pub updated: String,
    /// Occurrences replaced.
    pub replacements: usize,
    /// Whether the file was created.
    pub created: bool,
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The path of the file to modify (absolute, or relative to the session's working directory)"},
            "old_string": {"type": "string", "description": "The text to replace"},
            "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
            "replace_all": {"type": "boolean", "default": false, "description": "Replace all occurrences of old_string (default false)"}
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": false
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Performs an exact string replacement in a file. Fails if old_string is not \
            found, or is found more than once without replace_all (add surrounding context to \
            make it unique). An empty old_string creates a new file."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// Parses the tool's arguments.
pub fn parse(args: &Value, cwd: &Path) -> Result<EditRequest, FsToolError> {
    let args = Args::new(TOOL_NAME, args)?;
    Ok(EditRequest {
        path: args.file_path(cwd)?,
        old_string: args.string("old_string")?.to_string(),
        new_string: args.string("new_string")?.to_string(),
        replace_all: args.opt_bool("replace_all")?.unwrap_or(false),
    })
}

/// The tool body.
pub async fn edit_tool(args: &Value, cwd: &Path) -> ToolResult {
    edit_via(args, cwd, None).await
}

/// [`edit_tool`], editing the text the session's editor holds when it
/// offers its files.
pub(crate) async fn edit_via(args: &Value, cwd: &Path, editor: Option<&Editor<'_>>) -> ToolResult {
    let request = match parse(args, cwd) {
        Ok(r) => r,
        Err(e) => return ToolResult::error(e.to_string()),
    };
    if let Some(editor) = editor
        && let Some(got) = editor.read(&request.path).await
    {
        let original = match got {
            EditorRead::Text(text) => Some(text),
            EditorRead::Failed(_) => None,
        };
        let (updated, replacements) = match apply(&request, original.as_deref()) {
            Ok(done) => done,
            Err(e) => return ToolResult::error(e.to_string()),
        };
        match editor.write(&request.path, &updated).await {
            Some(Ok(())) => {
                return to_tool_result(&EditOutput {
                    created: original.is_none(),
                    original: original.unwrap_or_default(),
                    request,
                    updated,
                    replacements,
                });
            }
            Some(Err(e)) => return ToolResult::error(e.to_string()),
            None => {}
        }
    }
    match tokio::task::spawn_blocking(move || edit_file(request)).await {
        Ok(Ok(output)) => to_tool_result(&output),
        Ok(Err(e)) => ToolResult::error(e.to_string()),
        Err(join) => ToolResult::error(
            FsToolError::Internal {
                tool: TOOL_NAME,
                detail: join.to_string(),
            }
            .to_string(),
        ),
    }
}

/// The edited text and the number of replacements, for a file holding
/// `original` (`None`: it does not exist).
pub fn apply(
    request: &EditRequest,
    original: Option<&str>,
) -> Result<(String, usize), FsToolError> {
    if request.old_string == request.new_string {
        return Err(FsToolError::NoChange);
    }
    Ok(match (original, request.old_string.is_empty()) {
        (None, true) => (request.new_string.clone(), 1),
        (None, false) => {
            return Err(FsToolError::NotFound {
                path: request.path.clone(),
            });
        }
        (Some(""), true) => (request.new_string.clone(), 1),
        (Some(_), true) => return Err(FsToolError::AlreadyExists),
        (Some(text), false) => {
            let count = text.matches(&request.old_string).count();
            match count {
                0 => return Err(FsToolError::StringNotFound(request.old_string.clone())),
                1 => {}
                _ if request.replace_all => {}
                _ => {
                    return Err(FsToolError::NotUnique {
                        count,
                        old: request.old_string.clone(),
                    });
                }
            }
            (
                text.replace(&request.old_string, &request.new_string),
                count,
            )
        }
    })
}

/// Applies the edit to the file.
pub fn edit_file(request: EditRequest) -> Result<EditOutput, FsToolError> {
    if request.old_string == request.new_string {
        return Err(FsToolError::NoChange);
    }
    let path = request.path.clone();
    if let Some(kind) = std::fs::metadata(&path)
        .ok()
        .and_then(|m| crate::write::special_target(&m))
    {
        return Err(FsToolError::NotRegularTarget {
            action: "edit",
            path,
            kind,
        });
    }
    let original = match std::fs::read(&path) {
        Ok(bytes) => Some(
            String::from_utf8(bytes).map_err(|_| FsToolError::NotUtf8 { path: path.clone() })?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(FsToolError::io("read", &path, e)),
    };
    let (updated, replacements) = apply(&request, original.as_deref())?;
    let created = original.is_none();
    if created && let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| FsToolError::io("create the parent directories of", &path, e))?;
    }
    std::fs::write(&path, &updated).map_err(|e| FsToolError::io("write", &path, e))?;
    tracing::debug!(path = %path.display(), replacements, "Edit: edited file");
    Ok(EditOutput {
        request,
        original: original.unwrap_or_default(),
        updated,
        replacements,
        created,
    })
}

/// The Claude-shaped result.
pub fn to_tool_result(output: &EditOutput) -> ToolResult {
    let request = &output.request;
    let path = request.path.to_string_lossy();
    let text = if output.created {
        format!("File created successfully at: {path}")
    } else if request.replace_all {
        format!(
            "The file {path} has been updated. All {} occurrences were successfully replaced.",
            output.replacements
        )
    } else {
        format!("The file {path} has been updated successfully.")
    };
    let structured = json!({
        "filePath": path,
        "oldString": request.old_string,
        "newString": request.new_string,
        "originalFile": output.original,
        "structuredPatch": structured_patch(&output.original, &output.updated),
        "userModified": false,
        "replaceAll": request.replace_all,
    });
    ToolResult::text(text).with_structured(structured.to_string())
}
