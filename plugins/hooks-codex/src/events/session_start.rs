//! SessionStart (`agent/session-start`).
//!
//! Plain stdout of an exit-0 hook (trimmed) and `additionalContext` become
//! context before the first prompt (vectors `C3-ss-plain-stdout`,
//! `C3-ss-json-additional`); other exits, exit 2 included, change nothing.
//! `continue: false` ends the first turn before any model request
//! (`C3-ss-continue-false`): the bridge halts the session's turn.
//! Matcher subject: the `source`. Each context is capped as Codex caps it
//! ([`crate::spill`]).

use dsh_plugin_api::SessionStartInput;
use serde_json::{Map, Value};

use super::{invalid, permission_mode, read, transcript};
use crate::CodexBridge;
use crate::output::{SessionStartOutput, decode};

/// The event name.
pub const EVENT: &str = "SessionStart";

/// The stdin payload.
pub fn payload(input: &SessionStartInput, model: &str) -> Value {
    let s = &input.session;
    let mut m = Map::new();
    m.insert("session_id".into(), s.session_id.as_str().into());
    m.insert("transcript_path".into(), transcript(s));
    m.insert("cwd".into(), s.cwd.as_str().into());
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("model".into(), model.into());
    m.insert("permission_mode".into(), permission_mode(s).into());
    m.insert("source".into(), input.source.as_str().into());
    Value::Object(m)
}

impl CodexBridge {
    /// Runs the SessionStart hooks.
    pub async fn on_session_start(&self, input: &SessionStartInput) {
        self.refresh(&input.session);
        if !self.has_hooks(&input.session, EVENT) {
            return;
        }
        let source = input.source.as_str();
        let mut runs = self
            .fire(
                EVENT,
                &input.session,
                Some(source),
                &payload(input, &self.model),
            )
            .await;
        let mut contexts = Vec::new();
        let mut halt = None;
        for run in &mut runs {
            let reading = read(run);
            contexts.extend(reading.plain);
            let Some(json) = reading.json else { continue };
            match decode::<SessionStartOutput>(&json) {
                Err(e) => invalid(run, e),
                Ok(out) => {
                    contexts.extend(out.hook_specific_output.and_then(|h| h.additional_context));
                    if !out.proceed {
                        halt.get_or_insert(out.stop_reason.unwrap_or_default());
                    }
                }
            }
        }
        self.record(&input.session, EVENT, &runs);
        let session_id = &input.session.session_id;
        for text in contexts {
            let text = self.cap(session_id, text);
            self.inject(session_id, &text);
        }
        if let Some(reason) = halt
            && let Err(e) = self.host.halt_turn(session_id, &reason)
        {
            self.host.warn(&format!(
                "hooks-codex: cannot halt the turn of {session_id}: {e}"
            ));
        }
    }
}
