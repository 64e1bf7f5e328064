//! The store's connection URL: parsed once, shown only without its password.
//!
//! Every message, log line and error that names the database uses
//! [`shown`]: `postgres://user@host:port/db`. A parse error is reported
//! without echoing the URL, and any error text from the driver has the
//! password masked before it goes anywhere ([`mask`]).

use tokio_postgres::config::Host;

/// Parses `url` (a `postgres://` URL or a `key=value` string).
pub(crate) fn parse(url: &str) -> Result<tokio_postgres::Config, String> {
    let trimmed = url.trim();
    if trimmed.is_empty() {
        return Err("the URL is empty".into());
    }
    let parsed: tokio_postgres::Config = trimmed
        .parse()
        .map_err(|e: tokio_postgres::Error| mask(&e.to_string(), Some(trimmed)))?;
    if parsed.get_hosts().is_empty() {
        return Err("the URL names no host (postgres://user@host:port/database)".into());
    }
    Ok(parsed)
}

/// The URL as it may be shown: scheme, user, hosts, ports, database.
pub(crate) fn shown(config: &tokio_postgres::Config) -> String {
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let name = match host {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            };
            match ports.get(i).or(ports.first()) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    let db = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{}/{db}", hosts.join(","))
}

/// `text` with every occurrence of the password (from `config`, or the
/// raw URL's `:password@` part) replaced by `***`.
pub(crate) fn mask(text: &str, raw_url: Option<&str>) -> String {
    let mut out = text.to_string();
    if let Some(url) = raw_url
        && let Some(password) = password_in(url)
        && !password.is_empty()
    {
        out = out.replace(&password, "***");
    }
    out
}

/// The password of a `scheme://user:password@...` URL, or of a
/// `password=...` key-value string.
fn password_in(url: &str) -> Option<String> {
    if let Some(rest) = url.split_once("://").map(|(_, r)| r) {
        let auth = rest.split('@').next().filter(|_| rest.contains('@'))?;
        return auth.split_once(':').map(|(_, p)| p.to_string());
    }
    url.split_whitespace()
        .find_map(|kv| kv.strip_prefix("password="))
        .map(|p| p.trim_matches('\'').to_string())
}

/// Masks the password of `config` in `text`.
pub(crate) fn mask_config(text: &str, config: &tokio_postgres::Config) -> String {
    match config.get_password() {
        Some(p) if !p.is_empty() => {
            let p = String::from_utf8_lossy(p);
            text.replace(p.as_ref(), "***")
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_url_has_no_password() {
        let c = parse("postgres://dsh:s3cret-pw@127.0.0.1:5544/dshdb").unwrap();
        assert_eq!(shown(&c), "postgres://dsh@127.0.0.1:5544/dshdb");
        assert_eq!(
            mask_config("auth failed for s3cret-pw", &c),
            "auth failed for ***"
        );
    }

    #[test]
    fn a_bad_url_is_refused_without_echoing_it() {
        let e = parse("postgres://dsh:s3cret-pw@[nope/db?sslmode=bogus").unwrap_err();
        assert!(!e.contains("s3cret-pw"), "{e}");
        assert!(parse("").is_err());
        assert_eq!(
            password_in("host=x password='pw1' user=u").as_deref(),
            Some("pw1")
        );
    }
}
