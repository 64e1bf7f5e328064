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
#![allow(clippy::print_stderr)] // a test server reporting its own failure

use std::path::PathBuf;

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
    while let Some(arg) = args.next() {
        if arg == "--touch" {
            touch = args.next().map(PathBuf::from);
        }
    }
    let fixture = Fixture {
        calls: touch.as_ref().map(|t| t.with_extension("calls")),
        tool_router: Fixture::tool_router(),
    };
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
