//! An MCP server's tool as a dsh tool: `mcp__<server>__<tool>`, run through
//! the whole pipeline like any other.
//!
//! The result keeps the server's answer whole as its structured part
//! (`{content, structuredContent?, isError}`), which is what each hook
//! bridge builds its `tool_response` from (vectors `S75-*`, `C75-*`). The
//! model reads the `structuredContent` as compact JSON when the server gave
//! one, else the server's content blocks. With [`McpFraming::Codex`] it reads
//! them as Codex 0.171.0 shows an MCP result (`McpToolOutput::response_payload`
//! in codex-rs `core/src/tools/context.rs`): a first text block
//! `Wall time: <s> seconds\nOutput:` (the call's own time, four decimals)
//! before the content blocks, or `Wall time: ...\nOutput:\n<json>` as one
//! block when there is `structuredContent`.

use std::sync::Arc;

use abi_stable::std_types::RArc;
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, ToolBody};
use dsh_plugin_api::{ContentBlock, ToolCall, ToolResult};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use super::server::McpServer;

/// The dsh name of `tool` on `server`.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// How the model is shown an MCP result: as the server gave it (Claude
/// Code's way, the default) or framed as Codex frames it (manifest
/// `mcp_result_framing: codex`, for sessions whose hooks are Codex's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum McpFraming {
    /// The server's blocks, or its `structuredContent` as JSON.
    #[default]
    Plain,
    /// Codex's `Wall time: ... seconds\nOutput:` header first.
    Codex,
}

impl McpFraming {
    /// The manifest spelling: `plain` or `codex`.
    pub fn parse(name: &str) -> Option<McpFraming> {
        match name {
            "plain" => Some(McpFraming::Plain),
            "codex" => Some(McpFraming::Codex),
            _ => None,
        }
    }
}

/// The body of one server tool.
pub(crate) struct McpToolBody {
    pub(crate) server: Arc<McpServer>,
    /// The tool's name on the server.
    pub(crate) tool: String,
    /// How the model is shown its results.
    pub(crate) framing: McpFraming,
}

impl ToolBody for McpToolBody {
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let server = self.server.clone();
        let tool = self.tool.clone();
        let framing = self.framing;
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
            let started = std::time::Instant::now();
            tokio::select! {
                answer = server.call(&tool, arguments) => match answer {
                    Ok(result) => match framing {
                        McpFraming::Plain => tool_result(&result),
                        McpFraming::Codex => codex_framed(&result, started.elapsed()),
                    },
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

/// Codex's view of a result: its `Wall time` header, then the
/// `structuredContent` as JSON in the same block, or else every content
/// block (text as text, an image as an image, anything else as its JSON
/// text). The structured part is [`tool_result`]'s.
pub(crate) fn codex_framed(result: &CallToolResult, wall: std::time::Duration) -> ToolResult {
    let plain = tool_result(result);
    let header = format!("Wall time: {:.4} seconds\nOutput:", wall.as_secs_f64());
    let mut blocks = Vec::new();
    match result.structured_content.as_ref().filter(|s| !s.is_null()) {
        Some(s) => blocks.push(ContentBlock::text(format!("{header}\n{s}"))),
        None => {
            blocks.push(ContentBlock::text(header));
            let raw = serde_json::to_value(result).unwrap_or(Value::Null);
            for b in raw["content"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                blocks.push(codex_item(b));
            }
        }
    }
    ToolResult {
        content: blocks.into(),
        ..plain
    }
}

/// One MCP content block as Codex hands it to the model.
fn codex_item(block: &Value) -> dsh_plugin_api::ContentBlock_NE {
    let text = block.get("text").and_then(Value::as_str);
    match (block.get("type").and_then(Value::as_str), text) {
        (Some("text"), Some(t)) => ContentBlock::text(t),
        (Some("image"), _) => match block.get("data").and_then(Value::as_str) {
            Some(data) => ContentBlock::image(
                block
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("application/octet-stream"),
                data,
            ),
            None => ContentBlock::text(block.to_string()),
        },
        _ => ContentBlock::text(block.to_string()),
    }
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

    /// Vectors `C75-echo` and `C75-structured`: Codex's header, then the
    /// blocks; or the structured content in the header's block.
    #[test]
    fn codex_framing_is_codexs() {
        let wall = std::time::Duration::from_micros(12_345);
        let r = codex_framed(
            &result(json!({"content": [{"type": "text", "text": "echo: mcp-in"}]})),
            wall,
        );
        let texts: Vec<String> = r
            .content
            .iter()
            .map(|b| match b.as_enum() {
                Ok(ContentBlock::Text { text }) => text.to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            texts,
            ["Wall time: 0.0123 seconds\nOutput:", "echo: mcp-in"]
        );
        let r = codex_framed(
            &result(json!({
                "content": [{"type": "text", "text": "structured: x"}],
                "structuredContent": {"echoed": "x", "n": 1}
            })),
            wall,
        );
        assert_eq!(
            r.text_content(),
            "Wall time: 0.0123 seconds\nOutput:\n{\"echoed\":\"x\",\"n\":1}"
        );
        assert_eq!(r.content.len(), 1);
        // The hooks' structured part is the plain one.
        assert_eq!(
            r.structured,
            tool_result(&result(json!({
                "content": [{"type": "text", "text": "structured: x"}],
                "structuredContent": {"echoed": "x", "n": 1}
            })))
            .structured
        );
        let r = codex_framed(
            &result(json!({"content": [{"type": "text", "text": "boom"}], "isError": true})),
            wall,
        );
        assert!(r.is_error);
        assert_eq!(r.text_content(), "Wall time: 0.0123 seconds\nOutput:\nboom");
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
