//! Which environment variables hold credentials: the one rule dsh's process
//! runner scrubs children's environments by, and the bridges use to hand
//! hooks the environment the real CLIs give them.
//!
//! A variable is a credential when its name, compared case-insensitively,
//! - contains `KEY`, `SECRET`, `TOKEN`, `PASSWORD`, `PASSWD` or `WEBHOOK`;
//! - ends with `_PAT` or `_DSN` (or is `PAT` or `DSN`);
//! - ends with `_URL` or `_URI` (or is `URL` or `URI`) and its value holds
//!   userinfo: `scheme://user:pass@host`, or `scheme://token@host`.
//!
//! A pure function of the name and value: no I/O, nothing crosses the ABI.

/// Substrings of a name that mark a credential.
const NAME_MARKERS: [&str; 6] = ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "WEBHOOK"];
/// Name suffixes (after `_`, or the whole name) that mark a credential.
const NAME_SUFFIXES: [&str; 2] = ["PAT", "DSN"];
/// Name suffixes that mark a credential when the value holds userinfo.
const URL_SUFFIXES: [&str; 2] = ["URL", "URI"];

/// Whether `name` ends with `_<suffix>` or is `suffix`, ignoring ASCII
/// case (`suffix` is upper-case).
fn has_suffix(name: &[u8], suffix: &str) -> bool {
    let suffix = suffix.as_bytes();
    let Some(start) = name.len().checked_sub(suffix.len()) else {
        return false;
    };
    name[start..].eq_ignore_ascii_case(suffix) && (start == 0 || name[start - 1] == b'_')
}

/// Whether `name` contains `marker`, ignoring ASCII case (`marker` is
/// upper-case). The same as upper-casing `name` and searching it, without
/// the copy or a searcher per marker: this runs for every inherited
/// variable of every scrubbed spawn (issue 15).
fn contains_marker(name: &[u8], marker: &str) -> bool {
    let marker = marker.as_bytes();
    name.len() >= marker.len()
        && name
            .windows(marker.len())
            .any(|w| w.eq_ignore_ascii_case(marker))
}

/// Whether the name alone marks a credential.
pub fn is_credential_name(name: &str) -> bool {
    let name = name.as_bytes();
    NAME_MARKERS.iter().any(|m| contains_marker(name, m))
        || NAME_SUFFIXES.iter().any(|s| has_suffix(name, s))
}

/// Whether `value` is a URL with userinfo (`scheme://user[:pass]@host`).
pub fn has_userinfo(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    if scheme.is_empty() {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| !userinfo.is_empty())
}

/// Whether the variable `name=value` holds a credential.
pub fn is_credential(name: &str, value: &str) -> bool {
    if is_credential_name(name) {
        return true;
    }
    URL_SUFFIXES.iter().any(|s| has_suffix(name.as_bytes(), s)) && has_userinfo(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as it was first written: upper-case the name, then search.
    fn by_upper_casing(name: &str, value: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        let suffix = |s: &str| {
            upper == s
                || upper
                    .strip_suffix(s)
                    .is_some_and(|rest| rest.ends_with('_'))
        };
        NAME_MARKERS.iter().any(|m| upper.contains(m))
            || NAME_SUFFIXES.iter().any(|s| suffix(s))
            || (URL_SUFFIXES.iter().any(|s| suffix(s)) && has_userinfo(value))
    }

    #[test]
    fn the_rule_reads_as_upper_casing_the_name_would() {
        let names = [
            "",
            "K",
            "KE",
            "KEY",
            "key",
            "kEy",
            "MONKEY",
            "monkeys",
            "A_SECRET_B",
            "Token",
            "x_tOkEn_y",
            "PASSWORD",
            "passwd",
            "PassWD_FILE",
            "WEBHOOK",
            "web_hook",
            "PAT",
            "pat",
            "_PAT",
            "X_pat",
            "XPAT",
            "PATH",
            "PAT_X",
            "DSN",
            "x_dsn",
            "XDSN",
            "DSN_HOST",
            "URL",
            "url",
            "A_URL",
            "AURL",
            "A_URI",
            "a_uri",
            "URI_X",
            "_",
            "__",
            "K\u{e9}Y",
            "\u{e9}key",
            "SE\u{c7}RET",
            "\u{130}KEY",
            "\u{df}_PAT",
            "T\u{f8}KEN",
            "TOKE",
            "OKEN",
            "SECRE",
            "ECRET",
        ];
        let values = [
            "",
            "x",
            "postgres://app:pw@db/app",
            "https://host/path",
            "://@",
        ];
        for name in names {
            for value in values {
                assert_eq!(
                    is_credential(name, value),
                    by_upper_casing(name, value),
                    "{name:?} = {value:?}"
                );
            }
        }
    }

    #[test]
    fn names_that_are_credentials() {
        for name in [
            "ANTHROPIC_API_KEY",
            "github_token",
            "Db_Password",
            "AWS_SECRET_ACCESS_KEY",
            "apikey",
            "MYSQL_PASSWD",
            "GITHUB_PAT",
            "pat",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "discord_webhook",
        ] {
            assert!(is_credential(name, ""), "{name}");
        }
        for name in [
            "PATH", "HOME", "LANG", "TERM", "PWD", "PATTERN", "SPATIAL", "DSN_HOST", "OLDPWD",
        ] {
            assert!(!is_credential(name, "x"), "{name}");
        }
    }

    #[test]
    fn urls_are_credentials_only_with_userinfo() {
        for (name, value) in [
            ("DATABASE_URL", "postgres://app:hunter2@db:5432/app"),
            ("REDIS_URL", "redis://:s3cret@cache:6379/0"),
            (
                "MONGO_URI",
                "mongodb+srv://u:p@cluster0.example.net/?retryWrites=true",
            ),
            ("GIT_URL", "https://ghp_abc@github.com/o/r.git"),
            ("url", "amqp://guest:guest@mq"),
        ] {
            assert!(is_credential(name, value), "{name}={value}");
        }
        for (name, value) in [
            ("DATABASE_URL", "postgres://db:5432/app"),
            ("API_BASE_URL", "https://example.com/path@v2"),
            ("HOMEPAGE_URL", "https://example.com/?q=a@b"),
            ("REDIS_URL", "redis://@cache"),
            ("SOME_URL", "not a url user:pass@host"),
            ("CURL_HOME", "https://u:p@h"), // not an `_URL` name
        ] {
            assert!(!is_credential(name, value), "{name}={value}");
        }
    }
}
