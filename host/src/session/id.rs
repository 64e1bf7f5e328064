//! Session ids: the one form dsh accepts, checked before an id names a file.
//!
//! A session id is 1 to [`MAX_LEN`] characters, each an ASCII letter, an
//! ASCII digit, `_` or `-` (`[A-Za-z0-9_-]{1,128}`). Every id dsh makes
//! (`ses_` and 32 hex digits) has that form. Anything else, `../x`, `/abs`,
//! `a/b`, an empty id, a NUL or a dot, is refused wherever an id comes in
//! (ACP, `--session`, `dsh sessions show|repair`) and again by
//! [`super::session_path`], so an id can never name a file outside
//! `<state_dir>/sessions/`.

/// The longest session id, in characters (bytes: they are ASCII).
pub const MAX_LEN: usize = 128;

/// The form, as the error message and the docs state it.
pub const FORM: &str = "1 to 128 characters, each A-Z, a-z, 0-9, `_` or `-`";

/// An id that is not of the form dsh accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid session id {shown}: {reason} (a session id is {FORM})")]
pub struct InvalidSessionId {
    /// The id as received, escaped and cut to a readable length.
    pub shown: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The id escaped (`\0`, `\n`, quotes) and cut to 64 characters.
fn shown(id: &str) -> String {
    let cut: String = id.chars().take(64).collect();
    if cut.len() < id.len() {
        format!("{:?}…", cut)
    } else {
        format!("{cut:?}")
    }
}

/// Whether `c` may appear in a session id.
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Checks that `id` is of dsh's session-id form.
pub fn check_session_id(id: &str) -> Result<(), InvalidSessionId> {
    let refuse = |reason: String| InvalidSessionId {
        shown: shown(id),
        reason,
    };
    if id.is_empty() {
        return Err(refuse("it is empty".into()));
    }
    let length = id.chars().count();
    if length > MAX_LEN {
        return Err(refuse(format!("it is {length} characters long")));
    }
    match id.chars().find(|c| !allowed(*c)) {
        Some(c) => Err(refuse(format!("it contains {c:?}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_pass_and_path_like_ids_do_not() {
        for good in [
            "ses_0123456789abcdef0123456789abcdef",
            "crashy",
            "A-b_9",
            &"x".repeat(MAX_LEN),
        ] {
            assert_eq!(check_session_id(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "it is empty"),
            ("../../x", "'.'"),
            ("/abs", "'/'"),
            ("a/b", "'/'"),
            ("a\0b", "'\\0'"),
            ("a.jsonl", "'.'"),
            ("é", "'é'"),
            (&"x".repeat(MAX_LEN + 1), "129 characters"),
        ] {
            let e = check_session_id(bad).unwrap_err();
            assert!(e.reason.contains(why), "{bad:?}: {e}");
            assert!(e.to_string().contains(FORM), "{e}");
        }
        let long = check_session_id(&"y".repeat(10_000))
            .unwrap_err()
            .to_string();
        assert!(long.len() < 300, "{long}");
    }
}
