//! [`SessionLog`]: the one writer of a session's log: create, load with
//! repair, append, fsync at turn end. (`super::read_log` reads a log
//! without touching it.)

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::events::{self, TurnEndReason};
use super::files::{self, LockedFile, io_error};
use super::id::{InvalidSessionId, check_session_id};
use super::scan::scan;

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
    /// An append that would break the turn structure.
    #[error("{path}: {message}")]
    Structure {
        /// The log file.
        path: PathBuf,
        /// What was refused.
        message: String,
    },
}

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
            version: 1,
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

/// One session's log file, held with the writer's lock, and its events.
pub struct SessionLog {
    path: PathBuf,
    file: LockedFile,
    header: SessionHeader,
    events: Vec<Value>,
    open_turn: Option<String>,
    /// Where a crash-cut end was kept when loading cut it from the log.
    pub kept_aside: Option<PathBuf>,
}

impl SessionLog {
    /// Creates the log of a new session (0600, in a 0700 folder) and
    /// takes its lock; refuses to overwrite one. The file appears whole:
    /// it is written under a temporary name and linked into place.
    pub fn create(state_dir: &Path, header: SessionHeader) -> Result<SessionLog, LogError> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let path = session_path(state_dir, &header.session_id)?;
        let dir = files::sessions_dir(state_dir)?;
        let mut line = serde_json::to_string(&header).map_err(|e| io_error(&path, "header", e))?;
        line.push('\n');
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(
            ".{}.jsonl.new-{}-{n}",
            header.session_id,
            std::process::id()
        ));
        let made = files::create_private_file(&temp).and_then(|file| {
            let mut file = files::lock(file, &temp)?;
            file.write_all(line.as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| io_error(&temp, "cannot write header", e))?;
            match std::fs::hard_link(&temp, &path) {
                Ok(()) => Ok(file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Err(LogError::Exists { path: path.clone() })
                }
                // A file system without hard links: create in place.
                Err(_) => {
                    let mut file = files::lock(files::create_private_file(&path)?, &path)?;
                    file.write_all(line.as_bytes())
                        .and_then(|()| file.sync_all())
                        .map_err(|e| io_error(&path, "cannot write header", e))?;
                    Ok(file)
                }
            }
        });
        let _ = std::fs::remove_file(&temp);
        let file = made?;
        files::sync_dir(&dir);
        Ok(SessionLog {
            path,
            file,
            header,
            events: Vec::new(),
            open_turn: None,
            kept_aside: None,
        })
    }

    /// Opens an existing log as its writer: takes its lock (refused while
    /// another process holds it), cuts a crash-cut end (keeping those bytes
    /// aside as `<id>.jsonl.damaged-<n>`), and closes a turn a crash left
    /// open: each tool call without a result gets an error result, then
    /// `turn/end {interrupted}`. Any other damage is refused with the line
    /// and the way forward (`dsh sessions repair`).
    pub fn open(path: &Path) -> Result<SessionLog, LogError> {
        let id = id_of(path)?;
        let mut file = files::open_locked(path)?;
        let bytes = read_all(&mut file, path)?;
        let scanned = scan(&bytes, &id);
        if let Some(first) = scanned.damage.first() {
            let others = scanned.damage.len() - 1;
            return Err(LogError::Damaged {
                path: path.to_path_buf(),
                id,
                line: first.line,
                message: first.message.clone(),
                more: match others {
                    0 => String::new(),
                    1 => " (and 1 more damaged line)".into(),
                    n => format!(" (and {n} more damaged lines)"),
                },
            });
        }
        let header = scanned.header.ok_or_else(|| LogError::Damaged {
            path: path.to_path_buf(),
            id: id.clone(),
            line: 1,
            message: "no header".into(),
            more: String::new(),
        })?;
        let mut kept_aside = None;
        if let Some(tail) = &scanned.tail {
            let aside = files::keep_aside(path, &bytes)?;
            file.set_len(tail.start as u64)
                .map_err(|e| io_error(path, "cannot cut the crash-cut end", e))?;
            tracing::warn!(path = %path.display(), line = tail.line, kept = %aside.display(), "cut a crash-cut last line from the session log; the original is kept aside");
            kept_aside = Some(aside);
        }
        let mut log = SessionLog {
            path: path.to_path_buf(),
            file,
            header,
            events: Vec::new(),
            open_turn: None,
            kept_aside,
        };
        for event in scanned.events {
            log.track(&event);
            log.events.push(event);
        }
        if let Some(turn) = log.open_turn.clone() {
            for (call_id, name) in log.unanswered_calls() {
                log.append(events::tool_result(
                    &call_id,
                    &name,
                    INTERRUPTED_TOOL_RESULT,
                    true,
                    None,
                ))?;
            }
            log.append(events::turn_end(
                &turn,
                TurnEndReason::Interrupted,
                Some("the process ended mid-turn"),
            ))?;
            log.sync()?;
        }
        Ok(log)
    }

    /// Tool calls of the open turn that have no `tool/result`, in order.
    fn unanswered_calls(&self) -> Vec<(String, String)> {
        let start = self
            .events
            .iter()
            .rposition(|e| events::kind(e) == "turn/start")
            .unwrap_or(0);
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        let mut calls: Vec<(String, String)> = Vec::new();
        let mut answered: Vec<String> = Vec::new();
        for event in &self.events[start..] {
            match events::kind(event) {
                "assistant/message" => {
                    for call in event
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(id) = text(call, "id") {
                            calls.push((id, text(call, "name").unwrap_or_default()));
                        }
                    }
                }
                "tool/call" => {
                    if let Some(id) = text(event, "call_id")
                        && !calls.iter().any(|(c, _)| *c == id)
                    {
                        calls.push((id, text(event, "name").unwrap_or_default()));
                    }
                }
                "tool/result" => answered.extend(text(event, "call_id")),
                _ => {}
            }
        }
        calls.retain(|(id, _)| !answered.contains(id));
        calls
    }

    fn track(&mut self, event: &Value) {
        match events::kind(event) {
            "turn/start" => {
                self.open_turn = event
                    .get("turn_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            "turn/end" => self.open_turn = None,
            _ => {}
        }
    }

    /// Appends one event (stamped with `ts`). `turn/start` needs no open
    /// turn; everything else needs one.
    pub fn append(&mut self, mut event: Value) -> Result<(), LogError> {
        let kind = events::kind(&event).to_string();
        let structure = |message: String| LogError::Structure {
            path: self.path.clone(),
            message,
        };
        match (kind.as_str(), &self.open_turn) {
            ("", _) => return Err(structure("event has no `type`".into())),
            ("turn/start", Some(open)) => {
                return Err(structure(format!("turn {open} is still open")));
            }
            ("turn/start", None) => {}
            (_, None) => return Err(structure(format!("`{kind}` outside a turn"))),
            _ => {}
        }
        if let Some(obj) = event.as_object_mut() {
            obj.insert("ts".into(), Value::from(now_ms()));
        }
        // One write per line: a killed process leaves whole lines behind.
        let mut line = event.to_string();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| io_error(&self.path, "cannot append", e))?;
        self.track(&event);
        self.events.push(event);
        Ok(())
    }

    /// Flushes the file to disk (called at every turn end).
    pub fn sync(&mut self) -> Result<(), LogError> {
        self.file
            .sync_data()
            .map_err(|e| io_error(&self.path, "cannot sync", e))
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
    pub fn events(&self) -> &[Value] {
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
    use serde_json::json;
    use std::fs::OpenOptions;

    fn kinds(events: &[Value]) -> Vec<&str> {
        events.iter().map(events::kind).collect()
    }

    #[test]
    fn refuses_events_outside_turns_and_nested_turns() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::create(dir.path(), SessionHeader::new("s1", "/tmp")).unwrap();
        assert!(log.append(json!({"type": "user/message"})).is_err());
        log.append(events::turn_start("t1", "prompt")).unwrap();
        assert!(log.append(events::turn_start("t2", "prompt")).is_err());
        log.append(events::turn_end("t1", TurnEndReason::Completed, None))
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
            log.append(events::turn_start("t1", "prompt")).unwrap();
            log.append(events::user_message("hi", json!({"kind": "user"}), None))
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
        assert_eq!(log.events()[2]["reason"], "interrupted");
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
            log.append(events::turn_start("t1", "prompt")).unwrap();
            log.append(events::assistant_message("", &calls)).unwrap();
            log.append(events::tool_call("c1", "Bash", &json!({})))
                .unwrap();
            log.append(events::tool_result("c1", "Bash", "ok", false, None))
                .unwrap();
            log.append(events::tool_call("c2", "Bash", &json!({})))
                .unwrap();
            log.path().to_path_buf()
        };
        let log = SessionLog::open(&path).unwrap();
        let tail: Vec<(&str, &str, bool)> = log.events()[5..]
            .iter()
            .map(|e| {
                (
                    events::kind(e),
                    e["call_id"].as_str().unwrap_or(""),
                    e["is_error"].as_bool().unwrap_or(false),
                )
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
        assert_eq!(log.events()[5]["content"], INTERRUPTED_TOOL_RESULT);
        // They are real events: the file holds them.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(INTERRUPTED_TOOL_RESULT).count(), 2);
    }

    #[test]
    fn other_damage_is_refused_naming_the_line_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = {
            let mut log = SessionLog::create(dir.path(), SessionHeader::new("s4", "/tmp")).unwrap();
            log.append(events::turn_start("t1", "prompt")).unwrap();
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
