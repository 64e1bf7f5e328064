//! The `model` service: one completion.
//!
//! Method [`METHOD_COMPLETE`] takes a [`ModelRequest`] and answers a
//! [`ModelReply`]. A provider that fails answers the call's error with
//! [`ModelError::to_wire`] (a JSON object), so the loop can tell a
//! transport failure from a refusal or a malformed reply by its
//! [`ModelErrorKind`], never by the wording. An error that is not such an
//! object (a provider built before this contract) reads as
//! [`ModelErrorKind::Other`] with the text as its message.

use serde::{Deserialize, Serialize};

/// The service's name.
pub const SERVICE: &str = "model";
/// Its one method.
pub const METHOD_COMPLETE: &str = "complete";
/// The contract's version (see the [evolution rule](super#evolution-rule)).
pub const VERSION: u32 = 1;

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `developer`, `user`, `assistant` or `tool`. A `system`
    /// message with a `source` is a plugin's system-role context (plugin
    /// API 1.7.0, `HostContext::inject_system_context`) at its place in
    /// the conversation, not a leading system prompt; a `developer` one
    /// (1.8.0, `HostContext::set_context_role`) is a plugin's
    /// developer-role context (Codex's hook context).
    pub role: String,
    /// The text.
    pub content: String,
    /// For assistant messages: the calls it made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    /// For tool messages: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool messages: whether the call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Where a user-role (or, since 1.7.0, system-role; since 1.8.0,
    /// developer-role) message came from
    /// when it is not the user's: `{"kind": "plugin", "plugin": id}`,
    /// `{"kind": "steering", ...}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<serde_json::Value>,
    /// Images after the text, in order: a tool result's image blocks
    /// (Claude Code's `Read` of a PNG is one image and no text). Added in
    /// plugin API 1.6.0 under the evolution rule: a provider built before
    /// it reads the text only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<MessageImage>,
    /// The text as several text parts of one message, in order (plugin API
    /// 1.6.0: steering from several hooks, as Claude Code and Codex send
    /// it); `content` then holds them joined by
    /// [`crate::STEERING_PART_SEPARATOR`], which is what a provider built
    /// before it reads. Empty: the message is `content`, one part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<String>,
}

/// An image in a [`ChatMessage`] (plugin API 1.6.0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageImage {
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// The bytes, base64 encoded.
    pub data: String,
}

impl ChatMessage {
    /// A plain message.
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.into(),
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            source: None,
            images: Vec::new(),
            parts: Vec::new(),
        }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelToolCall {
    /// Call id (generated when the model gives none).
    #[serde(default)]
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments: an object, or the JSON text the model wrote, in a string
    /// (the host reads that string as the JSON it holds and hands tools the
    /// text as written).
    #[serde(default)]
    pub arguments: serde_json::Value,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelTool {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: serde_json::Value,
}

/// What the loop sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The session asking.
    pub session_id: String,
    /// History derived from the session log.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call.
    pub tools: Vec<ModelTool>,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Finished its answer.
    #[default]
    EndTurn,
    /// Wants tool results.
    ToolUse,
    /// Ran out of tokens.
    MaxTokens,
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ModelReply {
    /// Its text (may be empty).
    #[serde(default)]
    pub text: String,
    /// Its tool calls (may be empty).
    #[serde(default)]
    pub tool_calls: Vec<ModelToolCall>,
    /// Why it stopped.
    #[serde(default)]
    pub stop_reason: StopReason,
    /// The model that answered, as the provider names it, when it says.
    /// Optional both ways: a provider that leaves it out, or a host that
    /// does not read it, loses nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's token accounting of this request, in its own shape
    /// (OpenAI's `{prompt_tokens, completion_tokens, ...}`, Anthropic's
    /// `{input_tokens, output_tokens, cache_*}`), when it gives one.
    /// Optional both ways, as `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<serde_json::Value>,
}

/// What kind of failure a [`ModelError`] is. Unknown kinds (from a newer
/// provider) read as [`ModelErrorKind::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelErrorKind {
    /// The endpoint could not be reached, or every retry failed, or the
    /// response broke off.
    Transport,
    /// The endpoint answered with a status that retrying will not fix.
    Status {
        /// The HTTP status code.
        code: u16,
    },
    /// The reply did not follow the protocol (a malformed stream, body or
    /// tool call).
    Protocol,
    /// The model server reported an error in a successful response.
    Provider,
    /// The provider cannot work as configured (no API key, bad URL).
    Config,
    /// The provider could not read the request (unknown method, malformed
    /// arguments).
    Request,
    /// Anything else, including an untyped error from an older provider.
    #[serde(other)]
    Other,
}

/// A failed completion: its kind, and a message for the operator (never a
/// credential).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct ModelError {
    /// What kind of failure it is.
    #[serde(flatten)]
    pub kind: ModelErrorKind,
    /// What happened, for the operator.
    pub message: String,
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = &self.message;
        match &self.kind {
            ModelErrorKind::Transport => write!(f, "model request failed: {m}"),
            ModelErrorKind::Status { code } => {
                write!(f, "model request refused: HTTP {code}: {m}")
            }
            ModelErrorKind::Protocol => write!(f, "the model's reply is malformed: {m}"),
            ModelErrorKind::Provider => write!(f, "the model server reported an error: {m}"),
            ModelErrorKind::Config => write!(f, "the model provider cannot work: {m}"),
            ModelErrorKind::Request => write!(f, "the model provider refused the request: {m}"),
            ModelErrorKind::Other => write!(f, "model request failed: {m}"),
        }
    }
}

impl ModelError {
    /// An error of `kind`.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            message: message.into(),
        }
    }

    /// The text a provider returns as the service call's error.
    pub fn to_wire(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| self.message.clone())
    }

    /// Reads back the text [`ModelError`]'s `Display` writes (the message
    /// of a turn that ended on a model error, as `agent/turn-end` hands
    /// it on): `None` for any other text. `model request failed: ...`
    /// reads as [`ModelErrorKind::Transport`].
    pub fn from_display(text: &str) -> Option<Self> {
        if let Some(rest) = text.strip_prefix("model request refused: HTTP ") {
            let (code, message) = rest.split_once(": ")?;
            let code = code.parse().ok()?;
            return Some(ModelError::new(ModelErrorKind::Status { code }, message));
        }
        let kinds = [
            ("model request failed: ", ModelErrorKind::Transport),
            ("the model's reply is malformed: ", ModelErrorKind::Protocol),
            (
                "the model server reported an error: ",
                ModelErrorKind::Provider,
            ),
            ("the model provider cannot work: ", ModelErrorKind::Config),
            (
                "the model provider refused the request: ",
                ModelErrorKind::Request,
            ),
        ];
        kinds.into_iter().find_map(|(prefix, kind)| {
            text.strip_prefix(prefix)
                .map(|message| ModelError::new(kind, message))
        })
    }

    /// Reads a service call's error: a [`ModelError`] object, or (from a
    /// provider that predates this contract, or a host-side failure to
    /// reach one) plain text, read as [`ModelErrorKind::Other`].
    pub fn from_wire(text: &str) -> Self {
        serde_json::from_str(text).unwrap_or_else(|_| ModelError::new(ModelErrorKind::Other, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_and_a_reply_round_trip() {
        let mut call_msg = ChatMessage::new("assistant", "");
        let call = ModelToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({"command": "ls"}),
        };
        call_msg.tool_calls.push(call.clone());
        let mut result = ChatMessage::new("tool", "a\nb");
        result.tool_call_id = Some("c1".into());
        result.is_error = true;
        let mut context = ChatMessage::new("user", "ctx");
        context.source = Some(json!({"kind": "plugin", "plugin": "p"}));
        let request = ModelRequest {
            session_id: "s".into(),
            messages: vec![ChatMessage::new("user", "hi"), call_msg, result, context],
            tools: vec![ModelTool {
                name: "Bash".into(),
                description: "run".into(),
                input_schema: json!({"type": "object"}),
            }],
        };
        let json = serde_json::to_value(&request).unwrap();
        assert_eq!(
            json["messages"][0],
            json!({"role": "user", "content": "hi"})
        );
        assert_eq!(json["messages"][2]["is_error"], true);
        assert_eq!(
            serde_json::from_value::<ModelRequest>(json).unwrap(),
            request
        );
        let reply = ModelReply {
            text: "t".into(),
            tool_calls: vec![call],
            stop_reason: StopReason::ToolUse,
            ..ModelReply::default()
        };
        let json = serde_json::to_value(&reply).unwrap();
        assert_eq!(json["stop_reason"], "tool_use");
        assert_eq!(serde_json::from_value::<ModelReply>(json).unwrap(), reply);
        assert_eq!(
            serde_json::from_value::<ModelReply>(json!({})).unwrap(),
            ModelReply::default()
        );
    }

    #[test]
    fn the_display_text_reads_back_as_the_error() {
        for kind in [
            ModelErrorKind::Status { code: 529 },
            ModelErrorKind::Transport,
            ModelErrorKind::Protocol,
            ModelErrorKind::Provider,
            ModelErrorKind::Config,
            ModelErrorKind::Request,
        ] {
            let e = ModelError::new(kind, "boom: with a colon");
            assert_eq!(ModelError::from_display(&e.to_string()), Some(e));
        }
        assert_eq!(
            ModelError::from_display("the turn reached its limit of 3 steps"),
            None
        );
        assert_eq!(
            ModelError::from_display("model request refused: HTTP x: y"),
            None
        );
    }

    #[test]
    fn errors_round_trip_by_kind_and_untyped_text_is_other() {
        for (error, wire) in [
            (
                ModelError::new(ModelErrorKind::Status { code: 401 }, "bad key"),
                json!({"kind": "status", "code": 401, "message": "bad key"}),
            ),
            (
                ModelError::new(ModelErrorKind::Transport, "reset"),
                json!({"kind": "transport", "message": "reset"}),
            ),
            (
                ModelError::new(ModelErrorKind::Protocol, "no [DONE]"),
                json!({"kind": "protocol", "message": "no [DONE]"}),
            ),
        ] {
            assert_eq!(serde_json::to_value(&error).unwrap(), wire);
            assert_eq!(ModelError::from_wire(&error.to_wire()), error);
        }
        assert_eq!(
            ModelError::from_wire("model request failed: boom"),
            ModelError::new(ModelErrorKind::Other, "model request failed: boom")
        );
        assert_eq!(
            ModelError::from_wire(r#"{"kind": "quota", "message": "m"}"#).kind,
            ModelErrorKind::Other
        );
        assert_eq!(
            ModelError::new(ModelErrorKind::Status { code: 429 }, "slow down").to_string(),
            "model request refused: HTTP 429: slow down"
        );
    }
}
