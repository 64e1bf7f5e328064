//! StopFailure (`agent/turn-end` with a model error), recorded in `S92-*`.
//!
//! When a turn ends because the model request failed, Claude Code shows
//! the error as the turn's answer (a MessageDisplay with the error text, as
//! for any final answer) and then runs the StopFailure hooks, instead of
//! Stop. The payload names the failure's category (`error`: `server_error`
//! for 5xx and 529, `unknown` for a 400 (recorded); `rate_limit`,
//! `authentication_failed`, `billing_error` as Claude Code's docs name
//! them) and the text shown (`last_assistant_message`: `API Error: <status>
//! <message>`, for a server error followed by Claude Code's advice naming
//! its inference gateway, the bridge's `api_gateway`). What the hooks
//! answer changes nothing (`S92-stop-output`). A turn that ends on anything
//! else (a step limit, a listener) fires neither. A subagent's failed
//! request fires its StopFailure (as the subagent's: the main session's
//! ids, `agent_id` and `agent_type`) without MessageDisplay, and no
//! SubagentStop (vectors `S180-*`).

use dsh_plugin_api::TurnEndInput;
use dsh_plugin_api::services::model::{ModelError, ModelErrorKind};
use serde_json::Value;

use super::batch::{DISPLAY, display_payload};
use super::{effort, head, prompt_id, read};
use crate::ClaudeBridge;

/// The event name.
pub const EVENT: &str = "StopFailure";

/// Claude Code's category of a failed model request.
pub fn category(error: &ModelError) -> &'static str {
    match error.kind {
        ModelErrorKind::Status { code: 429 } => "rate_limit",
        ModelErrorKind::Status { code: 401 | 403 } => "authentication_failed",
        ModelErrorKind::Status { code: 402 } => "billing_error",
        ModelErrorKind::Status { code } if code >= 500 => "server_error",
        _ => "unknown",
    }
}

/// The text Claude Code shows for a failed model request (recorded
/// `S92-err500`, `S92-err400`), naming `gateway` in a server error's
/// advice when there is one.
pub fn error_text(error: &ModelError, gateway: Option<&str>) -> String {
    let message = error.message.trim_end_matches('.');
    match error.kind {
        ModelErrorKind::Status { code } if code >= 500 => {
            let advice = gateway.map_or(String::new(), |g| {
                format!(" If it persists, check your inference gateway ({g}).")
            });
            format!(
                "API Error: {code} {message}. This is a server-side issue, usually temporary — \
                 try again in a moment.{advice}"
            )
        }
        ModelErrorKind::Status { code } => format!("API Error: {code} {}", error.message),
        _ => format!("API Error: {}", error.message),
    }
}

/// The StopFailure payload.
pub fn payload(input: &TurnEndInput, effort_level: Option<&str>, error: &str, text: &str) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("error".into(), error.into());
    m.insert("last_assistant_message".into(), text.into());
    Value::Object(m)
}

impl ClaudeBridge {
    /// At a turn's end: MessageDisplay and StopFailure when a model request
    /// failed it.
    pub async fn on_turn_end(&self, input: &TurnEndInput) {
        let session = &input.session;
        let error = (input.reason.as_str() == "error")
            .then(|| input.message.as_ref().into_option())
            .flatten()
            .and_then(|m| ModelError::from_display(m.as_str()));
        let text = error
            .as_ref()
            .map(|e| error_text(e, self.api_gateway.as_deref()));
        let subagent = super::is_subagent(session);
        if subagent {
            self.note_subagent_end(&session.session_id, text.clone());
        }
        let (Some(error), Some(text)) = (error, text) else {
            return;
        };
        if !subagent && self.has_hooks(session, DISPLAY) {
            let message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
            let mut runs = self
                .fire(
                    DISPLAY,
                    session,
                    &[],
                    &display_payload(session, &message_id, &text),
                )
                .await;
            for run in &mut runs {
                read(run, DISPLAY);
            }
            self.record(session, DISPLAY, &runs);
        }
        if self.has_hooks(session, EVENT) {
            let payload = payload(input, self.effort.as_deref(), category(&error), &text);
            let category = category(&error);
            let mut runs = self.fire(EVENT, session, &[category], &payload).await;
            for run in &mut runs {
                read(run, EVENT);
            }
            self.record(session, EVENT, &runs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_and_categories_as_recorded() {
        let e500 = ModelError::new(ModelErrorKind::Status { code: 500 }, "MARK_S92 internal");
        assert_eq!(category(&e500), "server_error");
        assert_eq!(
            error_text(&e500, Some("127.0.0.1:1")),
            "API Error: 500 MARK_S92 internal. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:1)."
        );
        let e400 = ModelError::new(ModelErrorKind::Status { code: 400 }, "MARK_S92 bad request");
        assert_eq!(category(&e400), "unknown");
        assert_eq!(
            error_text(&e400, None),
            "API Error: 400 MARK_S92 bad request"
        );
        let e529 = ModelError::new(ModelErrorKind::Status { code: 529 }, "Overloaded");
        assert_eq!(category(&e529), "server_error");
    }
}
