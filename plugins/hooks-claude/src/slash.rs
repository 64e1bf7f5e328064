//! Claude Code's project slash commands: `/hello world` with
//! `<project>/.claude/commands/hello.md` runs that file's text as the prompt.
//!
//! Recorded from Claude Code (S185, `tools/recorder-scenarios/FINDINGS-csub2.md`
//! §5): for `hello.md` = `Say MARK $ARGUMENTS\n` and the prompt `/hello
//! world`, the model's user message is two text blocks,
//! `<command-message>hello</command-message>\n<command-name>/hello</command-name>\n<command-args>world</command-args>\n`
//! ([`message`]) and the file's text with `$ARGUMENTS` replaced by the
//! arguments, `Say MARK world\n` ([`expand`]). The file comes from the
//! session's project like its settings files, under the same trust rule:
//! a command file runs only when `dsh trust` approved it (it is one of
//! [`crate::discover::project_files`]) or it lies under a trusted prefix.
//!
//! Recorded S210 (`tools/recorder-scenarios/FINDINGS-slash.md`): a file
//! without `$ARGUMENTS` given arguments gets `\n\nARGUMENTS: <args>`
//! appended; a frontmatter block is taken out; no arguments: no
//! `<command-args>` line. Claude Code answers an unknown `/nope` with
//! `Unknown command: /nope`, no hook and no model call ([`unknown`]).

use std::path::{Path, PathBuf};

use dsh_plugin_api::ContentBlock_NE;

/// Where a project's command files are.
pub const COMMANDS_DIR: &str = ".claude/commands";

/// Claude Code's `command_source` for a project command.
pub const PROJECT_SOURCE: &str = "projectSettings";

/// Largest command file read (bytes).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Why a command file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SlashError {
    /// It could not be read.
    #[error("cannot read the command file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// It is too large.
    #[error("the command file {path} is over {MAX_FILE_BYTES} bytes")]
    TooLarge { path: PathBuf },
    /// It is not UTF-8.
    #[error("the command file {path} is not UTF-8")]
    NotUtf8 { path: PathBuf },
}

/// A prompt that names a command: `/<name> <args>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub name: String,
    pub args: String,
}

/// The command a prompt names, if it has the shape of one: a `/` then a
/// name of letters, digits, `-`, `_`, `.` or `:`, then whitespace and the
/// arguments (trimmed).
pub fn invocation(prompt: &str) -> Option<Invocation> {
    let rest = prompt.strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
    if name.is_empty() || !name.chars().all(ok) || name.starts_with('.') {
        return None;
    }
    Some(Invocation {
        name: name.to_string(),
        args: rest[end..].trim().to_string(),
    })
}

/// Claude Code's answer to a prompt naming a command `project` has no
/// file for (S210-unknown-command): `Unknown command: /<name>`. dsh's own
/// `/compact` is not one.
pub fn unknown(project: &Path, prompt: &str) -> Option<String> {
    let inv = invocation(prompt)?;
    if inv.name == "compact" || std::fs::symlink_metadata(file_of(project, &inv.name)).is_ok() {
        return None;
    }
    Some(format!("Unknown command: /{}", inv.name))
}

/// The file of command `name` in `project` (a `:` names a subfolder, as
/// Claude Code namespaces them).
pub fn file_of(project: &Path, name: &str) -> PathBuf {
    let mut path = project.join(COMMANDS_DIR);
    let parts: Vec<&str> = name.split(':').collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            path.push(format!("{part}.md"));
        } else {
            path.push(part);
        }
    }
    path
}

/// The command files of `project` (for `dsh trust`), sorted.
pub fn command_files(project: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(&project.join(COMMANDS_DIR), 0, &mut out);
    out.sort();
    out
}

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(&path, depth + 1, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// Reads a command file: `Ok(None)` when there is none.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, SlashError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SlashError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(SlashError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    std::fs::read(path)
        .map(Some)
        .map_err(|source| SlashError::Read {
            path: path.to_path_buf(),
            source,
        })
}

/// The text the model reads for a command file's bytes and the arguments
/// (S185, S210): a leading frontmatter block (`---` lines) taken out,
/// `$ARGUMENTS` replaced by the arguments; a text without `$ARGUMENTS`
/// given arguments gets `\n\nARGUMENTS: <args>` after it.
pub fn expand(path: &Path, bytes: &[u8], args: &str) -> Result<String, SlashError> {
    let text = std::str::from_utf8(bytes).map_err(|_| SlashError::NotUtf8 {
        path: path.to_path_buf(),
    })?;
    let body = without_frontmatter(text);
    Ok(if body.contains("$ARGUMENTS") {
        body.replace("$ARGUMENTS", args)
    } else if args.is_empty() {
        body.to_string()
    } else {
        format!("{body}\n\nARGUMENTS: {args}")
    })
}

/// `text` after its frontmatter block, if it starts with one.
fn without_frontmatter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    if let Some(rest) = rest.strip_prefix("---\n") {
        return rest;
    }
    match rest.find("\n---\n") {
        Some(at) => &rest[at + "\n---\n".len()..],
        None => text,
    }
}

/// Claude Code's block naming the command, before the expanded text; no
/// `<command-args>` line without arguments (S210).
pub fn message(inv: &Invocation) -> String {
    let mut out = format!(
        "<command-message>{0}</command-message>\n<command-name>/{0}</command-name>\n",
        inv.name
    );
    if !inv.args.is_empty() {
        out.push_str(&format!("<command-args>{}</command-args>\n", inv.args));
    }
    out
}

/// The user message the model gets for a command.
pub fn content(inv: &Invocation, expanded: &str) -> Vec<ContentBlock_NE> {
    vec![
        dsh_plugin_api::ContentBlock::text(message(inv)),
        dsh_plugin_api::ContentBlock::text(expanded),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_names_a_command_only_with_a_slash_and_a_plain_name() {
        assert_eq!(
            invocation("/hello  world and more "),
            Some(Invocation {
                name: "hello".into(),
                args: "world and more".into()
            })
        );
        assert_eq!(
            invocation("/hello"),
            Some(Invocation {
                name: "hello".into(),
                args: String::new()
            })
        );
        assert_eq!(invocation("hello"), None);
        assert_eq!(invocation("/"), None);
        assert_eq!(invocation("/../x"), None);
        assert_eq!(invocation("/a/b"), None);
    }

    #[test]
    fn the_model_reads_the_recorded_blocks() {
        let inv = invocation("/hello world").unwrap_or_else(|| panic!("no invocation"));
        assert_eq!(
            message(&inv),
            "<command-message>hello</command-message>\n<command-name>/hello</command-name>\n<command-args>world</command-args>\n"
        );
        let path = Path::new("/p/.claude/commands/hello.md");
        assert_eq!(
            expand(path, b"Say MARK $ARGUMENTS\n", &inv.args).ok(),
            Some("Say MARK world\n".to_string())
        );
        let bad = expand(path, &[0xff, 0xfe], "").err().map(|e| e.to_string());
        assert_eq!(
            bad.as_deref(),
            Some("the command file /p/.claude/commands/hello.md is not UTF-8")
        );
        assert_eq!(
            expand(path, b"Say X\n", "world").ok(),
            Some("Say X\n\n\nARGUMENTS: world".to_string())
        );
        assert_eq!(
            expand(
                path,
                b"---\ndescription: Greets\nargument-hint: [name]\n---\nSay $ARGUMENTS\n",
                "world"
            )
            .ok(),
            Some("Say world\n".to_string())
        );
        let bare = invocation("/hello").unwrap_or_else(|| panic!("no invocation"));
        assert_eq!(
            message(&bare),
            "<command-message>hello</command-message>\n<command-name>/hello</command-name>\n"
        );
        assert_eq!(
            file_of(Path::new("/p"), "ns:cmd"),
            PathBuf::from("/p/.claude/commands/ns/cmd.md")
        );
    }
}
