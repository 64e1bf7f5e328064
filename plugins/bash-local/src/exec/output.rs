//! How Codex 0.171.0 cuts an `exec_command` output before the model (and a
//! PostToolUse hook, as `tool_response`) reads it.
//!
//! The budget is the call's `max_output_tokens` when the model gives one
//! (4 bytes a token), else Codex's truncation policy for a model it has no
//! metadata for: 10,000 bytes. An output within the budget is kept whole;
//! a longer one becomes
//!
//! ```text
//! Warning: truncated output (original token count: <ceil(bytes / 4)>)
//! Total output lines: <lines>
//!
//! <head>…<N> chars truncated…<tail>
//! ```
//!
//! with half the budget for the head and half for the tail (cut on
//! character boundaries). `N` counts the characters cut under the byte
//! budget and the tokens cut (`ceil(bytes cut / 4)`) under a token budget,
//! whose marker says `tokens`. Vectors `C199-output-40k` (10,000 bytes,
//! `…30000 chars truncated…`) and `C199-max-output-tokens` (100 tokens,
//! `…9900 tokens truncated…`).

/// Codex's byte budget when the call gives no `max_output_tokens` (its
/// policy for a model without metadata, as every recording uses).
pub const DEFAULT_BYTE_BUDGET: usize = 10_000;
const BYTES_PER_TOKEN: usize = 4;

/// A budget for one output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// So many bytes; the marker counts characters.
    Bytes(usize),
    /// So many approximate tokens (4 bytes each); the marker counts tokens.
    Tokens(usize),
}

impl Budget {
    /// The budget of a call: its `max_output_tokens`, else
    /// [`DEFAULT_BYTE_BUDGET`].
    pub fn tokens(tokens: Option<u64>) -> Budget {
        match tokens {
            Some(t) => Budget::Tokens(usize::try_from(t).unwrap_or(usize::MAX)),
            None => Budget::Bytes(DEFAULT_BYTE_BUDGET),
        }
    }

    fn bytes(self) -> usize {
        match self {
            Budget::Bytes(b) => b,
            Budget::Tokens(t) => t.saturating_mul(BYTES_PER_TOKEN),
        }
    }
}

/// Codex's approximate token count of `bytes` bytes: a quarter, rounded up.
pub fn tokens_of(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// `output` as the model reads it under `budget`.
pub fn cut(output: &str, budget: Budget) -> String {
    let max = budget.bytes();
    if output.len() <= max {
        return output.to_string();
    }
    format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}",
        tokens_of(output.len()),
        output.lines().count(),
        middle(output, budget, max)
    )
}

/// The head and tail of `s` within `max` bytes, the middle replaced by the
/// marker.
fn middle(s: &str, budget: Budget, max: usize) -> String {
    let marker = |chars: usize, bytes: usize| match budget {
        Budget::Bytes(_) => format!("…{chars} chars truncated…"),
        Budget::Tokens(_) => format!("…{} tokens truncated…", tokens_of(bytes)),
    };
    if max == 0 {
        return marker(s.chars().count(), s.len());
    }
    let (head, cut, tail) = dsh_plugin_api::sdk::codex_text::split_middle(s, max);
    format!("{head}{}{tail}", marker(cut.chars().count(), s.len() - max))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400 lines of 100 bytes, `001000…\n` to `400000…\n` (the C199 command).
    fn lines_40k() -> String {
        (1..=400).map(|i| format!("{i:03}{:096}\n", 0)).collect()
    }

    #[test]
    fn the_default_budget_is_10000_bytes_with_a_chars_marker() {
        let out = lines_40k();
        let shown = cut(&out, Budget::tokens(None));
        let head =
            "Warning: truncated output (original token count: 10000)\nTotal output lines: 400\n\n";
        assert!(shown.starts_with(head), "{shown:.200}");
        let body = &shown[head.len()..];
        let (h, t) = body.split_once("…30000 chars truncated…").unwrap();
        assert_eq!(h, &out[..5000]);
        assert_eq!(t, &out[35_000..]);
    }

    #[test]
    fn max_output_tokens_cuts_with_a_tokens_marker() {
        let out = lines_40k();
        let shown = cut(&out, Budget::tokens(Some(100)));
        let body = shown.split_once("\n\n").unwrap().1;
        assert_eq!(
            body,
            format!("{}…9900 tokens truncated…{}", &out[..200], &out[39_800..])
        );
    }

    #[test]
    fn within_the_budget_the_output_is_whole() {
        let out = "x".repeat(10_000);
        assert_eq!(cut(&out, Budget::Bytes(10_000)), out);
        assert_eq!(cut("", Budget::Tokens(0)), "");
        assert_eq!(
            cut("abc", Budget::Tokens(0)).lines().last(),
            Some("…1 tokens truncated…")
        );
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let out = "é".repeat(10);
        let shown = cut(&out, Budget::Bytes(5));
        let body = shown.split_once("\n\n").unwrap().1;
        assert_eq!(body, "é…8 chars truncated…é");
    }
}
