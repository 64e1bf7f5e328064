//! CwdChanged (`agent/cwd-changed`): observe only. Fired once a `Bash`
//! call moved the session (`cd sub`), after that call's PostToolUse
//! (vector `S12-cwd-after-cd`): the hook runs in the new directory, its
//! payload `cwd` is the new one, `old_cwd`/`new_cwd` say where from and to,
//! and it gets a `CLAUDE_ENV_FILE` (`cwdchanged-hook-<n>.sh`) as Claude
//! Code gives it, emptied before the hooks run; afterwards the session's
//! `CLAUDE_ENV_FILE` script is rebuilt ([`crate::session_env`]). No matcher
//! subject.

use dsh_plugin_api::CwdChangedInput;
use serde_json::Value;

use super::{head, prompt_id, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "CwdChanged";

/// The stdin payload.
pub fn payload(input: &CwdChangedInput) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("old_cwd".into(), input.old_cwd.as_str().into());
    m.insert("new_cwd".into(), input.new_cwd.as_str().into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// Runs the CwdChanged hooks. The session's first directory stays its
    /// `CLAUDE_PROJECT_DIR` from here on.
    pub async fn on_cwd_changed(&self, input: &CwdChangedInput) {
        self.note_project_dir(&input.session, &input.old_cwd);
        // `EnterWorktree` / `ExitWorktree` moves fire no CwdChanged
        // (recorded, `S230-*`; [`super::worktree`]).
        let worktree = self.is_worktree_move(&input.session.session_id, &input.new_cwd);
        if !worktree && self.has_hooks(&input.session, EVENT) {
            // What these hooks wrote on the last move is dropped first
            // (vector `S50-cwd-changed-cleared`).
            self.clear_cwd_env_files(&input.session);
            let mut runs = self.fire(EVENT, &input.session, &[], &payload(input)).await;
            for run in &mut runs {
                read(run, EVENT);
            }
            self.record(&input.session, EVENT, &runs);
        }
        // Every move re-reads the session's `CLAUDE_ENV_FILE` script.
        self.refresh_shell_prelude(&input.session);
    }
}
