//! The child's environment: the host's, minus credentials, plus overrides.
//!
//! Model-driven shell commands must not see the daemon's API keys by
//! accident. Unless the request turns `scrub_credentials` off (the hook
//! bridges do: both real CLIs hand hooks their credentials), any inherited
//! variable that holds a credential is dropped unless allow-listed
//! (`env_allow`, or the call's `allow_env`): its name,
//! case-insensitively, contains `KEY`, `SECRET`, `TOKEN`, `PASSWORD`,
//! `PASSWD` or `WEBHOOK`, or ends with `_PAT` or `_DSN`, or it is a `*_URL`
//! / `*_URI` whose value holds userinfo (`postgres://app:pw@db`); the rule
//! is [`dsh_plugin_api::credentials`]. Variables the caller passes
//! explicitly are always kept: asking for them is the allow-listing.

use std::collections::BTreeMap;
use std::ffi::OsString;

pub use dsh_plugin_api::credentials::{is_credential, is_credential_name};

/// The full environment of a child.
///
/// `inherited` is the host environment (pass `std::env::vars_os()`);
/// `scrub` drops inherited credentials; `allow` names credential-like variables to keep anyway (exact names);
/// `remove_prefixes` drops inherited names starting with any of them
/// (credential or not, allow-listed or not); `explicit` is added last and
/// wins.
pub fn child_env(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    inherit: bool,
    scrub: bool,
    allow: &[String],
    remove_prefixes: &[String],
    explicit: &BTreeMap<String, String>,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
    if inherit {
        for (name, value) in inherited {
            // A name that is not UTF-8 cannot be checked by its spelling;
            // it cannot be a credential we know of either, so keep it.
            let keep = match name.to_str() {
                Some(n) => {
                    (!scrub
                        || !is_credential(n, &value.to_string_lossy())
                        || allow.iter().any(|a| a == n))
                        && !remove_prefixes.iter().any(|p| n.starts_with(p.as_str()))
                }
                None => true,
            };
            if keep {
                env.insert(name, value);
            }
        }
    }
    for (name, value) in explicit {
        env.insert(OsString::from(name), OsString::from(value));
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn recognises_credential_names_case_insensitively() {
        for name in [
            "ANTHROPIC_API_KEY",
            "github_token",
            "Db_Password",
            "AWS_SECRET_ACCESS_KEY",
            "apikey",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "TERM", "PWD"] {
            assert!(!is_credential_name(name), "{name}");
        }
    }

    #[test]
    fn urls_with_userinfo_pats_dsns_and_webhooks_are_scrubbed_unless_allowed() {
        let host = os(&[
            ("DATABASE_URL", "postgres://app:hunter2@db/app"),
            ("REDIS_URL", "redis://:pw@cache:6379"),
            ("PUBLIC_URL", "https://example.com/app"),
            ("GITHUB_PAT", "ghp_x"),
            ("SENTRY_DSN", "https://k@o.ingest.sentry.io/1"),
            ("MYSQL_PASSWD", "pw"),
            ("SLACK_WEBHOOK", "https://hooks.slack.com/services/T/B/X"),
        ]);
        let env = child_env(host.clone(), true, true, &[], &[], &BTreeMap::new());
        assert_eq!(names(&env), ["PUBLIC_URL"]);
        let env = child_env(
            host,
            true,
            true,
            &["DATABASE_URL".to_string()],
            &[],
            &BTreeMap::new(),
        );
        assert_eq!(names(&env), ["DATABASE_URL", "PUBLIC_URL"]);
    }

    #[test]
    fn scrubs_allows_and_overrides() {
        let host = os(&[
            ("PATH", "/bin"),
            ("MY_TOKEN", "t"),
            ("OPENAI_API_KEY", "k"),
            ("X", "old"),
        ]);
        let mut explicit = BTreeMap::new();
        explicit.insert("X".to_string(), "new".to_string());
        explicit.insert("PASSWORD_FOR_HOOK".to_string(), "p".to_string());
        let env = child_env(host, true, true, &["MY_TOKEN".to_string()], &[], &explicit);
        assert_eq!(names(&env), ["MY_TOKEN", "PASSWORD_FOR_HOOK", "PATH", "X"]);
        assert!(env.contains(&(OsString::from("X"), OsString::from("new"))));
    }

    #[test]
    fn without_inheritance_only_explicit_variables_remain() {
        let mut explicit = BTreeMap::new();
        explicit.insert("A".to_string(), "1".to_string());
        let env = child_env(os(&[("PATH", "/bin")]), false, true, &[], &[], &explicit);
        assert_eq!(names(&env), ["A"]);
    }

    #[test]
    fn removed_prefixes_go_even_when_allowed_and_explicit_ones_stay() {
        let host = os(&[
            ("OTEL_SERVICE_NAME", "x"),
            ("OTEL_EXPORTER_OTLP_HEADERS_TOKEN", "t"),
            ("MY_OTEL_X", "kept: not a prefix"),
            ("PATH", "/bin"),
        ]);
        let mut explicit = BTreeMap::new();
        explicit.insert("OTEL_MINE".to_string(), "1".to_string());
        let env = child_env(
            host,
            true,
            true,
            &["OTEL_EXPORTER_OTLP_HEADERS_TOKEN".to_string()],
            &["OTEL_".to_string()],
            &explicit,
        );
        assert_eq!(names(&env), ["MY_OTEL_X", "OTEL_MINE", "PATH"]);
    }

    #[test]
    fn without_scrubbing_credentials_are_inherited_and_prefixes_still_go() {
        let host = os(&[
            ("GH_TOKEN", "ghp_x"),
            ("DATABASE_URL", "postgres://app:pw@db/app"),
            ("OTEL_EXPORTER_OTLP_HEADERS_TOKEN", "t"),
            ("PATH", "/bin"),
        ]);
        let env = child_env(
            host,
            true,
            false,
            &[],
            &["OTEL_".to_string()],
            &BTreeMap::new(),
        );
        assert_eq!(names(&env), ["DATABASE_URL", "GH_TOKEN", "PATH"]);
    }
}
