//! The `Read` tool: a text file as numbered lines, like Claude Code.
//!
//! Output lines are `{n:>6}→{line}` (Claude Code's `cat -n` variant, with
//! an arrow instead of a tab), starting at `offset` (1-based, default 1)
//! for `limit` lines (default 2000); lines longer than 2000 characters are
//! cut. Unlike Claude Code, a final newline does not produce an extra
//! empty numbered line (as with `cat -n`). The file is streamed, so only
//! the selected lines are held in memory; a whole-file read (no `offset`
//! or `limit`) of a file over `max_read_bytes` is refused with a hint.
//! Files with a NUL byte in their first 8 KiB are refused as binary;
//! otherwise invalid UTF-8 is decoded lossily. Images and PDFs are not
//! supported.
//!
//! Structured response, as Claude Code's:
//! `{"type":"text","file":{"filePath","content","numLines","startLine","totalLines"}}`.

use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};

use dsh_plugin_api::{ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::Config;
use crate::args::Args;
use crate::editor::{Editor, EditorRead};
use crate::error::FsToolError;

/// The tool's name.
pub const TOOL_NAME: &str = "Read";
/// Lines returned when `limit` is absent.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Longest line returned, in characters.
pub const MAX_LINE_CHARS: usize = 2000;
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// What a successful read returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOutput {
    /// The resolved path.
    pub path: PathBuf,
    /// The selected lines, without numbers.
    pub lines: Vec<String>,
    /// The 1-based number of the first selected line.
    pub start_line: u64,
    /// Lines in the whole file.
    pub total_lines: u64,
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The path of the file to read (absolute, or relative to the session's working directory)"},
            "offset": {"type": "integer", "minimum": 0, "description": "The line number to start reading from (1-based). Only provide if the file is too large to read at once"},
            "limit": {"type": "integer", "minimum": 1, "description": "The number of lines to read (default 2000). Only provide if the file is too large to read at once"}
        },
        "required": ["file_path"],
        "additionalProperties": false
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Reads a text file and returns its lines numbered from 1 (`     1→text`). \
            By default up to 2000 lines from the start; use offset and limit for longer files. \
            Lines longer than 2000 characters are truncated."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// The tool body: parse, read in a blocking task, format.
pub async fn read_tool(args: &Value, cwd: &Path, config: &Config) -> ToolResult {
    read_via(args, cwd, config, None).await
}

/// [`read_tool`], reading through the session's editor when it offers its
/// files.
pub(crate) async fn read_via(
    args: &Value,
    cwd: &Path,
    config: &Config,
    editor: Option<&Editor<'_>>,
) -> ToolResult {
    let parsed = (|| {
        let args = Args::new(TOOL_NAME, args)?;
        let path = args.file_path(cwd)?;
        let offset = args.opt_count("offset", 0)?;
        let limit = args.opt_count("limit", 1)?;
        Ok::<_, FsToolError>((path, offset, limit))
    })();
    let (path, offset, limit) = match parsed {
        Ok(p) => p,
        Err(e) => return ToolResult::error(e.to_string()),
    };
    let max = config.max_read_bytes;
    if let Some(editor) = editor
        && let Some(got) = editor.read(&path).await
    {
        return match got {
            EditorRead::Text(text) => match read_text(&path, &text, offset, limit, max) {
                Ok(output) => to_tool_result(&output),
                Err(e) => ToolResult::error(e.to_string()),
            },
            EditorRead::Failed(message) => ToolResult::error(
                FsToolError::Editor {
                    action: "read",
                    path,
                    message,
                }
                .to_string(),
            ),
        };
    }
    let read = tokio::task::spawn_blocking(move || read_lines(&path, offset, limit, max)).await;
    match read {
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

/// Reads lines `offset..offset+limit` (1-based) of `path`, counting all.
pub fn read_lines(
    path: &Path,
    offset: Option<u64>,
    limit: Option<u64>,
    max_read_bytes: u64,
) -> Result<ReadOutput, FsToolError> {
    let meta = std::fs::metadata(path).map_err(|e| FsToolError::io("read", path, e))?;
    if meta.is_dir() {
        return Err(FsToolError::IsDirectory { path: path.into() });
    }
    if offset.is_none() && limit.is_none() && meta.len() > max_read_bytes {
        return Err(FsToolError::TooLarge {
            size: meta.len(),
            max: max_read_bytes,
        });
    }
    let file = std::fs::File::open(path).map_err(|e| FsToolError::io("read", path, e))?;
    let mut reader = BufReader::new(file);
    let io_err = |e| FsToolError::io("read", path, e);

    let mut head = Vec::new();
    (&mut reader)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    if head.contains(&0) {
        return Err(FsToolError::Binary { path: path.into() });
    }
    let mut reader = BufReader::new(std::io::Cursor::new(head).chain(reader));

    let start_line = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    let end_line = start_line.saturating_add(limit); // exclusive
    let mut lines = Vec::new();
    let mut total_lines = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io_err)? == 0 {
            break;
        }
        total_lines += 1;
        if (start_line..end_line).contains(&total_lines) {
            let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            lines.push(String::from_utf8_lossy(line).into_owned());
        }
    }
    Ok(ReadOutput {
        path: path.into(),
        lines,
        start_line,
        total_lines,
    })
}

/// [`read_lines`] over text the editor holds.
pub fn read_text(
    path: &Path,
    text: &str,
    offset: Option<u64>,
    limit: Option<u64>,
    max_read_bytes: u64,
) -> Result<ReadOutput, FsToolError> {
    if offset.is_none() && limit.is_none() && text.len() as u64 > max_read_bytes {
        return Err(FsToolError::TooLarge {
            size: text.len() as u64,
            max: max_read_bytes,
        });
    }
    if text.contains('\0') {
        return Err(FsToolError::Binary { path: path.into() });
    }
    let start_line = offset.unwrap_or(1).max(1);
    let end_line = start_line.saturating_add(limit.unwrap_or(DEFAULT_LIMIT));
    let mut lines = Vec::new();
    let mut total_lines = 0u64;
    for raw in text.split_inclusive('\n') {
        total_lines += 1;
        if (start_line..end_line).contains(&total_lines) {
            let line = raw.strip_suffix('\n').unwrap_or(raw);
            lines.push(line.strip_suffix('\r').unwrap_or(line).to_string());
        }
    }
    Ok(ReadOutput {
        path: path.into(),
        lines,
        start_line,
        total_lines,
    })
}

/// Numbers the lines and builds the Claude-shaped response.
pub fn to_tool_result(output: &ReadOutput) -> ToolResult {
    let content = output.lines.join("\n");
    let structured = json!({"type": "text", "file": {
        "filePath": output.path.to_string_lossy(),
        "content": content,
        "numLines": output.lines.len(),
        "startLine": output.start_line,
        "totalLines": output.total_lines,
    }});
    let text = if output.total_lines == 0 {
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
            .to_string()
    } else if output.lines.is_empty() {
        format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset ({}). \
             The file has {} lines.</system-reminder>",
            output.start_line, output.total_lines
        )
    } else {
        numbered(&output.lines, output.start_line)
    };
    ToolResult::text(text).with_structured(structured.to_string())
}

fn numbered(lines: &[String], first: u64) -> String {
    let mut out = String::new();
    for (n, line) in (first..).zip(lines) {
        if !out.is_empty() {
            out.push('\n');
        }
        let cut = line
            .char_indices()
            .nth(MAX_LINE_CHARS)
            .map_or(line.len(), |(i, _)| i);
        out.push_str(&format!("{n:>6}→{}", &line[..cut]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_claude_code() {
        let lines = vec!["fn main() {".to_string(), "}".to_string()];
        assert_eq!(numbered(&lines, 9), "     9→fn main() {\n    10→}");
    }

    #[test]
    fn cuts_long_lines_on_characters() {
        let long = "é".repeat(MAX_LINE_CHARS + 5);
        let text = numbered(&[long], 1);
        assert_eq!(text.chars().count(), 7 + MAX_LINE_CHARS);
    }
}
