//! What Claude Code 2.1.197 makes of ripgrep's output for `Grep` (read
//! from its bundled source, confirmed by the recorded `S290-grep_*`):
//!
//! - ripgrep's output is trimmed, split into lines, and empty lines are
//!   dropped;
//! - `offset` lines are skipped and at most `head_limit` kept (250 unless
//!   given; `0` keeps all); when more were there, `appliedLimit` says so;
//! - `content` and `count` lines have their path (up to the first `:`, or
//!   the last one for `count`) shown relative to the cwd: a context line
//!   (`path-3-text`) keeps ripgrep's absolute path unless its text has a
//!   `:`, as in Claude Code;
//! - `files_with_matches` is sorted newest first, ties by name;
//! - the model reads the lines, `No files found` / `No matches found`, with
//!   Claude Code's count and pagination lines.

use std::cmp::Ordering;
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde_json::{Map, Value, json};

use crate::search_path::{locale_cmp, shown};

/// Claude Code's `head_limit` when none is given.
pub const DEFAULT_HEAD_LIMIT: f64 = 250.0;

/// The output mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Matching lines.
    Content,
    /// Paths of matching files.
    Files,
    /// Counts of matching lines per file.
    Count,
}

/// The call's options that shape the output.
#[derive(Debug, Clone)]
pub struct Options {
    /// The output mode.
    pub mode: Mode,
    /// `head_limit`, as given.
    pub head_limit: Option<f64>,
    /// `offset`, as given (0 when not).
    pub offset: f64,
}

impl Options {
    /// The options of a call whose arguments passed Claude Code's schema;
    /// `Err` is the tool's error text for arguments that did not.
    pub fn new(args: &Value) -> Result<Options, String> {
        if !args.get("pattern").is_some_and(Value::is_string) {
            return Err(
                "<tool_use_error>Grep: `pattern` must be a string</tool_use_error>".to_string(),
            );
        }
        let mode = match args.get("output_mode").and_then(Value::as_str) {
            None | Some("files_with_matches") => Mode::Files,
            Some("content") => Mode::Content,
            Some("count") => Mode::Count,
            Some(other) => {
                return Err(format!(
                    "<tool_use_error>Grep: unknown output_mode `{other}`</tool_use_error>"
                ));
            }
        };
        Ok(Options {
            mode,
            head_limit: args.get("head_limit").and_then(Value::as_f64),
            offset: args.get("offset").and_then(Value::as_f64).unwrap_or(0.0),
        })
    }
}

/// A JavaScript number as JSON: integral values without a fraction.
fn js_number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// A JavaScript number as text.
fn js_text(n: f64) -> String {
    js_number(n).to_string()
}

/// `Array.prototype.slice`'s index for `n` in a list of `len`.
fn js_index(n: f64, len: usize) -> usize {
    let n = n.trunc();
    if n < 0.0 {
        (len as f64 + n).max(0.0) as usize
    } else {
        n.min(len as f64) as usize
    }
}

/// Claude Code's pagination (`TIo`): the kept items and the limit it
/// reports when it left some out.
fn paginate<T: Clone>(items: &[T], options: &Options) -> (Vec<T>, Option<f64>) {
    let len = items.len();
    let start = js_index(options.offset, len);
    if options.head_limit == Some(0.0) {
        return (items[start..].to_vec(), None);
    }
    let limit = options.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT);
    let end = js_index(options.offset + limit, len).max(start);
    let more = (len as f64 - options.offset) > limit;
    (items[start..end].to_vec(), more.then_some(limit))
}

/// Claude Code's pagination note (`vIo`): `limit: N, offset: M`.
fn pagination(limit: Option<f64>, offset: f64) -> String {
    let mut parts = Vec::new();
    if let Some(limit) = limit {
        parts.push(format!("limit: {}", js_text(limit)));
    }
    if offset != 0.0 && !offset.is_nan() {
        parts.push(format!("offset: {}", js_text(offset)));
    }
    parts.join(", ")
}

/// ripgrep's output as Claude Code splits it.
fn lines(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// `line` with its path part (up to `cut`) shown as Claude Code shows it.
fn reshown(cwd: &Path, line: &str, cut: Option<usize>) -> String {
    match cut {
        Some(at) if at > 0 => format!("{}{}", shown(cwd, &line[..at]), &line[at..]),
        _ => line.to_string(),
    }
}

/// JavaScript's `parseInt(text, 10)`, `None` for `NaN`.
fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim_start();
    let (sign, digits) = match t.as_bytes().first() {
        Some(b'-') => (-1, &t[1..]),
        Some(b'+') => (1, &t[1..]),
        _ => (1, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse::<i64>().ok().map(|n| sign * n)
}

fn with_pages(mut data: Map<String, Value>, limit: Option<f64>, offset: f64) -> Value {
    if let Some(limit) = limit {
        data.insert("appliedLimit".into(), js_number(limit));
    }
    if offset > 0.0 {
        data.insert("appliedOffset".into(), js_number(offset));
    }
    Value::Object(data)
}

/// The text the model reads and the `tool_response` for ripgrep's `raw`
/// output.
pub fn shape(raw: &[u8], cwd: &Path, options: &Options) -> (String, Value) {
    let found = lines(raw);
    let offset = options.offset;
    match options.mode {
        Mode::Content => {
            let (items, limit) = paginate(&found, options);
            let items: Vec<String> = items.iter().map(|l| reshown(cwd, l, l.find(':'))).collect();
            let content = items.join("\n");
            let note = pagination(limit, offset);
            let body = if content.is_empty() {
                "No matches found"
            } else {
                &content
            };
            let text = if note.is_empty() {
                body.to_string()
            } else {
                format!("{body}\n\n[Showing results with pagination = {note}]")
            };
            let mut data = Map::new();
            data.insert("mode".into(), json!("content"));
            data.insert("numFiles".into(), json!(0));
            data.insert("filenames".into(), json!([]));
            data.insert("content".into(), json!(content));
            data.insert("numLines".into(), json!(items.len()));
            (text, with_pages(data, limit, offset))
        }
        Mode::Count => {
            let (items, limit) = paginate(&found, options);
            let items: Vec<String> = items
                .iter()
                .map(|l| reshown(cwd, l, l.rfind(':')))
                .collect();
            let (mut matches, mut files) = (0i64, 0usize);
            for line in &items {
                if let Some(at) = line.rfind(':').filter(|at| *at > 0)
                    && let Some(n) = parse_int(&line[at + 1..])
                {
                    matches += n;
                    files += 1;
                }
            }
            let content = items.join("\n");
            let note = pagination(limit, offset);
            let body = if content.is_empty() {
                "No matches found"
            } else {
                &content
            };
            let text = format!(
                "{body}\n\nFound {matches} total {} across {files} {}.{}",
                if matches == 1 {
                    "occurrence"
                } else {
                    "occurrences"
                },
                if files == 1 { "file" } else { "files" },
                if note.is_empty() {
                    String::new()
                } else {
                    format!(" with pagination = {note}")
                }
            );
            let mut data = Map::new();
            data.insert("mode".into(), json!("count"));
            data.insert("numFiles".into(), json!(files));
            data.insert("filenames".into(), json!([]));
            data.insert("content".into(), json!(content));
            data.insert("numMatches".into(), json!(matches));
            (text, with_pages(data, limit, offset))
        }
        Mode::Files => {
            let mut dated: Vec<(f64, String)> = found
                .into_iter()
                .map(|path| {
                    let ms = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
                    (ms, path)
                })
                .collect();
            dated.sort_by(|(ta, a), (tb, b)| match tb.partial_cmp(ta) {
                Some(Ordering::Equal) | None => locale_cmp(a, b),
                Some(order) => order,
            });
            let sorted: Vec<String> = dated.into_iter().map(|(_, p)| p).collect();
            let (items, limit) = paginate(&sorted, options);
            let names: Vec<String> = items.iter().map(|p| shown(cwd, p)).collect();
            let note = pagination(limit, offset);
            let text = if names.is_empty() {
                "No files found".to_string()
            } else {
                format!(
                    "Found {} {}{}\n{}",
                    names.len(),
                    if names.len() == 1 { "file" } else { "files" },
                    if note.is_empty() {
                        String::new()
                    } else {
                        format!(" {note}")
                    },
                    names.join("\n")
                )
            };
            let mut data = Map::new();
            data.insert("mode".into(), json!("files_with_matches"));
            data.insert("filenames".into(), json!(names));
            data.insert("numFiles".into(), json!(names.len()));
            (text, with_pages(data, limit, offset))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(mode: Mode, head_limit: Option<f64>, offset: f64) -> Options {
        Options {
            mode,
            head_limit,
            offset,
        }
    }

    #[test]
    fn content_lines_are_relative_and_paginated_as_claude_code_does() {
        let cwd = Path::new("/w/p");
        let raw = b"/w/p/a.txt-1-ctx\n/w/p/a.txt:2:hit\n/w/p/b.txt:1:hit: two\n\n";
        let (text, data) = shape(raw, cwd, &opts(Mode::Content, None, 0.0));
        assert_eq!(text, "/w/p/a.txt-1-ctx\na.txt:2:hit\nb.txt:1:hit: two");
        assert_eq!(data["numLines"], 3);
        let (text, data) = shape(raw, cwd, &opts(Mode::Content, Some(1.0), 1.0));
        assert_eq!(
            text,
            "a.txt:2:hit\n\n[Showing results with pagination = limit: 1, offset: 1]"
        );
        assert_eq!(data["appliedLimit"], 1);
        assert_eq!(data["appliedOffset"], 1);
        let (text, _) = shape(b"", cwd, &opts(Mode::Content, None, 0.0));
        assert_eq!(text, "No matches found");
    }

    #[test]
    fn counts_sum_into_claude_codes_last_line() {
        let cwd = Path::new("/w/p");
        let (text, data) = shape(b"/w/p/a:2\n/w/p/b:1\n", cwd, &opts(Mode::Count, None, 0.0));
        assert_eq!(
            text,
            "a:2\nb:1\n\nFound 3 total occurrences across 2 files."
        );
        assert_eq!(data["numMatches"], 3);
        let (text, _) = shape(b"", cwd, &opts(Mode::Count, None, 0.0));
        assert_eq!(
            text,
            "No matches found\n\nFound 0 total occurrences across 0 files."
        );
    }

    #[test]
    fn files_say_how_many_and_the_limit() {
        let cwd = Path::new("/w/p");
        let (text, data) = shape(
            b"/w/p/a\n/w/p/b\n/w/p/c\n",
            cwd,
            &opts(Mode::Files, Some(2.0), 0.0),
        );
        assert_eq!(text, "Found 2 files limit: 2\na\nb");
        assert_eq!(
            data,
            json!({"mode": "files_with_matches", "filenames": ["a", "b"], "numFiles": 2, "appliedLimit": 2})
        );
        let (text, _) = shape(b"", cwd, &opts(Mode::Files, None, 0.0));
        assert_eq!(text, "No files found");
        let (_, data) = shape(b"/w/p/a\n", cwd, &opts(Mode::Files, Some(0.0), 0.0));
        assert_eq!(data.get("appliedLimit"), None);
    }

    #[test]
    fn parse_int_reads_a_leading_number() {
        assert_eq!(parse_int("12"), Some(12));
        assert_eq!(parse_int(" 7x"), Some(7));
        assert_eq!(parse_int("x"), None);
    }
}
