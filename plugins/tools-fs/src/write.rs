//! The `Write` tool: replace (or create) a whole file.
//!
//! Decision: missing parent directories are **created** (`mkdir -p`).
//! Claude Code's own Write refuses them, but a model that asks to write
//! `src/new_mod/lib.rs` means it, and failing only costs a round trip.
//! Existing files keep their permissions (written in place). Claude
//! Code's "read the file before writing it" rule is not enforced.
//!
//! Structured response, as Claude Code's:
//! `{"type":"create"|"update","filePath","content","structuredPatch","originalFile","userModified":false}`
//! (`originalFile` is `null` on create; `structuredPatch` is `[]` then;
//! `userModified` recorded from Claude Code 2.1.197, vector S30-accept-edits).

use std::path::{Path, PathBuf};

use dsh_plugin_api::{ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::args::Args;
use crate::editor::{Editor, EditorRead};
use crate::error::FsToolError;
use crate::patch::structured_patch;

/// The tool's name.
pub const TOOL_NAME: &str = "Write";

/// What a successful write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutput {
    /// The resolved path.
    pub path: PathBuf,
    /// The content written.
    pub content: String,
    /// The previous content, `None` when the file was created.
    pub original: Option<String>,
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The path of the file to write (absolute, or relative to the session's working directory)"},
            "content": {"type": "string", "description": "The content to write to the file"}
        },
        "required": ["file_path", "content"],
        "additionalProperties": false
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Writes a file, replacing it if it exists. Missing parent directories are \
            created. Prefer Edit for changes to existing files."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// The tool body.
pub async fn write_tool(args: &Value, cwd: &Path) -> ToolResult {
    write_via(args, cwd, None).await
}

/// [`write_tool`], writing into the session's editor when it offers its
/// files (the editor creates what is missing).
pub(crate) async fn write_via(args: &Value, cwd: &Path, editor: Option<&Editor<'_>>) -> ToolResult {
    let parsed = (|| {
        let args = Args::new(TOOL_NAME, args)?;
        Ok::<_, FsToolError>((args.file_path(cwd)?, args.string("content")?.to_string()))
    })();
    let (path, content) = match parsed {
        Ok(p) => p,
        Err(e) => return ToolResult::error(e.to_string()),
    };
    if let Some(editor) = editor
        && let Some(got) = editor.read(&path).await
    {
        let original = match got {
            EditorRead::Text(text) => Some(text),
            EditorRead::Failed(_) => None,
        };
        match editor.write(&path, &content).await {
            Some(Ok(())) => {
                return to_tool_result(&WriteOutput {
                    path,
                    content,
                    original,
                });
            }
            Some(Err(e)) => return ToolResult::error(e.to_string()),
            None => {}
        }
    }
    match tokio::task::spawn_blocking(move || write_file(&path, content)).await {
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

/// What `meta` is when it is neither a regular file nor a folder: a
/// `Write` or `Edit` there would read its old text from a FIFO (waiting
/// for a writer forever) or a device (`/dev/zero` never ends), and a
/// `Read` would do the same.
pub(crate) fn special_target(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt as _;
    let t = meta.file_type();
    if t.is_fifo() {
        Some("FIFO")
    } else if t.is_socket() {
        Some("socket")
    } else if t.is_char_device() || t.is_block_device() {
        Some("device")
    } else {
        None
    }
}

/// Writes `content` to `path`, creating parent directories.
pub fn write_file(path: &Path, content: String) -> Result<WriteOutput, FsToolError> {
    let original = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(FsToolError::IsDirectory { path: path.into() }),
        Ok(meta) if let Some(kind) = special_target(&meta) => {
            return Err(FsToolError::NotRegularTarget {
                action: "write",
                path: path.into(),
                kind,
            });
        }
        // The old text only feeds the structured diff: a binary or
        // non-UTF-8 file is replaced all the same.
        Ok(_) => Some(
            std::fs::read(path)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .map_err(|e| FsToolError::io("read", path, e))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(FsToolError::io("write", path, e)),
    };
    if original.is_none()
        && let Some(parent) = path.parent()
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| FsToolError::io("create the parent directories of", path, e))?;
    }
    std::fs::write(path, &content).map_err(|e| FsToolError::io("write", path, e))?;
    tracing::debug!(path = %path.display(), bytes = content.len(), "Write: wrote file");
    Ok(WriteOutput {
        path: path.into(),
        content,
        original,
    })
}

/// The Claude-shaped result.
pub fn to_tool_result(output: &WriteOutput) -> ToolResult {
    let path = output.path.to_string_lossy();
    let (kind, text, patch) = match &output.original {
        None => (
            "create",
            // Claude Code 2.1.197's text (vectors S30-accept-edits, S33-write-allow).
            format!(
                "File created successfully at: {path} (file state is current in your context \u{2014} no need to Read it back)"
            ),
            Vec::new(),
        ),
        Some(old) => (
            "update",
            format!("The file {path} has been updated successfully."),
            structured_patch(old, &output.content),
        ),
    };
    let structured = json!({
        "type": kind,
        "filePath": path,
        "content": output.content,
        "structuredPatch": patch,
        "originalFile": output.original,
        "userModified": false,
    });
    ToolResult::text(text).with_structured(structured.to_string())
}
