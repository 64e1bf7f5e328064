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
//!
//! Recorded S241 (`tools/recorder-scenarios/FINDINGS-memory2.md`): the
//! user's `~/.claude/commands/<name>.md` run too (`command_source:
//! "userSettings"`; the user layer needs no trust), and win over a project
//! file of the same name; `a/b.md` is `/a:b` in both; `$0`, `$1`, … and
//! `$ARGUMENTS[n]` are the arguments split as a shell splits them,
//! counted from 0 ([`expand`]).

use std::path::{Path, PathBuf};

use dsh_plugin_api::ContentBlock_NE;

/// Where a project's command files are.
pub const COMMANDS_DIR: &str = ".claude/commands";

/// Claude Code's `command_source` for a project command.
pub const PROJECT_SOURCE: &str = "projectSettings";

/// Claude Code's `command_source` for a user command.
pub const USER_SOURCE: &str = "userSettings";

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
    /// Whose file it runs: [`PROJECT_SOURCE`] or [`USER_SOURCE`].
    pub source: &'static str,
}

/// The command a prompt names, if it has the shape of one: a `/` then a
/// name of letters, digits, `-`, `_`, `.` or `:`, then whitespace and the
/// arguments (trimmed).
pub fn invocation(prompt: &str) -> Option<Invocation> {
    let rest = prompt.strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    if !valid_name(name) {
        return None;
    }
    Some(Invocation {
        name: name.to_string(),
        args: rest[end..].trim().to_string(),
        source: PROJECT_SOURCE,
    })
}

/// Whether `name` can name a command file: letters, digits, `-`, `_`,
/// `.` and `:` only, each `:`-separated part non-empty and starting with
/// no `.` (so never `..`: a name stays inside its commands folder).
pub fn valid_name(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
    !name.is_empty()
        && name.chars().all(ok)
        && name
            .split(':')
            .all(|part| !part.is_empty() && !part.starts_with('.'))
}

/// Claude Code's answer to a prompt naming a command neither `home` nor
/// `project` has a file for (S210-unknown-command): `Unknown command:
/// /<name>`. dsh's own `/compact` is not one.
pub fn unknown(home: &Path, project: &Path, prompt: &str) -> Option<String> {
    let inv = invocation(prompt)?;
    let exists = |p: PathBuf| std::fs::symlink_metadata(p).is_ok();
    let in_home = !home.as_os_str().is_empty() && exists(file_of(home, &inv.name));
    if inv.name == "compact" || exists(file_of(project, &inv.name)) || in_home {
        return None;
    }
    Some(format!("Unknown command: /{}", inv.name))
}

/// The file of command `name` under `root` (a project, or the home for a
/// user command; a `:` names a subfolder, as Claude Code namespaces them).
pub fn file_of(root: &Path, name: &str) -> PathBuf {
    let mut path = root.join(COMMANDS_DIR);
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
/// (S185, S210, S241), as Claude Code substitutes them: a leading
/// frontmatter block (`---` lines) taken out; `\$` before a digit or
/// `ARGUMENTS` kept as a plain `$`; then, one pass each, `$ARGUMENTS[n]`,
/// `$n` (not followed by a word character) and `$ARGUMENTS` replaced (the
/// `n`th argument as a shell splits them, counted from 0, or nothing; the
/// whole arguments). A text where nothing was replaced, given arguments,
/// gets `\n\nARGUMENTS: <args>` after it.
pub fn expand(path: &Path, bytes: &[u8], args: &str) -> Result<String, SlashError> {
    let text = std::str::from_utf8(bytes).map_err(|_| SlashError::NotUtf8 {
        path: path.to_path_buf(),
    })?;
    let body = without_frontmatter(text);
    let parts: Vec<String> = split_args(args)
        .into_iter()
        .map(|p| p.replace(PROTECT, ""))
        .collect();
    let nth = |n: usize| parts.get(n).cloned().unwrap_or_default();
    let (body, protected) = protect_escapes(body);
    let mut replaced = false;
    let body = replace_dollar(&body, "$ARGUMENTS[", |rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        (digits > 0 && rest[digits..].starts_with(']')).then(|| {
            replaced = true;
            (
                nth(rest[..digits].parse().unwrap_or(usize::MAX)),
                digits + 1,
            )
        })
    });
    let body = replace_dollar(&body, "$", |rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let word = rest[digits..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        (digits > 0 && !word).then(|| {
            replaced = true;
            (nth(rest[..digits].parse().unwrap_or(usize::MAX)), digits)
        })
    });
    let clean_args = args.replace(PROTECT, "");
    let body = replace_dollar(&body, "$ARGUMENTS", |_| {
        replaced = true;
        Some((clean_args.clone(), 0))
    });
    let mut out = if !replaced && !args.is_empty() {
        format!("{body}\n\nARGUMENTS: {clean_args}")
    } else {
        body
    };
    if protected {
        out = out.replace(PROTECT, "$");
    }
    Ok(out)
}

/// What stands for an escaped `$` while the arguments go in.
const PROTECT: char = '\u{FFFF}';

/// `text` with each `\$` (not itself after a backslash) before a digit
/// or `ARGUMENTS` replaced by [`PROTECT`], and whether there was one.
fn protect_escapes(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut found = false;
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(at) = rest.find("\\$") {
        let before = rest[..at].chars().next_back().or(prev);
        let after = &rest[at + 2..];
        let guarded =
            after.starts_with(|c: char| c.is_ascii_digit()) || after.starts_with("ARGUMENTS");
        out.push_str(&rest[..at]);
        if guarded && before != Some('\\') {
            out.push(PROTECT);
            found = true;
        } else {
            out.push_str("\\$");
        }
        prev = Some('$');
        rest = after;
    }
    out.push_str(rest);
    (out, found)
}

/// `text` with each `pat` for which `with` (given what follows it) answers
/// `(replacement, characters after pat it takes)` replaced, left to right.
fn replace_dollar(
    text: &str,
    pat: &str,
    mut with: impl FnMut(&str) -> Option<(String, usize)>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(pat) {
        out.push_str(&rest[..at]);
        let after = &rest[at + pat.len()..];
        match with(after) {
            Some((value, took)) => {
                out.push_str(&value);
                rest = &after[took..];
            }
            None => {
                out.push_str(pat);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The arguments as a shell splits them (quotes group, a backslash
/// escapes); white space split when that leaves nothing.
pub fn split_args(args: &str) -> Vec<String> {
    if args.trim().is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            '\'' => {
                started = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                started = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => cur.push(e),
                            Some(e) => {
                                cur.push('\\');
                                cur.push(e);
                            }
                            None => cur.push('\\'),
                        },
                        q => cur.push(q),
                    }
                }
            }
            '\\' => {
                started = true;
                if let Some(e) = chars.next() {
                    cur.push(e);
                }
            }
            c => {
                started = true;
                cur.push(c);
            }
        }
    }
    if started {
        out.push(cur);
    }
    if out.is_empty() {
        return args.split_whitespace().map(str::to_string).collect();
    }
    out
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

/// The value of `key` in a command or skill file's frontmatter (one
/// line, quotes dropped), if it has one.
pub fn frontmatter(text: &str, key: &str) -> Option<String> {
    let body = text.strip_prefix("---\n")?;
    let end = body.find("\n---")?;
    body[..end].lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// The file's `allowed-tools`, one rule each (`Bash(git status:*), Read`
/// or `[Bash(echo:*), Read]`): what Claude Code allows for the rest of the
/// turn that runs it.
pub fn allowed_tools(text: &str) -> Vec<String> {
    frontmatter(text, "allowed-tools")
        .map(|tools| {
            tools
                .trim_matches(['[', ']'])
                .split(',')
                .map(|t| t.trim().trim_matches(['"', '\'']).to_string())
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_never_leaves_its_commands_folder() {
        for bad in ["a:..:..:x", "..", ".x", "a::b", "a/b", "", "a:.hidden"] {
            assert!(!valid_name(bad), "{bad}");
            assert_eq!(invocation(&format!("/{bad} args")), None, "{bad}");
        }
        for good in ["hello", "a:b", "v1.2", "x-y_z"] {
            assert!(valid_name(good), "{good}");
        }
    }

    #[test]
    fn a_prompt_names_a_command_only_with_a_slash_and_a_plain_name() {
        assert_eq!(
            invocation("/hello  world and more "),
            Some(Invocation {
                name: "hello".into(),
                args: "world and more".into(),
                source: PROJECT_SOURCE,
            })
        );
        assert_eq!(
            invocation("/hello"),
            Some(Invocation {
                name: "hello".into(),
                args: String::new(),
                source: PROJECT_SOURCE,
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

    #[test]
    fn positional_arguments_as_recorded() {
        let path = Path::new("/p/.claude/commands/pos.md");
        // S241-positional: counted from 0, quotes group, missing ones empty.
        let text = b"one=$1 two=$2 three=$3 four=$4 all=$ARGUMENTS idx=$ARGUMENTS[1] zero=$0\n";
        assert_eq!(
            expand(path, text, "alpha \"beta gamma\" delta")
                .ok()
                .as_deref(),
            Some(
                "one=beta gamma two=delta three= four= all=alpha \"beta gamma\" delta idx=beta gamma zero=alpha\n"
            )
        );
        // A positional use counts as a use: no ARGUMENTS line.
        assert_eq!(expand(path, b"x $0", "a b").ok().as_deref(), Some("x a"));
        // `$1x` is not `$1`; `\$1` stays `$1`; `\\$1` is not an escape.
        assert_eq!(
            expand(path, b"$1x \\$1 \\\\$0", "a b").ok().as_deref(),
            Some("$1x $1 \\\\a")
        );
        assert_eq!(
            split_args("a 'b c' d\\ e \"f\\\"g\""),
            ["a", "b c", "d e", "f\"g"]
        );
        assert_eq!(split_args("   "), Vec::<String>::new());
    }
}
