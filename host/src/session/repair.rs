//! `dsh sessions repair ID`: rewrite a damaged log keeping every readable
//! event, so no session id is unusable for good.
//!
//! Under the writer's lock (a live session is refused): the original is
//! hard-linked aside as `<id>.jsonl.damaged-<n>` (never a byte lost), a new
//! log is written under a temporary name with the header and every event
//! that parses, in order, and renamed over `<id>.jsonl`. A header that is
//! missing, torn or wrong is rebuilt: from what line 1 still says when it is
//! a JSON session header, else from the id, the given cwd and the file's
//! modification time. A turn the damage left open is closed by the next
//! writer's load, like a crash's.

use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::events::LoggedEvent;
use super::files::{self, io_error};
use super::log::{LogError, SessionHeader, read_all, session_path};
use super::scan::{Damage, Scan, scan};

/// What happened to the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderFix {
    /// It was whole and is kept as it was.
    Kept,
    /// Line 1 was a damaged session header; its readable fields are kept.
    Rewritten,
    /// There was none to read; a new one was made.
    Regenerated,
}

/// What a repair did.
#[derive(Debug, Clone)]
pub struct RepairReport {
    /// The log.
    pub path: PathBuf,
    /// Where the original is kept; `None` when the log needed no repair
    /// (nothing was written).
    pub kept_aside: Option<PathBuf>,
    /// Events in the repaired log.
    pub events: usize,
    /// Lines of the original that are not in the repaired log.
    pub dropped: Vec<Damage>,
    /// What happened to the header.
    pub header: HeaderFix,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The header the repaired log gets, and the events before the rest.
fn rebuild_header(
    scanned: &Scan,
    id: &str,
    cwd: &Path,
    modified_ms: u64,
) -> (SessionHeader, HeaderFix, Vec<LoggedEvent>) {
    if let Some(h) = &scanned.header {
        return (h.clone(), HeaderFix::Kept, Vec::new());
    }
    let mut header = SessionHeader::new(id, &cwd.to_string_lossy());
    header.created_ms = modified_ms;
    match &scanned.first {
        Some(first) if text(first, "type").as_deref() == Some("session") => {
            if let Some(cwd) = text(first, "cwd") {
                header.cwd = cwd;
            }
            if let Some(ms) = first.get("created_ms").and_then(Value::as_u64) {
                header.created_ms = ms;
            }
            header.parent_session_id = text(first, "parent_session_id");
            header.agent_type = text(first, "agent_type");
            (header, HeaderFix::Rewritten, Vec::new())
        }
        // Line 1 is an event: the header line itself was lost.
        Some(first) => (
            header,
            HeaderFix::Regenerated,
            vec![LoggedEvent::from_value(first.clone())],
        ),
        None => (header, HeaderFix::Regenerated, Vec::new()),
    }
}

/// Repairs the log of session `id` under `state_dir`; `cwd` is the working
/// directory a regenerated header gets when the log no longer says.
pub fn repair(state_dir: &Path, id: &str, cwd: &Path) -> Result<RepairReport, LogError> {
    let path = session_path(state_dir, id)?;
    // Held while the rewrite runs: no dsh process has the session open.
    let _hold = super::holds::HoldTable::new(state_dir).take(id, &path)?;
    let mut file = files::open_locked(&path)?;
    let bytes = read_all(&mut file, &path)?;
    let scanned = scan(&bytes, id);
    if scanned.damage.is_empty() && scanned.tail.is_none() {
        return Ok(RepairReport {
            path,
            kept_aside: None,
            events: scanned.events.len(),
            dropped: Vec::new(),
            header: HeaderFix::Kept,
        });
    }
    let modified_ms = file
        .metadata()
        .map(|m| u64::try_from(m.mtime()).unwrap_or(0).saturating_mul(1000))
        .unwrap_or_else(|_| super::log::now_ms());
    let (header, fix, mut events) = rebuild_header(&scanned, id, cwd, modified_ms);
    let mut dropped: Vec<Damage> = scanned
        .damage
        .iter()
        .filter(|d| !(d.line == 1 && fix != HeaderFix::Kept && scanned.first.is_some()))
        .cloned()
        .collect();
    events.extend(scanned.events.iter().cloned());
    if let Some(tail) = &scanned.tail {
        match &tail.event {
            Some(event) => events.push(event.clone()),
            None => dropped.push(Damage {
                line: tail.line,
                message: "a crash-cut last line".into(),
            }),
        }
    }
    let mut text = serde_json::to_string(&header).map_err(|e| io_error(&path, "header", e))?;
    text.push('\n');
    for event in &events {
        text.push_str(&event.to_string());
        text.push('\n');
    }

    let aside = keep_original(&path, &bytes)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = dir.join(format!(".{id}.jsonl.repair-{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let written = files::create_private_file(&temp).and_then(|mut new| {
        new.write_all(text.as_bytes())
            .and_then(|()| new.sync_all())
            .map_err(|e| io_error(&temp, "cannot write", e))?;
        std::fs::rename(&temp, &path).map_err(|e| io_error(&path, "cannot replace", e))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written?;
    files::sync_dir(dir);
    tracing::info!(path = %path.display(), kept = %aside.display(), events = events.len(), dropped = dropped.len(), "session log repaired");
    Ok(RepairReport {
        path,
        kept_aside: Some(aside),
        events: events.len(),
        dropped,
        header: fix,
    })
}

/// Links the original aside under a free `damaged-<n>` name (a copy where
/// the file system has no hard links).
fn keep_original(path: &Path, bytes: &[u8]) -> Result<PathBuf, LogError> {
    for _ in 0..8 {
        let aside = files::damaged_name(path);
        match std::fs::hard_link(path, &aside) {
            Ok(()) => return Ok(aside),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return files::keep_aside(path, bytes),
        }
    }
    files::keep_aside(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SessionLog;

    const GOOD: &str = "{\"type\":\"turn/start\",\"turn_id\":\"t1\",\"kind\":\"prompt\"}\n{\"type\":\"user/message\",\"content\":\"hi\"}\n{\"type\":\"turn/end\",\"turn_id\":\"t1\",\"reason\":\"completed\"}\n";

    fn setup(id: &str, content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let path = sessions.join(format!("{id}.jsonl"));
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    /// Repairs, then checks the original is kept byte for byte and the
    /// log now opens; returns the report and the events.
    fn repaired(dir: &Path, path: &Path, id: &str) -> (RepairReport, Vec<LoggedEvent>) {
        let before = std::fs::read(path).unwrap();
        let report = repair(dir, id, Path::new("/work")).unwrap();
        let aside = report.kept_aside.clone().unwrap();
        assert_eq!(std::fs::read(&aside).unwrap(), before);
        let log = SessionLog::open(path).unwrap();
        assert_eq!(log.header().session_id, id);
        (report, log.events().to_vec())
    }

    #[test]
    fn an_empty_file_gets_a_header() {
        let (dir, path) = setup("e", b"");
        let (report, events) = repaired(dir.path(), &path, "e");
        assert_eq!(report.header, HeaderFix::Regenerated);
        assert!(events.is_empty());
        let log = SessionLog::open(&path).unwrap();
        assert_eq!(log.header().cwd, "/work");
    }

    #[test]
    fn a_torn_header_keeps_every_later_event() {
        let mut bytes = b"{\"type\":\"session\",\"version\":1,\"sess".to_vec();
        // A torn header followed by more lines: line 1 is not JSON.
        bytes.extend_from_slice(b"\n");
        bytes.extend_from_slice(GOOD.as_bytes());
        let (dir, path) = setup("t", &bytes);
        let (report, events) = repaired(dir.path(), &path, "t");
        assert_eq!(report.header, HeaderFix::Regenerated);
        assert_eq!(report.dropped.len(), 1);
        assert_eq!(report.dropped[0].line, 1);
        let kinds: Vec<&str> = events.iter().map(LoggedEvent::kind).collect();
        assert_eq!(kinds, ["turn/start", "user/message", "turn/end"]);
    }

    #[test]
    fn a_header_for_another_id_is_rewritten_keeping_its_fields() {
        let bytes = format!(
            "{{\"type\":\"session\",\"version\":1,\"session_id\":\"other\",\"cwd\":\"/p\",\"created_ms\":7}}\n{GOOD}"
        );
        let (dir, path) = setup("mine", bytes.as_bytes());
        let (report, events) = repaired(dir.path(), &path, "mine");
        assert_eq!(report.header, HeaderFix::Rewritten);
        assert!(report.dropped.is_empty());
        assert_eq!(events.len(), 3);
        let log = SessionLog::open(&path).unwrap();
        assert_eq!(
            (log.header().cwd.as_str(), log.header().created_ms),
            ("/p", 7)
        );
    }

    #[test]
    fn garbage_in_the_middle_is_left_out_and_the_rest_kept_in_order() {
        let header = "{\"type\":\"session\",\"version\":1,\"session_id\":\"g\",\"cwd\":\"/p\",\"created_ms\":7}\n";
        let lines: Vec<&str> = GOOD.lines().collect();
        let bytes = format!(
            "{header}{}\n\u{0}\u{1}garbage\n{}\n[1,2]\n{}\n{{\"type\":\"torn",
            lines[0], lines[1], lines[2]
        );
        let (dir, path) = setup("g", bytes.as_bytes());
        let (report, events) = repaired(dir.path(), &path, "g");
        assert_eq!(report.header, HeaderFix::Kept);
        let dropped: Vec<usize> = report.dropped.iter().map(|d| d.line).collect();
        assert_eq!(dropped, [3, 5, 7]);
        let kinds: Vec<&str> = events.iter().map(LoggedEvent::kind).collect();
        assert_eq!(kinds, ["turn/start", "user/message", "turn/end"]);
        // A second repair finds nothing to do, and a third damaged copy
        // never overwrites the first.
        assert!(
            repair(dir.path(), "g", Path::new("/"))
                .unwrap()
                .kept_aside
                .is_none()
        );
        std::fs::write(&path, b"").unwrap();
        let again = repair(dir.path(), "g", Path::new("/")).unwrap();
        assert_eq!(
            again.kept_aside.unwrap().file_name().unwrap(),
            "g.jsonl.damaged-2"
        );
    }

    #[test]
    fn a_live_or_missing_session_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::create(dir.path(), SessionHeader::new("live", "/")).unwrap();
        assert!(matches!(
            repair(dir.path(), "live", Path::new("/")),
            Err(LogError::Locked { .. })
        ));
        drop(log);
        assert!(matches!(
            repair(dir.path(), "nope", Path::new("/")),
            Err(LogError::Missing { .. })
        ));
        assert!(matches!(
            repair(dir.path(), "../x", Path::new("/")),
            Err(LogError::InvalidId(_))
        ));
    }
}
