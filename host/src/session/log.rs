//! [`SessionLog`]: the one writer of a session's log: create, load with
//! repair, append, fsync at turn end. (`super::read_log` reads a log
//! without touching it.) The events live here, in memory; the file's
//! writes and syncs run on the log's own thread ([`super::writer`]).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::backend::{Held, SessionStore, StoreWriter};
use super::events::{LoggedEvent, SessionEvent, TurnEndReason};
use super::files::io_error;
use super::files_store::FileStore;
use super::id::{InvalidSessionId, check_session_id};
use super::writer::PendingSync;

/// A session log problem.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The id is not of dsh's session-id form; no file was touched.
    #[error(transparent)]
    InvalidId(#[from] InvalidSessionId),
    /// The file system said no.
    #[error("{path}: {message}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// No log at that path.
    #[error("{path}: no such session log")]
    Missing {
        /// The log file.
        path: PathBuf,
    },
    /// A session with that id already exists.
    #[error("{path}: the session already exists")]
    Exists {
        /// The log file.
        path: PathBuf,
    },
    /// Another process has the session open (it holds the log's lock).
    #[error(
        "{path}: the session is in use by another dsh process (it holds the log's lock); wait for it to finish or stop it"
    )]
    Locked {
        /// The log file.
        path: PathBuf,
    },
    /// Another dsh host holds the session in a shared store.
    #[error(
        "session `{id}` is held by another dsh host ({holder}); it is released when that host closes it or its connection ends"
    )]
    HeldElsewhere {
        /// The session.
        id: String,
        /// Who holds it (host, process, since when), as that host recorded it.
        holder: String,
    },
    /// The store (a database) failed or could not be reached.
    #[error("session store {store}: {message}")]
    Store {
        /// The store, as [`super::SessionStore::describe`] gives it.
        store: String,
        /// What failed.
        message: String,
    },
    /// The log is damaged beyond what a load repairs by itself.
    #[error(
        "{path}: line {line}: {message}{more}; run `dsh sessions repair {id}` to rewrite the log with every readable event (the original is kept beside it as {id}.jsonl.damaged-N)"
    )]
    Damaged {
        /// The log file.
        path: PathBuf,
        /// The session.
        id: String,
        /// The first damaged line, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
        /// ` (and N more damaged lines)`, or nothing.
        more: String,
    },
    /// A file handed to `dsh sessions import` is not a whole session log;
    /// nothing was imported (`repair` works on stored sessions, not on it).
    #[error("{path}: line {line}: {message}; nothing was imported")]
    Unimportable {
        /// The file.
        path: PathBuf,
        /// The first damaged line, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// An append that would break the turn structure.
    #[error("{path}: {message}")]
    Structure {
        /// The log file.
        path: PathBuf,
        /// What was refused.
        message: String,
    },
}

/// The log format this dsh reads and writes (the header's `version`).
pub const LOG_VERSION: u32 = 1;

/// The first line of every session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// Always `session`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Format version.
    pub version: u32,
    /// Session id.
    pub session_id: String,
    /// Working directory of the session.
    pub cwd: String,
    /// Creation time, ms since the epoch.
    pub created_ms: u64,
    /// Parent session, for subagents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// Agent type, for subagents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

impl SessionHeader {
    /// A header for a new session.
    pub fn new(session_id: &str, cwd: &str) -> Self {
        SessionHeader {
            kind: "session".into(),
            version: LOG_VERSION,
            session_id: session_id.into(),
            cwd: cwd.into(),
            created_ms: now_ms(),
            parent_session_id: None,
            agent_type: None,
        }
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Where session `id` lives under `state_dir`; refuses an id that is not
/// of dsh's form (see [`super::id`]), so no id names a file elsewhere.
pub fn session_path(state_dir: &Path, id: &str) -> Result<PathBuf, LogError> {
    check_session_id(id)?;
    Ok(state_dir.join("sessions").join(format!("{id}.jsonl")))
}

/// The session id a log's file name gives (`<id>.jsonl`).
pub(crate) fn id_of(path: &Path) -> Result<String, LogError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = name.strip_suffix(".jsonl").unwrap_or(&name);
    check_session_id(id)?;
    Ok(id.to_string())
}

pub(crate) fn read_all(file: &mut File, path: &Path) -> Result<Vec<u8>, LogError> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "cannot read", e))?;
    Ok(bytes)
}

/// The result every tool call a crash cut off gets on load.
pub const INTERRUPTED_TOOL_RESULT: &str =
    "the tool call was interrupted: the dsh process running it ended before it finished";

/// Stamps `event` with `ts`. An `Other` event keeps a `ts` of its own in
/// place (overwritten), as the untyped log did.
fn stamp(event: SessionEvent, ts: u64) -> LoggedEvent {
    match event {
        SessionEvent::Other(mut value) => {
            let inside = value
                .as_object_mut()
                .filter(|map| map.contains_key("ts"))
                .map(|map| map.insert("ts".into(), ts.into()))
                .is_some();
            if inside {
                // Written where it stands; read back as the same `Other`.
                LoggedEvent::from_value(value)
            } else {
                LoggedEvent {
                    event: SessionEvent::Other(value),
                    ts: Some(ts),
                }
            }
        }
        typed => LoggedEvent {
            event: typed,
            ts: Some(ts),
        },
    }
}

/// One session's log file, held with the writer's lock, and its events.
pub struct SessionLog {
    path: PathBuf,
    writer: Box<dyn StoreWriter>,
    header: SessionHeader,
    events: Vec<LoggedEvent>,
    open_turn: Option<String>,
    /// Where a crash-cut end was kept when loading cut it from the log.
    pub kept_aside: Option<PathBuf>,
}

impl SessionLog {
    /// Creates the log of a new session in the JSONL files under
    /// `state_dir` (see [`FileStore::create`]).
    pub fn create(state_dir: &Path, header: SessionHeader) -> Result<SessionLog, LogError> {
        Self::create_in(&FileStore::new(state_dir), header)
    }

    /// Creates a new session in `store` and holds it.
    pub fn create_in(
        store: &dyn SessionStore,
        header: SessionHeader,
    ) -> Result<SessionLog, LogError> {
        let held = store.create(&header)?;
        Ok(SessionLog::held(held))
    }

    /// Opens the existing JSONL log at `path` as its writer (see
    /// [`FileStore::open`] and [`SessionLog::open_in`]).
    pub fn open(path: &Path) -> Result<SessionLog, LogError> {
        let held = super::files_store::open_file(path, &super::holds::HoldTable::for_log(path))?;
        SessionLog::close_crashed(SessionLog::held(held))
    }

    /// Opens session `id` in `store` as its writer: holds it (refused while
    /// another process or host holds it), and closes a turn a crash left
    /// open: each tool call without a result gets an error result, then
    /// `turn/end {interrupted}`.
    pub fn open_in(store: &dyn SessionStore, id: &str) -> Result<SessionLog, LogError> {
        let held = store.open(id)?;
        SessionLog::close_crashed(SessionLog::held(held))
    }

    fn held(held: Held) -> SessionLog {
        let mut log = SessionLog {
            path: held.path,
            writer: held.writer,
            header: held.header,
            events: Vec::new(),
            open_turn: None,
            kept_aside: held.kept_aside,
        };
        for event in held.events {
            log.track(&event.event);
            log.events.push(event);
        }
        log
    }

    fn close_crashed(mut log: SessionLog) -> Result<SessionLog, LogError> {
        if let Some(turn) = log.open_turn.clone() {
            for (call_id, name) in log.unanswered_calls() {
                log.append(SessionEvent::ToolResult {
                    call_id,
                    name,
                    content: INTERRUPTED_TOOL_RESULT.into(),
                    is_error: true,
                    structured: None,
                    images: Vec::new(),
                })?;
            }
            log.append(SessionEvent::TurnEnd {
                turn_id: turn,
                reason: TurnEndReason::Interrupted,
                message: Some("the process ended mid-turn".into()),
            })?;
            log.sync()?;
        }
        Ok(log)
    }

    /// Tool calls of the open turn that have no `tool/result`, in order.
    fn unanswered_calls(&self) -> Vec<(String, String)> {
        let start = self
            .events
            .iter()
            .rposition(|e| matches!(e.event, SessionEvent::TurnStart { .. }))
            .unwrap_or(0);
        let mut calls: Vec<(String, String)> = Vec::new();
        let mut answered: Vec<&str> = Vec::new();
        for logged in &self.events[start..] {
            match &logged.event {
                SessionEvent::AssistantMessage { tool_calls, .. } => {
                    calls.extend(tool_calls.iter().map(|c| (c.id.clone(), c.name.clone())));
                }
                SessionEvent::ToolCall { call_id, name, .. }
                    if !calls.iter().any(|(c, _)| c == call_id) =>
                {
                    calls.push((call_id.clone(), name.clone()));
                }
                SessionEvent::ToolResult { call_id, .. } => answered.push(call_id),
                _ => {}
            }
        }
        calls.retain(|(id, _)| !answered.contains(&id.as_str()));
        calls
    }

    fn track(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::TurnStart { turn_id, .. } => self.open_turn = Some(turn_id.clone()),
            SessionEvent::TurnEnd { .. } => self.open_turn = None,
            _ => {}
        }
    }

    /// Appends one event (stamped with `ts`) and queues its line for the
    /// file. `turn/start` needs no open turn; everything else needs one.
    /// Returns the event as logged.
    pub fn append(&mut self, event: SessionEvent) -> Result<LoggedEvent, LogError> {
        let structure = |message: String| LogError::Structure {
            path: self.path.clone(),
            message,
        };
        let kind = event.kind();
        match (&event, &self.open_turn) {
            _ if kind.is_empty() => return Err(structure("event has no `type`".into())),
            (SessionEvent::Other(_), _) if kind == "turn/start" || kind == "turn/end" => {
                return Err(structure(format!(
                    "a `{kind}` that is not of dsh's form (turn boundaries are the host's)"
                )));
            }
            (SessionEvent::TurnStart { .. }, Some(open)) => {
                return Err(structure(format!("turn {open} is still open")));
            }
            (SessionEvent::TurnStart { .. }, None) => {}
            (_, None) => return Err(structure(format!("`{kind}` outside a turn"))),
            _ => {}
        }
        let logged = stamp(event, now_ms());
        // One line per event: the store never splits or merges them.
        self.writer
            .append(self.events.len() as u64, &logged.to_string())?;
        self.track(&logged.event);
        self.events.push(logged.clone());
        Ok(logged)
    }

    /// Queues a sync of everything appended so far; await the answer off
    /// the lock (the turn end's fsync).
    pub fn sync_later(&self) -> Result<PendingSync, LogError> {
        self.writer.sync_later(true)
    }

    /// Queues a barrier: awaited, every line appended so far is in the file
    /// (not necessarily on disk), for whoever reads the file next.
    pub fn written_later(&self) -> Result<PendingSync, LogError> {
        self.writer.sync_later(false)
    }

    /// The session is idle (no turn open, nothing to write): the store may
    /// let go of what only writing needs (the log's file and thread); the
    /// next append takes them again. The session stays held.
    pub fn release_idle(&self) {
        self.writer.release_idle();
    }

    /// Flushes the file to disk (called at every turn end).
    /// Blocks until the writer thread has synced; async callers use
    /// [`SessionLog::sync_later`].
    pub fn sync(&mut self) -> Result<(), LogError> {
        self.writer.sync()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// Every event after the header.
    pub fn events(&self) -> &[LoggedEvent] {
        &self.events
    }

    /// The id of the open turn, if any.
    pub fn open_turn(&self) -> Option<&str> {
        self.open_turn.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::events::TurnKind;
    use serde_json::json;
    use std::io::Write as _;

    fn start(turn: &str) -> SessionEvent {
        SessionEvent::turn_start(turn, TurnKind::Prompt)
    }

    fn call(id: &str) -> SessionEvent {
        SessionEvent::ToolCall {
            call_id: id.into(),
            name: "Bash".into(),
            arguments: json!({}),
        }
    }
    use std::fs::OpenOptions;

    fn kinds(events: &[LoggedEvent]) -> Vec<&str> {
        events.iter().map(LoggedEvent::kind).collect()
    }

    #[test]
    fn refuses_events_outside_turns_and_nested_turns() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::create(dir.path(), SessionHeader::new("s1", "/tmp")).unwrap();
        assert!(
            log.append(SessionEvent::from_value(json!({"type": "user/message"})))
                .is_err()
        );
        log.append(start("t1")).unwrap();
        assert!(log.append(start("t2")).is_err());
        log.append(SessionEvent::turn_end("t1", TurnEndReason::Completed, None))
            .unwrap();
        assert_eq!(log.open_turn(), None);
    }

    #[test]
    fn a_path_like_id_names_no_file_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["../../x", "/abs", "a/b", "", "a\0b"] {
            assert!(matches!(
                session_path(dir.path(), id),
                Err(LogError::InvalidId(_))
            ));
            let made = SessionLog::create(dir.path(), SessionHeader::new(id, "/tmp"));
            assert!(matches!(made, Err(LogError::InvalidId(_))), "{id:?}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_second_writer_is_refused_while_the_first_holds_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::create(dir.path(), SessionHeader::new("held", "/tmp")).unwrap();
        let path = log.path().to_path_buf();
        assert!(matches!(
            SessionLog::open(&path),
            Err(LogError::Locked { .. })
        ));
        assert!(matches!(
            SessionLog::create(dir.path(), SessionHeader::new("held", "/tmp")),
            Err(LogError::Exists { .. })
        ));
        drop(log);
        SessionLog::open(&path).unwrap();
    }

    #[test]
    fn torn_tail_is_cut_kept_aside_and_open_turn_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let path = {
            let mut log = SessionLog::create(dir.path(), SessionHeader::new("s2", "/tmp")).unwrap();
            log.append(start("t1")).unwrap();
            log.append(SessionEvent::UserMessage {
                content: "hi".into(),
                source: crate::session::events::EventSource::User,
                original_content: None,
                parts: Vec::new(),
            })
            .unwrap();
            log.path().to_path_buf()
        };
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"assistant/mess").unwrap();
        drop(f);
        let original = std::fs::read(&path).unwrap();
        let log = SessionLog::open(&path).unwrap();
        assert_eq!(
            kinds(log.events()),
            ["turn/start", "user/message", "turn/end"]
        );
        assert_eq!(log.events()[2].to_value()["reason"], "interrupted");
        let aside = log.kept_aside.clone().unwrap();
        assert_eq!(aside.file_name().unwrap(), "s2.jsonl.damaged-1");
        assert_eq!(std::fs::read(&aside).unwrap(), original);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n') && !text.contains("assistant/mess"));
        drop(log);
        // Reopening finds a consistent, closed log.
        let again = SessionLog::open(&path).unwrap();
        assert_eq!(again.events().len(), 3);
        assert!(again.kept_aside.is_none());
    }

    #[test]
    fn a_turn_cut_mid_tool_gets_a_result_for_every_call_then_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let calls: Vec<crate::model::ModelToolCall> = ["c1", "c2", "c3"]
            .iter()
            .map(|id| crate::model::ModelToolCall {
                id: (*id).into(),
                name: "Bash".into(),
                arguments: json!({}),
            })
            .collect();
        let path = {
            let mut log = SessionLog::create(dir.path(), SessionHeader::new("s3", "/tmp")).unwrap();
            log.append(start("t1")).unwrap();
            log.append(SessionEvent::AssistantMessage {
                content: String::new(),
                tool_calls: calls,
            })
            .unwrap();
            log.append(call("c1")).unwrap();
            log.append(SessionEvent::ToolResult {
                call_id: "c1".into(),
                name: "Bash".into(),
                content: "ok".into(),
                is_error: false,
                structured: None,
                images: Vec::new(),
            })
            .unwrap();
            log.append(call("c2")).unwrap();
            log.path().to_path_buf()
        };
        let log = SessionLog::open(&path).unwrap();
        let tail: Vec<(&str, &str, bool)> = log.events()[5..]
            .iter()
            .map(|e| match &e.event {
                SessionEvent::ToolResult {
                    call_id, is_error, ..
                } => (e.kind(), call_id.as_str(), *is_error),
                other => (other.kind(), "", false),
            })
            .collect();
        assert_eq!(
            tail,
            [
                ("tool/result", "c2", true),
                ("tool/result", "c3", true),
                ("turn/end", "", false)
            ]
        );
        assert_eq!(
            log.events()[5].to_value()["content"],
            INTERRUPTED_TOOL_RESULT
        );
        // They are real events: the file holds them.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(INTERRUPTED_TOOL_RESULT).count(), 2);
    }

    #[test]
    fn other_damage_is_refused_naming_the_line_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = {
            let mut log = SessionLog::create(dir.path(), SessionHeader::new("s4", "/tmp")).unwrap();
            log.append(start("t1")).unwrap();
            log.path().to_path_buf()
        };
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"garbage\n{\"type\":\"turn/end\",\"turn_id\":\"t1\"}\n");
        std::fs::write(&path, &bytes).unwrap();
        let e = SessionLog::open(&path).err().unwrap();
        let text = e.to_string();
        assert!(matches!(e, LogError::Damaged { line: 3, .. }), "{text}");
        assert!(
            text.contains("s4.jsonl: line 3:") && text.contains("dsh sessions repair s4"),
            "{text}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }
}
