//! The manifest's `state:` block: where sessions are kept.
//!
//! ```yaml
//! state:
//!   store: postgres            # or `files` (the default)
//!   url: postgres://dsh:pw@db.internal:5432/dsh
//!   retry_s: 30                # how long a turn end waits for the database
//!   connect_timeout_s: 5
//!   pool_size: 4
//! ```
//!
//! `DSH_STORE_URL`, when set and not empty, selects the PostgreSQL store
//! with that URL whatever the manifest says. The URL never appears in a
//! `Debug` form or an error: only `postgres://user@host:port/db` does.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The `state:` block as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawState {
    store: Option<String>,
    url: Option<String>,
    retry_s: Option<u64>,
    connect_timeout_s: Option<u64>,
    pool_size: Option<usize>,
}

/// Where sessions are kept.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// JSONL files under `state_dir/sessions` (the default).
    Files,
    /// A PostgreSQL database.
    Postgres {
        /// The connection URL (holds the password: never shown).
        url: String,
        /// How long a sync retries while the database is away.
        retry: Duration,
        /// How long one connection attempt may take.
        connect_timeout: Duration,
        /// Pooled connections for reads.
        pool_size: usize,
    },
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreConfig::Files => f.write_str("Files"),
            StoreConfig::Postgres {
                retry,
                connect_timeout,
                pool_size,
                ..
            } => f
                .debug_struct("Postgres")
                .field("url", &"<hidden>")
                .field("retry", retry)
                .field("connect_timeout", connect_timeout)
                .field("pool_size", pool_size)
                .finish(),
        }
    }
}

/// The environment variable that selects PostgreSQL with its URL.
pub const STORE_URL_ENV: &str = "DSH_STORE_URL";

impl RawState {
    /// Validates the block (`env_url`: `DSH_STORE_URL`); the error names
    /// the key.
    pub(crate) fn resolve(self, env_url: Option<String>) -> Result<StoreConfig, String> {
        let env_url = env_url.filter(|u| !u.trim().is_empty());
        let store = match (&env_url, self.store.as_deref()) {
            (Some(_), _) => "postgres",
            (None, None) => "files",
            (None, Some(s)) => s,
        };
        match store {
            "files" => {
                if self.url.is_some() {
                    return Err(
                        "`state.url` is only for `state.store: postgres` (the store is `files`)"
                            .into(),
                    );
                }
                Ok(StoreConfig::Files)
            }
            "postgres" => {
                let url = env_url.or(self.url).ok_or_else(|| {
                    format!(
                        "`state.store: postgres` needs `state.url` (postgres://user:password@host:port/database) or {STORE_URL_ENV}"
                    )
                })?;
                if self.pool_size == Some(0) {
                    return Err("`state.pool_size` must be at least 1".into());
                }
                Ok(StoreConfig::Postgres {
                    url,
                    retry: Duration::from_secs(self.retry_s.unwrap_or(30)),
                    connect_timeout: Duration::from_secs(
                        self.connect_timeout_s.unwrap_or(5).max(1),
                    ),
                    pool_size: self.pool_size.unwrap_or(4),
                })
            }
            other => Err(format!(
                "`state.store: {other}` is not a store; use `files` or `postgres`"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_by_default_and_the_env_url_selects_postgres() {
        assert_eq!(RawState::default().resolve(None), Ok(StoreConfig::Files));
        let pg = RawState::default()
            .resolve(Some("postgres://u:hunter2@h/db".into()))
            .unwrap();
        assert!(matches!(pg, StoreConfig::Postgres { .. }));
        assert!(!format!("{pg:?}").contains("hunter2"));
    }

    #[test]
    fn bad_blocks_name_the_key() {
        let raw = |store: &str, url: Option<&str>| RawState {
            store: Some(store.into()),
            url: url.map(str::to_string),
            ..RawState::default()
        };
        let e = raw("redis", None).resolve(None).unwrap_err();
        assert!(e.contains("state.store: redis"), "{e}");
        let e = raw("postgres", None).resolve(None).unwrap_err();
        assert!(e.contains("state.url"), "{e}");
        let e = raw("files", Some("postgres://h/db"))
            .resolve(None)
            .unwrap_err();
        assert!(e.contains("state.url"), "{e}");
    }
}
