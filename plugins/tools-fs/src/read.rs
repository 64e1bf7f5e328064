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
//! `max_read_bytes` is refused with a hint. The content decides nothing: a
//! NUL byte is text (Claude Code reads a `.txt` holding one as text, S120),
//! invalid UTF-8 is decoded lossily, and a leading byte-order mark is
//! dropped. Images, and the binary extensions refused by name, are
//! [`crate::image`]'s; a read over the token cap is cut or refused by
//! [`crate::token_cap`]. PDFs and notebooks are not supported.
//!
//! Structured response, as Claude Code's:
//! `{"type":"text","file":{"filePath","content","numLines","startLine","totalLines"}}`,
//! `content` being the selected lines joined by `\n`; a page cut at the
//! token cap adds `"truncatedByTokenCap": true`.

use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use dsh_plugin_api::{ROption, ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::Config;
use crate::args::Args;
use crate::editor::{Editor, EditorRead};
use crate::error::FsToolError;
use crate::image;
use crate::seen::{ReadLog, UNCHANGED_TEXT};
use crate::token_cap;

/// The tool's name.
pub const TOOL_NAME: &str = "Read";
/// How many bytes tell an extension-less image by its signature.
const SNIFF_BYTES: u64 = 16;

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
    /// The `[Truncated: PARTIAL view ...]` note when the token cap cut a
    /// whole-file read to its first page.
    pub truncated: Option<String>,
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
            use offset and limit for large files. Images (PNG, JPEG, GIF, WebP) are shown as \
            images."
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
    let cap = config.max_read_tokens;
    // Binary extensions are refused by name (the host refuses them before
    // any hook; this is the same rule for a call that reaches the tool).
    if let Some(refusal) = image::binary_extension_refusal(&path.to_string_lossy()) {
        return ToolResult::error(refusal);
    }
    let shown = args
        .get("file_path")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let head_path = path.clone();
    let head = move || {
        let mut head = Vec::new();
        let file = std::fs::File::open(&head_path).ok()?;
        file.take(SNIFF_BYTES).read_to_end(&mut head).ok()?;
        Some(head)
    };
    // A FIFO or socket would hold the read (and the turn) until someone
    // writes to it, a device such as /dev/zero never end: refused by what
    // it is, before it is opened.
    if let Some(kind) = tokio::fs::metadata(&path)
        .await
        .ok()
        .and_then(|m| crate::write::special_target(&m))
    {
        return ToolResult::error(FsToolError::NotRegular { path, kind }.to_string());
    }
    // A Jupyter notebook reads as its cells (S293).
    if crate::notebook::is_notebook(&path)
        && let Ok(text) = tokio::fs::read_to_string(&path).await
    {
        return crate::notebook::read(&path, &text);
    }
    let image_path = path.clone();
    let is_image = tokio::task::spawn_blocking(move || {
        !image_path.is_dir() && image::is_image_path(&image_path, head)
    })
    .await
    .unwrap_or(false);
    if is_image {
        let read = tokio::task::spawn_blocking(move || image::read_image(&path, &shown, cap)).await;
        return read.unwrap_or_else(|join| {
            ToolResult::error(
                FsToolError::Internal {
                    tool: TOOL_NAME,
                    detail: join.to_string(),
                }
                .to_string(),
            )
        });
    }
    if let Some(editor) = editor
        && let Some(got) = editor.read(&path).await
    {
        return match got {
            EditorRead::Text(text) => match read_text(&path, &text, offset, limit, max)
                .and_then(|o| capped(o, offset, limit, cap))
            {
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
    let metadata = tokio::fs::metadata(&path).await;
    if metadata
        .as_ref()
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        return ToolResult::error(
            FsToolError::ReadMissing {
                cwd: cwd.to_path_buf(),
            }
            .to_string(),
        );
    }
    let modified = metadata.and_then(|m| m.modified()).ok();
    if let (Some(seen), Some(modified)) = (&seen, modified)
        && seen
            .log
            .unchanged(seen.session, &path, offset, limit, modified)
    {
        let structured =
            json!({"type": "file_unchanged", "file": {"filePath": path.to_string_lossy()}});
        return ToolResult::text(UNCHANGED_TEXT).with_structured(structured.to_string());
    }
    let read = tokio::task::spawn_blocking(move || {
        read_lines(&path, offset, limit, max).and_then(|o| capped(o, offset, limit, cap))
    })
    .await;
    match read {
        Ok(Ok(output)) => {
            // A page cut at the token cap is not a read of the file: the
            // same call reads (and cuts) again (Claude Code's partial view).
            if let (Some(seen), Some(modified), None) = (&seen, output.modified, &output.truncated)
            {
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
    if let Some(kind) = crate::write::special_target(&meta) {
        return Err(FsToolError::NotRegular {
            path: path.into(),
            kind,
        });
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
        .take(BOM.len() as u64)
        .read_to_end(&mut head)
        .map_err(io_err)?;
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
            truncated: None,
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
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut window = Window::new(offset, limit, None);
    for line in text.split('\n') {
        window.push(|| line.to_string());
    }
    Ok(window.finish(path))
}

/// `output` under the token cap ([`token_cap`]): unchanged when its text
/// fits; a whole-file read (no `limit`, `offset` at most 1) cut to its
/// first page, numbered from 1; any other read refused.
pub fn capped(
    mut output: ReadOutput,
    offset: Option<u64>,
    limit: Option<u64>,
    cap: u64,
) -> Result<ReadOutput, FsToolError> {
    let content = output.lines.join("\n");
    let ext = output
        .path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let Some(tokens) = token_cap::over_cap(&content, &ext, cap) else {
        return Ok(output);
    };
    if offset.unwrap_or(1) > 1 || limit.is_some() {
        return Err(FsToolError::OverTokenCap { tokens, cap });
    }
    let page = token_cap::page(&content, output.total_lines, tokens, cap);
    output.lines = page.text.split('\n').map(String::from).collect();
    output.start_line = output.start_line.max(1);
    output.truncated = Some(page.note);
    Ok(output)
}

/// `result` with its response's `file.filePath` as the model wrote it:
/// Claude Code hands hooks a relative `file_path` made absolute in
/// `tool_input` but keeps it as written in `tool_response`
/// (`S239-edit-checks`).
pub fn with_path_as_given(mut result: ToolResult, args: &Value) -> ToolResult {
    let Some(given) = args["file_path"].as_str().filter(|p| !p.starts_with('/')) else {
        return result;
    };
    let Some(mut response) = result
        .structured
        .as_ref()
        .into_option()
        .and_then(|s| serde_json::from_str::<Value>(s.as_str()).ok())
    else {
        return result;
    };
    // (A text file's, as recorded; the others keep the path resolved.)
    if response["type"] == "text" && response["file"]["filePath"].is_string() {
        response["file"]["filePath"] = given.into();
        result.structured = ROption::RSome(response.to_string().into());
    }
    result
}

/// Numbers the lines and builds the Claude-shaped response.
pub fn to_tool_result(output: &ReadOutput) -> ToolResult {
    let content = output.lines.join("\n");
    let mut structured = json!({"type": "text", "file": {
        "filePath": output.path.to_string_lossy(),
        "content": content,
        "numLines": output.lines.len(),
        "startLine": output.start_line,
        "totalLines": output.total_lines,
    }});
    if output.truncated.is_some() {
        structured["file"]["truncatedByTokenCap"] = json!(true);
    }
    let text = if let Some(note) = &output.truncated {
        // As recorded: the note, a blank line, then the page.
        format!(
            "<system-reminder>{note}</system-reminder>\n\n{}",
            numbered(&output.lines, output.start_line)
        )
    } else if !content.is_empty() {
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
