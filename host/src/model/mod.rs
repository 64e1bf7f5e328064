//! Talking to a language model.
//!
//! A model provider is an ordinary plugin that provides the `model` service
//! (method `complete`, JSON in and out; the contract, errors included, is
//! [`dsh_plugin_api::services::model`], re-exported in [`wire`]). The agent loop
//! calls whichever provider the manifest mounted; nothing else here knows
//! which one it is. Built in: [`ScriptedModel`] (`model-scripted`, offline
//! and for tests) and [`OpenAiModel`] (`model-openai`, any OpenAI-compatible
//! endpoint).

pub mod openai;
pub mod request_text;
mod scripted;
mod service;
pub mod wire;

pub use openai::OpenAiModel;
pub use scripted::ScriptedModel;
pub use wire::{
    ChatMessage, MessageImage, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelTool,
    ModelToolCall, StopReason,
};

/// A call's arguments as a value: a provider may hand them over as the
/// model wrote them, JSON text in a string (`model-openai` does, so tools
/// read the model's own text); that string is the JSON it holds. No
/// arguments are an empty object.
pub fn arguments_value(arguments: &serde_json::Value) -> serde_json::Value {
    match arguments {
        serde_json::Value::String(s) => {
            serde_json::from_str(s).unwrap_or_else(|_| arguments.clone())
        }
        serde_json::Value::Null => serde_json::json!({}),
        other => other.clone(),
    }
}

/// `calls` with their arguments as values ([`arguments_value`]), as the
/// session log keeps them.
pub fn with_argument_values(calls: &[ModelToolCall]) -> Vec<ModelToolCall> {
    calls
        .iter()
        .map(|c| ModelToolCall {
            arguments: arguments_value(&c.arguments),
            ..c.clone()
        })
        .collect()
}

/// The name of the service a model provider mounts.
pub const MODEL_SERVICE: &str = dsh_plugin_api::services::model::SERVICE;
