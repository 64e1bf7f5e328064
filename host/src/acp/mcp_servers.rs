//! The MCP servers an ACP client names in `session/new`/`session/load`, as
//! dsh server specs, and the report of those that failed.
//!
//! dsh takes stdio and streamable HTTP servers (`mcpCapabilities.http`);
//! SSE is refused (not advertised). A refused or failed server is told to
//! the user as an agent message; the session goes on without it.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, McpServer, SessionId, SessionNotification, SessionUpdate,
    TextContent,
};

use super::approval::ClientConnection;
use crate::mcp::{McpError, McpServerSpec, McpTransport, normalize_name};

/// The servers dsh can use, and an error for each one it cannot.
pub(crate) fn specs(servers: &[McpServer]) -> (Vec<McpServerSpec>, Vec<McpError>) {
    let mut specs = Vec::new();
    let mut refused = Vec::new();
    for server in servers {
        match server {
            McpServer::Stdio(s) => specs.push(McpServerSpec {
                name: normalize_name(&s.name),
                transport: McpTransport::Stdio {
                    command: s.command.to_string_lossy().into_owned(),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                },
            }),
            McpServer::Http(h) => specs.push(McpServerSpec {
                name: normalize_name(&h.name),
                transport: McpTransport::Http {
                    url: h.url.clone(),
                    headers: h
                        .headers
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                },
            }),
            McpServer::Sse(s) => refused.push(McpError::Handshake {
                server: normalize_name(&s.name),
                message: "SSE MCP servers are not supported (mcpCapabilities.sse is false)".into(),
            }),
            _ => refused.push(McpError::Handshake {
                server: "?".into(),
                message: "an MCP server of a transport dsh does not know".into(),
            }),
        }
    }
    (specs, refused)
}

/// Tells the user, in `session`, about each server that is not available.
pub(crate) fn report(cx: &ClientConnection, session: &str, failed: &[McpError]) {
    for e in failed {
        let text = format!("{e}; continuing without it.\n");
        let update = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
            TextContent::new(text),
        )));
        if let Err(e) =
            cx.send_notification(SessionNotification::new(SessionId::new(session), update))
        {
            tracing::debug!(session = %session, "MCP failure not reported: {}", e.message);
        }
    }
}
