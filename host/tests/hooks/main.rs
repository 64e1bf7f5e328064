//! The hook bridges end to end: the real agent loop, the real `Bash`, real
//! shell hooks written to temp files, and only the model scripted.
//!
//! - [`vectors`]: every recorded Claude Code and Codex vector, one
//!   data-driven test per dialect that reports every difference at once;
//!   what cannot be reproduced is the table in [`skips`].
//! - [`bridge`]: one named test per bridge behaviour the loop must get
//!   right (vetoes, delegation, rewrites, cwd, dispose, Stop loops, halts).
//! - [`codex_subagent`]: Codex's sub-agents (`spawn_agent`, `wait_agent`)
//!   and their SubagentStart/SubagentStop hooks through the loop.
//! - [`support`], [`script`], [`unify`]: the host, the hook script, and
//!   placeholder matching.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // tests fail loudly by design

mod bg_vectors;
mod bridge;
mod codex_subagent;
mod handler_options;
mod interrupt;
#[path = "../agent_loop/probe.rs"]
mod probe;
mod rewake;
mod ripgrep_order;
mod script;
mod skips;
mod slash;
mod slash_commands;
mod socket_transport;
mod support;
mod unify;
mod vectors;
mod worktree_vectors;
