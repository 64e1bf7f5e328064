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
//!
//! The body is serialized straight from the request ([`Body`]): no `Value`
//! copy of the history is built for each request (issue 15); the keys come
//! in the order the tests spell out, byte for byte.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use super::{DeveloperRole, OpenAiConfig};
use crate::model::request_text::ToolText;
use crate::model::wire::{ChatMessage, ModelRequest};

/// The JSON body POSTed to `/chat/completions` (serialize it).
pub struct Body<'a> {
    config: &'a OpenAiConfig,
    request: &'a ModelRequest,
    tools: std::borrow::Cow<'a, [ToolText]>,
}

/// The body for `request` (its `tools` included).
pub fn request_body<'a>(config: &'a OpenAiConfig, request: &'a ModelRequest) -> Body<'a> {
    let tools = request.tools.iter().cloned().map(ToolText::from_tool);
    Body {
        config,
        request,
        tools: std::borrow::Cow::Owned(tools.collect()),
    }
}

/// The body for `request` with `tools` (the `model` service's way: the
/// request's own `tools` are empty, each schema already text).
pub fn request_body_with<'a>(
    config: &'a OpenAiConfig,
    request: &'a ModelRequest,
    tools: &'a [ToolText],
) -> Body<'a> {
    let mut body = request_body(config, request);
    if !tools.is_empty() {
        let mut all = body.tools.into_owned();
        all.extend_from_slice(tools);
        body.tools = std::borrow::Cow::Owned(all);
    }
    body
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut body = serializer.serialize_map(None)?;
        body.serialize_entry("model", &self.config.model)?;
        body.serialize_entry(
            "messages",
            &Messages(&self.request.messages, self.config.developer_role),
        )?;
        if !self.tools.is_empty() {
            body.serialize_entry("tools", &Tools(&self.tools))?;
        }
        body.serialize_entry("stream", &true)?;
        body.serialize_entry("stream_options", &IncludeUsage)?;
        if let Some(max_tokens) = self.config.max_tokens {
            body.serialize_entry("max_tokens", &max_tokens)?;
        }
        if let Some(temperature) = self.config.temperature {
            body.serialize_entry("temperature", &temperature)?;
        }
        body.end()
    }
}

/// `{"include_usage": true}`.
struct IncludeUsage;

impl Serialize for IncludeUsage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("include_usage", &true)?;
        map.end()
    }
}

/// The history as OpenAI messages, developer-role context sent in the
/// role given.
pub struct Messages<'a>(pub &'a [ChatMessage], pub DeveloperRole);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_seq(None)?;
        // Tool messages in a row whose images are sent after the last one.
        let mut images: Vec<&ChatMessage> = Vec::new();
        for m in self.0 {
            if m.role != "tool" && !images.is_empty() {
                out.serialize_element(&Images(&images))?;
                images.clear();
            }
            out.serialize_element(&Message(m, self.1))?;
            if m.role == "tool" && !m.images.is_empty() {
                images.push(m);
            }
        }
        if !images.is_empty() {
            out.serialize_element(&Images(&images))?;
        }
        out.end()
    }
}
/// One user message of the image parts of `tools` (tool messages in a
/// row), each call's images after a text part naming the call.
struct Images<'a>(&'a [&'a ChatMessage]);

impl Serialize for Images<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", "user")?;
        map.serialize_entry("content", &ImageParts(self.0))?;
        map.end()
    }
}

struct ImageParts<'a>(&'a [&'a ChatMessage]);

impl Serialize for ImageParts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut parts = serializer.serialize_seq(None)?;
        for m in self.0 {
            let id = m.tool_call_id.as_deref().unwrap_or_default();
            parts.serialize_element(&TextPart(&format!("Images from tool call {id}:")))?;
            for image in &m.images {
                let url = format!("data:{};base64,{}", image.mime_type, image.data);
                parts.serialize_element(&ImageUrl(&url))?;
            }
        }
        parts.end()
    }
}

/// `{"type": "text", "text": ...}`.
struct TextPart<'a>(&'a str);

impl Serialize for TextPart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "text")?;
        map.serialize_entry("text", self.0)?;
        map.end()
    }
}

/// `{"type": "image_url", "image_url": {"url": ...}}`.
struct ImageUrl<'a>(&'a str);

impl Serialize for ImageUrl<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Url<'a>(&'a str);
        impl Serialize for Url<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("url", self.0)?;
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "image_url")?;
        map.serialize_entry("image_url", &Url(self.0))?;
        map.end()
    }
}

/// One history message as an OpenAI message, developer-role context sent
/// in the role given.
pub struct Message<'a>(pub &'a ChatMessage, pub DeveloperRole);

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut map = serializer.serialize_map(None)?;
        match m.role.as_str() {
            "assistant" if !m.tool_calls.is_empty() => {
                map.serialize_entry("role", "assistant")?;
                let content = (!m.content.is_empty()).then_some(m.content.as_str());
                map.serialize_entry("content", &content)?;
                map.serialize_entry("tool_calls", &ToolCalls(&m.tool_calls))?;
            }
            "tool" => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry(
                    "tool_call_id",
                    m.tool_call_id.as_deref().unwrap_or_default(),
                )?;
                if m.is_error {
                    map.serialize_entry("content", &format!("Error: {}", m.content))?;
                } else if m.content.is_empty() && !m.images.is_empty() {
                    map.serialize_entry("content", "(the image follows)")?;
                } else {
                    map.serialize_entry("content", &m.content)?;
                }
            }
            // Several parts (steering from several hooks, Claude Code's
            // slash-command transcript): one user message with a text part
            // each, each tagged when it is not the user's.
            "user" if !m.parts.is_empty() => {
                map.serialize_entry("role", "user")?;
                map.serialize_entry("content", &TaggedParts(m))?;
            }
            "user" if m.source.is_some() => {
                map.serialize_entry("role", "user")?;
                map.serialize_entry("content", &tag(&m.content, m.source.as_ref()))?;
            }
            // A plugin's developer-role context (plugin API 1.8: Codex's
            // hook context) in the role the server takes: `system` (what
            // OpenAI reads `developer` as, and what every OpenAI-compatible
            // server takes), `developer`, or tagged user-role context.
            "developer" => match self.1 {
                DeveloperRole::Developer | DeveloperRole::System => {
                    map.serialize_entry("role", self.1.as_str())?;
                    map.serialize_entry("content", &m.content)?;
                }
                DeveloperRole::User => {
                    map.serialize_entry("role", "user")?;
                    map.serialize_entry("content", &tag(&m.content, m.source.as_ref()))?;
                }
            },
            // A plugin's system-role context (plugin API 1.7) stays where
            // it is, untagged, like any other role: the role already says it
            // is not the user's, and OpenAI takes system messages anywhere
            // in `messages`.
            role => {
                map.serialize_entry("role", role)?;
                map.serialize_entry("content", &m.content)?;
            }
        }
        map.end()
    }
}

struct TaggedParts<'a>(&'a ChatMessage);

impl Serialize for TaggedParts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut parts = serializer.serialize_seq(Some(self.0.parts.len()))?;
        for p in &self.0.parts {
            match self.0.source {
                Some(_) => parts.serialize_element(&TextPart(&tag(p, self.0.source.as_ref())))?,
                None => parts.serialize_element(&TextPart(p))?,
            }
        }
        parts.end()
    }
}

struct ToolCalls<'a>(&'a [crate::model::ModelToolCall]);

impl Serialize for ToolCalls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut calls = serializer.serialize_seq(Some(self.0.len()))?;
        for c in self.0 {
            // The wire carries an object (or the model's own text, a
            // string); OpenAI wants it as a string.
            let arguments = match &c.arguments {
                serde_json::Value::Null => "{}".to_string(),
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            calls.serialize_element(&Call {
                id: &c.id,
                name: &c.name,
                arguments: &arguments,
            })?;
        }
        calls.end()
    }
}

/// `{"id", "type": "function", "function": {"name", "arguments"}}`.
struct Call<'a> {
    id: &'a str,
    name: &'a str,
    arguments: &'a str,
}

impl Serialize for Call<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry("function", &Function(self.name, self.arguments))?;
        map.end()
    }
}

/// `{"name", "arguments"}`.
struct Function<'a>(&'a str, &'a str);

impl Serialize for Function<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("name", self.0)?;
        map.serialize_entry("arguments", self.1)?;
        map.end()
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
struct Tools<'a>(&'a [ToolText]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tools = serializer.serialize_seq(Some(self.0.len()))?;
        for t in self.0 {
            tools.serialize_element(&Tool(t))?;
        }
        tools.end()
    }
}

/// `{"type": "function", "function": {"name", "description", "parameters"}}`.
struct Tool<'a>(&'a ToolText);

impl Serialize for Tool<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Spec<'a>(&'a ToolText);
        impl Serialize for Spec<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("name", self.0.name())?;
                map.serialize_entry("description", self.0.description())?;
                map.serialize_entry("parameters", self.0.input_schema())?;
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry("function", &Spec(self.0))?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelTool, ModelToolCall};
    use serde_json::json;

    /// What goes on the wire, byte for byte.
    fn wire(value: &impl Serialize) -> String {
        serde_json::to_string(value).unwrap()
    }

    fn message(m: &ChatMessage) -> Value {
        serde_json::to_value(Message(m, DeveloperRole::default())).unwrap()
    }

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
            wire(&Messages(&history, DeveloperRole::default())),
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
            .to_string()
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
        let out: Value =
            serde_json::from_str(&wire(&Messages(&history, DeveloperRole::default()))).unwrap();
        assert_eq!(out[2]["role"], "tool");
        assert_eq!(out[3], json!({"role": "system", "content": "woke"}));
        assert_eq!(out.as_array().map(Vec::len), Some(4));
    }

    #[test]
    fn developer_context_goes_in_the_configured_role_at_its_place() {
        let mut ctx = ChatMessage::new("developer", "from a hook");
        ctx.source = Some(json!({"kind": "plugin", "plugin": "hooks-codex"}));
        let history = vec![ChatMessage::new("user", "hi"), ctx];
        let sent = |role| -> Value {
            serde_json::from_str::<Value>(&wire(&Messages(&history, role))).unwrap()[1].clone()
        };
        assert_eq!(
            sent(DeveloperRole::System),
            json!({"role": "system", "content": "from a hook"})
        );
        assert_eq!(
            sent(DeveloperRole::Developer),
            json!({"role": "developer", "content": "from a hook"})
        );
        assert_eq!(
            sent(DeveloperRole::User),
            json!({"role": "user", "content": "<context source=\"plugin:hooks-codex\">\nfrom a hook\n</context>"})
        );
    }

    #[test]
    fn steering_in_parts_is_one_user_message_with_a_text_part_each() {
        let mut steering = with_source(
            "first\n\nsecond",
            json!({"kind": "steering", "from": {"kind": "plugin", "plugin": "hooks-claude"}}),
        );
        steering.parts = vec!["first\n".into(), "second".into()];
        assert_eq!(
            wire(&Messages(&[steering], DeveloperRole::default())),
            json!([{"role": "user", "content": [
                {"type": "text", "text": "<steering source=\"plugin:hooks-claude\">\nfirst\n\n</steering>"},
                {"type": "text", "text": "<steering source=\"plugin:hooks-claude\">\nsecond\n</steering>"},
            ]}])
            .to_string()
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
            wire(&Messages(&[user], DeveloperRole::default())),
            json!([{"role": "user", "content": [
                {"type": "text", "text": "<local-command-stdout>x</local-command-stdout>\n"},
                {"type": "text", "text": "what now?"},
            ]}])
            .to_string()
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
        assert_eq!(
            wire(&request_body(&config, &request)),
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
            .to_string()
        );
        // The service's way, the tools beside the request: the same text.
        let tools: Vec<ToolText> = std::mem::take(&mut request.tools)
            .into_iter()
            .map(ToolText::from_tool)
            .collect();
        let typed = wire(&request_body(&config, &{
            let mut typed = request.clone();
            typed.tools = vec![ModelTool {
                name: "Bash".into(),
                description: "runs".into(),
                input_schema: json!({"type": "object"}),
            }];
            typed
        }));
        assert_eq!(wire(&request_body_with(&config, &request, &tools)), typed);
        request.tools.clear();
        let body = serde_json::to_value(request_body(&OpenAiConfig::default(), &request)).unwrap();
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
        let out = serde_json::to_value(Messages(&history, DeveloperRole::default())).unwrap();
        assert_eq!(
            Value::Array(out.as_array().unwrap()[1..].to_vec()).to_string(),
            json!([
                {"role": "tool", "tool_call_id": "c1", "content": "(the image follows)"},
                {"role": "tool", "tool_call_id": "c2", "content": "1\tx"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images from tool call c1:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]},
                {"role": "assistant", "content": "a dot"},
            ])
            .to_string()
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
