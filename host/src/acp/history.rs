//! `session/list`: the sessions stored under the agent's state folder, for
//! an editor's history view, newest first, optionally only those of one
//! `cwd`. A session's title is its first prompt (first line, at most
//! [`TITLE_CHARS`] characters); `updatedAt` is its log's last write.
//! Subagent sessions and logs whose header cannot be read are left out.
//! The files are read on the blocking pool.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ListSessionsRequest, ListSessionsResponse, SessionInfo};

use crate::session::{SessionEvent, list_sessions, read_log};

/// The longest title.
pub const TITLE_CHARS: usize = 80;

fn title(path: &Path) -> Option<String> {
    let snapshot = read_log(path).ok()?;
    let first = snapshot.events.iter().find_map(|e| match &e.event {
        SessionEvent::UserMessage { content, .. } | SessionEvent::PromptBlocked { content, .. } => {
            Some(content.clone())
        }
        _ => None,
    })?;
    let line = first.lines().find(|l| !l.trim().is_empty())?.trim();
    let mut t: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        t.push('…');
    }
    Some(t)
}

/// RFC 3339 (UTC, seconds) of a file's last modification.
fn updated_at(path: &Path) -> Option<String> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let secs = modified
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    ))
}

/// The answer to `request` for the sessions under `state_dir`.
pub(crate) fn list(state_dir: &Path, request: &ListSessionsRequest) -> ListSessionsResponse {
    let want_cwd: Option<&PathBuf> = request.cwd.as_ref();
    let mut sessions: Vec<(Option<String>, SessionInfo)> = list_sessions(state_dir)
        .into_iter()
        .filter_map(|stored| {
            let header = stored.header.ok()?;
            if header.parent_session_id.is_some() {
                return None;
            }
            if want_cwd.is_some_and(|cwd| Path::new(&header.cwd) != cwd.as_path()) {
                return None;
            }
            let updated = updated_at(&stored.path);
            let info = SessionInfo::new(stored.id.clone(), PathBuf::from(&header.cwd))
                .title(title(&stored.path))
                .updated_at(updated.clone());
            Some((updated, info))
        })
        .collect();
    // Newest first; the listing is oldest first by creation.
    sessions.reverse();
    sessions.sort_by(|a, b| b.0.cmp(&a.0));
    ListSessionsResponse::new(sessions.into_iter().map(|(_, s)| s).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        std::fs::write(&f, "").unwrap();
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(t)
            .unwrap();
        assert_eq!(updated_at(&f).unwrap(), "2023-11-14T22:13:20Z");
    }
}
