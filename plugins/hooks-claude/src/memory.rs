//! Claude Code's memory files (`CLAUDE.md` and friends): which load when a
//! session starts, in what order, and the text the model reads of them.
//!
//! Recorded from Claude Code 2.1.197 (vectors `S187-*`,
//! `tools/recorder-scenarios/FINDINGS-csub2.md` §4): the user's
//! `<home>/.claude/CLAUDE.md` first, then for every folder from `/` down to
//! the session's folder its `CLAUDE.md`, `.claude/CLAUDE.md` (both
//! "Project") and `CLAUDE.local.md` ("Local"). A file is read whole (none
//! over 4 MiB), HTML comment blocks taken out, and left out when nothing but
//! blanks remains. An `@path` in a file's text imports that file right after
//! it (depth at most 5, each file once; relative to the importing file's
//! folder; a project file imports only files inside the session's folder, the
//! user's file any), a missing one silently. The model reads them in one
//! `<system-reminder>` of Claude Code's context block, each as `Contents of
//! <path> (<kind>):` and its trimmed text ([`reminder`]); dsh sends no
//! `# currentDate` section, so the block holds the `# claudeMd` one only.
//!
//! Rules and nested memory (S240, [`crate::rules`],
//! `tools/recorder-scenarios/FINDINGS-memory2.md`): every file loses its
//! frontmatter block; the user's `~/.claude/rules/**/*.md` follow the user's
//! file, each folder's `.claude/rules/**/*.md` follow its `.claude/CLAUDE.md`
//! (before `CLAUDE.local.md`), the rules with `paths:` left out ([`load`]).
//! When `Read` reads a file inside the session's folder, [`nested`] gives
//! what that loads: the user's conditional rules matching it, then for each
//! folder between the session's folder and the file's (top down) its
//! `CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md`, unconditional and
//! matching conditional rules, then the matching conditional rules of the
//! session's folder and its parents; each file once per session.
//! Not done (not recorded): managed files.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// Claude Code's size limit for one memory file (bytes).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// How deep imports go (a file's imports are depth 1).
pub const MAX_IMPORT_DEPTH: usize = 5;

/// The heading of the `# claudeMd` section.
pub const CLAUDE_MD_HEAD: &str = "Codebase and user instructions are shown below. Be sure to \
adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and \
you MUST follow them exactly as written.";

/// Which layer a memory file belongs to (the hook payload's `memory_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryType {
    User,
    Project,
    Local,
}

impl MemoryType {
    /// The name hooks are told.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "User",
            MemoryType::Project => "Project",
            MemoryType::Local => "Local",
        }
    }

    /// What the model is told the file is.
    fn description(self) -> &'static str {
        match self {
            MemoryType::User => " (user's private global instructions for all projects)",
            MemoryType::Project => " (project instructions, checked into the codebase)",
            MemoryType::Local => " (user's private project instructions, not checked in)",
        }
    }
}

/// One loaded memory file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryFile {
    pub path: PathBuf,
    pub kind: MemoryType,
    /// Its text, HTML comment blocks taken out (untrimmed).
    pub content: String,
    /// The file that imported it.
    pub parent: Option<PathBuf>,
    /// A conditional rule's `paths:` globs ([`crate::rules`]).
    pub globs: Option<Vec<String>>,
}

/// The memory files of a session started in `cwd`, in Claude Code's order.
/// A file that exists but cannot be read is reported through `warn` (with
/// its path) and left out.
pub fn load(home: &Path, cwd: &Path, warn: &mut dyn FnMut(String)) -> Vec<MemoryFile> {
    let mut loader = Loader {
        cwd,
        seen: HashSet::new(),
        warn,
    };
    let user_dir = home.join(".claude");
    let mut out = loader.file(&user_dir.join("CLAUDE.md"), MemoryType::User, None, 0);
    out.extend(loader.rules(&user_dir.join("rules"), MemoryType::User, None));
    let mut dirs: Vec<&Path> = cwd.ancestors().collect();
    dirs.reverse();
    for dir in dirs {
        let dot = dir.join(".claude");
        out.extend(loader.file(&dir.join("CLAUDE.md"), MemoryType::Project, None, 0));
        out.extend(loader.file(&dot.join("CLAUDE.md"), MemoryType::Project, None, 0));
        out.extend(loader.rules(&dot.join("rules"), MemoryType::Project, None));
        out.extend(loader.file(&dir.join("CLAUDE.local.md"), MemoryType::Local, None, 0));
    }
    out
}

/// What reading `file` loads in a session started in `cwd` (Claude Code's
/// nested memory), leaving out every path in `loaded` (what the session
/// has loaded or read already). Nothing for a file outside `cwd`.
pub fn nested(
    home: &Path,
    cwd: &Path,
    file: &Path,
    loaded: &HashSet<PathBuf>,
    warn: &mut dyn FnMut(String),
) -> Vec<MemoryFile> {
    let file = normalize(file);
    if !file.starts_with(cwd) || file == cwd {
        return Vec::new();
    }
    let mut loader = Loader {
        cwd,
        seen: HashSet::new(),
        warn,
    };
    let user_rules = home.join(".claude").join("rules");
    let mut out = loader.rules(&user_rules, MemoryType::User, Some((cwd, &file)));
    // The folders below the session's, down to the file's, top down.
    let mut below: Vec<&Path> = file
        .ancestors()
        .skip(1)
        .take_while(|d| *d != cwd && d.starts_with(cwd))
        .collect();
    below.reverse();
    for dir in below {
        let dot = dir.join(".claude");
        out.extend(loader.file(&dir.join("CLAUDE.md"), MemoryType::Project, None, 0));
        out.extend(loader.file(&dot.join("CLAUDE.md"), MemoryType::Project, None, 0));
        out.extend(loader.file(&dir.join("CLAUDE.local.md"), MemoryType::Local, None, 0));
        let rules = dot.join("rules");
        // The unconditional rules on a copy of what was seen, as Claude
        // Code's loader does, so a conditional one is still looked at.
        let before = loader.seen.clone();
        let unconditional = loader.rules(&rules, MemoryType::Project, None);
        let after = std::mem::replace(&mut loader.seen, before);
        out.extend(unconditional);
        out.extend(loader.rules(&rules, MemoryType::Project, Some((dir, &file))));
        loader.seen.extend(after);
    }
    // The session's folder and its parents (not `/`), top down: their
    // conditional rules.
    let mut up: Vec<&Path> = cwd.ancestors().filter(|d| d.parent().is_some()).collect();
    up.reverse();
    for dir in up {
        let rules = dir.join(".claude").join("rules");
        out.extend(loader.rules(&rules, MemoryType::Project, Some((dir, &file))));
    }
    out.retain(|f| !loaded.contains(&f.path));
    out
}

struct Loader<'a> {
    cwd: &'a Path,
    seen: HashSet<PathBuf>,
    warn: &'a mut dyn FnMut(String),
}

impl Loader<'_> {
    /// The rule files of a rules folder with their imports: the
    /// unconditional ones (`matching` `None`), or the conditional ones
    /// matching the file `matching` names, relative to the folder it names.
    fn rules(
        &mut self,
        dir: &Path,
        kind: MemoryType,
        matching: Option<(&Path, &Path)>,
    ) -> Vec<MemoryFile> {
        let mut out = Vec::new();
        for path in crate::rules::rule_files(dir) {
            let loaded = self.file(&path, kind, None, 0);
            out.extend(loaded.into_iter().filter(|f| match (matching, &f.globs) {
                (None, globs) => globs.is_none(),
                (Some((base, file)), Some(globs)) => crate::rules::matches(globs, base, file),
                (Some(_), None) => false,
            }));
        }
        out
    }

    /// A memory file and what it imports, in order.
    fn file(
        &mut self,
        path: &Path,
        kind: MemoryType,
        parent: Option<&Path>,
        depth: usize,
    ) -> Vec<MemoryFile> {
        let path = normalize(path);
        if depth >= MAX_IMPORT_DEPTH || !self.seen.insert(path.clone()) {
            return Vec::new();
        }
        let Some(text) = self.read(&path) else {
            return Vec::new();
        };
        let (yaml, body) = crate::rules::split_frontmatter(&text);
        let globs = yaml.and_then(crate::rules::paths_of);
        let content = strip_comment_blocks(body);
        if content.trim().is_empty() {
            return Vec::new();
        }
        let imports = imports(&content, &path);
        let mut out = vec![MemoryFile {
            path: path.clone(),
            kind,
            content,
            parent: parent.map(Path::to_path_buf),
            globs,
        }];
        for import in imports {
            // A project file imports only files inside the session's
            // folder (Claude Code asks before going outside; `-p` never
            // asks); the user's file imports any.
            if kind != MemoryType::User && !import.starts_with(self.cwd) {
                continue;
            }
            if !is_text_file(&import) {
                continue;
            }
            out.extend(self.file(&import, kind, Some(&path), depth + 1));
        }
        out
    }

    fn read(&mut self, path: &Path) -> Option<String> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return None,
            Err(e) => {
                (self.warn)(format!("memory file {}: {e}", path.display()));
                return None;
            }
        };
        if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
            if meta.is_file() {
                (self.warn)(format!(
                    "memory file {}: over {MAX_FILE_BYTES} bytes, not loaded",
                    path.display()
                ));
            }
            return None;
        }
        match std::fs::read(path) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) => {
                (self.warn)(format!("memory file {}: {e}", path.display()));
                None
            }
        }
    }
}

/// `path` with `.` and `..` resolved lexically (as Node's `path.resolve`).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Extensions Claude Code imports (a file without one too).
const TEXT_EXTENSIONS: &[&str] = &[
    "md",
    "txt",
    "text",
    "json",
    "yaml",
    "yml",
    "toml",
    "xml",
    "csv",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "js",
    "ts",
    "tsx",
    "jsx",
    "mjs",
    "cjs",
    "mts",
    "cts",
    "py",
    "pyi",
    "pyw",
    "rb",
    "erb",
    "rake",
    "go",
    "rs",
    "java",
    "kt",
    "kts",
    "scala",
    "c",
    "cpp",
    "cc",
    "cxx",
    "h",
    "hpp",
    "hxx",
    "cs",
    "swift",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "cmd",
    "env",
    "ini",
    "cfg",
    "conf",
    "config",
    "properties",
    "sql",
    "graphql",
    "gql",
    "proto",
    "vue",
    "svelte",
    "astro",
    "ejs",
    "hbs",
    "pug",
    "jade",
    "php",
    "pl",
    "pm",
    "lua",
    "r",
    "dart",
    "ex",
    "exs",
    "erl",
    "hrl",
    "clj",
    "cljs",
    "cljc",
    "edn",
    "hs",
    "lhs",
    "elm",
    "ml",
    "mli",
    "f",
    "f90",
    "f95",
    "for",
    "cmake",
    "make",
    "makefile",
    "gradle",
    "sbt",
    "rst",
    "adoc",
    "asciidoc",
    "org",
    "tex",
    "latex",
    "lock",
    "log",
    "diff",
    "patch",
];

fn is_text_file(path: &Path) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        None => true,
        Some(e) => TEXT_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()),
    }
}

/// The text with every HTML comment block taken out: a block that starts
/// a line with `<!--` runs to the line holding `-->`; what is left of it
/// besides comments stays when it is not blank.
pub fn strip_comment_blocks(text: &str) -> String {
    if !text.contains("<!--") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        if !line.trim_start().starts_with("<!--") {
            out.push_str(line);
            continue;
        }
        let mut block = line.to_string();
        while !block.contains("-->") {
            match lines.next() {
                Some(l) => block.push_str(l),
                None => break,
            }
        }
        if !block.contains("-->") {
            out.push_str(&block);
            continue;
        }
        let rest = remove_comments(&block);
        if !rest.trim().is_empty() {
            out.push_str(&rest);
        }
    }
    out
}

fn remove_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The files `content` (of the file at `path`) imports: each `@path` that
/// starts the text or follows white space, outside code, in order.
fn imports(content: &str, path: &Path) -> Vec<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut out: Vec<PathBuf> = Vec::new();
    let mut fenced = false;
    for line in content.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for token in at_tokens(&without_code_spans(line)) {
            if let Some(p) = import_path(&token, dir)
                && !out.contains(&p)
            {
                out.push(p);
            }
        }
    }
    out
}

fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// Every `@token` at the start or after white space (`\ ` keeps a space).
fn at_tokens(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i] == '@' && (i == 0 || chars[i - 1].is_whitespace());
        if !starts {
            i += 1;
            continue;
        }
        let mut token = String::new();
        let mut j = i + 1;
        while j < chars.len() {
            if chars[j] == '\\' && chars.get(j + 1) == Some(&' ') {
                token.push(' ');
                j += 2;
            } else if chars[j].is_whitespace() || chars[j] == '\\' {
                break;
            } else {
                token.push(chars[j]);
                j += 1;
            }
        }
        if !token.is_empty() {
            out.push(token);
        }
        i = j.max(i + 1);
    }
    out
}

/// The file an `@token` names, relative to `dir`; `None` for what is not
/// a path (`@mention`s of other shapes).
fn import_path(token: &str, dir: &Path) -> Option<PathBuf> {
    let token = token.split('#').next().unwrap_or("");
    if token.is_empty() {
        return None;
    }
    let first = token.chars().next()?;
    let path_like = token.starts_with("./")
        || token.starts_with("~/")
        || (token.starts_with('/') && token != "/")
        || (first.is_ascii_alphanumeric() || matches!(first, '.' | '_' | '-'));
    if !path_like {
        return None;
    }
    let p = if let Some(rest) = token.strip_prefix("~/") {
        PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(rest)
    } else {
        dir.join(token)
    };
    Some(normalize(&p))
}

/// The `# claudeMd` section's text: the heading, then each file.
pub fn claude_md_text(files: &[MemoryFile]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let parts: Vec<String> = files
        .iter()
        .map(|f| {
            format!(
                "Contents of {}{}:\n\n{}",
                f.path.display(),
                f.kind.description(),
                f.content.trim()
            )
        })
        .collect();
    Some(format!("{CLAUDE_MD_HEAD}\n\n{}", parts.join("\n\n")))
}

/// What the model reads of the files a `Read` loaded (S240): Claude
/// Code's system message after the tool's result, each file as
/// `Contents of <path>:` and its text (untrimmed), joined by a blank line.
pub fn nested_text(files: &[MemoryFile]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let parts: Vec<String> = files
        .iter()
        .map(|f| format!("Contents of {}:\n\n{}", f.path.display(), f.content))
        .collect();
    Some(parts.join("\n\n"))
}

/// The `<system-reminder>` the model reads before the first prompt, as
/// Claude Code renders its context block with only the `# claudeMd`
/// section.
pub fn reminder(files: &[MemoryFile]) -> Option<String> {
    let text = claude_md_text(files)?;
    Some(format!(
        "<system-reminder>\nAs you answer the user's questions, you can use the following \
         context:\n# claudeMd\n{text}\n\n      IMPORTANT: this context may or may not be relevant \
         to your tasks. You should not respond to this context unless it is highly relevant to \
         your task.\n</system-reminder>\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn order_kinds_imports_and_comments() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let proj = root.join("proj");
        write(root, "home/.claude/CLAUDE.md", "user\n");
        write(root, "proj/CLAUDE.local.md", "<!-- hidden -->\nlocal\n");
        write(
            root,
            "proj/CLAUDE.md",
            "see @notes.md and @gone.md and `@code.md`\n",
        );
        write(root, "proj/notes.md", "notes @CLAUDE.md\n");
        write(root, "proj/code.md", "never\n");
        write(root, "proj/.claude/CLAUDE.md", "  \n\n");
        write(root, "CLAUDE.md", "parent\n");
        let mut warnings = Vec::new();
        let files = load(&root.join("home"), &proj, &mut |w| warnings.push(w));
        let got: Vec<(String, MemoryType, Option<PathBuf>)> = files
            .iter()
            .filter(|f| f.path.starts_with(root))
            .map(|f| {
                (
                    f.path.strip_prefix(root).unwrap().display().to_string(),
                    f.kind,
                    f.parent.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("home/.claude/CLAUDE.md".into(), MemoryType::User, None),
                ("CLAUDE.md".into(), MemoryType::Project, None),
                ("proj/CLAUDE.md".into(), MemoryType::Project, None),
                (
                    "proj/notes.md".into(),
                    MemoryType::Project,
                    Some(proj.join("CLAUDE.md"))
                ),
                ("proj/CLAUDE.local.md".into(), MemoryType::Local, None),
            ]
        );
        let local = files.iter().find(|f| f.kind == MemoryType::Local).unwrap();
        assert_eq!(local.content, "local\n");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn hostile_files_cycles_depth_size_folders_and_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let proj = root.join("proj");
        // A cycle, and a chain deeper than Claude Code follows.
        write(root, "proj/CLAUDE.md", "top @a.md @b1.md\n");
        write(root, "proj/a.md", "a @CLAUDE.md @a.md\n");
        for k in 1..8 {
            write(
                root,
                &format!("proj/b{k}.md"),
                &format!("b{k} @b{}.md\n", k + 1),
            );
        }
        // A folder where a file is looked for; a file over the size cap;
        // bytes that are not UTF-8.
        std::fs::create_dir_all(proj.join(".claude/CLAUDE.md")).unwrap();
        let big = root.join("home/.claude/CLAUDE.md");
        std::fs::create_dir_all(big.parent().unwrap()).unwrap();
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_FILE_BYTES + 1).unwrap();
        std::fs::write(proj.join("CLAUDE.local.md"), b"bytes \xff end\n").unwrap();
        let mut warnings = Vec::new();
        let files = load(&root.join("home"), &proj, &mut |w| warnings.push(w));
        let names: Vec<String> = files
            .iter()
            .filter(|f| f.path.starts_with(root))
            .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "CLAUDE.md",
                "a.md",
                "b1.md",
                "b2.md",
                "b3.md",
                "b4.md",
                "CLAUDE.local.md"
            ]
        );
        assert_eq!(files.last().unwrap().content, "bytes \u{fffd} end\n");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains(&big.display().to_string()),
            "{warnings:?}"
        );
    }

    #[test]
    fn nothing_loaded_is_no_reminder() {
        assert_eq!(reminder(&[]), None);
    }
}
