//! The `Glob` tool: file names matching a glob pattern, as Claude Code
//! 2.1.197 finds them (its `rg --files --glob <pattern> --sort=modified
//! --no-ignore --hidden` in the search folder, recorded `S290-glob`).
//!
//! - Every file counts: ignore files are not read and hidden files are
//!   listed (`.git`'s own files too); the pattern is matched as ripgrep's
//!   `--glob` matches (relative to the search folder; a pattern without a
//!   `/` matches a name at any depth). An absolute pattern searches from
//!   its folder part.
//! - Oldest first (modification time; ties in path order), at most
//!   [`MAX_FILES`], each shown relative to the session's cwd, or whole when
//!   it lies outside it ([`crate::search_path::shown`]).
//! - The model reads the names one per line, `No files found`, or the
//!   names and a line saying how many more there are.
//!
//! Structured response, as Claude Code's:
//! `{"filenames", "durationMs", "numFiles", "truncated", "totalMatches",
//! "countIsComplete"}`. A `path` that does not exist or is not a folder is
//! refused before any hook hears of the call ([`refusal`]).

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use dsh_plugin_api::{ToolResult, ToolSpec};
use ignore::overrides::{Override, OverrideBuilder};
use serde_json::{Value, json};

use crate::search_path::{given_path, resolve, shown};

/// The tool's name.
pub const TOOL_NAME: &str = "Glob";

/// Most file names the model reads (Claude Code's default `maxResults`).
pub const MAX_FILES: usize = 100;

/// Claude Code's description of the tool.
const DESCRIPTION: &str = "- Fast file pattern matching tool that works with any codebase size
- Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\"
- Returns matching file paths sorted by modification time
- Use this tool when you need to find files by name patterns
- When you are doing an open ended search that may require multiple rounds of globbing and grepping, use the Agent tool instead";

/// The input schema as Claude Code checks it.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob pattern to match files against"},
            "path": {"type": "string", "description": "The directory to search in. If not specified, the current working directory will be used. IMPORTANT: Omit this field to use the default directory. DO NOT enter \"undefined\" or \"null\" - simply omit it for the default behavior. Must be a valid directory path if provided."}
        },
        "required": ["pattern"],
        "additionalProperties": false
    })
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    dsh_plugin_api::sdk::claude_input::tool_spec(TOOL_NAME, DESCRIPTION, schema())
}

/// Why Claude Code refuses the call before any hook hears of it: a `path`
/// that does not exist, or is not a folder (the schema is checked before).
pub fn refusal(args: &Value, cwd: &Path) -> Option<String> {
    let given = args.get("path")?.as_str()?;
    match given_path("Directory", given, cwd) {
        Err(refusal) => Some(refusal),
        Ok(Some(meta)) if !meta.is_dir() => Some(format!("Path is not a directory: {given}")),
        Ok(_) => None,
    }
}

/// ripgrep's `--glob` rules for `globs` under `root` (a `!` excludes).
pub(crate) fn overrides(root: &Path, globs: &[&str]) -> Result<Override, ignore::Error> {
    let mut builder = OverrideBuilder::new(root);
    for glob in globs {
        builder.add(glob)?;
    }
    builder.build()
}

/// Where an absolute pattern searches from, and the rest of the pattern
/// (Claude Code's split at the last `/` before the first wildcard).
fn split_absolute(pattern: &str) -> (Option<PathBuf>, String) {
    let Some(wild) = pattern.find(['*', '?', '[', '{']) else {
        let path = Path::new(pattern);
        let base = path.parent().map(Path::to_path_buf);
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        return (base, name);
    };
    match pattern[..wild].rfind('/') {
        None => (None, pattern.to_string()),
        Some(0) => (Some(PathBuf::from("/")), pattern[1..].to_string()),
        Some(cut) => (
            Some(PathBuf::from(&pattern[..cut])),
            pattern[cut + 1..].to_string(),
        ),
    }
}

/// The files under `dir` matching `pattern`, oldest first, as absolute
/// paths. A pattern ripgrep would reject finds nothing.
pub fn find(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let Ok(rules) = overrides(dir, &[pattern]) else {
        return Vec::new();
    };
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .overrides(rules)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut found: Vec<(SystemTime, PathBuf)> = walker
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| !t.is_dir()))
        .map(|entry| {
            let mtime = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (mtime, entry.into_path())
        })
        .collect();
    found.sort_by_key(|(mtime, _)| *mtime);
    found.into_iter().map(|(_, path)| path).collect()
}

/// The tool body.
pub async fn glob_tool(args: &Value, cwd: &Path) -> ToolResult {
    glob_via(args, cwd, None).await
}

/// [`glob_tool`], leaving out what the session's `Read` deny rules cover.
pub(crate) async fn glob_via(
    args: &Value,
    cwd: &Path,
    rules: Option<&crate::read_rules::ReadRules<'_>>,
) -> ToolResult {
    let started = Instant::now();
    let Some(pattern) = args.get("pattern").and_then(Value::as_str) else {
        return ToolResult::error(
            "<tool_use_error>Glob: `pattern` must be a string</tool_use_error>",
        );
    };
    let mut dir = args
        .get("path")
        .and_then(Value::as_str)
        .map_or_else(|| cwd.to_path_buf(), |p| resolve(cwd, p));
    let mut pattern = pattern.to_string();
    if Path::new(&pattern).is_absolute() {
        let (base, rest) = split_absolute(&pattern);
        if let Some(base) = base {
            dir = base;
            pattern = rest;
        }
    }
    let (dir_for, pattern_for) = (dir.clone(), pattern.clone());
    let files = tokio::task::spawn_blocking(move || find(&dir_for, &pattern_for))
        .await
        .unwrap_or_default();
    let files = match rules {
        Some(rules) => rules.keep(files).await,
        None => files,
    };
    let total = files.len();
    let filenames: Vec<String> = files
        .iter()
        .take(MAX_FILES)
        .map(|p| shown(cwd, &p.to_string_lossy()))
        .collect();
    to_tool_result(filenames, total, started.elapsed().as_millis())
}

/// The Claude-shaped result for `filenames` of `total` found.
fn to_tool_result(filenames: Vec<String>, total: usize, millis: u128) -> ToolResult {
    let truncated = total > filenames.len();
    let text = if filenames.is_empty() {
        "No files found".to_string()
    } else {
        let mut lines = filenames.join("\n");
        if truncated {
            let shown = filenames.len();
            lines.push_str(&format!(
                "\n(Showing {shown} of {total} matching files; {} more are not listed. Narrow the pattern or path to see the rest.)",
                total - shown
            ));
        }
        lines
    };
    let structured = json!({
        "filenames": filenames,
        "durationMs": u64::try_from(millis).unwrap_or(u64::MAX),
        "numFiles": filenames.len(),
        "truncated": truncated,
        "totalMatches": total,
        "countIsComplete": true,
    });
    ToolResult::text(text).with_structured(structured.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str, age: u64) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, rel).expect("write");
        let when = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + age);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(when))
            .expect("mtime");
    }

    #[test]
    fn finds_hidden_and_ignored_files_oldest_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        touch(root, ".gitignore", 0);
        std::fs::write(root.join(".gitignore"), "ignored/\n").expect("write");
        touch(root, "src/b.rs", 1);
        touch(root, "src/a.rs", 2);
        touch(root, "ignored/c.rs", 3);
        touch(root, ".hidden/d.rs", 4);
        touch(root, "e.md", 5);
        let found: Vec<String> = find(root, "**/*.rs")
            .iter()
            .map(|p| shown(root, &p.to_string_lossy()))
            .collect();
        assert_eq!(
            found,
            ["src/b.rs", "src/a.rs", "ignored/c.rs", ".hidden/d.rs"]
        );
        let md: Vec<PathBuf> = find(root, "*.md");
        assert_eq!(md, [root.join("e.md")]);
    }

    #[test]
    fn an_absolute_pattern_searches_from_its_folder() {
        assert_eq!(
            split_absolute("/w/src/**/*.rs"),
            (Some(PathBuf::from("/w/src")), "**/*.rs".to_string())
        );
        assert_eq!(
            split_absolute("/*.rs"),
            (Some(PathBuf::from("/")), "*.rs".to_string())
        );
        assert_eq!(
            split_absolute("/w/a.rs"),
            (Some(PathBuf::from("/w")), "a.rs".to_string())
        );
    }

    #[test]
    fn more_than_the_cap_says_how_many_are_not_listed() {
        let names: Vec<String> = (0..MAX_FILES).map(|i| format!("f{i}")).collect();
        let result = to_tool_result(names, 130, 3);
        let text = result.text_content();
        assert!(
            text.ends_with("\n(Showing 100 of 130 matching files; 30 more are not listed. Narrow the pattern or path to see the rest.)"),
            "{text}"
        );
        let none = to_tool_result(Vec::new(), 0, 1);
        assert_eq!(none.text_content(), "No files found");
    }

    #[test]
    fn a_missing_or_file_path_is_refused_in_claude_codes_words() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path();
        std::fs::write(cwd.join("f.txt"), "x").expect("write");
        let text = refusal(&json!({"pattern": "*", "path": "missing_dir"}), cwd).expect("refused");
        assert_eq!(
            text,
            format!(
                "Directory does not exist: missing_dir. Note: your current working directory is {}.",
                cwd.display()
            )
        );
        assert_eq!(
            refusal(&json!({"pattern": "*", "path": "f.txt"}), cwd).as_deref(),
            Some("Path is not a directory: f.txt")
        );
        assert_eq!(refusal(&json!({"pattern": "*"}), cwd), None);
    }
}
