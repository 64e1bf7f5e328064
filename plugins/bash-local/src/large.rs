//! Long `Bash` output, as Claude Code 2.1.197 handles it (recorded
//! `S261-*`, `tools/recorder-scenarios/FINDINGS-bgbash.md`).
//!
//! Lengths are JavaScript's: UTF-16 code units.
//! - `tool_response.stdout` holds the **head** of the output: its first
//!   30,000 units (`max_output_bytes`), cut with no marker.
//! - A command that succeeded with longer output is saved whole to
//!   `<folder of the session log>/<session>/tool-results/<id>.txt` (where
//!   Claude Code saves beside its transcript) and the model reads, instead
//!   of the output, `<persisted-output>\nOutput too large (37.2KB). Full
//!   output saved to: <path>\n\nPreview (first 2KB):\n<preview>\n...\n
//!   </persisted-output>`; `tool_response` gains `persistedOutputPath` and
//!   `persistedOutputSize` (bytes).
//! - A failed command's text (`Exit code N\n` and the head) longer than
//!   10,000 units keeps its first and last 5,000 around
//!   `\n\n... [N characters truncated] ...\n\n`.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use dsh_plugin_api::sdk::persisted::wrapper;
pub use dsh_plugin_api::sdk::persisted::{PREVIEW_UNITS, preview, size, utf16_prefix};

/// The longest error text the model reads whole, in UTF-16 units.
pub const MAX_ERROR_UNITS: usize = 10_000;
/// Length of `text` in UTF-16 units.
pub fn units(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The longest suffix of `text` of at most `max` UTF-16 units.
fn utf16_suffix(text: &str, max: usize) -> &str {
    let mut n = 0;
    for (i, c) in text.char_indices().rev() {
        n += c.len_utf16();
        if n > max {
            return &text[i + c.len_utf8()..];
        }
    }
    text
}

/// A failed command's text as the model reads it: whole up to 10,000
/// units, else its first and last 5,000 around Claude Code's marker.
pub fn cap_error(text: &str) -> String {
    let total = units(text);
    if total <= MAX_ERROR_UNITS {
        return text.to_string();
    }
    let half = MAX_ERROR_UNITS / 2;
    let head = utf16_prefix(text, half);
    let tail = utf16_suffix(text, half);
    let dropped = total - units(head) - units(tail);
    format!("{head}\n\n... [{dropped} characters truncated] ...\n\n{tail}")
}

/// Where a session's long outputs go: `<log folder>/<session>/tool-results`.
pub fn results_dir(log_path: &Path, session_id: &str) -> Option<PathBuf> {
    // One plain path component, never `..` or a path of its own.
    if matches!(session_id, "" | "." | "..") || session_id.contains(['/', '\0']) {
        return None;
    }
    Some(log_path.parent()?.join(session_id).join("tool-results"))
}

/// Saves `output` as a new file in `dir`; its path.
pub fn save(dir: &Path, output: &str) -> std::io::Result<PathBuf> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let path = dir.join(format!("{}.txt", crate::background::new_id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(output.as_bytes())?;
    Ok(path)
}

/// What the model reads of a successful output saved at `path` (its size
/// counted in bytes, as recorded).
pub fn persisted(output: &str, path: &Path) -> String {
    wrapper(output, output.len(), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_claude_codes() {
        assert_eq!(size(38052), "37.2KB");
        assert_eq!(size(193293), "188.8KB");
        assert_eq!(size(1000), "1000 bytes");
        assert_eq!(size(2048), "2KB");
    }

    #[test]
    fn a_long_error_keeps_both_ends() {
        let text = format!("Exit code 2\n{}", "x".repeat(30_000));
        let capped = cap_error(&text);
        assert_eq!(units(&capped), 10_040);
        assert!(capped.starts_with("Exit code 2\nxxx"));
        assert!(capped.contains("\n\n... [20012 characters truncated] ...\n\n"));
        assert_eq!(cap_error("short"), "short");
    }

    #[test]
    fn the_preview_ends_before_a_late_newline() {
        let line = format!("{}\n", "y".repeat(50));
        let text = line.repeat(100);
        let p = preview(&text);
        assert!(p.len() <= 2000 && p.ends_with('y'), "{}", p.len());
        assert_eq!(p.len(), 39 * 51 - 1);
    }

    #[test]
    fn cuts_never_split_a_character() {
        assert_eq!(utf16_prefix("aé😀", 2), "aé");
        assert_eq!(utf16_prefix("aé😀", 3), "aé");
        assert_eq!(utf16_suffix("😀é", 2), "é");
    }
}
