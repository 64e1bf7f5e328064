//! The session log: one JSONL file per session, the single source of truth.
//!
//! `<state_dir>/sessions/<id>.jsonl` holds a header line, then one event per
//! line. Every event lives inside an open turn. The file is fsynced at every
//! turn end. History for the model is derived from the events ([`history`]),
//! so replaying a log reproduces the conversation.
//!
//! - [`id`]: the one session-id form (`[A-Za-z0-9_-]{1,128}`); an id of any
//!   other form never becomes a path ([`session_path`] refuses it).
//! - [`files`]: the state folder and `sessions/` are 0700, logs 0600; the
//!   process appending to a log holds an exclusive `flock` on it.
//! - `holds`: a process that has a session open holds it (a byte-range lock
//!   on `<state_dir>/.session-holds`) until it closes it, so the log's file
//!   and thread can be let go while the session is idle (`file_writer`).
//! - [`events`]: the events, one enum ([`SessionEvent`]) written and read
//!   through the same type; unknown types are kept as they were.
//! - [`SessionLog`]: the writer; its file's writes and fsyncs run on the
//!   log's own thread ([`writer`]), never on an async worker. On load a crash-cut last line is cut (and
//!   kept aside), and a turn left open by a crash gets an error
//!   `tool/result` for each unanswered tool call, then
//!   `turn/end {interrupted}`; other damage is refused with the line and
//!   the way forward.
//! - [`repair`]: `dsh sessions repair`: rewrite a damaged log with every
//!   readable event, the original kept aside.
//! - [`read_log`], [`list_sessions`]: reading as it stands, touching nothing.
//!
//! - [`SessionStore`]: where logs are kept. [`FileStore`] (the files above)
//!   is the default; [`postgres::PgStore`] keeps them in PostgreSQL for
//!   several hosts (one host holds a session at a time).
//!
//! This module only reads and writes files and its store; it calls nothing
//! else.

mod backend;
pub mod events;
mod file_writer;
pub mod files;
mod files_store;
pub mod history;
mod holds;
pub mod id;
mod log;
pub mod postgres;
pub mod repair;
mod scan;
pub mod slash;
mod store;
pub mod transfer;
mod writer;

pub use backend::{Held, SessionStore, StoreWriter};
pub use events::{ContextRole, EventSource, LoggedEvent, SessionEvent, TurnEndReason, TurnKind};
pub use files::create_state_dir;
pub use files_store::FileStore;
pub use id::{InvalidSessionId, check_session_id};
pub use log::{INTERRUPTED_TOOL_RESULT, LogError, SessionHeader, SessionLog, now_ms, session_path};
pub use scan::Damage;
pub use store::{LogSnapshot, StoredSession, list_sessions, read_log};
pub use writer::PendingSync;
