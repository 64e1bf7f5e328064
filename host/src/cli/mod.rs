//! The everyday commands. This module (and only it) prints to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod acp;
mod check;
mod prompt;
mod serve;
mod sessions;

pub(crate) use acp::{AcpArgs, acp};
pub(crate) use check::check;
pub(crate) use prompt::{PromptArgs, prompt};
pub(crate) use serve::serve;
pub(crate) use sessions::{sessions_list, sessions_repair, sessions_show};

use std::path::Path;
use std::sync::Arc;

use dsh_host::agent::{Agent, AgentOptions};
use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost};

/// Exit code of a command refused because another dsh process has the
/// session open (holds its log's lock).
pub(crate) const EXIT_IN_USE: u8 = 4;

/// Logs go to stderr, colored only on a terminal (editors and journald
/// read them raw); `DSH_LOG` overrides the level.
pub(crate) fn init_tracing(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DSH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// A loaded host: the manifest, its plugins and an agent over them.
pub(crate) struct Booted {
    pub(crate) manifest: Manifest,
    pub(crate) host: PluginHost,
    pub(crate) agent: Arc<Agent>,
}

/// Reads the manifest, applies every plugin and starts an agent. Plugin
/// problems are logged as warnings and do not stop the command.
pub(crate) fn boot(config: &Path, runtime: &tokio::runtime::Runtime) -> Result<Booted, String> {
    let manifest = Manifest::load(config).map_err(|e| e.to_string())?;
    // Private from the start: plugins may write under it too.
    dsh_host::session::create_state_dir(&manifest.state_dir).map_err(|e| e.to_string())?;
    let core = HostCore::new(manifest.state_dir.clone(), runtime.handle().clone());
    let options = AgentOptions {
        mcp_servers: manifest.mcp_servers.clone(),
        ..AgentOptions::default()
    };
    let agent = Agent::new(core.clone(), &manifest.state_dir, options);
    let mut host = PluginHost::new(core, manifest.path.clone());
    // Each problem is already logged as a warning (with its plugin) on stderr.
    runtime.block_on(async { host.load_manifest(&manifest) });
    Ok(Booted {
        manifest,
        host,
        agent,
    })
}
