//! `model-openai` against a local mock server: the client on its own
//! (`client`: streaming, request shape, retries, malformed streams,
//! cancellation) and through the real agent loop and binary (`e2e`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod client;
mod developer_context;
mod e2e;
mod system_context;

use dsh_host::model::openai::OpenAiConfig;
use dsh_host::model::{ChatMessage, ModelRequest};
use serde_json::{Value, json};

/// The key the tests send; no error, log or file may ever contain it.
pub const KEY: &str = "sk-dsh-test-7f3a9c1e5b";

pub const DONE: &str = "data: [DONE]\n\n";

pub fn data(chunk: Value) -> String {
    format!("data: {chunk}\n\n")
}

fn choice(delta: Value, finish: Option<&str>) -> String {
    data(json!({"id": "x", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

/// A chunk with a piece of text.
pub fn text(t: &str) -> String {
    choice(json!({"content": t}), None)
}

/// A chunk with a fragment of tool call `index`.
pub fn call(index: u64, id: Option<&str>, name: Option<&str>, arguments: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": arguments}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    if let Some(name) = name {
        call["function"]["name"] = json!(name);
    }
    choice(json!({"tool_calls": [call]}), None)
}

/// The chunk that ends a choice.
pub fn finish(reason: &str) -> String {
    choice(json!({}), Some(reason))
}

/// Client config for `base_url`, with quick retries.
pub fn config(base_url: &str) -> OpenAiConfig {
    OpenAiConfig {
        base_url: base_url.to_string(),
        model: "mock-model".into(),
        api_key_env: "DSH_TEST_OPENAI_KEY_UNUSED".into(),
        max_retries: 2,
        retry_base_ms: 1,
        request_timeout_s: 20,
        max_tokens: None,
        temperature: None,
        context_window: None,
        developer_role: Default::default(),
    }
}

pub fn request(messages: Vec<ChatMessage>) -> ModelRequest {
    ModelRequest {
        session_id: "s1".into(),
        messages,
        tools: Vec::new(),
    }
}
