//! `Read`'s token cap, as Claude Code 2.1.197 applies it (recorded S120).
//!
//! The selected text's tokens are estimated as its length in UTF-16 units
//! over 4 (over 2 for `.json`, `.jsonl`, `.jsonc`), rounded. Claude Code
//! asks the API's token counter when that estimate passes a quarter of the
//! cap and falls back to the estimate when the counter cannot answer; dsh
//! has no counter and always uses the estimate. Over the cap
//! (`max_read_tokens`, Claude Code's 25,000 or its
//! `CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS`):
//!
//! - a whole-file read (no `limit`, `offset` at most 1) becomes its first
//!   page ([`page`]): as many whole lines as fit (85% of the cap's share of
//!   the lines, cut by 30% up to six times), or, when no line fits, the
//!   first characters, with Claude Code's `[Truncated: PARTIAL view — ...]`
//!   note before the numbered lines;
//! - any other read is refused: `File content (N tokens) exceeds maximum
//!   allowed tokens (CAP). ...` ([`crate::FsToolError::OverTokenCap`]).

/// Claude Code's default cap.
pub const DEFAULT_MAX_READ_TOKENS: u64 = 25_000;

/// UTF-16 length, as JavaScript counts a string.
fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The token estimate of `text` read from a file with extension `ext`
/// (lowercase, no dot).
pub fn estimate(text: &str, ext: &str) -> u64 {
    let per = match ext {
        "json" | "jsonl" | "jsonc" => 2.0,
        _ => 4.0,
    };
    (units(text) as f64 / per).round() as u64
}

/// The tokens of `text` when they are over `cap`, else `None`.
pub fn over_cap(text: &str, ext: &str, cap: u64) -> Option<u64> {
    let tokens = estimate(text, ext);
    (tokens != 0 && tokens as f64 > cap as f64 / 4.0 && tokens > cap).then_some(tokens)
}

/// A whole-file read cut to its first page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The text shown (whole lines, or the first characters).
    pub text: String,
    /// How many lines it holds.
    pub lines: u64,
    /// The `[Truncated: PARTIAL view — ...]` note.
    pub note: String,
}

/// The first page of `text` (`total_lines` lines, `tokens` over `cap`).
pub fn page(text: &str, total_lines: u64, tokens: u64, cap: u64) -> Page {
    let len = units(text) as f64;
    let t = tokens.max(1) as f64;
    let capf = cap as f64;
    let per_token = (len / t).max(0.5);
    let cost = |s: &str| units(s) as f64 / per_token;
    let lines: Vec<&str> = text.split('\n').collect();
    let n = lines.len();
    let mut m = ((n as f64 * capf / t * 0.85).floor() as usize).clamp(1, n.max(1));
    let mut shown = lines[..m].join("\n");
    for _ in 0..6 {
        if cost(&shown) <= capf || m <= 1 {
            break;
        }
        m = ((m as f64 * 0.7).floor() as usize).max(1);
        shown = lines[..m].join("\n");
    }
    let by_chars = cost(&shown) > capf || shown.trim().is_empty();
    if by_chars {
        let mut k = ((capf * per_token * 0.85).floor() as usize).max(1);
        for _ in 0..6 {
            shown = utf16_prefix(text, k);
            if cost(&shown) <= capf {
                break;
            }
            k = ((k as f64 * 0.7).floor() as usize).max(1);
        }
    }
    let shown_lines = if by_chars {
        shown.matches('\n').count() as u64 + 1
    } else {
        m as u64
    };
    let note = if !by_chars && shown_lines < total_lines {
        format!(
            "[Truncated: PARTIAL view \u{2014} showing lines 1-{shown_lines} of {total_lines} total \
             ({tokens} tokens, cap {cap}). Call Read with offset={} limit={shown_lines} for the \
             next page, or Grep to find a specific section. Do NOT answer from this page alone if \
             the answer may be further in the file.]",
            shown_lines + 1
        )
    } else {
        format!(
            "[Truncated: PARTIAL view \u{2014} showing the first {} of {} characters ({tokens} \
             tokens, cap {cap}); this file has very long lines and cannot be paginated by line. \
             Use Grep to find a specific section, or Read with offset/limit to page through it. Do \
             NOT answer from this excerpt alone if the answer may be elsewhere in the file.]",
            units(&shown),
            units(text)
        )
    };
    Page {
        text: shown,
        lines: shown_lines,
        note,
    }
}

/// The first `k` UTF-16 units of `s`, without a half surrogate pair at
/// the end (JavaScript's `slice` then dropping a lone high surrogate).
fn utf16_prefix(s: &str, k: usize) -> String {
    let mut used = 0;
    let mut out = String::new();
    for c in s.chars() {
        used += c.len_utf16();
        if used > k {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded pages (vector `S120-token-cap`, cap 500).
    #[test]
    fn recorded_pages() {
        let big: String = (1..=100)
            .map(|i| format!("line {i:03} MARK_T1 abcdefghij\n"))
            .collect();
        let tokens = over_cap(&big, "txt", 500).expect("over");
        assert_eq!(tokens, 700);
        let p = page(&big, 101, tokens, 500);
        assert_eq!(p.lines, 61);
        assert!(p.note.contains("showing lines 1-61 of 101 total (700 tokens, cap 500). Call Read with offset=62 limit=61"));
        let wide = format!("MARK_T3 {}\n", "y".repeat(2992));
        let tokens = over_cap(&wide, "txt", 500).expect("over");
        let p = page(&wide, 2, tokens, 500);
        assert_eq!((p.lines, units(&p.text)), (1, 1700));
        assert!(
            p.note
                .contains("showing the first 1700 of 3001 characters (750 tokens, cap 500)")
        );
        assert_eq!(estimate("ab\u{1F600}", "json"), 2);
        assert_eq!(over_cap("short", "txt", 500), None);
    }
}
