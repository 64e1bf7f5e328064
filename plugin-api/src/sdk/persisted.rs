//! Claude Code's `<persisted-output>` block: a text too long for the model
//! is saved whole to a file and the model reads a preview and the file's
//! path instead (recorded from Claude Code 2.1.197: hook output over
//! 10,000 characters, S21; a tool result over the tool's own cap, such as
//! `Grep`'s 20,000, S292):
//!
//! ```text
//! <persisted-output>
//! Output too large (48.8KB). Full output saved to: <path>
//!
//! Preview (first 2KB):
//! <the first 2,000 units, ended before the last newline past unit 1,000>
//! ...
//! </persisted-output>
//! ```
//!
//! The file is `<dir>/<session id>/tool-results/<name>.txt`, `<dir>` being
//! the folder of the session's transcript ([`dir_beside`]); lengths count
//! UTF-16 code units, as JavaScript's do.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// Length of the preview, in UTF-16 code units.
pub const PREVIEW_UNITS: usize = 2_000;
/// A newline past this index ends the preview early.
const PREVIEW_MIN_UNITS: usize = 1_000;

/// The `<persisted-output>` block the model reads instead of `text`.
pub fn wrapper(text: &str, units: usize, path: &Path) -> String {
    format!(
        "<persisted-output>\nOutput too large ({}). Full output saved to: {}\n\n\
         Preview (first 2KB):\n{}\n...\n</persisted-output>",
        size(units),
        path.display(),
        preview(text)
    )
}

/// The first 2,000 units, ended before the last newline among them when
/// that newline is past unit 1,000. A surrogate pair the cut would split
/// is left out whole (Claude Code would keep its first half).
pub fn preview(text: &str) -> &str {
    let head = utf16_prefix(text, PREVIEW_UNITS);
    let mut units = 0;
    let mut last_newline = None;
    for (i, c) in head.char_indices() {
        if c == '\n' {
            last_newline = Some((i, units));
        }
        units += c.len_utf16();
    }
    match last_newline {
        Some((byte, unit)) if unit > PREVIEW_MIN_UNITS => &head[..byte],
        _ => head,
    }
}

/// The longest prefix of `text` of at most `max` UTF-16 units.
pub fn utf16_prefix(text: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &text[..i];
        }
    }
    text
}

/// Claude Code's size label: `N bytes` under 1 KB, else one decimal
/// (`.0` dropped) in KB, MB or GB. The length counted is the text's UTF-16
/// units; halves round up, as JavaScript's `toFixed` does for them.
pub fn size(units: usize) -> String {
    let n = units as u128;
    let (unit, scale) = if n < 1024 {
        return format!("{units} bytes");
    } else if n < 1024 * 1024 {
        ("KB", 1024u128)
    } else if n < 1024 * 1024 * 1024 {
        ("MB", 1024 * 1024)
    } else {
        ("GB", 1024 * 1024 * 1024)
    };
    // round(10 n / scale), halves up, in integers.
    let tenths = (20 * n + scale) / (2 * scale);
    let (whole, frac) = (tenths / 10, tenths % 10);
    if frac == 0 {
        format!("{whole}{unit}")
    } else {
        format!("{whole}.{frac}{unit}")
    }
}

/// Saves `text` at `path` (exclusive create; an existing file is kept).
/// The folders are made as far as possible; whatever stops the file is
/// reported the way Claude Code (Bun) words it, e.g. `ENOTDIR: ENOTDIR: not
/// a directory, open '<path>'`.
pub fn save(path: &Path, text: &str) -> Result<(), String> {
    let results_dir = path.parent().unwrap_or(Path::new("."));
    // A failure here shows as the open's error, as in Claude Code.
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(results_dir);
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(bun_error(&e, "open", path)),
    };
    file.write_all(text.as_bytes())
        .map_err(|e| bun_error(&e, "write", path))
}

/// `<CODE>: <CODE>: <message>, <syscall> '<path>'`, Bun's wording of a
/// failed file operation.
fn bun_error(e: &std::io::Error, syscall: &str, path: &Path) -> String {
    let code = match e.raw_os_error() {
        Some(libc_code) => errno_name(libc_code),
        None => "EIO",
    };
    let shown = e.to_string();
    let message = shown.split(" (os error").next().unwrap_or(&shown);
    let mut chars = message.chars();
    let message: String = match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    };
    format!("{code}: {code}: {message}, {syscall} '{}'", path.display())
}

/// The symbolic name of the errno values a file write meets.
fn errno_name(code: i32) -> &'static str {
    match code {
        1 => "EPERM",
        2 => "ENOENT",
        5 => "EIO",
        13 => "EACCES",
        17 => "EEXIST",
        20 => "ENOTDIR",
        21 => "EISDIR",
        24 => "EMFILE",
        28 => "ENOSPC",
        30 => "EROFS",
        36 => "ENAMETOOLONG",
        40 => "ELOOP",
        122 => "EDQUOT",
        _ => "EIO",
    }
}

/// The root folder for a session whose transcript is `log_path`: the
/// transcript's own folder, as in Claude Code; `fallback` when the session
/// has no transcript path.
pub fn dir_beside(log_path: &str, fallback: &Path) -> PathBuf {
    match Path::new(log_path).parent() {
        Some(parent) if !log_path.is_empty() && parent.is_absolute() => parent.to_path_buf(),
        _ => fallback.to_path_buf(),
    }
}

/// Where a text named `name` of session `session_id` is saved under
/// `dir`: `<dir>/<session id>/tool-results/<name>.txt`; `Err` when the
/// session id is not a plain file name (never `..` or a path of its own).
pub fn file_for(dir: &Path, session_id: &str, name: &str) -> Result<PathBuf, String> {
    if matches!(session_id, "" | "." | "..") || session_id.contains(['/', '\0']) {
        return Err(format!("session id {session_id:?} is not a file name"));
    }
    if matches!(name, "" | "." | "..") || name.contains(['/', '\0']) {
        return Err(format!("{name:?} is not a file name"));
    }
    Ok(dir
        .join(session_id)
        .join("tool-results")
        .join(format!("{name}.txt")))
}
