//! [`PgStore`]: sessions in PostgreSQL, so any of several hosts can resume
//! any session.
//!
//! - **Schema**: `dsh_sessions` (one row per session: header, cwd, host,
//!   status, holder) and `dsh_events` (one row per event, keyed
//!   `(session_id, seq)`, the event as `jsonb` plus its exact line), created
//!   and migrated by dsh ([`migrate`], `dsh store migrate`).
//! - **One host holds a session**: opening or creating a session takes a
//!   PostgreSQL advisory lock on a connection of the session's own, kept
//!   until the session is closed. Another host is refused with
//!   [`LogError::HeldElsewhere`] naming the holder (recorded in
//!   `dsh_sessions.holder`). A host that dies loses its connection, and the
//!   server releases the lock with it.
//! - **Appends** are queued in memory and stored at every sync (every turn
//!   end) in one transaction; `ON CONFLICT DO NOTHING` on `(session_id,
//!   seq)` makes a retried batch harmless ([`writer`]).
//! - **Failure**: bounded buffering. While the database is away, a sync
//!   keeps the unstored events and retries (reconnecting, taking the lock
//!   again) for up to `retry` (`state.retry_s`); past that the sync fails
//!   with a clear error (the turn ends with it) and the events stay queued
//!   for the next sync. Acknowledged (stored) events are never lost; if the
//!   lock was taken by another host meanwhile, the writer stops for good.
//!
//! All database work runs on one current-thread runtime on a thread of the
//! store's own, so blocking callers (the CLI, the log's blocking pool) and
//! async ones share it.

mod migrate;
mod url;
mod writer;

pub use migrate::{Migrated, latest};

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio_postgres::NoTls;

use super::backend::{Held, SessionStore};
use super::events::LoggedEvent;
use super::id::check_session_id;
use super::log::{LogError, SessionHeader};
use super::scan::Damage;
use super::store::{LogSnapshot, StoredSession};

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// `postgres://user:password@host:port/database` (or key=value).
    pub url: String,
    /// How long a sync keeps retrying while the database is away.
    pub retry: Duration,
    /// How long one connection attempt may take.
    pub connect_timeout: Duration,
    /// Connections in the pool for reads and listings.
    pub pool_size: usize,
}

impl PgOptions {
    /// Defaults for `url`: 30 s retry window, 5 s connect timeout, 4 pooled.
    pub fn new(url: &str) -> PgOptions {
        PgOptions {
            url: url.to_string(),
            retry: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            pool_size: 4,
        }
    }
}

/// A driver error with the server's message when there is one.
pub(crate) fn why(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

/// What the writer and the store share.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) rt: Handle,
    pub(crate) config: tokio_postgres::Config,
    pub(crate) shown: String,
    /// Who this host is, as a holder: `<hostname> pid <pid>`.
    pub(crate) me: String,
    pub(crate) hostname: String,
    pub(crate) retry: Duration,
}

impl Shared {
    pub(crate) fn error(&self, message: impl Into<String>) -> LogError {
        LogError::Store {
            store: self.shown.clone(),
            message: url::mask_config(&message.into(), &self.config),
        }
    }

    /// A connection of its own (not pooled): a session's lock lives on it.
    pub(crate) async fn connect(&self) -> Result<tokio_postgres::Client, String> {
        let (client, connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(|e| format!("cannot connect: {}", why(&e)))?;
        self.rt.spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("session store connection ended: {e}");
            }
        });
        Ok(client)
    }
}

/// The PostgreSQL session store.
pub struct PgStore {
    shared: Shared,
    pool: deadpool_postgres::Pool,
    /// Where a held session's transcript path points (hooks get it, and
    /// the Claude bridge keeps long hook output beside it).
    transcript_dir: Option<PathBuf>,
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Starts the store's runtime thread; returns its handle.
fn start_runtime() -> Result<Handle, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("dsh-store-pg".into())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => {
                    let _ = tx.send(Ok(rt.handle().clone()));
                    // Drives every task spawned on the handle, for the
                    // process's life.
                    rt.block_on(std::future::pending::<()>());
                }
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot start its runtime: {e}")));
                }
            }
        })
        .map_err(|e| format!("cannot start its thread: {e}"))?;
    rx.recv()
        .map_err(|_| "its thread ended while starting".to_string())?
}

impl PgStore {
    /// Connects (checking the database is reachable and the credentials
    /// work) and applies pending migrations.
    pub fn connect(options: &PgOptions) -> Result<PgStore, LogError> {
        let (store, _) = Self::connect_and_migrate(options)?;
        Ok(store)
    }

    /// [`PgStore::connect`], returning what the migration did.
    pub fn connect_and_migrate(options: &PgOptions) -> Result<(PgStore, Migrated), LogError> {
        let mut config = url::parse(&options.url).map_err(|message| LogError::Store {
            store: "postgres".into(),
            message: format!("state.url (or DSH_STORE_URL) is not a PostgreSQL URL: {message}"),
        })?;
        let hostname = hostname();
        let me = format!("{hostname} pid {}", std::process::id());
        config.application_name(format!("dsh {me}"));
        config.connect_timeout(options.connect_timeout);
        let shown = url::shown(&config);
        let rt = start_runtime().map_err(|message| LogError::Store {
            store: shown.clone(),
            message,
        })?;
        let manager = deadpool_postgres::Manager::from_config(
            config.clone(),
            NoTls,
            deadpool_postgres::ManagerConfig {
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let shared = Shared {
            rt,
            config,
            shown,
            me,
            hostname,
            retry: options.retry,
        };
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|e| shared.error(format!("cannot build the pool: {e}")))?;
        let store = PgStore {
            shared,
            pool,
            transcript_dir: None,
        };
        let migrated = store.run(|shared, _| async move {
            let mut client = shared.connect().await?;
            migrate::migrate(&mut client).await
        })?;
        for (version, name) in &migrated.applied {
            tracing::info!(store = %store.shared.shown, version, "applied session store migration: {name}");
        }
        Ok((store, migrated))
    }

    /// Held sessions' transcript paths are `<dir>/<id>.jsonl` (the files
    /// store's names under `<state_dir>/sessions`); no file is written
    /// there: the events are in the database.
    pub fn with_transcript_dir(mut self, dir: PathBuf) -> PgStore {
        self.transcript_dir = Some(dir);
        self
    }

    /// The database, as it may be shown (no password).
    pub fn shown(&self) -> &str {
        &self.shared.shown
    }

    /// Runs `work` on the store's runtime and waits for it from any thread.
    fn run<T, F, Fut>(&self, work: F) -> Result<T, LogError>
    where
        T: Send + 'static,
        F: FnOnce(Shared, deadpool_postgres::Pool) -> Fut,
        Fut: Future<Output = Result<T, String>> + Send + 'static,
    {
        let fut = work(self.shared.clone(), self.pool.clone());
        match futures::executor::block_on(self.shared.rt.spawn(fut)) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(message)) => Err(self.shared.error(message)),
            Err(e) => Err(self.shared.error(format!("the store's task failed: {e}"))),
        }
    }

    fn pseudo_path(&self, id: &str) -> PathBuf {
        PathBuf::from(format!("{}#{id}", self.shared.shown))
    }

    fn hold(&self, id: &str, header: Option<&SessionHeader>) -> Result<Held, LogError> {
        check_session_id(id)?;
        let header_line = match header {
            Some(h) => Some(
                serde_json::to_string(h).map_err(|e| self.shared.error(format!("header: {e}")))?,
            ),
            None => None,
        };
        let id_owned = id.to_string();
        let created = header.map(|h| h.created_ms as i64);
        let cwd = header.map(|h| h.cwd.clone());
        let outcome = self.run(move |shared, _| async move {
            writer::hold(shared, id_owned, header_line, cwd, created).await
        })?;
        match outcome {
            writer::Holding::Held {
                header_line,
                lines,
                writer,
            } => {
                let (path, writer) = self.with_transcript(id, &header_line, &lines, writer);
                let header: SessionHeader = serde_json::from_str(&header_line).map_err(|e| {
                    self.shared
                        .error(format!("session `{id}`: the stored header is not one: {e}"))
                })?;
                let mut events = Vec::with_capacity(lines.len());
                for (seq, line) in lines {
                    let event: LoggedEvent = serde_json::from_str(&line).map_err(|e| {
                        self.shared.error(format!(
                            "session `{id}`: event {seq} is not a JSON event: {e}"
                        ))
                    })?;
                    events.push(event);
                }
                Ok(Held {
                    header,
                    events,
                    kept_aside: None,
                    path,
                    writer: Box::new(writer),
                })
            }
            writer::Holding::Exists => Err(LogError::Exists {
                path: self.pseudo_path(id),
            }),
            writer::Holding::Missing => Err(LogError::Missing {
                path: self.pseudo_path(id),
            }),
            writer::Holding::Refused { holder } => Err(LogError::HeldElsewhere {
                id: id.to_string(),
                holder,
            }),
        }
    }
}

impl PgStore {
    /// Writes the local transcript of a held session (when this store has a
    /// transcript folder) and has `writer` keep it up to date. Without one,
    /// or when it cannot be written (logged), the session's path names it
    /// in the database.
    fn with_transcript(
        &self,
        id: &str,
        header_line: &str,
        lines: &[(i64, String)],
        writer: writer::PgWriter,
    ) -> (PathBuf, writer::PgWriter) {
        let Some(dir) = &self.transcript_dir else {
            return (self.pseudo_path(id), writer);
        };
        let lines: Vec<String> = lines.iter().map(|(_, l)| l.clone()).collect();
        match super::files_store::write_transcript(dir, id, header_line, &lines) {
            Ok((path, transcript)) => (path, writer.with_transcript(transcript)),
            Err(e) => {
                tracing::warn!(session = %id, "cannot keep the local transcript: {e}; hooks get no transcript file");
                (self.pseudo_path(id), writer)
            }
        }
    }
}

impl SessionStore for PgStore {
    fn describe(&self) -> String {
        self.shared.shown.clone()
    }

    fn create(&self, header: &SessionHeader) -> Result<Held, LogError> {
        self.hold(&header.session_id, Some(header))
    }

    fn open(&self, id: &str) -> Result<Held, LogError> {
        self.hold(id, None)
    }

    fn read(&self, id: &str) -> Result<LogSnapshot, LogError> {
        check_session_id(id)?;
        let owned = id.to_string();
        let found = self.run(move |_, pool| async move {
            let client = pool
                .get()
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            let header = client
                .query_opt(
                    "SELECT header_line FROM dsh_sessions WHERE id = $1",
                    &[&owned],
                )
                .await
                .map_err(|e| why(&e))?;
            let Some(header) = header else {
                return Ok(None);
            };
            let rows = client
                .query(
                    "SELECT seq, line FROM dsh_events WHERE session_id = $1 ORDER BY seq",
                    &[&owned],
                )
                .await
                .map_err(|e| why(&e))?;
            let lines: Vec<(i64, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            Ok(Some((header.get::<_, String>(0), lines)))
        })?;
        let Some((header_line, lines)) = found else {
            return Err(LogError::Missing {
                path: self.pseudo_path(id),
            });
        };
        let mut damage = Vec::new();
        let header = match serde_json::from_str::<SessionHeader>(&header_line) {
            Ok(h) => Some(h),
            Err(e) => {
                damage.push(Damage {
                    line: 1,
                    message: format!("the stored header is not one: {e}"),
                });
                None
            }
        };
        let mut events = Vec::new();
        for (i, (seq, line)) in lines.into_iter().enumerate() {
            match serde_json::from_str::<LoggedEvent>(&line) {
                Ok(event) => events.push(event),
                Err(e) => damage.push(Damage {
                    line: i + 2,
                    message: format!("event {seq} is not a JSON event: {e}"),
                }),
            }
        }
        Ok(LogSnapshot {
            header,
            events,
            damage,
            tail_line: None,
        })
    }

    fn list(&self) -> Result<Vec<StoredSession>, LogError> {
        let rows = self.run(|_, pool| async move {
            let client = pool
                .get()
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            let rows = client
                .query(
                    "SELECT id, header_line FROM dsh_sessions ORDER BY created_ms, id",
                    &[],
                )
                .await
                .map_err(|e| why(&e))?;
            Ok(rows
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
                .collect::<Vec<_>>())
        })?;
        Ok(rows
            .into_iter()
            .map(|(id, line)| StoredSession {
                path: self.pseudo_path(&id),
                header: serde_json::from_str::<SessionHeader>(&line).map_err(|e| e.to_string()),
                id,
            })
            .collect())
    }

    fn exists(&self, id: &str) -> bool {
        if check_session_id(id).is_err() {
            return false;
        }
        let owned = id.to_string();
        self.run(move |_, pool| async move {
            let client = pool
                .get()
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            let row = client
                .query_opt("SELECT 1 FROM dsh_sessions WHERE id = $1", &[&owned])
                .await
                .map_err(|e| why(&e))?;
            Ok(row.is_some())
        })
        .unwrap_or_else(|e| {
            tracing::warn!("{e}");
            false
        })
    }
}
