//! ConfigChange: a session's settings file changed while it ran.
//!
//! Recorded (vector `S184-config-change-bypass`, `FINDINGS-csub2.md`): a
//! `Bash` call that writes `<project>/.claude/settings.local.json` fires
//! ConfigChange during the call, between its PreToolUse and PostToolUse,
//! with `{session_id, transcript_path, cwd, prompt_id, hook_event_name,
//! source: "local_settings", file_path}`; the hook's answers (exit 2,
//! `decision: "block"`, plain stdout, context, `continue: false`) showed
//! nothing (S185). Claude Code watches the files; the bridge compares them
//! when a tool call has run, before that call's PostToolUse, so a change
//! a tool made fires there. The files: the project's
//! `.claude/settings.json` (`project_settings`, Claude Code's name for it;
//! only `local_settings` was recorded) and `.claude/settings.local.json`
//! (`local_settings`); the matcher subject is the source. A subagent's
//! calls do not check (its parent's do).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use dsh_plugin_api::SessionRef;
use serde_json::Value;

use super::{head, prompt_id, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "ConfigChange";

/// One watched settings file: its source name, its path and what it held
/// when last looked at (a hash of its bytes; `None`: absent).
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    source: &'static str,
    path: PathBuf,
    held: Option<u64>,
}

/// A hash of what `path` holds, `None` when it cannot be read.
pub(crate) fn held(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    Some(h.finish())
}

/// The settings files of `project`, as they are now.
fn look(project: &Path) -> Vec<Seen> {
    [
        ("project_settings", ".claude/settings.json"),
        ("local_settings", ".claude/settings.local.json"),
    ]
    .into_iter()
    .map(|(source, rel)| {
        let path = project.join(rel);
        Seen {
            source,
            held: held(&path),
            path,
        }
    })
    .collect()
}

/// The stdin payload.
pub fn payload(session: &SessionRef, source: &str, file_path: &str) -> Value {
    let mut m = head(session);
    prompt_id(&mut m, session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("source".into(), source.into());
    m.insert("file_path".into(), file_path.into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// Notes what `session`'s settings files hold (its start), when it has
    /// ConfigChange hooks.
    pub(crate) fn note_settings(&self, session: &SessionRef) {
        if super::is_subagent(session) || !self.has_hooks(session, EVENT) {
            return;
        }
        let now = look(Path::new(&self.project_dir_of(session)));
        if let Ok(mut m) = self.settings_seen.lock() {
            m.insert(session.session_id.to_string(), now);
        }
    }

    /// After a tool call of `session`: ConfigChange for each settings file
    /// that changed since it was last looked at.
    pub async fn on_settings_maybe_changed(&self, session: &SessionRef) {
        if super::is_subagent(session) || !self.has_hooks(session, EVENT) {
            return;
        }
        let now = look(Path::new(&self.project_dir_of(session)));
        let before = self
            .settings_seen
            .lock()
            .ok()
            .and_then(|mut m| m.insert(session.session_id.to_string(), now.clone()));
        let Some(before) = before else {
            return;
        };
        for (was, is) in before.iter().zip(&now) {
            if was.held == is.held {
                continue;
            }
            let path = is.path.to_string_lossy();
            let mut runs = self
                .fire(
                    EVENT,
                    session,
                    &[is.source],
                    &payload(session, is.source, &path),
                )
                .await;
            for run in &mut runs {
                read(run, EVENT);
            }
            self.record(session, EVENT, &runs);
        }
    }
}
