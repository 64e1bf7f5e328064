//! What the permission rules need to know about a shell command: its parts
//! (`a && b`, `a | b`, `a; b`), whether it only reads, and whether it
//! creates or changes files by name.
//!
//! Claude Code runs read-only commands (`echo hi`, `ls`, `git status`)
//! without asking (recorded: S30, `echo hi` ran in every mode) and asks for
//! the rest ("This command requires approval"); a command that writes a
//! named file (`touch x`) is asked about with its own text (vectors
//! S1-permission-needed, S3-control-no-output). The read-only list here is
//! deliberately small: anything not on it asks.

/// Splits `command` on `&&`, `||`, `;`, `|` and newlines outside quotes;
/// parts are trimmed and empty ones dropped.
pub(crate) fn split(command: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some('"'), '\\') => {
                current.push(c);
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            (Some(_), c) => current.push(c),
            (None, '\\') => {
                current.push(c);
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (None, ';' | '\n') => parts.push(std::mem::take(&mut current)),
            (None, '&') if chars.peek() == Some(&'&') => {
                chars.next();
                parts.push(std::mem::take(&mut current));
            }
            (None, '|') => {
                if chars.peek() == Some(&'|') {
                    chars.next();
                }
                parts.push(std::mem::take(&mut current));
            }
            (None, c) => current.push(c),
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The words of one part, quotes removed (no expansion).
fn words(part: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in part.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

/// Commands that only read (with any arguments).
const READ_ONLY: &[&str] = &[
    "echo",
    "printf",
    "ls",
    "pwd",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "rg",
    "which",
    "whoami",
    "date",
    "true",
    "false",
    "sort",
    "uniq",
    "cut",
    "tr",
    "stat",
    "file",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "du",
    "df",
    "uname",
    "id",
    "hostname",
    "test",
    "[",
    "tree",
    "diff",
    "cmp",
    "less",
    "more",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "sha256sum",
    "md5sum",
    "env",
    "printenv",
];
/// Git subcommands that only read.
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "branch",
    "blame",
    "rev-parse",
    "ls-files",
];
/// Commands that create or change the files they name.
const WRITES_PATHS: &[&str] = &[
    "touch", "mkdir", "rm", "rmdir", "mv", "cp", "ln", "chmod", "chown",
];

/// Whether every part of `command` only reads: a listed command, no output
/// redirection, no substitution.
pub(crate) fn is_read_only(command: &str) -> bool {
    if command.contains('>') || command.contains("$(") || command.contains('`') {
        return false;
    }
    let parts = split(command);
    !parts.is_empty()
        && parts.iter().all(|part| {
            let w = words(part);
            match w.first().map(String::as_str) {
                Some("git") => w
                    .get(1)
                    .is_some_and(|s| GIT_READ_ONLY.contains(&s.as_str())),
                Some("find") => !w.iter().any(|a| {
                    matches!(
                        a.as_str(),
                        "-exec" | "-execdir" | "-delete" | "-ok" | "-fprint"
                    )
                }),
                Some(cmd) => READ_ONLY.contains(&cmd),
                None => false,
            }
        })
}

/// The paths `command` changes when it is only filesystem commands
/// (`touch`, `mkdir`, `rm`, ...) and read-only ones; `None` when any part
/// is something else (or redirects, or substitutes). `acceptEdits` runs
/// such a command inside the session's folder (recorded, S35).
pub(crate) fn filesystem_paths(command: &str) -> Option<Vec<String>> {
    if command.contains('>') || command.contains("$(") || command.contains('`') {
        return None;
    }
    let mut paths = Vec::new();
    for part in split(command) {
        let w = words(&part);
        let cmd = w.first()?;
        if WRITES_PATHS.contains(&cmd.as_str()) {
            paths.extend(w.iter().skip(1).filter(|a| !a.starts_with('-')).cloned());
        } else if !is_read_only(&part) {
            return None;
        }
    }
    (!paths.is_empty()).then_some(paths)
}

/// The first part of `command` that writes a named file: the command's
/// name and the first path it names.
pub(crate) fn first_path_write(command: &str) -> Option<(String, String)> {
    split(command).iter().find_map(|part| {
        let w = words(part);
        let cmd = w.first()?;
        if !WRITES_PATHS.contains(&cmd.as_str()) {
            return None;
        }
        let path = w.iter().skip(1).find(|a| !a.starts_with('-'))?;
        Some((cmd.clone(), path.clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes_only() {
        assert_eq!(
            split("a && b || c; d | e\nf"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(
            split("echo 'x && y' \"a;b\" c\\;d"),
            ["echo 'x && y' \"a;b\" c\\;d"]
        );
        assert_eq!(split("  "), Vec::<String>::new());
    }

    #[test]
    fn read_only_is_a_short_list() {
        for ro in [
            "echo hi",
            "ls -la | wc -l",
            "git status && git diff",
            "find . -name x",
        ] {
            assert!(is_read_only(ro), "{ro}");
        }
        for rw in [
            "python3 -c 'print(41+1)'",
            "echo hi > f",
            "echo $(rm x)",
            "git push",
            "find . -delete",
            "touch made_by_bash.txt && echo hi",
            "",
        ] {
            assert!(!is_read_only(rw), "{rw}");
        }
    }

    #[test]
    fn filesystem_commands_and_their_paths() {
        assert_eq!(
            filesystem_paths("touch a && mkdir -p b/c"),
            Some(vec!["a".into(), "b/c".into()])
        );
        assert_eq!(filesystem_paths("rm -f x; ls"), Some(vec!["x".into()]));
        assert_eq!(filesystem_paths("touch a && python3 x.py"), None);
        assert_eq!(filesystem_paths("echo hi > a"), None);
        assert_eq!(filesystem_paths("ls"), None);
    }

    #[test]
    fn finds_the_first_named_write() {
        assert_eq!(
            first_path_write("touch made_by_bash.txt && echo hi"),
            Some(("touch".into(), "made_by_bash.txt".into()))
        );
        assert_eq!(
            first_path_write("echo hi; mkdir -p 'a b'"),
            Some(("mkdir".into(), "a b".into()))
        );
        assert_eq!(first_path_write("python3 x.py"), None);
    }
}
