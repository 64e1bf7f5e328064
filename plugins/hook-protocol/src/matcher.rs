//! Matcher strings: which events of a hook point a matcher group applies to.
//!
//! Both dialects share the rules: an absent, empty or `*` matcher matches
//! everything; a matcher made only of "name characters" is a list of exact,
//! case-sensitive names; anything else is an unanchored regex. They differ in
//! what counts as a name character: Codex allows letters, digits, `_` and the
//! `|` separator; Claude also allows `,` (a second separator), space and `-`.
//!
//! And in the regex dialect, each the one its CLI runs: Claude Code tests
//! `new RegExp(matcher)` (JavaScript, no flags), so its patterns are
//! ECMAScript ([`regress`]: lookahead and lookbehind work, `(?i)` and POSIX
//! classes do not, `\p{..}` without the `u` flag is a literal `p`); Codex
//! uses Rust's `regex` (vector `S51-dialect` and Codex's
//! `hooks/src/events/common.rs`). A pattern its dialect rejects never
//! matches in either CLI; here it is a config error naming it, and its
//! group's hooks never run.

use regex::Regex;

/// Which dialect's name-list syntax applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatcherSyntax {
    /// Claude Code: separators `|` and `,`; space and `-` allowed in lists.
    Claude,
    /// Codex: separator `|` only.
    Codex,
}

/// A pattern its dialect's regex engine rejects.
#[derive(Debug, thiserror::Error)]
pub enum MatcherError {
    /// Not a Rust `regex` (Codex).
    #[error("not a valid Rust regex: {0}")]
    Rust(#[from] regex::Error),
    /// Not an ECMAScript `RegExp` (Claude Code).
    #[error("not a valid JavaScript RegExp: {0}")]
    Ecma(#[from] regress::Error),
}

/// A compiled regex of one dialect.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// Rust `regex` (Codex).
    Rust(Regex),
    /// ECMAScript (Claude Code).
    Ecma(regress::Regex),
}

impl Pattern {
    /// Whether the pattern matches anywhere in `subject`.
    pub fn is_match(&self, subject: &str) -> bool {
        match self {
            Pattern::Rust(re) => re.is_match(subject),
            Pattern::Ecma(re) => re.find(subject).is_some(),
        }
    }
}

/// A parsed matcher.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Matches every subject.
    Any,
    /// Matches exactly one of these names.
    Names(Vec<String>),
    /// Matches when the regex finds a match anywhere in the subject.
    Pattern(Pattern),
}

impl Matcher {
    /// Parses a raw matcher; an invalid regex is an error the caller turns
    /// into a config error (the group is skipped).
    pub fn parse(raw: Option<&str>, syntax: MatcherSyntax) -> Result<Matcher, MatcherError> {
        let raw = match raw {
            None => return Ok(Matcher::Any),
            Some(raw) if raw.is_empty() || raw == "*" => return Ok(Matcher::Any),
            Some(raw) => raw,
        };
        let name_char = |c: char| match syntax {
            MatcherSyntax::Codex => c.is_ascii_alphanumeric() || c == '_' || c == '|',
            MatcherSyntax::Claude => {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | ',' | ' ' | '-')
            }
        };
        if raw.chars().all(name_char) {
            let separators: &[char] = match syntax {
                MatcherSyntax::Codex => &['|'],
                MatcherSyntax::Claude => &['|', ','],
            };
            let names = raw
                .split(separators)
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(String::from)
                .collect();
            return Ok(Matcher::Names(names));
        }
        Ok(Matcher::Pattern(match syntax {
            MatcherSyntax::Codex => Pattern::Rust(Regex::new(raw)?),
            MatcherSyntax::Claude => Pattern::Ecma(regress::Regex::new(raw)?),
        }))
    }

    /// Whether the matcher selects `subject`.
    pub fn matches(&self, subject: &str) -> bool {
        match self {
            Matcher::Any => true,
            Matcher::Names(names) => names.iter().any(|n| n == subject),
            Matcher::Pattern(re) => re.is_match(subject),
        }
    }

    /// Whether the matcher selects any of `subjects` (a tool name and its
    /// aliases, e.g. `Agent` and `Task`).
    pub fn matches_any(&self, subjects: &[&str]) -> bool {
        subjects.iter().any(|s| self.matches(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(raw: &str, syntax: MatcherSyntax) -> Matcher {
        Matcher::parse(Some(raw), syntax).unwrap()
    }

    #[test]
    fn empty_star_and_absent_match_everything() {
        for syntax in [MatcherSyntax::Claude, MatcherSyntax::Codex] {
            assert!(Matcher::parse(None, syntax).unwrap().matches("Bash"));
            assert!(m("", syntax).matches("anything"));
            assert!(m("*", syntax).matches("Write"));
        }
    }

    #[test]
    fn name_lists_are_exact_and_case_sensitive() {
        let list = m("Edit|Write", MatcherSyntax::Codex);
        assert!(list.matches("Edit") && list.matches("Write"));
        assert!(!list.matches("edit"));
        assert!(
            !list.matches("MultiEdit"),
            "a name list is not a substring match"
        );
        assert!(!m("Bash", MatcherSyntax::Claude).matches("BashOutput"));
    }

    #[test]
    fn claude_lists_accept_commas_spaces_and_dashes() {
        let list = m("Edit, Write | Bash", MatcherSyntax::Claude);
        assert!(list.matches("Edit") && list.matches("Write") && list.matches("Bash"));
        assert!(m("general-purpose", MatcherSyntax::Claude).matches("general-purpose"));
        assert!(!m("general-purpose", MatcherSyntax::Claude).matches("general"));
    }

    #[test]
    fn codex_treats_commas_and_dashes_as_regex() {
        // `a-b` is not a Codex name list, so it is an unanchored regex.
        let re = m("general-purpose", MatcherSyntax::Codex);
        assert!(matches!(re, Matcher::Pattern(Pattern::Rust(_))));
        assert!(re.matches("x general-purpose y"));
    }

    #[test]
    fn other_matchers_are_unanchored_regexes() {
        let re = m("mcp__.*__write", MatcherSyntax::Claude);
        assert!(re.matches("mcp__fs__write"));
        assert!(m("^Bash$", MatcherSyntax::Codex).matches("Bash"));
        assert!(m("Ba.h", MatcherSyntax::Codex).matches("xBashx"));
    }

    #[test]
    fn invalid_regex_is_an_error() {
        assert!(Matcher::parse(Some("[unclosed"), MatcherSyntax::Claude).is_err());
        assert!(Matcher::parse(Some("[unclosed"), MatcherSyntax::Codex).is_err());
    }

    /// Vector `S51-dialect`: what Claude Code's `new RegExp(m).test("Bash")`
    /// answered, and what Codex's Rust `regex` answers for the same text.
    #[test]
    fn each_dialect_has_its_own_regex_engine() {
        // (pattern, Claude Code, Codex); None = invalid in that dialect.
        let cases: &[(&str, Option<bool>, Option<bool>)] = &[
            ("^(?!Read).*$", Some(true), None),
            ("(?i)bash", None, Some(true)),
            (r"B\u0061sh", Some(true), Some(true)),
            ("[[:alpha:]]+", Some(false), Some(true)),
            (r"\p{Lu}ash", Some(false), Some(true)),
            ("Ba(?=sh)", Some(true), None),
            (r"(?<n>Ba)sh\k<n>?", Some(true), None),
            ("[", None, None),
            (r"Ba\x73h", Some(true), Some(true)),
            ("^Bash$|", Some(true), Some(true)),
            (r"\bBash\b", Some(true), Some(true)),
            (r"B[^\d]sh", Some(true), Some(true)),
            ("(?<=B)ash", Some(true), None),
            (r"Bash\Z", Some(false), None),
            ("Ba.h{1,}", Some(true), Some(true)),
            (r"\cJ|Bash", Some(true), None),
        ];
        for (pattern, claude, codex) in cases {
            for (syntax, want) in [
                (MatcherSyntax::Claude, claude),
                (MatcherSyntax::Codex, codex),
            ] {
                let got = Matcher::parse(Some(pattern), syntax)
                    .ok()
                    .map(|m| m.matches("Bash"));
                assert_eq!(got, *want, "{pattern:?} in {syntax:?}");
            }
        }
    }

    #[test]
    fn aliases_match_too() {
        assert!(m("Task", MatcherSyntax::Claude).matches_any(&["Agent", "Task"]));
    }
}
