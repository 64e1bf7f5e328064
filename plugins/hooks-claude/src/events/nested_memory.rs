//! Nested memory (`tools/post-execute` of a `Read`, and the step's end):
//! the memory files a read file's folders and rules bring
//! ([`crate::memory::nested`]) reach the model, and each is told to the
//! InstructionsLoaded hooks.
//!
//! Recorded (vectors `S240-*`, `tools/recorder-scenarios/FINDINGS-memory2.md`):
//! only `Read` loads them (not `Bash`, not `Write`); each file once per
//! session. The model reads one system message after the step's tool
//! results ([`crate::memory::nested_text`]); the InstructionsLoaded calls
//! start after the step's PostToolBatch, payload `file_path, memory_type,
//! load_reason` (`nested_traversal`; `path_glob_match` with `globs`;
//! `include` for an import), `trigger_file_path` (the file read) and
//! `parent_file_path` for an import. A `Read` of a memory file itself
//! counts as loading it. Subagents' reads load nothing here (not recorded).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dsh_plugin_api::{PostExecuteInput, SessionRef};
use serde_json::Value;

use super::instructions_loaded::EVENT;
use super::{head, read};
use crate::ClaudeBridge;
use crate::memory::{self, MemoryFile};

/// Why a read loaded `file`.
pub fn load_reason(file: &MemoryFile) -> &'static str {
    if file.globs.is_some() {
        "path_glob_match"
    } else if file.parent.is_some() {
        "include"
    } else {
        "nested_traversal"
    }
}

/// The InstructionsLoaded payload of a file `trigger`'s read loaded.
pub fn payload(session: &SessionRef, file: &MemoryFile, trigger: &Path) -> Value {
    let mut m = head(session);
    super::prompt_id(&mut m, session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert(
        "file_path".into(),
        file.path.to_string_lossy().into_owned().into(),
    );
    m.insert("memory_type".into(), file.kind.as_str().into());
    m.insert("load_reason".into(), load_reason(file).into());
    if let Some(globs) = &file.globs {
        m.insert("globs".into(), globs.clone().into());
    }
    m.insert(
        "trigger_file_path".into(),
        trigger.to_string_lossy().into_owned().into(),
    );
    if let Some(parent) = &file.parent {
        m.insert(
            "parent_file_path".into(),
            parent.to_string_lossy().into_owned().into(),
        );
    }
    Value::Object(m)
}

impl ClaudeBridge {
    /// Notes memory files a session has loaded (or read).
    pub(crate) fn note_memory_loaded(&self, session_id: &str, paths: Vec<PathBuf>) {
        if let Ok(mut m) = self.memory_loaded.lock() {
            m.entry(session_id.to_string()).or_default().extend(paths);
        }
    }

    /// After a successful `Read`: injects what it loads and queues the
    /// InstructionsLoaded calls for the step's end.
    pub(crate) fn on_read_nested_memory(&self, input: &PostExecuteInput) {
        let session = &input.call.session;
        if !self.memory
            || input.denied
            || input.result.is_error
            || input.call.name.as_str() != "Read"
            || super::is_subagent(session)
        {
            return;
        }
        let args: Value = serde_json::from_str(&input.call.arguments).unwrap_or(Value::Null);
        let Some(given) = args.get("file_path").and_then(Value::as_str) else {
            return;
        };
        let cwd = PathBuf::from(self.project_dir_of(session));
        let file = cwd.join(given);
        // The file read counts as loaded before what it brings is looked
        // at (Claude Code notes a read file first).
        self.note_memory_loaded(&session.session_id, vec![file.clone()]);
        let loaded: HashSet<PathBuf> = self
            .memory_loaded
            .lock()
            .ok()
            .and_then(|m| m.get(session.session_id.as_str()).cloned())
            .unwrap_or_default();
        let host = self.host.clone();
        let files = memory::nested(&self.home, &cwd, &file, &loaded, &mut |w| {
            host.warn(&format!("hooks-claude: {w}"))
        });
        self.note_memory_loaded(
            &session.session_id,
            files.iter().map(|f| f.path.clone()).collect(),
        );
        let Some(text) = memory::nested_text(&files) else {
            return;
        };
        self.inject_system(&session.session_id, &text);
        if !self.has_hooks(session, EVENT) {
            return;
        }
        let payloads = files.iter().map(|f| payload(session, f, &file));
        if let Ok(mut m) = self.nested_pending.lock() {
            m.entry(session.session_id.to_string())
                .or_default()
                .extend(payloads);
        }
    }

    /// At a step's end (after PostToolBatch): the InstructionsLoaded calls
    /// of what the step's reads loaded, one file after another.
    pub(crate) async fn fire_nested_instructions(&self, session: &SessionRef) {
        let queued = self
            .nested_pending
            .lock()
            .ok()
            .and_then(|mut m| m.remove(session.session_id.as_str()))
            .unwrap_or_default();
        for payload in queued {
            let reason = payload["load_reason"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let mut runs = self.fire(EVENT, session, &[&reason], &payload).await;
            for run in &mut runs {
                read(run, EVENT);
            }
            self.record(session, EVENT, &runs);
        }
    }

    /// Forgets a closing session's loaded memory.
    pub(crate) fn forget_memory(&self, session_id: &str) {
        if let Ok(mut m) = self.memory_loaded.lock() {
            m.remove(session_id);
        }
        if let Ok(mut m) = self.nested_pending.lock() {
            m.remove(session_id);
        }
    }
}
