//! `dsh sessions export` / `import`: a session as JSONL (the file store's
//! own format: the header line, then one event per line), to move it
//! between stores.
//!
//! Export reads the session as it stands (a held session too). Import
//! refuses a file that is damaged anywhere (naming the line) or a session id
//! the target store already has, and writes nothing then; otherwise it
//! creates the session, appends every event in order and syncs once.

use std::path::Path;

use serde_json::Value;

use super::backend::SessionStore;
use super::id::check_session_id;
use super::log::LogError;
use super::scan::scan;

/// Session `id` of `store` as JSONL text.
pub fn export(store: &dyn SessionStore, id: &str) -> Result<String, LogError> {
    let snapshot = store.read(id)?;
    let header = snapshot.header.ok_or_else(|| LogError::Damaged {
        path: store.describe().into(),
        id: id.to_string(),
        line: 1,
        message: "no readable header".into(),
        more: String::new(),
    })?;
    let mut out =
        serde_json::to_string(&header).map_err(|e| store_error(store, format!("header: {e}")))?;
    out.push('\n');
    for event in &snapshot.events {
        out.push_str(&event.to_string());
        out.push('\n');
    }
    Ok(out)
}

fn store_error(store: &dyn SessionStore, message: String) -> LogError {
    LogError::Store {
        store: store.describe(),
        message,
    }
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The session's id (from the header).
    pub id: String,
    /// Events imported.
    pub events: usize,
}

/// Imports the JSONL `bytes` (read from `from`, for messages) into `store`.
pub fn import(store: &dyn SessionStore, from: &Path, bytes: &[u8]) -> Result<Imported, LogError> {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let id = serde_json::from_slice::<Value>(first)
        .ok()
        .and_then(|v| {
            v.get("session_id")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .ok_or_else(|| LogError::Unimportable {
            path: from.to_path_buf(),
            line: 1,
            message: if bytes.is_empty() {
                "the file is empty".into()
            } else {
                "not a session header with a `session_id`".into()
            },
        })?;
    check_session_id(&id)?;
    let scanned = scan(bytes, &id);
    let damaged = |line: usize, message: String| LogError::Unimportable {
        path: from.to_path_buf(),
        line,
        message,
    };
    if let Some(d) = scanned.damage.first() {
        return Err(damaged(d.line, d.message.clone()));
    }
    if let Some(t) = &scanned.tail {
        return Err(damaged(t.line, "the last line is cut off".into()));
    }
    let header = scanned
        .header
        .ok_or_else(|| damaged(1, "no header".into()))?;
    let held = store.create(&header)?;
    for (seq, event) in scanned.events.iter().enumerate() {
        held.writer.append(seq as u64, &event.to_string())?;
    }
    held.writer.sync()?;
    Ok(Imported {
        id,
        events: scanned.events.len(),
    })
}
