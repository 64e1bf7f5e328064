//! Reading a log's bytes: the header, the events, and what is damaged.
//!
//! Reading never fails on content and never writes. Lines are numbered
//! from 1 (the header). A log is damaged when it is empty, when its first
//! line is not a complete header for this session, or when a line before
//! the last is not a JSON object. The end of a log a crash cut short (bytes
//! after the last newline, or a last line that does not parse) is its
//! *tail*: a writer cuts it on load, keeping the bytes aside.

use serde_json::Value;

use super::events::LoggedEvent;
use super::id::check_session_id;
use super::log::{LOG_VERSION, SessionHeader};

/// One line that is not what it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Line number, from 1 (the header).
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// The crash-cut end of a log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tail {
    /// Where it starts: the log is whole up to this byte.
    pub(crate) start: usize,
    /// Its line number.
    pub(crate) line: usize,
    /// Its event, when the cut line is a whole JSON object anyway.
    pub(crate) event: Option<LoggedEvent>,
}

/// Everything readable in a log, and what is not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scan {
    /// The header, when line 1 is a complete one for this session.
    pub(crate) header: Option<SessionHeader>,
    /// Line 1 as JSON, when it is a JSON object (even if not a good header).
    pub(crate) first: Option<Value>,
    /// Every readable event after the header, in order.
    pub(crate) events: Vec<LoggedEvent>,
    /// Damaged lines, first to last.
    pub(crate) damage: Vec<Damage>,
    /// The crash-cut end, if any.
    pub(crate) tail: Option<Tail>,
}

fn object(raw: &[u8]) -> Result<Value, String> {
    match serde_json::from_slice::<Value>(raw) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) => Err(format!("not JSON ({e})")),
    }
}

/// Checks line 1 as the header of session `id`.
fn header(first: &Value, id: &str) -> Result<SessionHeader, String> {
    let header: SessionHeader = serde_json::from_value(first.clone())
        .map_err(|e| format!("not a dsh session header ({e})"))?;
    if header.kind != "session" {
        return Err(format!(
            "not a dsh session header (its type is {:?})",
            header.kind
        ));
    }
    // Another format's events would be misread, and this dsh's appended
    // to a log another version reads.
    if header.version != LOG_VERSION {
        return Err(format!(
            "written in log format version {}, and this dsh reads version {LOG_VERSION} only",
            header.version
        ));
    }
    if header.session_id != id {
        return Err(format!(
            "the header names session {:?}, but the file is session `{id}`",
            header.session_id
        ));
    }
    check_session_id(&header.session_id).map_err(|e| e.to_string())?;
    Ok(header)
}

/// Reads `bytes`, the log of session `id`.
pub(crate) fn scan(bytes: &[u8], id: &str) -> Scan {
    let mut out = Scan::default();
    if bytes.is_empty() {
        out.damage.push(Damage {
            line: 1,
            message: "the file is empty: it has no header line".into(),
        });
        return out;
    }
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut lines: Vec<(usize, &[u8])> = Vec::new();
    let mut offset = 0;
    for raw in bytes[..whole].split_inclusive(|b| *b == b'\n') {
        lines.push((offset, raw));
        offset += raw.len();
    }
    let torn = (whole < bytes.len()).then(|| &bytes[whole..]);
    // Line 1: a torn header is damage, not a tail: there is nothing to keep.
    match lines.first() {
        None => {
            let message = match torn.map(object) {
                Some(Ok(_)) => "the header line has no newline (a torn write)",
                _ => "the header line is incomplete (a torn write)",
            };
            out.first = torn.and_then(|t| object(t).ok());
            out.damage.push(Damage {
                line: 1,
                message: message.into(),
            });
            return out;
        }
        Some((_, raw)) => match object(raw) {
            Ok(first) => {
                match header(&first, id) {
                    Ok(h) => out.header = Some(h),
                    Err(message) => out.damage.push(Damage { line: 1, message }),
                }
                out.first = Some(first);
            }
            Err(e) => out.damage.push(Damage {
                line: 1,
                message: format!("the header line is {e}"),
            }),
        },
    }
    let count = lines.len();
    for (index, (start, raw)) in lines.into_iter().enumerate().skip(1) {
        let line = index + 1;
        match object(raw) {
            Ok(event) => out.events.push(LoggedEvent::from_value(event)),
            // The last whole line, garbled, with nothing after it: a crash
            // cut it (as when the size reached the disk before the data).
            Err(_) if line == count && torn.is_none() => {
                out.tail = Some(Tail {
                    start,
                    line,
                    event: None,
                });
            }
            Err(e) => out.damage.push(Damage {
                line,
                message: format!("the line is {e}"),
            }),
        }
    }
    if let Some(t) = torn {
        out.tail = Some(Tail {
            start: whole,
            line: count + 1,
            event: object(t).ok().map(LoggedEvent::from_value),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str =
        r#"{"type":"session","version":1,"session_id":"s","cwd":"/tmp","created_ms":1}"#;

    fn lines(damage: &[Damage]) -> Vec<usize> {
        damage.iter().map(|d| d.line).collect()
    }

    #[test]
    fn a_whole_log_has_no_damage_and_no_tail() {
        let s = scan(
            format!("{HEAD}\n{{\"type\":\"turn/start\"}}\n").as_bytes(),
            "s",
        );
        assert!(s.header.is_some() && s.damage.is_empty() && s.tail.is_none());
        assert_eq!(s.events.len(), 1);
    }

    #[test]
    fn each_kind_of_damage_names_its_line() {
        let empty = scan(b"", "s");
        assert_eq!(lines(&empty.damage), [1]);
        assert!(empty.damage[0].message.contains("empty"));

        let torn_header = scan(&HEAD.as_bytes()[..20], "s");
        assert_eq!(lines(&torn_header.damage), [1]);
        assert!(torn_header.damage[0].message.contains("torn"));

        let garbage_header = scan(b"\x00\x01garbage\n{\"type\":\"turn/start\"}\n", "s");
        assert_eq!(lines(&garbage_header.damage), [1]);
        assert_eq!(garbage_header.events.len(), 1);

        let other_id = scan(format!("{HEAD}\n").as_bytes(), "t");
        assert!(other_id.damage[0].message.contains("names session"));

        let middle = scan(
            format!("{HEAD}\n{{\"type\":\"a\"}}\nnot json\n[1]\n{{\"type\":\"b\"}}\n").as_bytes(),
            "s",
        );
        assert_eq!(lines(&middle.damage), [3, 4]);
        assert_eq!(middle.events.len(), 2);
        assert!(middle.tail.is_none());
    }

    #[test]
    fn a_crash_cut_end_is_a_tail() {
        let torn = format!("{HEAD}\n{{\"type\":\"a\"}}\n{{\"type\":\"assis");
        let s = scan(torn.as_bytes(), "s");
        assert!(s.damage.is_empty());
        let tail = s.tail.unwrap();
        assert_eq!((tail.line, tail.start), (3, HEAD.len() + 14));
        assert_eq!(tail.event, None);

        let garbled_last = format!("{HEAD}\n{{\"type\":\"a\"}}\n\0\0\0\n");
        let s = scan(garbled_last.as_bytes(), "s");
        assert!(s.damage.is_empty());
        assert_eq!(s.tail.unwrap().line, 3);

        let no_newline = format!("{HEAD}\n{{\"type\":\"a\"}}");
        let s = scan(no_newline.as_bytes(), "s");
        assert_eq!(
            s.tail.unwrap().event,
            Some(LoggedEvent::from_value(serde_json::json!({"type": "a"})))
        );
    }
}
