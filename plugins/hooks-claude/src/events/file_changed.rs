//! FileChanged: a file a SessionStart hook asked to watch changed.
//!
//! Recorded (vector `S184-file-changed`, `FINDINGS-csub2.md`): a
//! SessionStart hook answering `hookSpecificOutput.watchPaths: [<path>]`
//! makes Claude Code watch those files; a `Bash` call that rewrites one
//! fires FileChanged during the call, between its PreToolUse and
//! PostToolUse, with `{session_id, transcript_path, cwd, prompt_id,
//! hook_event_name, file_path, event: "change"}`; its answers showed
//! nothing (S185). The bridge compares the watched files after each tool
//! call, before that call's PostToolUse (as ConfigChange,
//! [`super::config_change`]). Only a file that existed and changed was
//! recorded (`event: "change"`); one that appears or goes away fires
//! nothing here. The matcher subject is the file's name. Its hooks get a
//! `CLAUDE_ENV_FILE` (`filechanged-hook-<n>.sh` in the session's folder, as
//! recorded), read like SessionStart's.

use std::path::{Path, PathBuf};

use dsh_plugin_api::SessionRef;
use serde_json::Value;

use super::config_change::held;
use super::{head, prompt_id, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "FileChanged";

/// A session's watched files, each with what it held when last looked at
/// (a hash of its bytes; `None`: absent).
pub type Watched = Vec<(PathBuf, Option<u64>)>;

/// The stdin payload.
pub fn payload(session: &SessionRef, file_path: &str) -> Value {
    let mut m = head(session);
    prompt_id(&mut m, session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("file_path".into(), file_path.into());
    m.insert("event".into(), "change".into());
    Value::Object(m)
}

/// The absolute paths of a SessionStart answer's `watchPaths`.
pub fn watch_paths(answer: Option<&serde_json::Map<String, Value>>) -> Vec<PathBuf> {
    answer
        .and_then(|j| j.get("hookSpecificOutput"))
        .and_then(|h| h.get("watchPaths"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .collect()
}

impl ClaudeBridge {
    /// Watches `paths` for `session` from now on (a SessionStart answer).
    pub(crate) fn watch_files(&self, session: &SessionRef, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        if let Ok(mut m) = self.watched_files.lock() {
            let list = m.entry(session.session_id.to_string()).or_default();
            for path in paths {
                if !list.iter().any(|(p, _)| *p == path) {
                    let now = held(&path);
                    list.push((path, now));
                }
            }
        }
    }

    /// After a tool call of `session`: FileChanged for each watched file
    /// that existed and now holds something else.
    pub async fn on_watched_maybe_changed(&self, session: &SessionRef) {
        if super::is_subagent(session) || !self.has_hooks(session, EVENT) {
            return;
        }
        let changed: Vec<PathBuf> = {
            let Ok(mut m) = self.watched_files.lock() else {
                return;
            };
            let Some(list) = m.get_mut(session.session_id.as_str()) else {
                return;
            };
            let mut changed = Vec::new();
            for (path, was) in list.iter_mut() {
                let is = held(path);
                if was.is_some() && is.is_some() && *was != is {
                    changed.push(path.clone());
                }
                *was = is;
            }
            changed
        };
        for path in changed {
            let name = Path::new(&path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let shown = path.to_string_lossy();
            let mut runs = self
                .fire(EVENT, session, &[&name], &payload(session, &shown))
                .await;
            for run in &mut runs {
                read(run, EVENT);
            }
            self.record(session, EVENT, &runs);
            // Its hooks get a `CLAUDE_ENV_FILE` too (as SessionStart's):
            // what they write reaches the session's later commands.
            self.refresh_shell_prelude(session);
        }
    }
}
