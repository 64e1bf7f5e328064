//! One connected MCP server: started (a local process) or reached (a
//! streamable HTTP endpoint) through the official SDK (`rmcp`), its tools
//! listed, its calls made.
//!
//! A stdio server runs in the session's cwd in a process group of its own,
//! with dsh's environment minus credentials (the rule every process dsh
//! starts for others follows, `plugin-api/src/credentials.rs`) plus the
//! variables its entry sets. Its stderr is logged at debug level and its
//! last lines are kept, so a server that fails says why. The process ends
//! when the server is dropped (the SDK kills it).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitationCapability,
    Implementation, Tool,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncBufReadExt as _;

use super::McpError;
use super::elicit::{Client, Elicitor};
use super::spec::{McpServerSpec, McpTransport};

/// How long a server may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of a server's stderr is kept for error reports.
const STDERR_TAIL_BYTES: usize = 2048;

/// A connected server.
pub struct McpServer {
    /// Its (normalized) name.
    pub name: String,
    service: RunningService<RoleClient, Client>,
    stderr_tail: Arc<Mutex<String>>,
}

/// dsh's client for the server `name`: its identity and capabilities
/// (elicitation, as Claude Code declares it), and who answers its
/// elicitations.
fn client(name: &str, elicitor: Option<Arc<dyn Elicitor>>) -> Client {
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = Some(ElicitationCapability::default());
    Client {
        info: ClientConfig::new(
            capabilities,
            Implementation::new("dsh", env!("CARGO_PKG_VERSION")),
        ),
        server: name.to_string(),
        elicitor,
    }
}

/// dsh's environment minus credentials, then `extra`.
fn child_env(command: &mut tokio::process::Command, extra: &[(String, String)]) {
    command.env_clear();
    for (name, value) in std::env::vars_os() {
        let credential = match (name.to_str(), value.to_str()) {
            (Some(n), Some(v)) => dsh_plugin_api::credentials::is_credential(n, v),
            _ => false,
        };
        if !credential {
            command.env(name, value);
        }
    }
    for (name, value) in extra {
        command.env(name, value);
    }
}

fn keep_tail(tail: &Mutex<String>, line: &str) {
    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
    tail.push_str(line);
    tail.push('\n');
    if tail.len() > STDERR_TAIL_BYTES {
        let mut cut = tail.len() - STDERR_TAIL_BYTES;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail.drain(..cut);
    }
}

impl McpServer {
    /// Starts or reaches the server of `spec` and completes the MCP
    /// handshake, within [`START_TIMEOUT`]. Its elicitation requests go to
    /// `elicitor` (none: each is answered `cancel`).
    pub async fn connect(
        spec: &McpServerSpec,
        cwd: &Path,
        elicitor: Option<Arc<dyn Elicitor>>,
    ) -> Result<McpServer, McpError> {
        let name = spec.name.clone();
        let stderr_tail = Arc::new(Mutex::new(String::new()));
        let started = async {
            match &spec.transport {
                McpTransport::Stdio { command, args, env } => {
                    let mut cmd = tokio::process::Command::new(command);
                    cmd.args(args).current_dir(cwd).process_group(0);
                    child_env(&mut cmd, env);
                    let (transport, stderr) = TokioChildProcess::builder(cmd)
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(|e| McpError::Spawn {
                            server: name.clone(),
                            command: command.clone(),
                            message: e.to_string(),
                        })?;
                    if let Some(stderr) = stderr {
                        let tail = stderr_tail.clone();
                        let server = name.clone();
                        tokio::spawn(async move {
                            let mut lines = tokio::io::BufReader::new(stderr).lines();
                            while let Ok(Some(line)) = lines.next_line().await {
                                tracing::debug!(server = %server, "MCP server stderr: {line}");
                                keep_tail(&tail, &line);
                            }
                        });
                    }
                    client(&name, elicitor.clone())
                        .serve(transport)
                        .await
                        .map_err(|e| McpError::Handshake {
                            server: name.clone(),
                            message: e.to_string(),
                        })
                }
                McpTransport::Http { url, headers } => {
                    // https needs a TLS provider; the process-wide one is
                    // ring (installing twice is a no-op error).
                    let _ = rustls::crypto::ring::default_provider().install_default();
                    let mut custom = std::collections::HashMap::new();
                    for (k, v) in headers {
                        let header = header_pair(k, v).ok_or_else(|| McpError::Handshake {
                            server: name.clone(),
                            message: format!("header `{k}` is not a valid HTTP header"),
                        })?;
                        custom.insert(header.0, header.1);
                    }
                    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom);
                    let transport = StreamableHttpClientTransport::from_config(config);
                    client(&name, elicitor.clone())
                        .serve(transport)
                        .await
                        .map_err(|e| McpError::Handshake {
                            server: name.clone(),
                            message: e.to_string(),
                        })
                }
            }
        };
        let service = match tokio::time::timeout(START_TIMEOUT, started).await {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => return Err(with_stderr(e, &stderr_tail)),
            Err(_) => {
                return Err(with_stderr(
                    McpError::Handshake {
                        server: name,
                        message: format!("no answer within {}s", START_TIMEOUT.as_secs()),
                    },
                    &stderr_tail,
                ));
            }
        };
        Ok(McpServer {
            name,
            service,
            stderr_tail,
        })
    }

    /// Every tool the server offers (all pages), within [`START_TIMEOUT`].
    pub async fn tools(&self) -> Result<Vec<Tool>, McpError> {
        match tokio::time::timeout(START_TIMEOUT, self.service.list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(self.failure(e.to_string())),
            Err(_) => Err(self.failure(format!(
                "tools/list not answered within {}s",
                START_TIMEOUT.as_secs()
            ))),
        }
    }

    /// Calls `tool` with `arguments` (a JSON object).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, McpError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        self.service
            .call_tool(params)
            .await
            .map_err(|e| self.failure(e.to_string()))
    }

    /// Whether the connection is gone (the process exited, the endpoint
    /// closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed() || self.service.is_closed()
    }

    fn failure(&self, message: String) -> McpError {
        let e = if self.is_closed() {
            McpError::Stopped {
                server: self.name.clone(),
                message,
            }
        } else {
            McpError::Call {
                server: self.name.clone(),
                message,
            }
        };
        with_stderr(e, &self.stderr_tail)
    }
}

/// A header pair as the HTTP transport takes it.
fn header_pair(name: &str, value: &str) -> Option<(http::HeaderName, http::HeaderValue)> {
    let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
    let value = http::HeaderValue::from_str(value).ok()?;
    Some((name, value))
}

/// `e` with the server's last stderr lines, when it wrote any.
fn with_stderr(e: McpError, tail: &Mutex<String>) -> McpError {
    let tail = tail.lock().unwrap_or_else(|p| p.into_inner());
    let tail = tail.trim();
    if tail.is_empty() {
        return e;
    }
    e.with_detail(format!("stderr: {tail}"))
}
