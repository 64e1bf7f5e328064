//! An MCP server's tool as a dsh tool: `mcp__<server>__<tool>`, run through
//! the whole pipeline like any other.
//!
//! The result keeps the server's answer whole as its structured part
//! (`{content, structuredContent?, isError}`), which is what each hook
//! bridge builds its `tool_response` from (vectors `S75-*`, `C75-*`). The
//! model reads the `structuredContent` as compact JSON when the server gave
//! one, else the text blocks joined by newlines, as both CLIs show it.

use std::sync::Arc;

use abi_stable::std_types::RArc;
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, ToolBody};
use dsh_plugin_api::{ToolCall, ToolResult};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use super::server::McpServer;

/// The dsh name of `tool` on `server`.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// The body of one server tool.
pub(crate) struct McpToolBody {
    pub(crate) server: Arc<McpServer>,
    /// The tool's name on the server.
    pub(crate) tool: String,
}

impl ToolBody for McpToolBody {
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let server = self.server.clone();
        let tool = self.tool.clone();
        async move {
            let arguments = match serde_json::from_str::<Value>(&call.arguments) {
                Ok(Value::Object(map)) => map,
                Ok(Value::Null) => Map::new(),
                _ => {
                    return ToolResult::error(format!(
                        "{}: the arguments must be a JSON object",
                        call.name
                    ));
                }
            };
            if server.is_closed() {
                return ToolResult::error(format!(
                    "MCP server `{}` is not running; its tools are unavailable",
                    server.name
                ));
            }
            tokio::select! {
                answer = server.call(&tool, arguments) => match answer {
                    Ok(result) => tool_result(&result),
                    Err(e) => {
                        tracing::warn!(server = %server.name, tool = %tool, "MCP call failed: {e}");
                        ToolResult::error(e.to_string())
                    }
                },
                () = signal.aborted() => ToolResult::error("the tool call was cancelled"),
            }
        }
        .into_ffi()
    }
}

/// What the model reads, and the structured part the hooks see.
pub(crate) fn tool_result(result: &CallToolResult) -> ToolResult {
    let raw = serde_json::to_value(result).unwrap_or(Value::Null);
    let content = raw.get("content").cloned().unwrap_or_else(|| json!([]));
    let is_error = result.is_error.unwrap_or(false);
    let mut structured = Map::new();
    structured.insert("content".into(), content.clone());
    if let Some(s) = &result.structured_content {
        structured.insert("structuredContent".into(), s.clone());
    }
    structured.insert("isError".into(), is_error.into());
    let text = match &result.structured_content {
        Some(s) => s.to_string(),
        None => content_text(&content),
    };
    let mut out = if is_error {
        ToolResult::error(text)
    } else {
        ToolResult::text(text)
    };
    out = out.with_structured(Value::Object(structured).to_string());
    out
}

/// MCP content blocks as text: text blocks as they are, other blocks named.
fn content_text(content: &Value) -> String {
    let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
    blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => b
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            Some("resource") => b
                .pointer("/resource/text")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| "[resource]".into()),
            Some(kind) => format!(
                "[{kind}{}]",
                b.get("mimeType")
                    .and_then(Value::as_str)
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
            None => "[content]".into(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_results_keep_the_blocks_and_join_the_text() {
        let r = tool_result(&result(json!({
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
        })));
        assert!(!r.is_error);
        assert_eq!(r.text_content(), "a\nb");
        let s: Value = serde_json::from_str(r.structured.as_ref().unwrap()).unwrap();
        assert_eq!(
            s,
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "isError": false})
        );
    }

    #[test]
    fn structured_content_is_what_the_model_reads() {
        let r = tool_result(&result(json!({
            "content": [{"type": "text", "text": "x"}],
            "structuredContent": {"echoed": "x", "n": 1},
            "isError": false
        })));
        assert_eq!(r.text_content(), r#"{"echoed":"x","n":1}"#);
    }

    #[test]
    fn an_error_result_is_an_error() {
        let r = tool_result(&result(json!({
            "content": [{"type": "text", "text": "boom"}], "isError": true
        })));
        assert!(r.is_error);
        assert_eq!(r.text_content(), "boom");
    }
}
