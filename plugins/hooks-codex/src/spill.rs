//! Codex's cap on hook text that reaches the model, reproduced.
//!
//! Codex (0.171.0, `codex-rs/hooks/src/output_spill.rs` over
//! `utils/output-truncation` and `utils/string/src/truncate.rs`) keeps every
//! hook text the model reads (each `additionalContext`, plain stdout
//! context, a PostToolUse block's replacement text, a Stop hook's
//! continuation reason) within 2,500 approximate tokens, a token being 4
//! bytes rounded up. A longer text is written whole to
//! `$TMPDIR/hook_outputs/<session id>/<uuid v4>.txt`, and the model reads
//! instead:
//!
//! ```text
//! Warning: truncated output (original token count: N)
//! Total output lines: L
//!
//! <head>…M tokens truncated…<tail>
//!
//! Full hook output saved to: <path>
//! ```
//!
//! The head and tail split the budget left after the footer's own tokens
//! (half each, on character boundaries); `M` counts the bytes cut, in
//! tokens. If the file cannot be written the preview is cut to the whole
//! budget without a footer, as Codex does. Vector
//! `C3-ups-large-additional-context` pins the numbers (see the tests).
//!
//! Unlike Codex, the folders are created owner-only and must be real
//! folders owned by this user (not symlinks), and the file is created new
//! with mode 0600: `/tmp` is shared, and hook output may hold secrets.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// Codex's budget for one hook text, in approximate tokens.
pub const HOOK_OUTPUT_TOKEN_LIMIT: usize = 2_500;
/// Codex's budget for one tool output the model reads, in approximate
/// tokens: its model metadata's truncation policy times 1.2 (room for
/// serialization). Recorded for a model Codex has no metadata for (its
/// fallback, 2,500 tokens): 3,000 tokens, i.e. the first and last 6,000
/// bytes (vector `C21-deny-1mb`).
pub const DEFAULT_TOOL_OUTPUT_TOKENS: usize = 3_000;
/// Codex's folder name under the temp dir.
pub const HOOK_OUTPUTS_DIR: &str = "hook_outputs";
const BYTES_PER_TOKEN: usize = 4;

/// Codex's approximate token count: bytes / 4, rounded up.
pub fn approx_token_count(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// The default folder: `<temp dir>/hook_outputs`.
pub fn default_dir() -> PathBuf {
    std::env::temp_dir().join(HOOK_OUTPUTS_DIR)
}

/// `text` as the model reads it: whole when within the budget, else the
/// preview with the path of the saved whole. `Err` carries the preview
/// without a footer and why the file could not be written.
pub fn cap(dir: &Path, session_id: &str, text: String) -> Result<String, (String, String)> {
    if approx_token_count(&text) <= HOOK_OUTPUT_TOKEN_LIMIT {
        return Ok(text);
    }
    match save(dir, session_id, &text) {
        Ok(path) => Ok(preview(&text, &path)),
        Err(why) => Err((
            formatted_truncate_text(&text, HOOK_OUTPUT_TOKEN_LIMIT),
            format!("cannot save hook output under {}: {why}", dir.display()),
        )),
    }
}

/// The preview of a saved text: the footer's tokens come off the budget
/// first, so the whole stays within it.
pub fn preview(text: &str, path: &Path) -> String {
    let footer = format!("\n\nFull hook output saved to: {}", path.display());
    let budget = HOOK_OUTPUT_TOKEN_LIMIT.saturating_sub(approx_token_count(&footer));
    format!("{}{footer}", formatted_truncate_text(text, budget))
}

/// Codex's `formatted_truncate_text` with a token budget.
pub fn formatted_truncate_text(content: &str, tokens: usize) -> String {
    if content.len() <= tokens.saturating_mul(BYTES_PER_TOKEN) {
        return content.to_string();
    }
    format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}",
        approx_token_count(content),
        content.lines().count(),
        truncate_middle(content, tokens)
    )
}

/// Codex's `truncate_middle_with_token_budget`: the head and tail of
/// `s` within `tokens`, the middle replaced by `…N tokens truncated…`.
/// Codex also cuts every tool output the model reads this way (no header,
/// no file), with its model's budget.
pub fn truncate_middle(s: &str, tokens: usize) -> String {
    let max_bytes = tokens.saturating_mul(BYTES_PER_TOKEN);
    if s.is_empty() || (tokens > 0 && s.len() <= max_bytes) {
        return s.to_string();
    }
    if max_bytes == 0 {
        return format!("…{} tokens truncated…", approx_token_count(s));
    }
    let (head, _, tail) = dsh_plugin_api::sdk::codex_text::split_middle(s, max_bytes);
    let removed = (s.len() - max_bytes).div_ceil(BYTES_PER_TOKEN);
    format!("{head}…{removed} tokens truncated…{tail}")
}

/// Writes `text` to `<dir>/<session>/<uuid>.txt`, owner-only.
fn save(dir: &Path, session_id: &str, text: &str) -> Result<PathBuf, String> {
    // One plain path component, never `..` or a path of its own.
    let safe_id = !matches!(session_id, "" | "." | "..")
        && session_id.len() <= 255
        && !session_id.contains(['/', '\0']);
    if !safe_id {
        return Err(format!("session id {session_id:?} is not a file name"));
    }
    let session_dir = dir.join(session_id);
    private_dir(dir)?;
    private_dir(&session_dir)?;
    let path = session_dir.join(format!("{}.txt", uuid::Uuid::new_v4()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Creates `dir` (mode 0700) unless it exists; either way it must be a
/// real folder owned by this user.
fn private_dir(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != me {
        return Err(format!(
            "{} is not a folder owned by this user",
            dir.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `C3-ups-large-additional-context`: `BIGCTX ` and 8000 `word `.
    fn big() -> String {
        format!("BIGCTX {}", "word ".repeat(8000))
    }

    #[test]
    fn a_huge_block_message_is_cut_as_codex_cuts_tool_output() {
        // C21-deny-1mb: 1,100,119 bytes become the first and last 6,000
        // around `…272030 tokens truncated…` (12,025 characters).
        let reason = format!(
            "MARK_HUGE_DENY_HEAD {}MARK_HUGE_DENY_TAIL",
            "pad ".repeat(275_000)
        );
        let text = format!(
            "Command blocked by PreToolUse hook: {reason}. Command: touch made_by_bash.txt && echo hi"
        );
        assert_eq!(text.len(), 1_100_119);
        let shown = truncate_middle(&text, DEFAULT_TOOL_OUTPUT_TOKENS);
        let (head, rest) = shown.split_once("…272030 tokens truncated…").unwrap();
        assert_eq!(head, &text[..6_000]);
        assert_eq!(rest, &text[text.len() - 6_000..]);
        assert_eq!(shown.chars().count(), 12_025);
    }

    #[test]
    fn the_recorded_cut_is_reproduced() {
        // The recording shows the first 300 characters of what the model
        // read and its length, 10102, with a path under /tmp holding two
        // 36-character UUIDs (the session id and the file's).
        let path = format!("/tmp/hook_outputs/{0}/{0}.txt", "0".repeat(36));
        let shown = preview(&big(), Path::new(&path));
        assert_eq!(shown.chars().count(), 10102);
        let head = "Warning: truncated output (original token count: 10002)\nTotal output lines: 1\n\nBIGCTX ";
        let prefix: String = shown.chars().take(300).collect();
        let want = format!("{head}{}", "word ".repeat(60));
        assert_eq!(prefix, want.chars().take(300).collect::<String>());
        // Footer: 124 bytes = 31 tokens; body budget 2469 tokens = 9876
        // bytes, 4938 each side; 30131 bytes cut = 7533 tokens.
        assert!(shown.contains("…7533 tokens truncated…"), "{shown}");
        assert!(shown.ends_with(&format!("word \n\nFull hook output saved to: {path}")));
        // The warning lines and the marker are not budgeted (as in Codex):
        // the two `…` are 3 bytes each.
        assert_eq!(shown.len(), 10106);
    }

    #[test]
    fn the_recorded_numbers_of_c22_are_reproduced() {
        // Codex 0.171.0 (vectors C22-*), with 36-character ids in the path
        // (a 124-byte footer): 40,036 bytes give T 10009, K 7540 and 10,102
        // characters (10,049 with the recording's placeholders); 10,019
        // bytes of mostly `é` give T 2505, a head that backs off to 4,937
        // bytes, and 5,170 characters (5,117 with placeholders).
        let path = format!("/tmp/hook_outputs/{0}/{0}.txt", "0".repeat(36));
        let words = format!(
            "MARK_BIGCTX_UPS {}MARK_BIGCTX_TAIL_END",
            "word ".repeat(8000)
        );
        assert_eq!(words.len(), 40_036);
        let shown = preview(&words, Path::new(&path));
        assert!(shown.starts_with(
            "Warning: truncated output (original token count: 10009)\nTotal output lines: 1\n\n"
        ));
        assert!(shown.contains("…7540 tokens truncated…"));
        assert_eq!(shown.chars().count(), 10_102);
        let accents = format!("MARK_BIGCTX_EACUTE {}", "é".repeat(5000));
        let shown = preview(&accents, Path::new(&path));
        assert_eq!(shown.chars().count(), 5_170);
        let body = shown.split_once("\n\n").unwrap().1;
        let (head, _) = body.split_once('…').unwrap();
        assert_eq!(head.len(), 4_937);
        assert!(shown.starts_with("Warning: truncated output (original token count: 2505)"));
        // 401 lines count as 401.
        let lines = format!("MARK\n{}", "line 0000 yyy\n".repeat(3000));
        assert!(preview(&lines, Path::new(&path)).contains("\nTotal output lines: 3001\n"));
    }

    #[test]
    fn short_text_is_untouched_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let text = "a".repeat(10_000); // exactly 2500 tokens
        assert_eq!(cap(dir.path(), "s1", text.clone()).unwrap(), text);
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn long_text_is_saved_whole_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(HOOK_OUTPUTS_DIR);
        let text = "line\n".repeat(3000);
        let shown = cap(&root, "ses_1", text.clone()).unwrap();
        assert!(shown.starts_with(
            "Warning: truncated output (original token count: 3750)\nTotal output lines: 3000\n\n"
        ));
        let path = shown
            .rsplit_once("\n\nFull hook output saved to: ")
            .map(|(_, p)| PathBuf::from(p))
            .unwrap();
        assert_eq!(path.parent().unwrap(), root.join("ses_1"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        assert_eq!((mode(&root), mode(&path)), (0o700, 0o600));
    }

    #[test]
    fn an_unusable_folder_gives_the_cut_without_a_footer() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let root = dir.path().join(HOOK_OUTPUTS_DIR);
        std::os::unix::fs::symlink(elsewhere.path(), &root).unwrap();
        let text = "x".repeat(20_000);
        let (shown, why) = cap(&root, "ses_1", text.clone()).unwrap_err();
        assert!(why.contains("not a folder owned by this user"), "{why}");
        assert_eq!(
            shown,
            formatted_truncate_text(&text, HOOK_OUTPUT_TOKEN_LIMIT)
        );
        assert!(shown.contains("…2500 tokens truncated…"));
        assert!(
            std::fs::read_dir(elsewhere.path())
                .unwrap()
                .next()
                .is_none()
        );
        let (_, why) = cap(dir.path(), "../x", text).unwrap_err();
        assert!(why.contains("not a file name"), "{why}");
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let text = "é".repeat(6000); // 12000 bytes
        let out = truncate_middle(&text, 1000);
        let (head, rest) = out.split_once('…').unwrap();
        assert_eq!(head.len(), 2000);
        assert!(rest.starts_with("2000 tokens truncated…"));
        assert_eq!(
            rest.trim_start_matches("2000 tokens truncated…").len(),
            2000
        );
    }
}
