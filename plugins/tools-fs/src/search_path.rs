//! Paths as Claude Code 2.1.197's `Glob` and `Grep` handle them (read from
//! its bundled source, confirmed by the recorded `S290-*`): how a `path`
//! argument resolves, how a found file is shown (relative to the session's
//! cwd unless it lies outside it), the refusal for a path that does not
//! exist, and the order of file names that tie on their modification
//! time.

use std::cmp::Ordering;
use std::path::{Component, Path, PathBuf};

/// Claude Code's note after a refusal naming a path.
pub const CWD_NOTE: &str = "Note: your current working directory is";

/// `path` resolved as Claude Code resolves a tool's path argument: `~`
/// and `~/…` from the home folder, a relative path against `cwd`, then
/// `.` and `..` folded away (Node's `path.resolve`).
pub fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let joined = match (path, path.strip_prefix("~/"), &home) {
        ("~", _, Some(home)) => home.clone(),
        (_, Some(rest), Some(home)) => home.join(rest),
        _ => cwd.join(path),
    };
    normalize(&joined)
}

/// `path` with `.` and `..` folded away, lexically (no symlinks read).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Node's `path.relative(from, to)` for absolute, normalized paths.
pub fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().skip(1).collect();
    let to: Vec<_> = to.components().skip(1).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// How Claude Code shows a found path: relative to `cwd`, or as it is when
/// that would climb out of `cwd` (its `ott`). A relative `shown` is
/// resolved against `cwd` first, as Node's `path.relative` does.
pub fn shown(cwd: &Path, shown: &str) -> String {
    let full = normalize(&cwd.join(shown));
    let rel = relative(&normalize(cwd), &full);
    if rel.starts_with("..") {
        shown.to_string()
    } else {
        rel
    }
}

/// The refusal for a `path` argument that does not exist, in Claude Code's
/// words: `<what> does not exist: <path>. Note: your current working
/// directory is <cwd>.`, plus ` Did you mean <path>?` when the same
/// relative place exists under `cwd` ([`did_you_mean`]).
pub fn missing(what: &str, given: &str, resolved: &Path, cwd: &Path) -> String {
    let mut text = format!(
        "{what} does not exist: {given}. {CWD_NOTE} {}.",
        cwd.display()
    );
    if let Some(guess) = did_you_mean(resolved, cwd) {
        text.push_str(&format!(" Did you mean {}?", guess.display()));
    }
    text
}

/// The `path` argument `given` as a search reads it: its metadata when it
/// exists (`None` when it cannot be looked at: the tool judges it), or
/// `Err` with [`missing`]'s refusal naming it as `what`.
pub fn given_path(
    what: &str,
    given: &str,
    cwd: &Path,
) -> Result<Option<std::fs::Metadata>, String> {
    let resolved = resolve(cwd, given);
    match std::fs::metadata(&resolved) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(missing(what, given, &resolved, cwd))
        }
        meta => Ok(meta.ok()),
    }
}

/// Claude Code's guess for a missing path: one that lies beside `cwd`
/// (under its parent but not under `cwd`) may have meant the same place
/// under `cwd`, if that exists.
pub fn did_you_mean(resolved: &Path, cwd: &Path) -> Option<PathBuf> {
    let parent = cwd.parent()?;
    let real = resolved
        .parent()
        .and_then(|dir| std::fs::canonicalize(dir).ok())
        .and_then(|dir| Some(dir.join(resolved.file_name()?)))
        .unwrap_or_else(|| resolved.to_path_buf());
    if !real.starts_with(parent) || real.starts_with(cwd) {
        return None;
    }
    let guess = cwd.join(real.strip_prefix(parent).ok()?);
    std::fs::metadata(&guess).is_ok().then_some(guess)
}

/// An approximation of JavaScript's `a.localeCompare(b)` (ICU's root
/// collation) good for file paths: punctuation before digits before
/// letters, letters compared without case first, lower case before upper
/// case on a tie. Claude Code breaks ties of equal modification times
/// with it.
pub fn locale_cmp(a: &str, b: &str) -> Ordering {
    fn class(c: char) -> u8 {
        if c.is_alphabetic() {
            2
        } else if c.is_numeric() {
            1
        } else {
            0
        }
    }
    let primary = |s: &str| -> Vec<(u8, char)> {
        s.chars()
            .map(|c| (class(c), c.to_lowercase().next().unwrap_or(c)))
            .collect()
    };
    primary(a).cmp(&primary(b)).then_with(|| {
        // Tertiary: lower case first.
        let flip = |s: &str| -> Vec<bool> { s.chars().map(char::is_uppercase).collect() };
        flip(a).cmp(&flip(b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_paths_are_relative_inside_cwd_and_whole_outside() {
        let cwd = Path::new("/w/proj");
        assert_eq!(shown(cwd, "/w/proj/src/a.rs"), "src/a.rs");
        assert_eq!(shown(cwd, "/w/other/a.rs"), "/w/other/a.rs");
        assert_eq!(shown(cwd, "4"), "4");
        assert_eq!(shown(cwd, "/w/proj"), "");
    }

    #[test]
    fn resolve_folds_dots_and_relative_paths() {
        let cwd = Path::new("/w/proj");
        assert_eq!(resolve(cwd, "src/../sub"), PathBuf::from("/w/proj/sub"));
        assert_eq!(resolve(cwd, "/etc/./x"), PathBuf::from("/etc/x"));
        assert_eq!(relative(cwd, Path::new("/w/x")), "../x");
    }

    #[test]
    fn locale_order_puts_punctuation_first_and_ignores_case_first() {
        let mut v = vec!["b.rs", "A.rs", "a.rs", ".x", "1.rs"];
        v.sort_by(|a, b| locale_cmp(a, b));
        assert_eq!(v, [".x", "1.rs", "a.rs", "A.rs", "b.rs"]);
    }

    #[test]
    fn a_missing_path_beside_cwd_suggests_the_one_under_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(cwd.join("src")).expect("mkdir");
        let beside = dir.path().join("src");
        assert_eq!(did_you_mean(&beside, &cwd), Some(cwd.join("src")));
        assert_eq!(did_you_mean(&cwd.join("nope"), &cwd), None);
        let text = missing("Path", "../src", &beside, &cwd);
        assert!(
            text.ends_with(&format!("Did you mean {}?", cwd.join("src").display())),
            "{text}"
        );
    }
}
