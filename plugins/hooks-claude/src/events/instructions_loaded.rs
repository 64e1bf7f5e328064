//! InstructionsLoaded (`agent/session-start`, after SessionStart): the
//! session's memory files ([`crate::memory`]) reach the model, and each is
//! told to the InstructionsLoaded hooks.
//!
//! Recorded (vectors `S187-*`, `S185-instructionsloaded-*`): one call per
//! file, in load order, payload `session_id, transcript_path, cwd,
//! hook_event_name, file_path, memory_type, load_reason` (`session_start`;
//! `include` with `parent_file_path` for an imported file), no `prompt_id`
//! or `permission_mode`. Matcher subject: the `load_reason`. Nothing a hook
//! answers changes anything (exit 2, `decision: block`, plain stdout,
//! `additionalContext`, `continue: false`: S185), so answers are only
//! recorded. The files' text is user-role context logged before the first
//! prompt: Claude Code's `<system-reminder>` block at the head of the first
//! user message.

use dsh_plugin_api::SessionStartInput;
use serde_json::Value;

use super::{head, read};
use crate::ClaudeBridge;
use crate::memory::{self, MemoryFile};

/// The event name.
pub const EVENT: &str = "InstructionsLoaded";

/// Why a file was loaded.
pub fn load_reason(file: &MemoryFile) -> &'static str {
    if file.parent.is_some() {
        "include"
    } else {
        "session_start"
    }
}

/// The stdin payload for one file.
pub fn payload(input: &SessionStartInput, file: &MemoryFile) -> Value {
    let mut m = head(&input.session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert(
        "file_path".into(),
        file.path.to_string_lossy().into_owned().into(),
    );
    m.insert("memory_type".into(), file.kind.as_str().into());
    m.insert("load_reason".into(), load_reason(file).into());
    if let Some(parent) = &file.parent {
        m.insert(
            "parent_file_path".into(),
            parent.to_string_lossy().into_owned().into(),
        );
    }
    Value::Object(m)
}

impl ClaudeBridge {
    /// Loads a starting session's memory files, injects their text and
    /// runs the InstructionsLoaded hooks, one file after another. A resumed
    /// session has their text in its history already (and what Claude Code
    /// does then is not recorded): nothing is done for it.
    pub async fn on_instructions_loaded(&self, input: &SessionStartInput) {
        use dsh_plugin_api::SessionStartSource as Source;
        let fresh = input.source == Source::Startup || input.source == Source::Clear;
        if !self.memory || !fresh || super::is_subagent(&input.session) {
            return;
        }
        let cwd = std::path::PathBuf::from(input.session.cwd.as_str());
        let host = self.host.clone();
        let files = memory::load(&self.home, &cwd, &mut |w| {
            host.warn(&format!("hooks-claude: {w}"))
        });
        self.note_memory_loaded(
            &input.session.session_id,
            files.iter().map(|f| f.path.clone()).collect(),
        );
        let Some(text) = memory::reminder(&files) else {
            return;
        };
        self.inject(&input.session.session_id, &text);
        if !self.has_hooks(&input.session, EVENT) {
            return;
        }
        for file in &files {
            let reason = load_reason(file);
            let mut runs = self
                .fire(EVENT, &input.session, &[reason], &payload(input, file))
                .await;
            for run in &mut runs {
                read(run, EVENT);
            }
            self.record(&input.session, EVENT, &runs);
        }
    }
}
