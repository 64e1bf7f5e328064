//! The test suite's table of contents (see `tests/all.rs`).

mod bash_tool;
mod credentials;
mod cwd;
mod exec_sessions;
mod plugin;
mod runner;
mod service;
mod support;
