//! The `model` service's request, reply and error: the contract in
//! [`dsh_plugin_api::services::model`], defined once there so a provider
//! shipped as a `.so` speaks exactly what the loop reads.

pub use dsh_plugin_api::services::model::{
    ChatMessage, MessageImage, ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelTool,
    ModelToolCall, StopReason,
};
