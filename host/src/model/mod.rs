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

/// The name of the service a model provider mounts.
pub const MODEL_SERVICE: &str = dsh_plugin_api::services::model::SERVICE;
