//! Elicitation and ElicitationResult (`mcp/elicitation`, API 1.10): an MCP
//! server asks the user for input while its tool runs. Recorded from
//! `claude -p` (vectors `S250-*` to `S253-*`):
//!
//! - **Elicitation** fires first, matched against the server's name (not
//!   the tool's), with `mcp_server_name`, `message`, `mode` (`form`) and
//!   `requested_schema` (`url` and `elicitation_id` in url mode, which the
//!   MCP client refuses before any hook hears of it, vector
//!   `S254-observe`). A
//!   hook answers with `hookSpecificOutput: {hookEventName: "Elicitation",
//!   action, content?}`: `accept` (with the form's values), `decline` or
//!   `cancel` go to the server as they are, and then nothing else runs.
//!   Exit 2 is a `decline`. Anything else is no answer: another exit, plain
//!   stdout, `decision: "block"`, a wrong `hookEventName`, an `action`
//!   outside the three, `content` that is not an object. `continue: false`
//!   is ignored. Of several hooks, a decline (or exit 2) wins; otherwise
//!   the last to finish with an answer.
//! - With no answer, the rest of the chain answers (by default an ACP
//!   editor that offers elicitation, else `cancel`, what `claude -p`
//!   answers), and **ElicitationResult** fires with
//!   `mcp_server_name`, `elicitation_id` (url mode), `mode`, `action` and
//!   `content` (when there is some). Its hooks may change the answer the
//!   same way (`content` defaults to the answer's own); exit 2 or a
//!   `decline` makes it `decline`.
//!
//! - Whenever the ElicitationResult step ran (hooks or not), a
//!   **Notification** follows, not waited for (`S250-notification`):
//!   `notification_type: "elicitation_response"` (its matcher's subject),
//!   `message: Elicitation response for server "<server>": <action>`, the
//!   answer the server gets.
//!
//! Nothing of these hooks reaches the model but what the server makes of
//! the answer.

use dsh_hook_protocol::point::{HookRun, Outcome};
use dsh_plugin_api::{ElicitationDecision, ElicitationInput, ROption, RString, SessionRef};
use serde_json::{Map, Value};

use super::{completion, head, prompt_id, read};
use crate::ClaudeBridge;

/// The first event's name.
pub const EVENT: &str = "Elicitation";
/// The second event's name.
pub const RESULT_EVENT: &str = "ElicitationResult";
/// The event that announces the answer.
pub const NOTIFICATION: &str = "Notification";
/// The Notification's type (and its matcher's subject).
pub const NOTIFICATION_TYPE: &str = "elicitation_response";

/// The Elicitation stdin payload.
pub fn payload(input: &ElicitationInput) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    m.insert("hook_event_name".into(), EVENT.into());
    m.insert("mcp_server_name".into(), input.server.as_str().into());
    m.insert("message".into(), input.message.as_str().into());
    m.insert("mode".into(), input.mode.as_str().into());
    if let ROption::RSome(url) = &input.url {
        m.insert("url".into(), url.as_str().into());
    }
    if let ROption::RSome(id) = &input.elicitation_id {
        m.insert("elicitation_id".into(), id.as_str().into());
    }
    if let ROption::RSome(schema) = &input.requested_schema {
        let schema = serde_json::from_str(schema).unwrap_or_else(|_| schema.as_str().into());
        m.insert("requested_schema".into(), schema);
    }
    Value::Object(m)
}

/// The ElicitationResult stdin payload for the answer `decision`.
pub fn result_payload(input: &ElicitationInput, decision: &ElicitationDecision) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    m.insert("hook_event_name".into(), RESULT_EVENT.into());
    m.insert("mcp_server_name".into(), input.server.as_str().into());
    if let ROption::RSome(id) = &input.elicitation_id {
        m.insert("elicitation_id".into(), id.as_str().into());
    }
    m.insert("mode".into(), input.mode.as_str().into());
    let (action, content) = parts(decision);
    m.insert("action".into(), action.into());
    if let Some(content) = content {
        m.insert("content".into(), content);
    }
    Value::Object(m)
}

/// The Notification stdin payload for the answer `decision`.
pub fn notification_payload(input: &ElicitationInput, decision: &ElicitationDecision) -> Value {
    let mut m = head(&input.session);
    prompt_id(&mut m, &input.session);
    m.insert("hook_event_name".into(), NOTIFICATION.into());
    m.insert(
        "message".into(),
        format!(
            "Elicitation response for server \"{}\": {}",
            input.server.as_str(),
            parts(decision).0
        )
        .into(),
    );
    m.insert("notification_type".into(), NOTIFICATION_TYPE.into());
    Value::Object(m)
}

/// A decision's action and content.
fn parts(decision: &ElicitationDecision) -> (&'static str, Option<Value>) {
    match decision {
        ElicitationDecision::Accept { content } => (
            "accept",
            content
                .as_ref()
                .into_option()
                .and_then(|c| serde_json::from_str(c).ok()),
        ),
        ElicitationDecision::Decline => ("decline", None),
        ElicitationDecision::Cancel => ("cancel", None),
    }
}

/// One hook's answer: its action and content.
type Answer = (String, Option<Map<String, Value>>);

/// What the hooks of one point said together.
#[derive(Debug, Default, PartialEq)]
struct Said {
    /// A hook declined (exit 2, or `action: decline`).
    declined: bool,
    /// The last answer: action and content.
    answer: Option<Answer>,
}

/// One hook's answer, or why its output is no answer.
fn answer_of(json: &Map<String, Value>) -> Result<Option<Answer>, String> {
    let Some(specific) = json.get("hookSpecificOutput").and_then(Value::as_object) else {
        return Ok(None);
    };
    let action = match specific.get("action") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(a)) if matches!(a.as_str(), "accept" | "decline" | "cancel") => {
            a.clone()
        }
        Some(other) => {
            return Err(format!(
                "hookSpecificOutput.action must be accept, decline or cancel, not {other}"
            ));
        }
    };
    let content = match specific.get("content") {
        None => None,
        Some(Value::Object(c)) => Some(c.clone()),
        Some(other) => {
            return Err(format!(
                "hookSpecificOutput.content must be an object, not {other}"
            ));
        }
    };
    Ok(Some((action, content)))
}

/// Reads every run of `event` the Claude Code way, in the order they
/// finished.
fn said(runs: &mut [HookRun], event: &str) -> Said {
    let mut out = Said::default();
    for i in completion(runs) {
        let run = &mut runs[i];
        let reading = read(run, event);
        if reading.blocked {
            out.declined = true;
            continue;
        }
        let Some(json) = reading.json else {
            continue;
        };
        match answer_of(&json) {
            Ok(Some(answer)) => {
                out.declined |= answer.0 == "decline";
                out.answer = Some(answer);
            }
            Ok(None) => {}
            Err(e) => {
                run.outcome = Outcome::NonBlockingError;
                run.detail = Some(e);
            }
        }
    }
    out
}

/// An answer as a decision; `fallback` is the content an answer without
/// one keeps (ElicitationResult's).
fn decision(
    action: &str,
    content: Option<Map<String, Value>>,
    fallback: Option<Value>,
) -> ElicitationDecision {
    match action {
        "accept" => ElicitationDecision::Accept {
            content: content
                .map(Value::Object)
                .or(fallback)
                .map(|c| RString::from(c.to_string()))
                .into(),
        },
        "decline" => ElicitationDecision::Decline,
        _ => ElicitationDecision::Cancel,
    }
}

/// What the hooks made of an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicited {
    /// The answer the server gets.
    pub answer: ElicitationDecision,
    /// Whether the ElicitationResult step ran, so the Notification hooks
    /// are due ([`ClaudeBridge::notify_answer`], not waited for).
    pub notify: bool,
}

impl ClaudeBridge {
    /// Runs the Elicitation hooks; without an answer from them, asks `next`
    /// and runs the ElicitationResult hooks on its answer.
    pub async fn on_elicitation<F, Fut>(
        &self,
        input: &ElicitationInput,
        next: F,
    ) -> Result<Elicited, String>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<ElicitationDecision, String>>,
    {
        let session: &SessionRef = &input.session;
        let subject = [input.server.as_str()];
        if self.has_hooks(session, EVENT) {
            let mut runs = self.fire(EVENT, session, &subject, &payload(input)).await;
            let said = said(&mut runs, EVENT);
            self.record(session, EVENT, &runs);
            let answer = match said.answer {
                _ if said.declined => Some(ElicitationDecision::Decline),
                Some((action, content)) => Some(decision(&action, content, None)),
                None => None,
            };
            if let Some(answer) = answer {
                return Ok(Elicited {
                    answer,
                    notify: false,
                });
            }
        }
        let answer = next().await?;
        Ok(Elicited {
            answer: self.result_step(input, answer).await,
            notify: true,
        })
    }

    /// Runs the ElicitationResult hooks on `answer`; what they make of it.
    async fn result_step(
        &self,
        input: &ElicitationInput,
        answer: ElicitationDecision,
    ) -> ElicitationDecision {
        let session = &input.session;
        let subject = [input.server.as_str()];
        if !self.has_hooks(session, RESULT_EVENT) {
            return answer;
        }
        let mut runs = self
            .fire(
                RESULT_EVENT,
                session,
                &subject,
                &result_payload(input, &answer),
            )
            .await;
        let said = said(&mut runs, RESULT_EVENT);
        self.record(session, RESULT_EVENT, &runs);
        if said.declined {
            return ElicitationDecision::Decline;
        }
        match said.answer {
            Some((action, content)) => decision(&action, content, parts(&answer).1),
            None => answer,
        }
    }

    /// Runs the Notification hooks for the answer the server gets; Claude
    /// Code does not wait for them (the seam starts this on its own task):
    /// their answers change nothing.
    pub async fn notify_answer(&self, input: &ElicitationInput, answer: &ElicitationDecision) {
        if !self.has_hooks(&input.session, NOTIFICATION) {
            return;
        }
        let payload = notification_payload(input, answer);
        let mut runs = self
            .fire(NOTIFICATION, &input.session, &[NOTIFICATION_TYPE], &payload)
            .await;
        for run in &mut runs {
            read(run, NOTIFICATION);
        }
        self.record(&input.session, NOTIFICATION, &runs);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn only_a_well_formed_action_is_an_answer() {
        let ok = answer_of(&obj(json!({"hookSpecificOutput": {
            "hookEventName": "Elicitation", "action": "accept", "content": {"name": "x"}}})))
        .unwrap()
        .unwrap();
        assert_eq!(ok.0, "accept");
        assert_eq!(ok.1.unwrap()["name"], "x");
        // S251-decision-block, S251-accept-no-content's opposite: no action.
        assert_eq!(
            answer_of(&obj(json!({"decision": "block", "reason": "r"}))).unwrap(),
            None
        );
        // S251-bad-action, S251-malformed-content.
        assert!(answer_of(&obj(json!({"hookSpecificOutput": {"action": "maybe"}}))).is_err());
        assert!(
            answer_of(&obj(
                json!({"hookSpecificOutput": {"action": "accept", "content": "s"}})
            ))
            .is_err()
        );
    }

    #[test]
    fn a_result_answer_without_content_keeps_the_answers() {
        let d = decision("accept", None, Some(json!({"a": 1})));
        assert_eq!(
            d,
            ElicitationDecision::Accept {
                content: ROption::RSome(RString::from("{\"a\":1}"))
            }
        );
        assert_eq!(decision("cancel", None, None), ElicitationDecision::Cancel);
    }
}
