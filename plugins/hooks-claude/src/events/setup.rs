//! Setup (`agent/session-start`, before SessionStart): `claude -p --init`
//! and `--maintenance`, dsh's `dsh prompt --init` / `--maintenance`
//! (the bridge's `setup` setting).
//!
//! Recorded (vectors `S242-*`, `S185-setup-*`,
//! `tools/recorder-scenarios/FINDINGS-memory2.md`): the hooks run first,
//! awaited, before SessionStart, payload `session_id, transcript_path,
//! cwd, hook_event_name, trigger` (`init` or `maintenance`; no
//! `prompt_id`), matcher subject the trigger; each hook gets a
//! `CLAUDE_ENV_FILE` (`setup-hook-<n>.sh`) whose exports reach the
//! session's `Bash` commands. Nothing a hook answers changes anything the
//! model or the turn sees (exit 2, `decision: block`, plain stdout,
//! `additionalContext`, `continue: false`: S185), so answers are only
//! recorded. Once per process: the first session that starts.

use std::sync::atomic::Ordering;

use dsh_plugin_api::SessionStartInput;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{head, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "Setup";

/// Why Setup runs (Claude Code's `trigger`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SetupTrigger {
    /// `--init` (and `--init-only`).
    Init,
    /// `--maintenance`.
    Maintenance,
}

impl SetupTrigger {
    /// The name hooks are told.
    pub fn as_str(self) -> &'static str {
        match self {
            SetupTrigger::Init => "init",
            SetupTrigger::Maintenance => "maintenance",
        }
    }
}

/// The stdin payload.
pub fn payload(input: &SessionStartInput, trigger: SetupTrigger) -> Value {
    let mut m = head(&input.session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("trigger".into(), trigger.as_str().into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// Runs the Setup hooks when the bridge is configured to and no session
    /// has started before in this process.
    pub async fn on_setup(&self, input: &SessionStartInput) {
        let Some(trigger) = self.setup else {
            return;
        };
        if super::is_subagent(&input.session) || self.setup_fired.swap(true, Ordering::SeqCst) {
            return;
        }
        self.note_project_dir(&input.session, &input.session.cwd);
        if !self.has_hooks(&input.session, EVENT) {
            return;
        }
        let mut runs = self
            .fire(
                EVENT,
                &input.session,
                &[trigger.as_str()],
                &payload(input, trigger),
            )
            .await;
        for run in &mut runs {
            read(run, EVENT);
        }
        self.record(&input.session, EVENT, &runs);
    }
}
