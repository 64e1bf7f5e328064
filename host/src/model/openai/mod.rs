//! `model-openai`: a model provider for any OpenAI-compatible
//! chat-completions endpoint (DeepSeek by default; OpenAI, vLLM, llama.cpp,
//! Ollama, OpenRouter and the like by `base_url`).
//!
//! # Config
//!
//! | key | default | meaning |
//! | --- | --- | --- |
//! | `base_url` | `https://api.deepseek.com` | requests go to `{base_url}/chat/completions`; a trailing `/` is dropped, a `/v1` kept |
//! | `model` | `deepseek-chat` | the `model` field of each request |
//! | `api_key_env` | `DEEPSEEK_API_KEY` | the *name* of the environment variable holding the key |
//! | `max_retries` | 3 | retries after a 429, a 5xx or a connection error |
//! | `retry_base_ms` | 500 | first backoff; doubles per retry, capped at 30 s; `Retry-After` seconds win |
//! | `request_timeout_s` | 300 | longest wait for the response to start or for the next chunk of it |
//! | `max_tokens` | none | sent when set |
//! | `temperature` | none | sent when set |
//!
//! The key is read from the environment on every call, never at load, so
//! the plugin applies (and `dsh check` passes) without one; a call without
//! it fails the turn with an error naming the variable. The key is never
//! logged, formatted, written to disk, or echoed back in an error.
//!
//! # Messages
//!
//! The service's history maps onto OpenAI roles one to one, except:
//! - user-role text that is not the user's is tagged with its source, so
//!   the model can weigh it: plugin context becomes
//!   `<context source="plugin:NAME">\nTEXT\n</context>` and steering
//!   `<steering source="plugin:NAME">\nTEXT\n</steering>` (`source="user"`
//!   when the user steered); any other source kind gives
//!   `<context source="KIND">`;
//! - steering in several parts (several hooks' blocks, plugin API 1.6)
//!   is one user message with a `text` content part per part, each tagged
//!   as above;
//! - a plugin's system-role context (plugin API 1.7: Claude Code's
//!   background-task notifications) is `{"role": "system", "content":
//!   TEXT}` at its place in `messages`, untagged;
//! - a plugin's developer-role context (plugin API 1.8: Codex's hook
//!   context) is sent in the role `developer_role` says: `system`
//!   (default), `developer`, or `user` (tagged as context);
//! - a failed tool result's content is prefixed with `Error: `;
//! - tool-call arguments go out as JSON strings, as OpenAI requires.
//!
//! # Answers
//!
//! Requests ask for `stream: true`; each text delta is sent live to the
//! session's subscribers as `{"type": "stream/text", "text": DELTA}` (not
//! persisted: the whole text lands in the log's `assistant/message`). A
//! plain JSON body from a server that ignores `stream` is accepted too.
//! `finish_reason` `stop` → `end_turn`, `tool_calls` → `tool_use`,
//! `length` → `max_tokens`. Reasoning content (`delta.reasoning_content`)
//! is sent live as `{"type": "stream/thought", "text": DELTA}` (ACP
//! `agent_thought_chunk`), never persisted nor sent back. Requests ask for
//! `stream_options.include_usage`; with `context_window` set, the usage
//! becomes `{"type": "stream/usage", "used": TOKENS, "size": WINDOW}` (ACP
//! `usage_update`).
//!
//! Files: [`convert`] (request body), [`stream`] (SSE and replies),
//! [`client`] (HTTP and retries), [`error`].

pub mod client;
pub mod convert;
pub mod error;
pub mod stream;

use std::sync::Arc;

use dsh_plugin_api::{Host, Plugin};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::wire::ModelError;
pub use client::OpenAiClient;
pub use error::{ApiKey, OpenAiError};
use stream::Live;

/// `model-openai` config. See the module docs for each key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OpenAiConfig {
    /// Base URL; `/chat/completions` is appended.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Name of the environment variable holding the API key.
    pub api_key_env: String,
    /// Retries after 429, 5xx or a connection error.
    pub max_retries: u32,
    /// First backoff in milliseconds; doubles per retry.
    pub retry_base_ms: u64,
    /// Longest wait, in seconds, for the response or its next chunk.
    pub request_timeout_s: u64,
    /// `max_tokens` sent with each request.
    pub max_tokens: Option<u32>,
    /// `temperature` sent with each request.
    pub temperature: Option<f64>,
    /// The model's context window in tokens; when set, the editor is told
    /// how much of it each request used (ACP `usage_update`).
    pub context_window: Option<u64>,
    /// The role developer-role context (Codex's hook context, plugin API
    /// 1.8) is sent in: `system` (the default: what OpenAI reads
    /// `developer` as, and what every OpenAI-compatible server takes),
    /// `developer` (as Codex sends it; OpenAI takes it, DeepSeek and many
    /// local servers refuse it), or `user` (tagged like other context).
    pub developer_role: DeveloperRole,
}

/// How [`OpenAiConfig::developer_role`] sends developer-role context.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DeveloperRole {
    /// `{"role": "system", ...}`.
    #[default]
    System,
    /// `{"role": "developer", ...}`.
    Developer,
    /// A user message tagged `<context source="plugin:NAME">`.
    User,
}

impl DeveloperRole {
    /// The wire role.
    pub fn as_str(self) -> &'static str {
        match self {
            DeveloperRole::System => "system",
            DeveloperRole::Developer => "developer",
            DeveloperRole::User => "user",
        }
    }
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: "https://api.deepseek.com".into(),
            model: "deepseek-chat".into(),
            api_key_env: "DEEPSEEK_API_KEY".into(),
            max_retries: 3,
            retry_base_ms: 500,
            request_timeout_s: 300,
            max_tokens: None,
            temperature: None,
            context_window: None,
            developer_role: DeveloperRole::default(),
        }
    }
}

/// The OpenAI-compatible model plugin.
pub struct OpenAiModel;

impl Plugin for OpenAiModel {
    type Config = OpenAiConfig;
    const NAME: &'static str = "model-openai";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn apply(host: &Host, config: OpenAiConfig) -> Result<Self, String> {
        let context_window = config.context_window;
        let client = Arc::new(OpenAiClient::new(config).map_err(|e| e.to_string())?);
        let streams = host.clone();
        super::service::provide(host, move |request, tools| {
            let client = client.clone();
            let host = streams.clone();
            async move {
                let key = client
                    .api_key()
                    .map_err(|e| ModelError::from(e).to_wire())?;
                let session = request.session_id.clone();
                let window = context_window;
                let on_delta = |live: Live<'_>| {
                    let event = match live {
                        Live::Text(text) => json!({"type": "stream/text", "text": text}),
                        Live::Thought(text) => json!({"type": "stream/thought", "text": text}),
                        // The context in use against the window, when the
                        // window is known (`context_window`).
                        Live::Usage(usage) => match window {
                            Some(size) => json!({
                                "type": "stream/usage",
                                "used": usage.prompt_tokens + usage.completion_tokens,
                                "size": size,
                            }),
                            None => return,
                        },
                    };
                    // Live events are best-effort: the reply carries the text whole.
                    if let Err(e) = host.stream_event(&session, &event) {
                        tracing::debug!(session = %session, "stream event dropped: {e}");
                    }
                };
                client
                    .complete_with(&key, &request, &tools, on_delta)
                    .await
                    .map_err(|e| ModelError::from(e).to_wire())
            }
        })?;
        Ok(OpenAiModel)
    }
}
