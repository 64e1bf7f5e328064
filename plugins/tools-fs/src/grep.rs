//! The `Grep` tool: a regex search of file contents, as Claude Code
//! 2.1.197 runs it (ripgrep with `--hidden`, `.git` and the other version
//! control folders left out, `--max-columns 500`, the tool's options
//! mapped to ripgrep's flags; recorded `S290-grep_*`). dsh searches with
//! ripgrep's own crates (walker, matcher, searcher, printer), so the
//! files searched, the lines found and how they are printed are
//! ripgrep's; what Claude Code does with ripgrep's lines is in
//! [`crate::grep_output`].
//!
//! - `files_with_matches` (the default): the files, newest first;
//! - `content`: the lines, `path:line:text` (`-n`, on by default), context
//!   lines `path-line-text` with `--` between groups;
//! - `count`: `path:count` per file.
//!
//! Differences from ripgrep's own run: files are searched one at a time in
//! path order (ripgrep's threads print files in whatever order they end,
//! so two runs of Claude Code can differ there too). A pattern, `glob` or
//! `type` ripgrep would reject finds nothing, as in Claude Code (it reads
//! ripgrep's failure as no match).

use std::path::{Path, PathBuf};

use dsh_plugin_api::{ToolResult, ToolSpec};
use grep_printer::{StandardBuilder, SummaryBuilder, SummaryKind};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use serde_json::{Value, json};

use crate::grep_output::{Mode, Options, shape};
use crate::search_path::{given_path, resolve};

/// The tool's name.
pub const TOOL_NAME: &str = "Grep";

/// Version control folders Claude Code leaves out of every search.
const VCS_DIRS: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// Claude Code's description of the tool.
const DESCRIPTION: &str = "A powerful search tool built on ripgrep

  Usage:
  - ALWAYS use Grep for search tasks. NEVER invoke `grep` or `rg` as a Bash command. The Grep tool has been optimized for correct permissions and access.
  - Supports full regex syntax (e.g., \"log.*Error\", \"function\\s+\\w+\")
  - Filter files with glob parameter (e.g., \"*.js\", \"**/*.tsx\") or type parameter (e.g., \"js\", \"py\", \"rust\")
  - Output modes: \"content\" shows matching lines, \"files_with_matches\" shows only file paths (default), \"count\" shows match counts
  - Use Agent tool for open-ended searches requiring multiple rounds
  - Pattern syntax: Uses ripgrep (not grep) - literal braces need escaping (use `interface\\{\\}` to find `interface{}` in Go code)
  - Multiline matching: By default patterns match within single lines only. For cross-line patterns like `struct \\{[\\s\\S]*?field`, use `multiline: true`
";

/// The input schema as Claude Code checks it (the number and boolean
/// options also take their value in a string:
/// [`dsh_plugin_api::sdk::claude_input::builtin_lenient`]).
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regular expression pattern to search for in file contents"},
            "path": {"type": "string", "description": "File or directory to search in (rg PATH). Defaults to current working directory."},
            "glob": {"type": "string", "description": "Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\") - maps to rg --glob"},
            "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "Output mode: \"content\" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), \"files_with_matches\" shows file paths (supports head_limit), \"count\" shows match counts (supports head_limit). Defaults to \"files_with_matches\"."},
            "-B": {"type": "number", "description": "Number of lines to show before each match (rg -B). Requires output_mode: \"content\", ignored otherwise."},
            "-A": {"type": "number", "description": "Number of lines to show after each match (rg -A). Requires output_mode: \"content\", ignored otherwise."},
            "-C": {"type": "number", "description": "Alias for context."},
            "context": {"type": "number", "description": "Number of lines to show before and after each match (rg -C). Requires output_mode: \"content\", ignored otherwise."},
            "-n": {"type": "boolean", "description": "Show line numbers in output (rg -n). Requires output_mode: \"content\", ignored otherwise. Defaults to true."},
            "-i": {"type": "boolean", "description": "Case insensitive search (rg -i)"},
            "-o": {"type": "boolean", "description": "Print only the matched (non-empty) parts of each matching line, one match per output line (rg -o / --only-matching). Requires output_mode: \"content\", ignored otherwise. Defaults to false."},
            "type": {"type": "string", "description": "File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than include for standard file types."},
            "head_limit": {"type": "number", "description": "Limit output to first N lines/entries, equivalent to \"| head -N\". Works across all output modes: content (limits output lines), files_with_matches (limits file paths), count (limits count entries). Defaults to 250 when unspecified. Pass 0 for unlimited (use sparingly \u{2014} large result sets waste context)."},
            "offset": {"type": "number", "description": "Skip first N lines/entries before applying head_limit, equivalent to \"| tail -n +N | head -N\". Works across all output modes. Defaults to 0."},
            "multiline": {"type": "boolean", "description": "Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false."}
        },
        "required": ["pattern"],
        "additionalProperties": false
    })
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    dsh_plugin_api::sdk::claude_input::tool_spec(TOOL_NAME, DESCRIPTION, schema())
}

/// Why Claude Code refuses the call before any hook hears of it: a NUL in
/// `pattern`, `path`, `glob` or `type`, or a `path` that does not exist
/// (the schema is checked before).
pub fn refusal(args: &Value, cwd: &Path) -> Option<String> {
    for key in ["pattern", "path", "glob", "type"] {
        if args
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains('\0'))
        {
            return Some(format!(
                "{TOOL_NAME} {key} cannot contain null bytes (\\0). Remove the null byte and try again."
            ));
        }
    }
    given_path("Path", args.get("path")?.as_str()?, cwd).err()
}

/// A number option (`-A`, `-B`, `-C`, `context`) as a line count.
fn lines(args: &Value, key: &str) -> Option<usize> {
    // ripgrep reads the decimal text Claude Code passes it; a fraction
    // or a negative number is an error there, which finds nothing.
    args.get(key).and_then(Value::as_f64).map(|n| {
        if n >= 0.0 && n.fract() == 0.0 {
            n as usize
        } else {
            usize::MAX
        }
    })
}

fn flag(args: &Value, key: &str, default: bool) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// Claude Code's split of the `glob` option: at whitespace, then at commas
/// unless the piece has braces.
fn globs(glob: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in glob.split_whitespace() {
        if piece.contains('{') && piece.contains('}') {
            out.push(piece.to_string());
        } else {
            out.extend(piece.split(',').filter(|s| !s.is_empty()).map(String::from));
        }
    }
    out
}

/// How ripgrep would run for a call.
struct Search {
    root: PathBuf,
    mode: Mode,
    pattern: String,
    case_insensitive: bool,
    multiline: bool,
    line_numbers: bool,
    only_matching: bool,
    before: usize,
    after: usize,
    globs: Vec<String>,
    file_type: Option<String>,
}

impl Search {
    fn new(args: &Value, cwd: &Path, mode: Mode) -> Search {
        let content = mode == Mode::Content;
        let (before, after) = match (lines(args, "context"), lines(args, "-C")) {
            (Some(n), _) | (None, Some(n)) => (n, n),
            (None, None) => (
                lines(args, "-B").unwrap_or(0),
                lines(args, "-A").unwrap_or(0),
            ),
        };
        Search {
            root: args
                .get("path")
                .and_then(Value::as_str)
                .map_or_else(|| cwd.to_path_buf(), |p| resolve(cwd, p)),
            mode,
            pattern: args
                .get("pattern")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            case_insensitive: flag(args, "-i", false),
            multiline: flag(args, "multiline", false),
            line_numbers: content && flag(args, "-n", true),
            only_matching: content && flag(args, "-o", false),
            before: if content { before } else { 0 },
            after: if content { after } else { 0 },
            globs: args
                .get("glob")
                .and_then(Value::as_str)
                .map(globs)
                .unwrap_or_default(),
            file_type: args.get("type").and_then(Value::as_str).map(String::from),
        }
    }

    fn matcher(&self) -> Option<RegexMatcher> {
        let mut builder = RegexMatcherBuilder::new();
        builder
            .case_insensitive(self.case_insensitive)
            .multi_line(true)
            .dot_matches_new_line(self.multiline);
        if !self.multiline {
            builder.line_terminator(Some(b'\n'));
        }
        builder.build(&self.pattern).ok()
    }

    /// The files to search: the root itself when it is a file, else the
    /// walk ripgrep makes (ignore files read, hidden files in, version
    /// control folders, `glob` and `type` applied), in path order.
    fn files(&self) -> Option<(Vec<PathBuf>, bool)> {
        if !self.root.is_dir() {
            // A FIFO, socket or device named by `path` is not read: ripgrep
            // would wait on it (and Claude Code give up after 20 s).
            let regular = std::fs::metadata(&self.root).is_ok_and(|m| m.is_file());
            return Some((
                regular.then(|| self.root.clone()).into_iter().collect(),
                false,
            ));
        }
        let mut rules: Vec<String> = VCS_DIRS.iter().map(|d| format!("!{d}")).collect();
        rules.extend(self.globs.iter().cloned());
        let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
        let overrides = crate::glob::overrides(&self.root, &rules).ok()?;
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        if let Some(t) = &self.file_type {
            types.select(t);
        }
        let types = types.build().ok()?;
        let walker = ignore::WalkBuilder::new(&self.root)
            .hidden(false)
            .add_custom_ignore_filename(".rgignore")
            .overrides(overrides)
            .types(types)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        let files = walker
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(ignore::DirEntry::into_path)
            .collect();
        Some((files, true))
    }

    /// ripgrep's standard output for this search of `files` (`walked`:
    /// found by the walk, not named by `path`).
    fn run(&self, files: &[PathBuf], walked: bool) -> Vec<u8> {
        let Some(matcher) = self.matcher() else {
            return Vec::new();
        };
        if self.before == usize::MAX || self.after == usize::MAX {
            return Vec::new();
        }
        let mut searcher = SearcherBuilder::new()
            .line_number(self.line_numbers)
            .before_context(self.before)
            .after_context(self.after)
            .multi_line(self.multiline)
            .binary_detection(if walked {
                BinaryDetection::quit(b'\x00')
            } else {
                BinaryDetection::convert(b'\x00')
            })
            .build();
        let mut out = Vec::new();
        match self.mode {
            Mode::Content => {
                let context = self.before > 0 || self.after > 0;
                let mut printer = StandardBuilder::new()
                    .max_columns(Some(500))
                    .only_matching(self.only_matching)
                    .path(walked)
                    .separator_search(context.then(|| b"--".to_vec()))
                    .build_no_color(&mut out);
                for file in files {
                    let sink = printer.sink_with_path(&matcher, file);
                    search_file(&mut searcher, &matcher, file, sink);
                }
            }
            Mode::Count | Mode::Files => {
                let kind = if self.mode == Mode::Count {
                    SummaryKind::Count
                } else {
                    SummaryKind::PathWithMatch
                };
                let mut printer = SummaryBuilder::new()
                    .kind(kind)
                    .path(true)
                    .build_no_color(&mut out);
                for file in files {
                    let sink = printer.sink_with_path(&matcher, file);
                    search_file(&mut searcher, &matcher, file, sink);
                }
            }
        }
        out
    }
}

/// One file through `searcher` into `sink`; a file that cannot be read is
/// skipped, as ripgrep skips it (with a message Claude Code does not read).
fn search_file<S: grep_searcher::Sink>(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &Path,
    sink: S,
) where
    S::Error: std::fmt::Display,
{
    if let Err(e) = searcher.search_path(matcher, file, sink) {
        tracing::debug!(path = %file.display(), error = %e, "Grep: file skipped");
    }
}

/// The tool body.
pub async fn grep_tool(args: &Value, cwd: &Path) -> ToolResult {
    grep_via(args, cwd, None).await
}

/// [`grep_tool`], leaving out what the session's `Read` deny rules cover.
pub(crate) async fn grep_via(
    args: &Value,
    cwd: &Path,
    rules: Option<&crate::read_rules::ReadRules<'_>>,
) -> ToolResult {
    let options = match Options::new(args) {
        Ok(options) => options,
        Err(text) => return ToolResult::error(text),
    };
    let search = std::sync::Arc::new(Search::new(args, cwd, options.mode));
    let walk = search.clone();
    let found = tokio::task::spawn_blocking(move || walk.files())
        .await
        .ok()
        .flatten();
    let (files, walked) = match (found, rules) {
        (Some((files, walked)), Some(rules)) => (rules.keep(files).await, walked),
        (Some(found), None) => found,
        (None, _) => (Vec::new(), true),
    };
    let cwd = cwd.to_path_buf();
    // Files are stat'ed for their order: the blocking pool does it all.
    let shaped =
        tokio::task::spawn_blocking(move || shape(&search.run(&files, walked), &cwd, &options))
            .await;
    match shaped {
        Ok((text, structured)) => ToolResult::text(text).with_structured(structured.to_string()),
        Err(e) => ToolResult::error(format!("Grep: the search failed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grep(args: Value, cwd: &Path) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(grep_tool(&args, cwd)).text_content()
    }

    #[test]
    fn odd_files_neither_hang_nor_break_the_search() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::write(root.join("text.txt"), "needle here\n").expect("write");
        // Binary (a NUL): left out of a walked search, as ripgrep does.
        std::fs::write(root.join("blob.bin"), b"needle\0\x01").expect("write");
        // Not UTF-8: searched, shown lossily.
        std::fs::write(root.join("latin1.txt"), b"needle caf\xe9\n").expect("write");
        // A symlink loop is not followed; a FIFO is never opened.
        std::os::unix::fs::symlink(root, root.join("loop")).expect("symlink");
        nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        let found = grep(json!({"pattern": "needle", "output_mode": "content"}), root);
        assert_eq!(
            found,
            "latin1.txt:1:needle caf\u{fffd}\ntext.txt:1:needle here"
        );
        assert_eq!(
            grep(json!({"pattern": "needle", "path": "pipe"}), root),
            "No files found"
        );
    }

    #[test]
    fn the_glob_option_splits_as_claude_code_splits_it() {
        assert_eq!(globs("*.rs"), ["*.rs"]);
        assert_eq!(globs("*.rs,*.md  *.txt"), ["*.rs", "*.md", "*.txt"]);
        assert_eq!(globs("*.{ts,tsx}"), ["*.{ts,tsx}"]);
    }

    #[test]
    fn a_nul_or_a_missing_path_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path();
        assert_eq!(
            refusal(&json!({"pattern": "a\u{0}b"}), cwd).as_deref(),
            Some(
                "Grep pattern cannot contain null bytes (\\0). Remove the null byte and try again."
            )
        );
        let text = refusal(&json!({"pattern": "x", "path": "nope"}), cwd).expect("refused");
        assert!(
            text.starts_with("Path does not exist: nope. Note: your current working directory is "),
            "{text}"
        );
        std::fs::write(cwd.join("f"), "x").expect("write");
        assert_eq!(refusal(&json!({"pattern": "x", "path": "f"}), cwd), None);
    }
}
