//! `structuredPatch`: the diff hunks Claude Code puts in Write and Edit
//! responses (`{oldStart, oldLines, newStart, newLines, lines}`, each line
//! prefixed with ` `, `-` or `+`).
//!
//! This is deliberately not a general diff: it trims the common leading
//! and trailing lines and emits **one** hunk for everything in between,
//! with up to three lines of context on each side. For a single edit that
//! is exactly the minimal hunk; for scattered edits (`replace_all`) the one
//! hunk also carries the unchanged lines between them as context. It is
//! always a correct patch, just not always the smallest.

use serde::Serialize;

/// Lines of context around a change, as in `diff -u`.
pub const CONTEXT: usize = 3;

/// One unified-diff hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// First old line of the hunk (1-based; the line before it when empty).
    pub old_start: usize,
    /// Number of old lines in the hunk.
    pub old_lines: usize,
    /// First new line of the hunk (1-based; the line before it when empty).
    pub new_start: usize,
    /// Number of new lines in the hunk.
    pub new_lines: usize,
    /// The hunk's lines, each prefixed with ` `, `-` or `+`.
    pub lines: Vec<String>,
}

/// Splits text into lines; a final newline does not start another line.
fn lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect()
}

/// The hunks turning `old` into `new` (empty when they are equal).
pub fn structured_patch(old: &str, new: &str) -> Vec<Hunk> {
    let (a, b) = (lines(old), lines(new));
    if a == b {
        return Vec::new();
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let (a_end, b_end) = (a.len() - suffix, b.len() - suffix);
    let start = prefix.saturating_sub(CONTEXT);
    let after = suffix.min(CONTEXT);

    let mut out: Vec<String> = Vec::new();
    out.extend(a[start..prefix].iter().map(|l| format!(" {l}")));
    out.extend(a[prefix..a_end].iter().map(|l| format!("-{l}")));
    out.extend(b[prefix..b_end].iter().map(|l| format!("+{l}")));
    out.extend(a[a_end..a_end + after].iter().map(|l| format!(" {l}")));

    let old_lines = a_end + after - start;
    let new_lines = b_end + after - start;
    let first = |count: usize| if count == 0 { start } else { start + 1 };
    vec![Hunk {
        old_start: first(old_lines),
        old_lines,
        new_start: first(new_lines),
        new_lines,
        lines: out,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_hunks() {
        assert!(structured_patch("a\nb\n", "a\nb\n").is_empty());
        assert!(structured_patch("", "").is_empty());
    }

    #[test]
    fn one_changed_line_gets_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        let hunk = &structured_patch(old, new)[0];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines
            ),
            (2, 7, 2, 7)
        );
        assert_eq!(
            hunk.lines,
            [" 2", " 3", " 4", "-5", "+five", " 6", " 7", " 8"]
        );
    }

    #[test]
    fn insertions_and_creation() {
        let hunk = &structured_patch("", "x\ny\n")[0];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines
            ),
            (0, 0, 1, 2)
        );
        assert_eq!(hunk.lines, ["+x", "+y"]);
        let hunk = &structured_patch("a\nc\n", "a\nb\nc\n")[0];
        assert_eq!(hunk.lines, [" a", "+b", " c"]);
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines
            ),
            (1, 2, 1, 3)
        );
    }

    #[test]
    fn repeated_lines_do_not_overlap_prefix_and_suffix() {
        let hunk = &structured_patch("a\na\n", "a\na\na\n")[0];
        assert_eq!(hunk.lines, [" a", " a", "+a"]);
    }

    #[test]
    fn serializes_in_claudes_camel_case() {
        let json = serde_json::to_value(structured_patch("a\n", "b\n")).expect("json");
        assert_eq!(
            json,
            serde_json::json!([{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                "lines": ["-a", "+b"]}])
        );
    }
}
