//! MCP (Model Context Protocol) servers as tool sources, on the official
//! Rust SDK (`rmcp`).
//!
//! A session connects to the manifest's `mcp_servers` plus the servers its
//! ACP client names in `session/new`/`session/load` (a client's server
//! replaces a manifest one of the same name). Each server tool joins the
//! session's tool list as `mcp__<server>__<tool>` (Claude Code's naming, so
//! hook matchers such as `mcp__github__.*` match as in the CLIs) and runs
//! through the same five-phase pipeline as every tool: seams, hooks,
//! guards, approval, log. Registry tools win a name clash.
//!
//! A server that fails to start is reported (the caller shows the user)
//! and the session goes on without it; a server that dies takes its tools
//! out of the list the model sees, and a call in flight ends in an error
//! result naming it. Servers end with their session.
//!
//! It may call: `rmcp`, the plugin API's tool types. It knows nothing of
//! sessions or ACP.

mod elicit;
mod server;
mod spec;
mod tool;

use std::path::Path;
use std::sync::Arc;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RString, RVec};
use dsh_plugin_api::ToolSpec;
use dsh_plugin_api::ffi::ToolBody_TO;

pub use elicit::{ElicitAnswer, ElicitRequest, Elicitor};
pub use server::{McpServer, START_TIMEOUT};
pub use spec::{McpConfigError, McpServerSpec, McpTransport, normalize_name};
pub use tool::{McpFraming, tool_name};

use crate::plugins::services::ToolEntry;
use tool::McpToolBody;

/// Who owns MCP tools in the tool table.
pub const OWNER: &str = "mcp";

/// A server that could not be used, or failed later.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpError {
    /// The server's process could not be started.
    #[error("MCP server `{server}`: cannot start `{command}`: {message}")]
    Spawn {
        /// The server.
        server: String,
        /// Its command.
        command: String,
        /// Why.
        message: String,
    },
    /// The MCP handshake (or listing its tools) failed.
    #[error("MCP server `{server}` failed to start: {message}")]
    Handshake {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// A call failed while the server kept running.
    #[error("MCP server `{server}`: {message}")]
    Call {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// The server stopped (its process exited, its endpoint closed).
    #[error("MCP server `{server}` stopped: {message}")]
    Stopped {
        /// The server.
        server: String,
        /// What the SDK said.
        message: String,
    },
}

impl McpError {
    /// The same error with `detail` (the server's stderr) appended.
    pub fn with_detail(self, detail: String) -> McpError {
        match self {
            McpError::Spawn {
                server,
                command,
                message,
            } => McpError::Spawn {
                server,
                command,
                message: format!("{message} ({detail})"),
            },
            McpError::Handshake { server, message } => McpError::Handshake {
                server,
                message: format!("{message} ({detail})"),
            },
            McpError::Call { server, message } => McpError::Call {
                server,
                message: format!("{message} ({detail})"),
            },
            McpError::Stopped { server, message } => McpError::Stopped {
                server,
                message: format!("{message} ({detail})"),
            },
        }
    }
}

/// The servers one session is connected to, and their tools.
#[derive(Default)]
pub struct McpTools {
    servers: Vec<Arc<McpServer>>,
    tools: Vec<(Arc<McpServer>, ToolEntry)>,
}

impl McpTools {
    /// Connects to every server of `specs` concurrently (a later spec of
    /// the same name replaces an earlier one); the ones that fail are
    /// returned beside the rest.
    /// `framing` is how the model is shown every tool's results;
    /// `elicitor` answers the servers' elicitation requests.
    pub async fn connect(
        specs: &[McpServerSpec],
        cwd: &Path,
        framing: McpFraming,
        elicitor: Option<Arc<dyn Elicitor>>,
    ) -> (McpTools, Vec<McpError>) {
        let mut unique: Vec<&McpServerSpec> = Vec::new();
        for spec in specs {
            unique.retain(|s| s.name != spec.name);
            unique.push(spec);
        }
        let attempts = unique.into_iter().map(|spec| {
            let elicitor = elicitor.clone();
            async move {
                let server = Arc::new(McpServer::connect(spec, cwd, elicitor).await?);
                let tools = server.tools().await?;
                Ok::<_, McpError>((server, tools))
            }
        });
        let mut set = McpTools::default();
        let mut failed = Vec::new();
        for attempt in futures::future::join_all(attempts).await {
            match attempt {
                Ok((server, tools)) => {
                    tracing::info!(server = %server.name, tools = tools.len(), "MCP server connected");
                    for tool in tools {
                        let spec = ToolSpec {
                            name: RString::from(tool_name(&server.name, &tool.name)),
                            description: RString::from(
                                tool.description.as_deref().unwrap_or_default(),
                            ),
                            input_schema: RString::from(
                                serde_json::Value::Object((*tool.input_schema).clone()).to_string(),
                            ),
                            aliases: RVec::new(),
                        };
                        let body = McpToolBody {
                            server: server.clone(),
                            tool: tool.name.to_string(),
                            framing,
                        };
                        let entry = ToolEntry {
                            owner: Arc::from(OWNER),
                            spec,
                            body: Arc::new(ToolBody_TO::from_value(body, TD_Opaque)),
                        };
                        set.tools.push((server.clone(), entry));
                    }
                    set.servers.push(server);
                }
                Err(e) => {
                    tracing::warn!("{e}");
                    failed.push(e);
                }
            }
        }
        (set, failed)
    }

    /// The tools of the servers still running.
    pub fn live_tools(&self) -> Vec<ToolEntry> {
        self.tools
            .iter()
            .filter(|(server, _)| !server.is_closed())
            .map(|(_, entry)| entry.clone())
            .collect()
    }

    /// The connected servers' names.
    pub fn server_names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name.clone()).collect()
    }
}
