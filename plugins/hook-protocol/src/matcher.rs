//! Matcher strings: which events of a hook point a matcher group applies to.
//!
//! Both dialects share the rules: an absent, empty or `*` matcher matches
//! everything; a matcher made only of "name characters" is a list of exact,
//! case-sensitive names; anything else is an unanchored regex. They differ in
//! what counts as a name character: Codex allows letters, digits, `_` and the
//! `|` separator; Claude also allows `,` (a second separator), space and `-`.

use regex::Regex;

/// Which dialect's name-list syntax applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatcherSyntax {
    /// Claude Code: separators `|` and `,`; space and `-` allowed in lists.
    Claude,
    /// Codex: separator `|` only.
    Codex,
}

/// A parsed matcher.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Matches every subject.
    Any,
    /// Matches exactly one of these names.
    Names(Vec<String>),
    /// Matches when the regex finds a match anywhere in the subject.
    Pattern(Regex),
}

impl Matcher {
    /// Parses a raw matcher; an invalid regex is an error the caller turns
    /// into a load warning (the group is skipped).
    pub fn parse(raw: Option<&str>, syntax: MatcherSyntax) -> Result<Matcher, regex::Error> {
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
        Regex::new(raw).map(Matcher::Pattern)
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
        assert!(matches!(re, Matcher::Pattern(_)));
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
    }

    #[test]
    fn aliases_match_too() {
        assert!(m("Task", MatcherSyntax::Claude).matches_any(&["Agent", "Task"]));
    }
}
