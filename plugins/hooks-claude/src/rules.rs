//! Claude Code's rule files (`.claude/rules/**/*.md`): the frontmatter
//! every memory file may start with, a rule's `paths:` globs, and whether
//! a file a tool touched matches them.
//!
//! Recorded from Claude Code 2.1.197 (vectors `S240-*`,
//! `tools/recorder-scenarios/FINDINGS-memory2.md`); the details not
//! visible in a recording are read from the CLI's loader. A memory file
//! that starts with a frontmatter block (`---` … `---`, the regex
//! `^---\s*\n([\s\S]*?)---\s*\n?`) loses it, whatever it holds. A rule
//! whose frontmatter has `paths:` (a string or a list; commas split a
//! string outside braces, `{a,b}` expands, a trailing `/**` is dropped;
//! nothing left or only `**` makes it unconditional) is *conditional*: it
//! loads when a file it matches is read. Its globs are gitignore patterns
//! (Claude Code uses the `ignore` package) against the file's path
//! relative to the folder holding the rule's `.claude` (a user rule's:
//! the session's folder). Claude Code walks a rules folder in directory
//! order, which depends on the filesystem; dsh walks it sorted by name.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How deep a rules folder is walked.
const MAX_RULES_DEPTH: usize = 16;

/// A memory file's text split into its frontmatter (the YAML between the
/// `---` lines) and the rest.
pub fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
    let Some(after) = text.strip_prefix("---") else {
        return (None, text);
    };
    // `\s*\n`: the white space after the opening dashes, up to its last
    // newline.
    let ws = after.len() - after.trim_start().len();
    let Some(nl) = after[..ws].rfind('\n') else {
        return (None, text);
    };
    let yaml_start = nl + 1;
    let Some(close) = after[yaml_start..].find("---") else {
        return (None, text);
    };
    let yaml = &after[yaml_start..yaml_start + close];
    // `---\s*\n?`: every white space character after the closing dashes.
    let rest = after[yaml_start + close + 3..].trim_start();
    (Some(yaml), rest)
}

/// The `paths:` globs of a file's frontmatter, as Claude Code reads them;
/// `None` for a file that is not a conditional rule.
pub fn paths_of(yaml: &str) -> Option<Vec<String>> {
    let value: serde_yaml::Value = serde_yaml::from_str(yaml).ok()?;
    let paths = value.get("paths")?;
    let mut raw = Vec::new();
    flatten(paths, &mut raw);
    let globs: Vec<String> = raw
        .iter()
        .flat_map(|s| split_commas(s))
        .flat_map(|s| expand_braces(&s))
        .map(|g| g.strip_suffix("/**").map(str::to_string).unwrap_or(g))
        .filter(|g| !g.is_empty())
        .collect();
    if globs.is_empty() || globs.iter().all(|g| g == "**") {
        return None;
    }
    Some(globs)
}

fn flatten(v: &serde_yaml::Value, out: &mut Vec<String>) {
    match v {
        serde_yaml::Value::String(s) => out.push(s.clone()),
        serde_yaml::Value::Sequence(items) => items.iter().for_each(|i| flatten(i, out)),
        _ => {}
    }
}

/// `s` split at commas outside braces, each part trimmed, empty ones out.
fn split_commas(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => {
                let part = cur.trim();
                if !part.is_empty() {
                    out.push(part.to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    let part = cur.trim();
    if !part.is_empty() {
        out.push(part.to_string());
    }
    out
}

/// The first `{a,b}` group of `s` expanded, recursively.
fn expand_braces(s: &str) -> Vec<String> {
    let Some(open) = s.find('{') else {
        return vec![s.to_string()];
    };
    let Some(len) = s[open + 1..].find('}').filter(|&n| n > 0) else {
        return vec![s.to_string()];
    };
    let (head, body, tail) = (
        &s[..open],
        &s[open + 1..open + 1 + len],
        &s[open + 2 + len..],
    );
    body.split(',')
        .flat_map(|alt| expand_braces(&format!("{head}{}{tail}", alt.trim())))
        .collect()
}

/// The `.md` files under a rules folder, sorted by name, folders walked
/// where they sort; a folder seen before (a symlink loop) is skipped.
pub fn rule_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut visited = HashSet::new();
    walk(dir, 0, &mut visited, &mut out);
    out
}

fn walk(dir: &Path, depth: usize, visited: &mut HashSet<PathBuf>, out: &mut Vec<PathBuf>) {
    if depth > MAX_RULES_DEPTH {
        return;
    }
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !visited.insert(real) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<std::ffi::OsString> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        // Symlinks followed, as Claude Code follows them.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, depth + 1, visited, out);
        } else if meta.is_file() && path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// Whether `file` matches `globs` relative to `base`: a file outside
/// `base` (or `base` itself) matches nothing.
pub fn matches(globs: &[String], base: &Path, file: &Path) -> bool {
    let Ok(rel) = file.strip_prefix(base) else {
        return false;
    };
    let segments: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segments.is_empty() || segments.iter().any(|s| s == "..") {
        return false;
    }
    let patterns: Vec<Pattern> = globs.iter().filter_map(|g| Pattern::parse(g)).collect();
    ignored(&patterns, &segments)
}

/// Whether the `ignore` package ignores `segments`: a path is ignored when
/// one of its parent folders is, or the last pattern matching it (after
/// its parents' verdicts) is not a negation.
fn ignored(patterns: &[Pattern], segments: &[String]) -> bool {
    for k in 1..=segments.len() {
        let is_dir = k < segments.len();
        let mut verdict = false;
        for p in patterns {
            if p.dir_only && !is_dir {
                continue;
            }
            if p.negated == verdict && p.matches(&segments[..k]) {
                verdict = !p.negated;
            }
        }
        if verdict {
            return true;
        }
    }
    false
}

/// One gitignore pattern.
struct Pattern {
    negated: bool,
    dir_only: bool,
    /// Its segments; a pattern without a slash gets a leading `**`.
    segments: Vec<String>,
}

impl Pattern {
    fn parse(glob: &str) -> Option<Pattern> {
        let mut g = glob.trim_end_matches(' ');
        if g.is_empty() || g.starts_with('#') {
            return None;
        }
        let negated = g.starts_with('!');
        if negated {
            g = &g[1..];
        }
        let dir_only = g.ends_with('/');
        let g = g.trim_end_matches('/');
        let anchored = g.contains('/');
        let g = g.trim_start_matches('/');
        if g.is_empty() {
            return None;
        }
        let mut segments: Vec<String> = Vec::new();
        if !anchored {
            segments.push("**".into());
        }
        segments.extend(g.split('/').map(str::to_string));
        Some(Pattern {
            negated,
            dir_only,
            segments,
        })
    }

    fn matches(&self, path: &[String]) -> bool {
        match_segments(&self.segments, path)
    }
}

fn match_segments(pat: &[String], path: &[String]) -> bool {
    match pat.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| match_segments(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((seg, more)) => wildcard(first, seg) && match_segments(rest, more),
            None => false,
        },
    }
}

/// One segment against one glob segment: `*`, `?`, `[…]` (`!`/`^`
/// negates, ranges), `\` escapes.
fn wildcard(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    wild(&p, &t)
}

fn wild(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') => (0..=t.len()).any(|k| wild(&p[1..], &t[k..])),
        Some('?') => !t.is_empty() && wild(&p[1..], &t[1..]),
        Some('[') => match (class(&p[1..]), t.first()) {
            (Some((ok, used)), Some(&c)) => ok(c) && wild(&p[1 + used..], &t[1..]),
            (None, Some(&c)) => c == '[' && wild(&p[1..], &t[1..]),
            (_, None) => false,
        },
        Some('\\') if p.len() > 1 => t.first() == Some(&p[1]) && wild(&p[2..], &t[1..]),
        Some(&c) => t.first() == Some(&c) && wild(&p[1..], &t[1..]),
    }
}

type ClassTest = Box<dyn Fn(char) -> bool>;

/// A `[…]` class after its `[`: its test and how many characters it took
/// (through the `]`); `None` when it does not close.
fn class(p: &[char]) -> Option<(ClassTest, usize)> {
    let mut i = 0;
    let negated = matches!(p.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    let start = i;
    while i < p.len() {
        if p[i] == ']' && i > start {
            let test = move |c: char| ranges.iter().any(|&(a, b)| a <= c && c <= b) != negated;
            return Some((Box::new(test), i + 1));
        }
        let a = p[i];
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            ranges.push((a, p[i + 2]));
            i += 3;
        } else {
            ranges.push((a, a));
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(globs: &[&str], rel: &str) -> bool {
        let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
        matches(&globs, Path::new("/b"), &Path::new("/b").join(rel))
    }

    #[test]
    fn gitignore_patterns_as_the_recordings_and_the_ignore_package_have_them() {
        // S240: `src/**/*.rs`, `docs/**/*.md`, `*.txt` at any depth.
        assert!(m(&["src/**/*.rs"], "src/a.rs"));
        assert!(m(&["src/**/*.rs"], "src/x/y/a.rs"));
        assert!(!m(&["src/**/*.rs"], "lib/src/a.rs"));
        assert!(m(&["docs/**/*.md", "*.txt"], "docs/x.md"));
        assert!(m(&["*.txt"], "deeper/x.txt"));
        assert!(!m(&["*.txt"], "notes.md"));
        // A folder pattern takes what is inside; `/x` is anchored.
        assert!(m(&["src"], "src/a.rs"));
        assert!(m(&["build/"], "build/out.bin"));
        assert!(!m(&["build/"], "build"));
        assert!(m(&["/top.rs"], "top.rs"));
        assert!(!m(&["/top.rs"], "a/top.rs"));
        // Negation, classes, `?`, escapes.
        assert!(!m(&["*.rs", "!keep.rs"], "keep.rs"));
        assert!(m(&["[a-c]?.rs"], "bx.rs"));
        assert!(!m(&["[!a-c]?.rs"], "bx.rs"));
        assert!(m(&["\\*.rs"], "*.rs"));
        // Outside the base, or the base itself: nothing.
        let g = vec!["**".to_string()];
        assert!(!matches(&g, Path::new("/b"), Path::new("/c/a.rs")));
        assert!(!matches(&g, Path::new("/b"), Path::new("/b")));
    }

    #[test]
    fn frontmatter_and_paths_as_claude_code_reads_them() {
        assert_eq!(
            split_frontmatter("---\npaths: src/**/*.rs\n---\nbody\n"),
            (Some("paths: src/**/*.rs\n"), "body\n")
        );
        assert_eq!(split_frontmatter("no\n---\n"), (None, "no\n---\n"));
        assert_eq!(
            split_frontmatter("---\nx: 1\n---\n\n\nbody"),
            (Some("x: 1\n"), "body")
        );
        assert_eq!(
            split_frontmatter("---\nnever closed\n"),
            (None, "---\nnever closed\n")
        );
        let p = |y: &str| paths_of(y);
        assert_eq!(
            p("paths: src/**/*.rs"),
            Some(vec!["src/**/*.rs".to_string()])
        );
        assert_eq!(
            p("paths:\n  - \"docs/**/*.md\"\n  - \"*.txt\"\n"),
            Some(vec!["docs/**/*.md".to_string(), "*.txt".to_string()])
        );
        assert_eq!(
            p("paths: \"a/*.{ts,tsx}, lib/**\""),
            Some(vec!["a/*.ts".into(), "a/*.tsx".into(), "lib".into()])
        );
        assert_eq!(p("paths: \"**\""), None);
        assert_eq!(p("description: no paths"), None);
        assert_eq!(p("paths: [1, 2]"), None);
        assert_eq!(p(": not yaml ["), None);
    }

    #[test]
    fn rule_folders_are_walked_sorted_and_loops_end() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::create_dir_all(d.join("zz")).unwrap();
        std::fs::write(d.join("style.md"), "s").unwrap();
        std::fs::write(d.join("zz/deep.md"), "d").unwrap();
        std::fs::write(d.join("a.txt"), "not md").unwrap();
        std::os::unix::fs::symlink(d, d.join("zz/loop")).unwrap();
        let got: Vec<PathBuf> = rule_files(d);
        assert_eq!(got, vec![d.join("style.md"), d.join("zz/deep.md")]);
    }
}
