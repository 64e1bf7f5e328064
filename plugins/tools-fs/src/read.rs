//! The `Read` tool: a text file as numbered lines, as Claude Code 2.1.197
//! writes them (recorded S84).
//!
//! The text is cut at each `\n`; the piece after the last one is a line too,
//! so a final newline gives an empty last line (`"a\n"` is `1\ta` and
//! `2\t`) and an empty file is one empty line. Output lines are
//! `{n}\t{line}` (no padding, one trailing `\r` dropped), lines are not cut.
//! `offset` picks the first line (1-based; `0` is the first line too, then
//! numbered from 0, as Claude Code does), `limit` how many; without `limit`
//! the read runs to the end of the file. Nothing selected (an empty file, an
//! offset past the end) gives Claude Code's `<system-reminder>Warning: the
//! file exists but is shorter than the provided offset (N). The file has M
//! lines.</system-reminder>`. The file is streamed, so only the selected
//! lines are held in memory; a read without `limit` of a file over
//! `max_read_bytes` is refused with a hint. Files with a NUL byte in their
//! first 8 KiB are refused as binary; otherwise invalid UTF-8 is decoded
//! lossily, and a leading byte-order mark is dropped. Images and PDFs are not
//! supported.
//!
//! Structured response, as Claude Code's:
//! `{"type":"text","file":{"filePath","content","numLines","startLine","totalLines"}}`,
//! `content` being the selected lines joined by `\n`.

use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use dsh_plugin_api::{ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::Config;
use crate::args::Args;
use crate::editor::{Editor, EditorRead};
use crate::error::FsToolError;
use crate::seen::{ReadLog, UNCHANGED_TEXT};

/// The tool's name.
pub const TOOL_NAME: &str = "Read";
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// What a successful read returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOutput {
    /// The resolved path.
    pub path: PathBuf,
    /// The selected lines, without numbers.
    pub lines: Vec<String>,
    /// The number of the first selected line: `offset` as given (1 when
    /// absent; 0 numbers from 0).
    pub start_line: u64,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// The file's modification time when read from disk.
    pub modified: Option<SystemTime>,
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
        description: "Reads a text file and returns its lines numbered from 1, each as the line \
            number, a tab, then the line (`1\tfirst line`). Reads the whole file by default; \
            use offset and limit for large files."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// The tool body: parse, read in a blocking task, format.
pub async fn read_tool(args: &Value, cwd: &Path, config: &Config) -> ToolResult {
    read_via(args, cwd, config, None, None).await
}

/// A session's read log and its id, for [`read_via`].
pub(crate) struct Seen<'a> {
    pub log: &'a ReadLog,
    pub session: &'a str,
}

/// [`read_tool`], reading through the session's editor when it offers its
/// files.
pub(crate) async fn read_via(
    args: &Value,
    cwd: &Path,
    config: &Config,
    editor: Option<&Editor<'_>>,
    seen: Option<Seen<'_>>,
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
    let modified = tokio::fs::metadata(&path)
        .await
        .and_then(|m| m.modified())
        .ok();
    if let (Some(seen), Some(modified)) = (&seen, modified)
        && seen
            .log
            .unchanged(seen.session, &path, offset, limit, modified)
    {
        let structured =
            json!({"type": "file_unchanged", "file": {"filePath": path.to_string_lossy()}});
        return ToolResult::text(UNCHANGED_TEXT).with_structured(structured.to_string());
    }
    let read = tokio::task::spawn_blocking(move || read_lines(&path, offset, limit, max)).await;
    match read {
        Ok(Ok(output)) => {
            if let (Some(seen), Some(modified)) = (&seen, output.modified) {
                seen.log
                    .record(seen.session, &output.path, offset, limit, modified);
            }
            to_tool_result(&output)
        }
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
    if limit.is_none() && meta.len() > max_read_bytes {
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
    if head.starts_with(BOM) {
        head.drain(..BOM.len());
    }
    let mut reader = BufReader::new(std::io::Cursor::new(head).chain(reader));

    let mut window = Window::new(offset, limit, meta.modified().ok());
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io_err)? == 0 {
            break;
        }
        if let Some(line) = buf.strip_suffix(b"\n") {
            window.push(|| String::from_utf8_lossy(line).into_owned());
        } else {
            // The last piece, without a newline: the loop ends next read.
            window.push(|| String::from_utf8_lossy(&buf).into_owned());
            return Ok(window.finish(path));
        }
    }
    // The (possibly empty) piece after the last newline.
    window.push(String::new);
    Ok(window.finish(path))
}

const BOM: &[u8] = "\u{feff}".as_bytes();

/// The lines a read selects, counting every line it passes.
struct Window {
    /// 0-based index of the first selected line.
    first: u64,
    /// 0-based index past the last selected line.
    end: u64,
    start_line: u64,
    lines: Vec<String>,
    total: u64,
    modified: Option<SystemTime>,
}

impl Window {
    fn new(offset: Option<u64>, limit: Option<u64>, modified: Option<SystemTime>) -> Self {
        let start_line = offset.unwrap_or(1);
        let first = start_line.saturating_sub(1);
        Self {
            first,
            end: limit.map_or(u64::MAX, |l| first.saturating_add(l)),
            start_line,
            lines: Vec::new(),
            total: 0,
            modified,
        }
    }

    /// One line of the file (without its `\n`); `line` is only made when
    /// the line is selected.
    fn push(&mut self, line: impl FnOnce() -> String) {
        if (self.first..self.end).contains(&self.total) {
            let mut line = line();
            if line.ends_with('\r') {
                line.pop();
            }
            self.lines.push(line);
        }
        self.total += 1;
    }

    fn finish(self, path: &Path) -> ReadOutput {
        ReadOutput {
            path: path.into(),
            lines: self.lines,
            start_line: self.start_line,
            total_lines: self.total,
            modified: self.modified,
        }
    }
}

/// [`read_lines`] over text the editor holds.
pub fn read_text(
    path: &Path,
    text: &str,
    offset: Option<u64>,
    limit: Option<u64>,
    max_read_bytes: u64,
) -> Result<ReadOutput, FsToolError> {
    if limit.is_none() && text.len() as u64 > max_read_bytes {
        return Err(FsToolError::TooLarge {
            size: text.len() as u64,
            max: max_read_bytes,
        });
    }
    if text.contains('\0') {
        return Err(FsToolError::Binary { path: path.into() });
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut window = Window::new(offset, limit, None);
    for line in text.split('\n') {
        window.push(|| line.to_string());
    }
    Ok(window.finish(path))
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
    let text = if !content.is_empty() {
        numbered(&output.lines, output.start_line)
    } else if output.total_lines == 0 {
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
            .to_string()
    } else {
        format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset ({}). \
             The file has {} lines.</system-reminder>",
            output.start_line, output.total_lines
        )
    };
    ToolResult::text(text).with_structured(structured.to_string())
}

/// `{n}\t{line}` per line, numbered from `first`, joined by `\n`.
fn numbered(lines: &[String], first: u64) -> String {
    let mut out = String::new();
    for (n, line) in (first..).zip(lines) {
        if n != first {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.push_str(&format!("{n}\t{line}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_claude_code() {
        let lines = vec!["fn main() {".to_string(), "}".to_string(), String::new()];
        assert_eq!(numbered(&lines, 9), "9\tfn main() {\n10\t}\n11\t");
    }

    #[test]
    fn a_final_newline_makes_an_empty_last_line() {
        let out = read_text(Path::new("a"), "x\r\ny\n", None, None, 100).expect("read");
        assert_eq!(
            (out.lines.as_slice(), out.total_lines),
            (&["x".to_string(), "y".into(), String::new()][..], 3)
        );
        let empty = read_text(Path::new("e"), "", None, None, 100).expect("read");
        assert_eq!((empty.lines, empty.total_lines), (vec![String::new()], 1));
    }
}
