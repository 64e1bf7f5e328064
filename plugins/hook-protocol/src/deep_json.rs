//! Hook answers that nest deeper than a JSON reader can follow.
//!
//! `serde_json` stops at 128 levels of nesting (its guard against running
//! out of stack), while Claude Code's `JSON.parse` reads any depth: a deny
//! printed beside an array nested 20,000 levels deep is honoured (vector
//! `S279-deep-200`, and `deep_20000` in the same recording). Read as
//! "not JSON", such an answer would let the call through. So before a
//! hook's stdout is parsed, every value nested deeper than [`MAX_DEPTH`] is
//! replaced by the string [`DEEP_VALUE`] in one pass over the text that
//! keeps no stack: the decision fields a bridge reads are strings near the
//! top and survive whole, and nothing of any depth reaches a recursive
//! parser (or a recursive drop).

use std::borrow::Cow;

/// Levels of nesting kept as they are (`serde_json` reads 128).
pub const MAX_DEPTH: usize = 100;

/// What a value nested deeper than [`MAX_DEPTH`] is replaced by.
pub const DEEP_VALUE: &str = "[nested deeper than 100 levels]";

/// `text` with every array or object that opens at depth [`MAX_DEPTH`]
/// replaced by `"`[`DEEP_VALUE`]`"`; `text` itself when nothing is that
/// deep or the text is not balanced JSON (the parser then reports it).
pub fn flattened(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    // Where the copy into `out` resumes.
    let mut copied = 0;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // Start of the replaced value and the depth it opened at.
    let mut skipping: Option<(usize, usize)> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                if depth == MAX_DEPTH && skipping.is_none() {
                    skipping = Some((i, depth));
                }
                depth += 1;
            }
            b']' | b'}' => {
                let Some(d) = depth.checked_sub(1) else {
                    return Cow::Borrowed(text);
                };
                depth = d;
                if let Some((start, opened)) = skipping
                    && opened == depth
                {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len() / 2));
                    o.push_str(&text[copied..start]);
                    o.push('"');
                    o.push_str(DEEP_VALUE);
                    o.push('"');
                    copied = i + 1;
                    skipping = None;
                }
            }
            _ => {}
        }
    }
    match out {
        Some(mut o) if skipping.is_none() && !in_string => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
        _ => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!(
            r#"{{"junk": {}{}, "s": "[[{{\"", "deny": "yes"}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn shallow_text_is_kept_as_it_is() {
        let text = nested(50);
        assert!(matches!(flattened(&text), Cow::Borrowed(_)));
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
    }

    #[test]
    fn deep_values_become_a_string_and_the_rest_is_read() {
        for depth in [200, 20_000] {
            let text = nested(depth);
            assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
            let flat = flattened(&text);
            let v: serde_json::Value = serde_json::from_str(&flat).expect("readable");
            assert_eq!(v["deny"], "yes");
            assert_eq!(v["s"], "[[{\"", "brackets inside strings are not counted");
            let mut junk = &v["junk"];
            let mut levels = 0;
            while let Some(inner) = junk.get(0) {
                junk = inner;
                levels += 1;
            }
            assert_eq!(*junk, serde_json::Value::String(DEEP_VALUE.into()));
            assert_eq!(levels, MAX_DEPTH - 1, "the object is level one");
        }
    }

    #[test]
    fn unbalanced_text_is_left_to_the_parser() {
        let open = format!("{{\"a\": {}", "[".repeat(300));
        assert_eq!(flattened(&open), open.as_str());
        assert_eq!(flattened("}}"), "}}");
        let unterminated = format!("{{\"a\": {}\"", "[".repeat(300));
        assert_eq!(flattened(&unterminated), unterminated.as_str());
    }
}
