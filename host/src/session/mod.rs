//! The session log: one JSONL file per session, the single source of truth.
//!
//! `<state_dir>/sessions/<id>.jsonl` holds a header line, then one event per
//! line. Every event lives inside an open turn. The file is fsynced at every
//! turn end; on load a torn last line is cut away and a turn left open by a
//! crash is closed with `turn/end {interrupted}`. History for the model is
//! derived from the events ([`history`]), so replaying a log reproduces the
//! conversation.
//!
//! This module only reads and writes files; it calls nothing else.

pub mod events;
pub mod history;
mod log;

pub use events::TurnEndReason;
pub use log::{LogError, SessionHeader, SessionLog, list_sessions, session_path};
