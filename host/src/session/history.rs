//! Deriving the conversation the model sees from the log's events.
//!
//! User messages, plugin context and steering become user-role messages
//! (context and steering tagged with their source kind); the assistant's
//! text and calls become assistant messages, with arguments as last
//! rewritten (`tool/updated`); results become tool messages. Blocked prompts,
//! hook records and bookkeeping never reach the model.
//!
//! Every assistant tool call is answered before the conversation goes on,
//! as OpenAI-compatible APIs require: a call whose result is missing from
//! the log (a log written before crashed turns were closed with results)
//! gets a synthetic error result right after the results that exist, and a
//! result that answers no open call is left out.

use serde_json::Value;

use super::events::kind;
use super::log::INTERRUPTED_TOOL_RESULT;
use crate::model::{ChatMessage, ModelToolCall};

fn text(event: &Value, key: &str) -> String {
    event
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Answers every call still waiting with a synthetic error result.
fn answer_pending(messages: &mut Vec<ChatMessage>, pending: &mut Vec<String>) {
    for id in pending.drain(..) {
        let mut m = ChatMessage::new("tool", INTERRUPTED_TOOL_RESULT.to_string());
        m.tool_call_id = Some(id);
        m.is_error = true;
        messages.push(m);
    }
}

/// The model-facing history of `events`.
pub fn derive(events: &[Value]) -> Vec<ChatMessage> {
    let mut messages: Vec<ChatMessage> = Vec::new();
    // Calls of the last assistant message that have no result yet.
    let mut pending: Vec<String> = Vec::new();
    for event in events {
        match kind(event) {
            "user/message" => {
                answer_pending(&mut messages, &mut pending);
                messages.push(ChatMessage::new("user", text(event, "content")));
            }
            "context/message" | "steering/message" => {
                answer_pending(&mut messages, &mut pending);
                let mut m = ChatMessage::new("user", text(event, "content"));
                let mut source = event.get("source").cloned().unwrap_or(Value::Null);
                if kind(event) == "steering/message" {
                    source = serde_json::json!({"kind": "steering", "from": source});
                }
                m.source = Some(source);
                messages.push(m);
            }
            "assistant/message" => {
                answer_pending(&mut messages, &mut pending);
                let mut m = ChatMessage::new("assistant", text(event, "content"));
                m.tool_calls = event
                    .get("tool_calls")
                    .cloned()
                    .and_then(|v| serde_json::from_value::<Vec<ModelToolCall>>(v).ok())
                    .unwrap_or_default();
                pending = m.tool_calls.iter().map(|c| c.id.clone()).collect();
                messages.push(m);
            }
            "tool/updated" => {
                let id = text(event, "call_id");
                let args = event.get("arguments").cloned().unwrap_or(Value::Null);
                if let Some(call) = messages
                    .iter_mut()
                    .rev()
                    .filter(|m| m.role == "assistant")
                    .flat_map(|m| m.tool_calls.iter_mut())
                    .find(|c| c.id == id)
                {
                    call.arguments = args;
                }
            }
            "tool/result" => {
                let id = text(event, "call_id");
                let Some(at) = pending.iter().position(|p| *p == id) else {
                    tracing::debug!(call = %id, "a tool result that answers no open call is left out of the history");
                    continue;
                };
                pending.remove(at);
                let mut m = ChatMessage::new("tool", text(event, "content"));
                m.tool_call_id = Some(id);
                m.is_error = event
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                messages.push(m);
            }
            _ => {}
        }
    }
    answer_pending(&mut messages, &mut pending);
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::events as ev;
    use serde_json::json;

    #[test]
    fn derives_roles_sources_and_rewrites() {
        let calls = vec![ModelToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({"command": "ls"}),
        }];
        let events = vec![
            ev::turn_start("t", "prompt"),
            ev::prompt_blocked("nope", json!({"kind": "user"}), "no", None),
            ev::user_message("hi", json!({"kind": "user"}), None),
            ev::context_message("ctx", "gate"),
            ev::assistant_message("", &calls),
            ev::tool_call("c1", "Bash", &json!({"command": "ls"})),
            ev::tool_updated("c1", &json!({"command": "ls -a"}), "gate"),
            ev::tool_result("c1", "Bash", "a b", false, None),
            ev::steering_message("keep going", Some("stopper")),
        ];
        let h = derive(&events);
        let roles: Vec<&str> = h.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "user", "assistant", "tool", "user"]);
        assert_eq!(
            h[1].source,
            Some(json!({"kind": "plugin", "plugin": "gate"}))
        );
        assert_eq!(h[2].tool_calls[0].arguments, json!({"command": "ls -a"}));
        assert_eq!(h[4].source.as_ref().unwrap()["kind"], "steering");
    }

    #[test]
    fn every_call_is_answered_before_the_conversation_goes_on() {
        let calls = |ids: &[&str]| -> Vec<ModelToolCall> {
            ids.iter()
                .map(|id| ModelToolCall {
                    id: (*id).into(),
                    name: "Bash".into(),
                    arguments: json!({}),
                })
                .collect()
        };
        // A log closed `interrupted` by an older dsh: c2 and c3 never got results.
        let events = vec![
            ev::user_message("go", json!({"kind": "user"}), None),
            ev::assistant_message("", &calls(&["c1", "c2"])),
            ev::tool_result("c1", "Bash", "ok", false, None),
            ev::turn_end("t", crate::session::TurnEndReason::Interrupted, None),
            ev::user_message("again", json!({"kind": "user"}), None),
            ev::tool_result("stray", "Bash", "late", false, None),
            ev::assistant_message("", &calls(&["c3"])),
        ];
        let h = derive(&events);
        let shape: Vec<(&str, Option<&str>, bool)> = h
            .iter()
            .map(|m| (m.role.as_str(), m.tool_call_id.as_deref(), m.is_error))
            .collect();
        assert_eq!(
            shape,
            [
                ("user", None, false),
                ("assistant", None, false),
                ("tool", Some("c1"), false),
                ("tool", Some("c2"), true),
                ("user", None, false),
                ("assistant", None, false),
                ("tool", Some("c3"), true),
            ]
        );
        assert_eq!(h[3].content, INTERRUPTED_TOOL_RESULT);
    }
}
