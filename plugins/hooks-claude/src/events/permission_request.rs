//! PermissionRequest (`tools/permission-request`, plugin API 1.4): a call
//! would show the permission dialog. Claude Code fires it only when
//! someone can be asked: never in `-p` mode (vectors S32-*), before the
//! dialog in the interactive CLI (S33-*); dsh fires it only when an
//! approval service is mounted.
//!
//! Payload (S33-allow): the common head, `prompt_id`, `permission_mode`,
//! `effort`, `hook_event_name`, `tool_name`, `tool_input` (no
//! `tool_use_id`), and `permission_suggestions` when Claude Code has some
//! (S33-no-rule-allow, S33-write-allow). Matched on the tool's name.
//!
//! Per hook (exit 0, `hookSpecificOutput.decision`):
//! - `{behavior: allow}`: runs without asking; `updatedInput` replaces the
//!   arguments (S33-allow-updated-input), `updatedPermissions` changes the
//!   session's rules or mode (S33-allow-updated-permissions: a second
//!   call of the same command did not fire the hook again);
//! - `{behavior: deny, message}`: refused, the model reads `message`
//!   (S33-deny), or `Permission denied by hook` without one
//!   (S33-deny-no-message); `interrupt: true` also stops the turn.
//!
//! Exit 2 decides nothing (S33-exit2: the dialog still showed). Merge: a
//! deny wins over an allow. No decision: the rest of the waterfall, then
//! the approval service, answers.

use std::future::Future;

use dsh_plugin_api::{PermissionDecision, PermissionRequestInput, RString};
use serde_json::Value;

use super::pre_tool_use::tool_input;
use super::{claude_tool_name, effort, head, permission_mode, prompt_id, read, tool_subjects};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "PermissionRequest";

/// What the model reads for a deny without a message (S33-deny-no-message).
pub const DENIED_BY_HOOK: &str = "Permission denied by hook";

/// The stdin payload.
pub fn payload(input: &PermissionRequestInput, effort_level: Option<&str>) -> Value {
    let call = &input.call;
    let mut m = head(&call.session);
    prompt_id(&mut m, &call.session);
    permission_mode(&mut m, &call.session);
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("tool_name".into(), claude_tool_name(&call.name).into());
    m.insert("tool_input".into(), tool_input(call));
    if let Ok(Value::Array(s)) = serde_json::from_str::<Value>(&input.suggestions)
        && !s.is_empty()
    {
        m.insert("permission_suggestions".into(), Value::Array(s));
    }
    Value::Object(m)
}

/// One hook's decision, if it made one.
fn decision_of(json: &serde_json::Map<String, Value>) -> Option<PermissionDecision> {
    let specific = json.get("hookSpecificOutput")?;
    if specific.get("hookEventName").and_then(Value::as_str) != Some(EVENT) {
        return None;
    }
    let decision = specific.get("decision")?;
    let text = |v: Option<&Value>| v.map(Value::to_string).map(RString::from);
    match decision.get("behavior").and_then(Value::as_str)? {
        "allow" => Some(PermissionDecision::Allow {
            updated_arguments: text(decision.get("updatedInput").filter(|v| v.is_object())).into(),
            updated_permissions: text(decision.get("updatedPermissions").filter(|v| v.is_array()))
                .into(),
        }),
        "deny" => Some(PermissionDecision::Deny {
            message: decision
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .unwrap_or(DENIED_BY_HOOK)
                .into(),
            interrupt: decision.get("interrupt").and_then(Value::as_bool) == Some(true),
        }),
        _ => None,
    }
}

impl ClaudeBridge {
    /// Runs the PermissionRequest hooks; without a decision from them, the
    /// rest of the waterfall answers.
    pub async fn on_permission_request<F, Fut>(
        &self,
        input: &PermissionRequestInput,
        next: F,
    ) -> Result<PermissionDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<PermissionDecision, String>>,
    {
        if !self.has_hooks(&input.call.session, EVENT) {
            return next().await;
        }
        let session = &input.call.session;
        let tool = claude_tool_name(&input.call.name);
        let payload = payload(input, self.effort.as_deref());
        let mut runs = self
            .fire(EVENT, session, &tool_subjects(tool), &payload)
            .await;
        let mut allow = None;
        let mut deny = None;
        for run in &mut runs {
            let reading = read(run, EVENT);
            if reading.blocked {
                continue;
            }
            match reading.json.as_ref().and_then(decision_of) {
                Some(d @ PermissionDecision::Deny { .. }) => {
                    deny.get_or_insert(d);
                }
                Some(d) => {
                    allow.get_or_insert(d);
                }
                None => {}
            }
        }
        self.record(session, EVENT, &runs);
        match deny.or(allow) {
            Some(decision) => Ok(decision),
            None => next().await,
        }
    }
}
