//! Deriving the conversation the model sees from the log's events.
//!
//! User messages, plugin context and steering become user-role messages
//! (context and steering tagged with their source kind); the assistant's
//! text and calls become assistant messages, with arguments as last
//! rewritten (`tool/updated`); results become tool messages. Blocked prompts,
//! hook records and bookkeeping never reach the model.

use serde_json::Value;

use super::events::kind;
use crate::model::{ChatMessage, ModelToolCall};

fn text(event: &Value, key: &str) -> String {
    event.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// The model-facing history of `events`.
pub fn derive(events: &[Value]) -> Vec<ChatMessage> {
    let mut messages: Vec<ChatMessage> = Vec::new();
    for event in events {
        match kind(event) {
            "user/message" => messages.push(ChatMessage::new("user", text(event, "content"))),
            "context/message" | "steering/message" => {
                let mut m = ChatMessage::new("user", text(event, "content"));
                let mut source = event.get("source").cloned().unwrap_or(Value::Null);
                if kind(event) == "steering/message" {
                    source = serde_json::json!({"kind": "steering", "from": source});
                }
                m.source = Some(source);
                messages.push(m);
            }
            "assistant/message" => {
                let mut m = ChatMessage::new("assistant", text(event, "content"));
                m.tool_calls = event
                    .get("tool_calls")
                    .cloned()
                    .and_then(|v| serde_json::from_value::<Vec<ModelToolCall>>(v).ok())
                    .unwrap_or_default();
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
                let mut m = ChatMessage::new("tool", text(event, "content"));
                m.tool_call_id = Some(text(event, "call_id"));
                m.is_error = event.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                messages.push(m);
            }
            _ => {}
        }
    }
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
        assert_eq!(h[1].source, Some(json!({"kind": "plugin", "plugin": "gate"})));
        assert_eq!(h[2].tool_calls[0].arguments, json!({"command": "ls -a"}));
        assert_eq!(h[4].source.as_ref().unwrap()["kind"], "steering");
    }
}
