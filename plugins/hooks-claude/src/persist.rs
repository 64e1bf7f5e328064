//! Claude Code's cap on hook text that reaches the model, reproduced
//! (recorded from Claude Code 2.1.197, scenario S21; the CLI's own rule).
//!
//! A hook text (the trimmed plain stdout of an exit-0 hook, or one
//! `additionalContext`) longer than 10,000 UTF-16 code units is not cut:
//! it is saved whole to a file and the model reads, in its place (after the
//! usual lead-in such as `UserPromptSubmit hook success: `):
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
//! The file is `<dir>/<session id>/tool-results/<name>.txt`, `<name>` being
//! `hook-<hook run id>-stdout` for plain stdout and
//! `hook-<tool use id or batch id>-<n>-<field>` for a JSON field (`n`
//! counts the JSON answers of the batch, from 1). `<dir>` is the folder of
//! the session's transcript (Claude Code's
//! `~/.claude/projects/<project slug>/<session id>.jsonl`, dsh's session log
//! `<state_dir>/sessions/<session id>.jsonl`), so the files sit beside the
//! transcript the hooks are shown, as in Claude Code; the bridge's
//! `hook_outputs_dir` replaces it. If the file
//! cannot be written, the text is cut at 10,000 units and the model reads
//! [`persist_failed_notice`]. An existing file is kept (exclusive create),
//! as in Claude Code; dsh creates it 0600 in 0700 folders.

use std::path::PathBuf;

pub use dsh_plugin_api::sdk::persisted::{dir_beside, preview, size, wrapper};
use dsh_plugin_api::sdk::persisted::{save, utf16_prefix};

/// Longest hook text the model reads as is, in UTF-16 code units.
pub const MAX_INLINE_UNITS: usize = 10_000;

/// What kind of text a hook produced, as Claude Code names it in files and
/// notices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Plain stdout of an exit-0 hook.
    Stdout,
    /// `hookSpecificOutput.additionalContext`.
    AdditionalContext,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Stdout => "stdout",
            Kind::AdditionalContext => "additionalContext",
        }
    }
}

/// Where a text of one batch of hooks is saved when it is too long.
#[derive(Clone, Debug)]
pub struct Spill<'a> {
    /// The root folder: the transcript's folder by default.
    pub dir: PathBuf,
    /// The session.
    pub session_id: &'a str,
    /// The tool use id for tool events, a fresh id per batch otherwise.
    pub batch_id: &'a str,
}

impl Spill<'_> {
    /// `text` as the model reads it. `hook_id` names the hook run (plain
    /// stdout); `nth` is the 1-based count of JSON answers in the batch.
    pub fn cap(&self, text: &str, kind: Kind, hook_id: &str, nth: usize) -> String {
        let units = text.encode_utf16().count();
        if units <= MAX_INLINE_UNITS {
            return text.to_string();
        }
        let name = match kind {
            Kind::Stdout => format!("hook-{hook_id}-stdout"),
            Kind::AdditionalContext => format!("hook-{}-{nth}-{}", self.batch_id, kind.as_str()),
        };
        let path = dsh_plugin_api::sdk::persisted::file_for(&self.dir, self.session_id, &name);
        let saved = path.clone().and_then(|path| save(&path, text));
        match (saved, path) {
            (Ok(()), Ok(path)) => wrapper(text, units, &path),
            (Err(e), _) | (_, Err(e)) => format!(
                "{}{}",
                utf16_prefix(text, MAX_INLINE_UNITS),
                persist_failed_notice(kind, &e)
            ),
        }
    }
}

/// What follows the first 10,000 units of a text that could not be saved.
/// Claude Code's wording (the dash is U+2014).
pub fn persist_failed_notice(kind: Kind, error: &str) -> String {
    format!(
        "\n\n[Hook {} truncated at {MAX_INLINE_UNITS} chars — persist-to-disk failed: {error}]",
        kind.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn spill(dir: &Path) -> Spill<'static> {
        Spill {
            dir: dir.to_path_buf(),
            session_id: "ses_1",
            batch_id: "toolu_1",
        }
    }

    #[test]
    fn sizes_as_recorded() {
        for (units, label) in [
            (50_000, "48.8KB"),
            (10_001, "9.8KB"),
            (10_227, "10KB"),
            (20_501, "20KB"),
            (50_026, "48.9KB"),
            (1023, "1023 bytes"),
            (1280, "1.3KB"), // 1.25: toFixed rounds the half up
            (5 * 1024 * 1024, "5MB"),
        ] {
            assert_eq!(size(units), label, "{units}");
        }
    }

    #[test]
    fn exactly_the_limit_is_inline_and_one_more_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let s = spill(dir.path());
        let inline = "a".repeat(10_000);
        assert_eq!(s.cap(&inline, Kind::Stdout, "h1", 1), inline);
        // Multibyte counts by UTF-16 units, not bytes: 9,028 é inline.
        let e = "é".repeat(9_028);
        assert_eq!(s.cap(&e, Kind::AdditionalContext, "h1", 1), e);
        let over = "a".repeat(10_001);
        let shown = s.cap(&over, Kind::Stdout, "h1", 1);
        let path = dir.path().join("ses_1/tool-results/hook-h1-stdout.txt");
        assert_eq!(
            shown,
            format!(
                "<persisted-output>\nOutput too large (9.8KB). Full output saved to: {}\n\n\
                 Preview (first 2KB):\n{}\n...\n</persisted-output>",
                path.display(),
                "a".repeat(2000)
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), over);
    }

    #[test]
    fn emoji_count_twice_and_json_fields_are_named_by_batch_and_count() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("{}{}", "x".repeat(27), "😀".repeat(5_100)); // 10,227 units
        let shown = spill(dir.path()).cap(&text, Kind::AdditionalContext, "h", 2);
        assert!(shown.contains("Output too large (10KB)."), "{shown:.200}");
        let path = dir
            .path()
            .join("ses_1/tool-results/hook-toolu_1-2-additionalContext.txt");
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
        // 27 + 986 emoji = 1,999 units; the next one would split.
        let p = preview(&text);
        assert_eq!(p.encode_utf16().count(), 1_999);
    }

    #[test]
    fn preview_ends_before_a_late_newline_only() {
        let lines = format!("{}\n", "l".repeat(99)).repeat(200);
        // The last newline among the first 2,000 units is at 1,999.
        assert_eq!(preview(&lines).len(), 1_999);
        assert!(preview(&lines).ends_with('l'));
        let text: String = "a".repeat(500) + "\n" + &"b".repeat(20_000);
        assert_eq!(preview(&text).encode_utf16().count(), 2_000);
    }

    #[test]
    fn files_go_beside_the_transcript_unless_it_has_no_folder() {
        let fallback = Path::new("/fallback");
        assert_eq!(
            dir_beside("/home/u/.claude/projects/-p/s1.jsonl", fallback),
            Path::new("/home/u/.claude/projects/-p")
        );
        assert_eq!(dir_beside("", fallback), fallback);
        assert_eq!(dir_beside("relative.jsonl", fallback), fallback);
    }

    #[test]
    fn a_session_id_never_leaves_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let spill = Spill {
            dir: root.clone(),
            session_id: "../escape",
            batch_id: "b",
        };
        let shown = spill.cap(&"x".repeat(10_001), Kind::Stdout, "h", 0);
        assert!(
            shown.contains("persist-to-disk failed: session id"),
            "{shown:.100}"
        );
        assert!(!dir.path().join("escape").exists());
    }

    #[test]
    fn a_failed_save_cuts_at_the_limit_with_the_notice() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ses_1"), "a file, not a folder").unwrap();
        let text = "w".repeat(12_000);
        let shown = spill(dir.path()).cap(&text, Kind::AdditionalContext, "h", 1);
        let (head, notice) = shown.split_at(10_000);
        assert_eq!(head, "w".repeat(10_000));
        // Claude Code's wording, with Bun's error text (recorded in
        // `S21-ups-json-persist-fails`, where a file stood in the way).
        let path = dir
            .path()
            .join("ses_1/tool-results/hook-toolu_1-1-additionalContext.txt");
        assert_eq!(
            notice,
            format!(
                "\n\n[Hook additionalContext truncated at 10000 chars — persist-to-disk failed: \
                 ENOTDIR: ENOTDIR: not a directory, open '{}']",
                path.display()
            )
        );
    }
}
