//! [`SessionLog`]: append, fsync at turn end, load with repair.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::events::{self, TurnEndReason};

/// A session log problem.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The file system said no.
    #[error("{path}: {message}")]
    Io {
        /// The log file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The file is not a dsh session log.
    #[error("{path}: not a dsh session log: {message}")]
    Format {
        /// The log file.
        path: PathBuf,
        /// What is wrong.
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
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Where session `id` lives under `state_dir`.
pub fn session_path(state_dir: &Path, id: &str) -> PathBuf {
    state_dir.join("sessions").join(format!("{id}.jsonl"))
}

/// One session's log file and its events in memory.
pub struct SessionLog {
    path: PathBuf,
    file: File,
    header: SessionHeader,
    events: Vec<Value>,
    open_turn: Option<String>,
    /// Lines dropped as unreadable while loading.
    pub repaired_lines: usize,
}

impl SessionLog {
    fn io(path: &Path, what: &str, e: std::io::Error) -> LogError {
        LogError::Io {
            path: path.to_path_buf(),
            message: format!("{what}: {e}"),
        }
    }

    /// Creates the log of a new session; refuses to overwrite one.
    pub fn create(state_dir: &Path, header: SessionHeader) -> Result<SessionLog, LogError> {
        let path = session_path(state_dir, &header.session_id);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Self::io(dir, "cannot create sessions folder", e))?;
        }
        let mut file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(|e| Self::io(&path, "cannot create session log", e))?;
        let line = serde_json::to_string(&header).map_err(|e| LogError::Format {
            path: path.clone(),
            message: e.to_string(),
        })?;
        writeln!(file, "{line}").map_err(|e| Self::io(&path, "cannot write header", e))?;
        file.sync_all().map_err(|e| Self::io(&path, "cannot sync", e))?;
        Ok(SessionLog {
            path,
            file,
            header,
            events: Vec::new(),
            open_turn: None,
            repaired_lines: 0,
        })
    }

    /// Opens an existing log, repairing a torn tail and closing a turn a
    /// crash left open with `turn/end {interrupted}`.
    pub fn open(path: &Path) -> Result<SessionLog, LogError> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| Self::io(path, "cannot open session log", e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| Self::io(path, "cannot read", e))?;
        // Everything after the last newline was never completely written.
        let mut keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut repaired = usize::from(keep < bytes.len());
        let mut lines: Vec<(usize, Value)> = Vec::new();
        let mut offset = 0;
        for raw in bytes[..keep].split_inclusive(|b| *b == b'\n') {
            let start = offset;
            offset += raw.len();
            match serde_json::from_slice::<Value>(raw) {
                Ok(v) if v.is_object() => lines.push((start, v)),
                _ if offset == keep => {
                    // A garbled last line: cut it like a torn one.
                    keep = start;
                    repaired += 1;
                }
                _ => {
                    tracing::warn!(path = %path.display(), offset = start, "skipping unreadable line in session log");
                    repaired += 1;
                }
            }
        }
        if keep < bytes.len() {
            file.set_len(keep as u64).map_err(|e| Self::io(path, "cannot repair torn tail", e))?;
            file.seek(SeekFrom::End(0)).map_err(|e| Self::io(path, "cannot seek", e))?;
            tracing::warn!(path = %path.display(), "repaired a torn last line in the session log");
        }
        let mut iter = lines.into_iter().map(|(_, v)| v);
        let header: SessionHeader = iter
            .next()
            .ok_or_else(|| LogError::Format {
                path: path.to_path_buf(),
                message: "empty file".into(),
            })
            .and_then(|v| {
                serde_json::from_value(v).map_err(|e| LogError::Format {
                    path: path.to_path_buf(),
                    message: format!("bad header: {e}"),
                })
            })?;
        let mut log = SessionLog {
            path: path.to_path_buf(),
            file,
            header,
            events: Vec::new(),
            open_turn: None,
            repaired_lines: repaired,
        };
        for event in iter {
            log.track(&event);
            log.events.push(event);
        }
        if let Some(turn) = log.open_turn.clone() {
            log.append(events::turn_end(&turn, TurnEndReason::Interrupted, Some("the process ended mid-turn")))?;
            log.sync()?;
        }
        Ok(log)
    }

    fn track(&mut self, event: &Value) {
        match events::kind(event) {
            "turn/start" => {
                self.open_turn = event.get("turn_id").and_then(Value::as_str).map(str::to_string);
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
            ("turn/start", Some(open)) => return Err(structure(format!("turn {open} is still open"))),
            ("turn/start", None) => {}
            (_, None) => return Err(structure(format!("`{kind}` outside a turn"))),
            _ => {}
        }
        if let Some(obj) = event.as_object_mut() {
            obj.insert("ts".into(), Value::from(now_ms()));
        }
        let line = event.to_string();
        writeln!(self.file, "{line}").map_err(|e| Self::io(&self.path, "cannot append", e))?;
        self.track(&event);
        self.events.push(event);
        Ok(())
    }

    /// Flushes the file to disk (called at every turn end).
    pub fn sync(&mut self) -> Result<(), LogError> {
        self.file.sync_data().map_err(|e| Self::io(&self.path, "cannot sync", e))
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

/// Headers of every session under `state_dir`, oldest first.
pub fn list_sessions(state_dir: &Path) -> Vec<(PathBuf, SessionHeader)> {
    let Ok(entries) = std::fs::read_dir(state_dir.join("sessions")) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, SessionHeader)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| {
            let mut first = String::new();
            let file = File::open(&p).ok()?;
            std::io::BufRead::read_line(&mut std::io::BufReader::new(file), &mut first).ok()?;
            let header: SessionHeader = serde_json::from_str(&first).ok()?;
            Some((p, header))
        })
        .collect();
    found.sort_by_key(|(_, h)| h.created_ms);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refuses_events_outside_turns_and_nested_turns() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::create(dir.path(), SessionHeader::new("s1", "/tmp")).unwrap();
        assert!(log.append(json!({"type": "user/message"})).is_err());
        log.append(events::turn_start("t1", "prompt")).unwrap();
        assert!(log.append(events::turn_start("t2", "prompt")).is_err());
        log.append(events::turn_end("t1", TurnEndReason::Completed, None)).unwrap();
        assert_eq!(log.open_turn(), None);
    }

    #[test]
    fn torn_tail_is_cut_and_open_turn_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let path = {
            let mut log = SessionLog::create(dir.path(), SessionHeader::new("s2", "/tmp")).unwrap();
            log.append(events::turn_start("t1", "prompt")).unwrap();
            log.append(events::user_message("hi", json!({"kind": "user"}), None)).unwrap();
            log.path().to_path_buf()
        };
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"assistant/mess").unwrap();
        drop(f);
        let log = SessionLog::open(&path).unwrap();
        assert_eq!(log.repaired_lines, 1);
        let kinds: Vec<&str> = log.events().iter().map(events::kind).collect();
        assert_eq!(kinds, ["turn/start", "user/message", "turn/end"]);
        assert_eq!(log.events()[2]["reason"], "interrupted");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n') && !text.contains("assistant/mess"));
        // Reopening finds a consistent, closed log.
        let again = SessionLog::open(&path).unwrap();
        assert_eq!(again.events().len(), 3);
        assert_eq!(again.repaired_lines, 0);
    }
}
