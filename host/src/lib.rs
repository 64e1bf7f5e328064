//! dsh-host: the agent-harness daemon's library.
//!
//! Subsystems, each in its own folder, meeting through handles passed in
//! explicitly:
//! - [`config`]: the `cordis.yml` manifest;
//! - [`plugins`]: loading built-ins and `.so` files, contexts, dispose;
//! - [`seams`]: the seam bus and its dispatch shapes;
//! - [`model`]: the `model` service contract and the scripted provider;
//! - [`acp`]: the Agent Client Protocol server editors talk to;
//! - [`telemetry`]: OpenTelemetry spans and Prometheus metrics (opt-in).
//! - [`mcp`]: MCP servers whose tools join a session's tools;
//! - [`tasks`]: the `tools-tasks` built-in (`TaskCreate`, `TaskGet`, `TaskList`,
//!   `TaskUpdate`: Claude Code's task list).
//! - [`todo`]: the `tools-todo` built-in (`TodoWrite`, the model's plan).
//! - [`worktree`]: the `tools-worktree` built-in (`EnterWorktree`, `ExitWorktree`).

pub mod acp;
pub mod agent;
pub mod config;
pub mod daemon;
pub mod hooks;
pub mod mcp;
pub mod model;
pub mod permissions;
pub mod plugins;
pub mod seams;
pub mod session;
pub mod tasks;
pub mod telemetry;
pub mod todo;
pub mod worktree;
