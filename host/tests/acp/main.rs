//! ACP end to end: a real ACP client (the SDK's `Client.v1()` side) against
//! `AcpServer::serve` over in-memory pipes, and against the `dsh acp`
//! binary over stdio. Real loop, real `Bash`, scripted model.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[path = "../agent_loop/probe.rs"]
mod probe;
mod schema;
mod status;
mod support;
mod terminal_client;

mod approval;
mod binary;
mod compact;
mod daemon;
mod editor;
mod history;
mod lifecycle;
mod mcp;
mod mcp_elicit;
mod modes;
mod notices;
mod prompts;
mod robustness;
mod task_plan;
mod terminal;
