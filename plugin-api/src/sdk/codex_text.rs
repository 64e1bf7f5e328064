//! Codex's cut of a long text: the head and the tail kept within a byte
//! budget, half each, on character boundaries, the middle dropped (its
//! `truncate_middle`). The Codex bridge cuts hook output this way and
//! `exec_command` its output; each words its own marker for the middle.

/// `s` split for a budget of `max` bytes: the head kept (at most `max /
/// 2` bytes), the middle dropped, the tail kept (starting at the first
/// character at or after `s.len() - (max - max / 2)`).
pub fn split_middle(s: &str, max: usize) -> (&str, &str, &str) {
    let left_budget = max / 2;
    let tail_start_target = s.len().saturating_sub(max - left_budget);
    let mut prefix_end = 0;
    let mut suffix_start = s.len();
    let mut suffix_started = false;
    for (idx, ch) in s.char_indices() {
        let end = idx + ch.len_utf8();
        if end <= left_budget {
            prefix_end = end;
        } else if idx >= tail_start_target && !suffix_started {
            suffix_start = idx;
            suffix_started = true;
        }
    }
    let suffix_start = suffix_start.max(prefix_end);
    (
        &s[..prefix_end],
        &s[prefix_end..suffix_start],
        &s[suffix_start..],
    )
}

#[cfg(test)]
mod tests {
    use super::split_middle;

    #[test]
    fn halves_on_character_boundaries() {
        assert_eq!(split_middle("abcdefghij", 4), ("ab", "cdefgh", "ij"));
        // `é` is two bytes: the head stops before it rather than split it.
        assert_eq!(split_middle("aé1234567b", 4), ("a", "é123456", "7b"));
        assert_eq!(split_middle("abc", 0), ("", "abc", ""));
    }
}
