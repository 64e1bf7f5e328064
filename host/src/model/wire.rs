//! The `model` service's request and reply, as JSON.

use serde::{Deserialize, Serialize};

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
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
    /// Where a user-role message came from when it is not the user's:
    /// `{"kind": "plugin", "plugin": id}`, `{"kind": "steering", ...}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<serde_json::Value>,
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
    /// Arguments object.
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
}
