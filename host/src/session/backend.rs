//! The [`SessionStore`] boundary: where session logs are kept.
//!
//! A store opens a session exclusively (one writer per session, whichever
//! process or host it runs in), appends whole lines in order, makes them
//! durable when asked (every turn end), reads a session as it stands and
//! lists sessions. Typed events, the turn structure, crash closing and
//! history stay above it in [`super::SessionLog`]. Two stores exist: the
//! JSONL files under the state folder ([`super::FileStore`], the default)
//! and PostgreSQL ([`super::postgres::PgStore`]).

use std::path::PathBuf;

use super::events::LoggedEvent;
use super::log::{LogError, SessionHeader};
use super::store::{LogSnapshot, StoredSession};
use super::writer::PendingSync;

/// A session opened exclusively: what it holds so far and its writer.
pub struct Held {
    /// The header.
    pub header: SessionHeader,
    /// Every event so far, in order (sequence numbers 0, 1, ...).
    pub events: Vec<LoggedEvent>,
    /// Where a crash-cut end was kept when opening cut it (files only).
    pub kept_aside: Option<PathBuf>,
    /// The session's transcript file (what hooks get as the log's path).
    pub path: PathBuf,
    /// The one writer of the session.
    pub writer: Box<dyn StoreWriter>,
}

/// The one writer of one session. Dropping it releases the session.
pub trait StoreWriter: Send {
    /// Queues event number `seq` (from 0, after the header) as `line`
    /// (its JSON, no newline).
    fn append(&self, seq: u64, line: &str) -> Result<(), LogError>;
    /// Makes every line queued so far durable, blocking the calling thread.
    fn sync(&self) -> Result<(), LogError>;
    /// Queues a sync of every line so far, to be awaited. With `durable`
    /// false it is only a barrier: readers of the transcript see every line
    /// (a store without a transcript file answers at once).
    fn sync_later(&self, durable: bool) -> Result<PendingSync, LogError>;
    /// The session is idle: let go of what only writing needs (a file, a
    /// thread), keeping the session held; the next call takes it again.
    /// Lines and syncs queued before it still complete.
    fn release_idle(&self) {}
}

/// Where sessions are kept.
pub trait SessionStore: Send + Sync {
    /// What the store is, for messages (never a password).
    fn describe(&self) -> String;
    /// Creates a new session and holds it; refuses an existing id.
    fn create(&self, header: &SessionHeader) -> Result<Held, LogError>;
    /// Opens an existing session and holds it (refused while another
    /// process or host holds it).
    fn open(&self, id: &str) -> Result<Held, LogError>;
    /// A session as it stands, without holding or changing it.
    fn read(&self, id: &str) -> Result<LogSnapshot, LogError>;
    /// Every stored session, oldest first.
    fn list(&self) -> Result<Vec<StoredSession>, LogError>;
    /// Whether a session with this id is stored.
    fn exists(&self, id: &str) -> bool;
}
