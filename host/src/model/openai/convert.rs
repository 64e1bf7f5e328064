//! From the `model` service's [`ModelRequest`] to a chat-completions
//! request body: history to OpenAI messages, tools to `function` tools.
//!
//! OpenAI has no role for "user-role text that is not the user's", so
//! context and steering are tagged inside a user message (see the module
//! docs of [`super`] for the exact format), and failed tool results are
//! prefixed with `Error: ` because the `tool` role has no error flag.
//! A `tool` message holds text only, so a tool result's images (`Read` of
//! a PNG) follow the step's tool messages as one user message of
//! `image_url` parts (`data:` URLs), each named by its call.
//! A message in several parts (steering from several hooks, a `/compact`
//! transcript) is one user message with a `text` content part each, each
//! tagged unless it is the user's. A plugin's system-role context is a
//! `system` message at its place, untagged.

use serde_json::{Map, Value, json};

use super::OpenAiConfig;
use crate::model::wire::{ChatMessage, ModelRequest, ModelTool};

/// The JSON body POSTed to `/chat/completions`.
pub fn request_body(config: &OpenAiConfig, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(config.model));
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools(&request.tools)));
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if let Some(max_tokens) = config.max_tokens {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = config.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    Value::Object(body)
}

/// The history as OpenAI messages.
pub fn messages(history: &[ChatMessage]) -> Vec<Value> {
    let mut out = Vec::with_capacity(history.len());
    // Image parts of the tool messages in a row, sent after the last one.
    let mut images: Vec<Value> = Vec::new();
    for m in history {
        if m.role != "tool" && !images.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut images)}));
        }
        out.push(message(m));
        if m.role == "tool" && !m.images.is_empty() {
            let id = m.tool_call_id.clone().unwrap_or_default();
            images.push(json!({"type": "text", "text": format!("Images from tool call {id}:")}));
            images.extend(m.images.iter().map(|i| {
                json!({"type": "image_url",
                    "image_url": {"url": format!("data:{};base64,{}", i.mime_type, i.data)}})
            }));
        }
    }
    if !images.is_empty() {
        out.push(json!({"role": "user", "content": images}));
    }
    out
}

fn message(m: &ChatMessage) -> Value {
    match m.role.as_str() {
        "assistant" if !m.tool_calls.is_empty() => {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    // The wire carries an object; OpenAI wants it as a string.
                    let arguments = if c.arguments.is_null() {
                        "{}".to_string()
                    } else {
                        c.arguments.to_string()
                    };
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": arguments},
                    })
                })
                .collect();
            let content = if m.content.is_empty() {
                Value::Null
            } else {
                json!(m.content)
            };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        "tool" => {
            let content = if m.is_error {
                format!("Error: {}", m.content)
            } else if m.content.is_empty() && !m.images.is_empty() {
                "(the image follows)".to_string()
            } else {
                m.content.clone()
            };
            json!({
                "role": "tool",
                "tool_call_id": m.tool_call_id.clone().unwrap_or_default(),
                "content": content,
            })
        }
        // Several parts (steering from several hooks, Claude Code's
        // slash-command transcript): one user message with a text part
        // each, each tagged when it is not the user's.
        "user" if !m.parts.is_empty() => {
            let parts: Vec<Value> = m
                .parts
                .iter()
                .map(|p| match m.source {
                    Some(_) => json!({"type": "text", "text": tag(p, m.source.as_ref())}),
                    None => json!({"type": "text", "text": p}),
                })
                .collect();
            json!({"role": "user", "content": parts})
        }
        "user" if m.source.is_some() => {
            json!({"role": "user", "content": tag(&m.content, m.source.as_ref())})
        }
        // A plugin's system-role context (plugin API 1.7) stays where it
        // is, untagged: the role already says it is not the user's, and
        // OpenAI takes system messages anywhere in `messages`.
        "system" => json!({"role": "system", "content": m.content}),
        role => json!({"role": role, "content": m.content}),
    }
}

/// Wraps non-user text in a tag naming where it came from.
fn tag(content: &str, source: Option<&Value>) -> String {
    let source = source.unwrap_or(&Value::Null);
    if kind(source) == "steering" {
        let from = source.get("from").unwrap_or(&Value::Null);
        format!(
            "<steering source=\"{}\">\n{content}\n</steering>",
            label(from)
        )
    } else {
        format!(
            "<context source=\"{}\">\n{content}\n</context>",
            label(source)
        )
    }
}

fn kind(source: &Value) -> &str {
    source.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// `plugin:NAME` for a plugin, the bare kind (`user`, ...) otherwise.
fn label(source: &Value) -> String {
    let name = |key| source.get(key).and_then(Value::as_str);
    let label = match (kind(source), name("plugin")) {
        ("plugin", Some(plugin)) => format!("plugin:{plugin}"),
        ("", _) => "unknown".to_string(),
        (kind, _) => kind.to_string(),
    };
    // The label sits in an attribute: keep it one clean token.
    label.replace(['"', '<', '>', '\n'], "_")
}

/// Tools as OpenAI `function` tools.
pub fn tools(tools: &[ModelTool]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelToolCall;

    fn with_source(content: &str, source: Value) -> ChatMessage {
        let mut m = ChatMessage::new("user", content);
        m.source = Some(source);
        m
    }

    #[test]
    fn history_becomes_openai_messages() {
        let mut assistant = ChatMessage::new("assistant", "");
        assistant.tool_calls = vec![ModelToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({"command": "ls"}),
        }];
        let mut ok = ChatMessage::new("tool", "a b");
        ok.tool_call_id = Some("c1".into());
        let mut failed = ok.clone();
        failed.content = "exit 2".into();
        failed.is_error = true;
        let history = vec![
            ChatMessage::new("system", "be brief"),
            ChatMessage::new("user", "hi"),
            with_source("ctx", json!({"kind": "plugin", "plugin": "gate"})),
            assistant,
            ok,
            failed,
            with_source(
                "go on",
                json!({"kind": "steering", "from": {"kind": "plugin", "plugin": "stopper"}}),
            ),
            with_source(
                "more",
                json!({"kind": "steering", "from": {"kind": "user"}}),
            ),
            ChatMessage::new("assistant", "done"),
        ];
        assert_eq!(
            Value::Array(messages(&history)),
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi"},
                {"role": "user", "content": "<context source=\"plugin:gate\">\nctx\n</context>"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "a b"},
                {"role": "tool", "tool_call_id": "c1", "content": "Error: exit 2"},
                {"role": "user", "content": "<steering source=\"plugin:stopper\">\ngo on\n</steering>"},
                {"role": "user", "content": "<steering source=\"user\">\nmore\n</steering>"},
                {"role": "assistant", "content": "done"},
            ])
        );
    }

    #[test]
    fn system_context_is_an_untagged_system_message_at_its_place() {
        let mut assistant = ChatMessage::new("assistant", "");
        assistant.tool_calls = vec![ModelToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({}),
        }];
        let mut result = ChatMessage::new("tool", "one");
        result.tool_call_id = Some("c1".into());
        let mut woke = ChatMessage::new("system", "woke");
        woke.source = Some(json!({"kind": "plugin", "plugin": "hooks-claude"}));
        let history = vec![ChatMessage::new("user", "hi"), assistant, result, woke];
        let out = messages(&history);
        assert_eq!(out[2]["role"], "tool");
        assert_eq!(out[3], json!({"role": "system", "content": "woke"}));
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn steering_in_parts_is_one_user_message_with_a_text_part_each() {
        let mut steering = with_source(
            "first\n\nsecond",
            json!({"kind": "steering", "from": {"kind": "plugin", "plugin": "hooks-claude"}}),
        );
        steering.parts = vec!["first\n".into(), "second".into()];
        assert_eq!(
            Value::Array(messages(&[steering])),
            json!([{"role": "user", "content": [
                {"type": "text", "text": "<steering source=\"plugin:hooks-claude\">\nfirst\n\n</steering>"},
                {"type": "text", "text": "<steering source=\"plugin:hooks-claude\">\nsecond\n</steering>"},
            ]}])
        );
    }

    #[test]
    fn the_users_message_in_parts_is_one_message_of_untagged_parts() {
        let mut user = ChatMessage::new(
            "user",
            "<local-command-stdout>x</local-command-stdout>\n\nwhat now?",
        );
        user.parts = vec![
            "<local-command-stdout>x</local-command-stdout>\n".into(),
            "what now?".into(),
        ];
        assert_eq!(
            Value::Array(messages(&[user])),
            json!([{"role": "user", "content": [
                {"type": "text", "text": "<local-command-stdout>x</local-command-stdout>\n"},
                {"type": "text", "text": "what now?"},
            ]}])
        );
    }

    #[test]
    fn body_carries_model_stream_tools_and_options() {
        let config = OpenAiConfig {
            max_tokens: Some(100),
            temperature: Some(0.5),
            ..OpenAiConfig::default()
        };
        let mut request = ModelRequest {
            session_id: "s".into(),
            messages: vec![ChatMessage::new("user", "hi")],
            tools: vec![ModelTool {
                name: "Bash".into(),
                description: "runs".into(),
                input_schema: json!({"type": "object"}),
            }],
        };
        let body = request_body(&config, &request);
        assert_eq!(
            body,
            json!({
                "model": "deepseek-chat",
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"type": "function", "function":
                    {"name": "Bash", "description": "runs", "parameters": {"type": "object"}}}],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 100,
                "temperature": 0.5,
            })
        );
        request.tools.clear();
        let body = request_body(&OpenAiConfig::default(), &request);
        assert!(body.get("tools").is_none() && body.get("max_tokens").is_none());
    }

    #[test]
    fn tool_images_follow_the_tool_messages() {
        let mut assistant = ChatMessage::new("assistant", "");
        assistant.tool_calls = vec![ModelToolCall {
            id: "c1".into(),
            name: "Read".into(),
            arguments: json!({"file_path": "dot.png"}),
        }];
        let mut image = ChatMessage::new("tool", "");
        image.tool_call_id = Some("c1".into());
        image.images = vec![crate::model::MessageImage {
            mime_type: "image/png".into(),
            data: "iVBO".into(),
        }];
        let mut text = ChatMessage::new("tool", "1\tx");
        text.tool_call_id = Some("c2".into());
        let history = vec![
            assistant,
            image,
            text,
            ChatMessage::new("assistant", "a dot"),
        ];
        let out = messages(&history);
        assert_eq!(
            Value::Array(out[1..].to_vec()),
            json!([
                {"role": "tool", "tool_call_id": "c1", "content": "(the image follows)"},
                {"role": "tool", "tool_call_id": "c2", "content": "1\tx"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images from tool call c1:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]},
                {"role": "assistant", "content": "a dot"},
            ])
        );
    }

    #[test]
    fn odd_sources_still_get_a_clean_label() {
        let m = with_source("x", json!({"kind": "we\"ird"}));
        assert_eq!(
            message(&m)["content"],
            "<context source=\"we_ird\">\nx\n</context>"
        );
        let m = with_source("x", Value::Null);
        assert_eq!(
            message(&m)["content"],
            "<context source=\"unknown\">\nx\n</context>"
        );
    }
}
