//! Session log files, damaged any way a crash or a hand could damage them.
//!
//! Opening never panics; whatever it keeps, a second open keeps the same
//! (repair is idempotent); a log written through the API reads back exactly,
//! with any torn tail after it cut away.

use std::path::Path;

use dsh_host::session::{
    LoggedEvent, SessionEvent, SessionHeader, SessionLog, TurnEndReason, TurnKind,
};
use proptest::prelude::*;
use serde_json::json;

fn header_line() -> String {
    serde_json::to_string(&SessionHeader::new("s1", "/w")).unwrap() + "\n"
}

/// Lines a log may hold: valid events, the header, JSON of other shapes,
/// garbage, and all of those cut short.
fn line() -> impl Strategy<Value = String> {
    let event = prop_oneof![
        "[a-z0-9]{1,4}".prop_map(|t| json!({"type": "turn/start", "turn_id": t})),
        "[a-z0-9]{1,4}".prop_map(|t| json!({"type": "turn/end", "turn_id": t, "reason": "completed"})),
        ".{0,30}".prop_map(|text| json!({"type": "user/message", "turn_id": "t", "content": [{"type": "text", "text": text}]})),
        crate::answers::json_value(),
    ];
    prop_oneof![
        4 => event.prop_map(|v| v.to_string()),
        1 => Just(header_line().trim_end().to_string()),
        1 => any::<String>().prop_map(|s| s.replace('\n', " ")),
    ]
}

fn log_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => prop::collection::vec(any::<u8>(), 0..256),
        3 => (any::<bool>(), prop::collection::vec(line(), 0..8), prop::collection::vec(any::<u8>(), 0..16))
            .prop_map(|(with_header, lines, tail)| {
                let mut out = if with_header { header_line() } else { String::new() };
                for l in lines {
                    out.push_str(&l);
                    out.push('\n');
                }
                let mut bytes = out.into_bytes();
                bytes.extend(tail);
                bytes
            }),
    ]
}

fn messages() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(any::<String>(), 0..6)
}

fn write_log(dir: &Path, texts: &[String]) -> (std::path::PathBuf, Vec<LoggedEvent>) {
    let mut log =
        SessionLog::create(dir, SessionHeader::new(&format!("s{}", rand_id()), "/w")).unwrap();
    log.append(SessionEvent::turn_start("t1", TurnKind::Prompt))
        .unwrap();
    for text in texts {
        log.append(SessionEvent::from_value(json!({"type": "user/message", "turn_id": "t1", "content": [{"type": "text", "text": text}]})))
            .unwrap();
    }
    log.append(SessionEvent::turn_end("t1", TurnEndReason::Completed, None))
        .unwrap();
    log.sync().unwrap();
    (log.path().to_path_buf(), log.events().to_vec())
}

fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn any_file_opens_or_is_an_error_and_repair_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    proptest!(|(bytes in log_bytes())| {
        let path = dir.path().join(format!("x{}.jsonl", rand_id()));
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(first) = SessionLog::open(&path) {
            let kept = first.events().to_vec();
            drop(first);
            let second = SessionLog::open(&path).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(second.events(), &kept[..]);
            prop_assert!(second.open_turn().is_none());
        }
        let _ = std::fs::remove_file(&path);
    });
}

/// What a crash can leave after the last full line: any bytes but a
/// newline (mapped, not filtered: a filter rejects too often over a long
/// run).
fn torn_tail() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        any::<u8>().prop_map(|b| if b == b'\n' { b' ' } else { b }),
        0..64,
    )
}

#[test]
fn written_logs_read_back_exactly_and_torn_tails_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    proptest!(|(texts in messages(), tail in torn_tail())| {
        let (path, written) = write_log(dir.path(), &texts);
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, &tail).unwrap();
        drop(file);
        let log = SessionLog::open(&path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(log.events(), &written[..]);
        let _ = std::fs::remove_file(&path);
    });
}
