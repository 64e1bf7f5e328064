//! A small MCP server on the official SDK's server side (`rmcp`), for the
//! tests: stdio transport, three tools.
//!
//! - `echo {text}`: answers `echo: <text>`;
//! - `fail {text}`: a tool-level error result (`isError`) with the text;
//! - `crash {}`: the process exits while the call is in flight, like a
//!   server that dies mid-call.
//!
//! With `--touch PATH` it creates PATH once it is serving (so a test can
//! see it started), and every `echo` appends its text to `PATH.calls`.
//!
//! With `--http URL_FILE` it serves streamable HTTP on a loopback port
//! instead of stdio and writes its endpoint URL to URL_FILE; there a fourth
//! tool, `header {name}`, answers the value of that request header.
#![allow(clippy::print_stderr)] // a test server reporting its own failure

use std::path::PathBuf;

use rmcp::handler::server::common::Extension;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServiceExt as _, schemars, tool, tool_handler, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct TextArg {
    /// The text.
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct HeaderArg {
    /// The header's name.
    name: String,
}

#[derive(Clone)]
struct Fixture {
    calls: Option<PathBuf>,
    tool_router: ToolRouter<Self>,
}

#[tool_router(router = tool_router)]
impl Fixture {
    #[tool(description = "Echo the text back")]
    fn echo(&self, Parameters(TextArg { text }): Parameters<TextArg>) -> String {
        if let Some(calls) = &self.calls {
            use std::io::Write as _;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(calls)
            {
                let _ = writeln!(f, "{text}");
            }
        }
        format!("echo: {text}")
    }

    #[tool(description = "Always fails with the text")]
    fn fail(&self, Parameters(TextArg { text }): Parameters<TextArg>) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(format!("failed: {text}"))])
    }

    #[tool(description = "The value of a request header (HTTP only)")]
    fn header(
        &self,
        Parameters(HeaderArg { name }): Parameters<HeaderArg>,
        Extension(parts): Extension<http::request::Parts>,
    ) -> String {
        parts
            .headers
            .get(name.as_str())
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    }

    #[tool(description = "Exits the server while the call is in flight")]
    fn crash(&self, Parameters(NoArgs {}): Parameters<NoArgs>) -> String {
        std::process::exit(3)
    }
}

#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for Fixture {}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut touch: Option<PathBuf> = None;
    let mut http: Option<PathBuf> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--touch" => touch = args.next().map(PathBuf::from),
            "--http" => http = args.next().map(PathBuf::from),
            _ => {}
        }
    }
    let fixture = Fixture {
        calls: touch.as_ref().map(|t| t.with_extension("calls")),
        tool_router: Fixture::tool_router(),
    };
    if let Some(url_file) = http {
        serve_http(fixture, &url_file).await;
        return;
    }
    let service = match fixture.serve(rmcp::transport::stdio()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("dsh-mcp-fixture: {e}");
            std::process::exit(1);
        }
    };
    if let Some(t) = &touch {
        let _ = std::fs::write(t, "serving\n");
    }
    let _ = service.waiting().await;
}

/// Streamable HTTP on 127.0.0.1, one task per connection, until killed.
async fn serve_http(fixture: Fixture, url_file: &std::path::Path) {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::StreamableHttpService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(fixture.clone()),
        LocalSessionManager::default().into(),
        Default::default(),
    ));
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("dsh-mcp-fixture: bind: {e}");
            std::process::exit(1);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    // Whole or not at all: the test reads it as soon as it exists.
    let partial = url_file.with_extension("partial");
    let _ = std::fs::write(&partial, format!("http://127.0.0.1:{port}/mcp"));
    let _ = std::fs::rename(&partial, url_file);
    while let Ok((stream, _)) = listener.accept().await {
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
