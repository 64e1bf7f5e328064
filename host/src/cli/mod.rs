//! The everyday commands. This module (and only it) prints to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod acp;
mod check;
mod prompt;
mod serve;
mod sessions;
mod trust;

pub(crate) use acp::{AcpArgs, acp};
pub(crate) use check::check;
pub(crate) use prompt::{PromptArgs, prompt};
pub(crate) use serve::serve;
pub(crate) use sessions::{
    sessions_export, sessions_import, sessions_list, sessions_repair, sessions_show, store_migrate,
};
pub(crate) use trust::{TrustAction, trust};

use std::path::Path;
use std::sync::Arc;

use dsh_host::agent::{Agent, AgentOptions};
use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_host::session::{FileStore, LogError, SessionStore};

/// Exit code of a command refused because another dsh process has the
/// session open (holds its log's lock).
pub(crate) const EXIT_IN_USE: u8 = 4;

/// Logs go to stderr, colored only on a terminal (editors and journald
/// read them raw); `DSH_LOG` overrides the level.
pub(crate) fn init_tracing(level: &str) {
    let _ = dsh_host::telemetry::init(level, &Default::default());
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
    let store = open_store(&manifest).map_err(|e| e.to_string())?;
    let core = HostCore::new(manifest.state_dir.clone(), runtime.handle().clone());
    let agent = Agent::with_store(
        core.clone(),
        &manifest.state_dir,
        store,
        AgentOptions::default(),
    );
    let mut host = PluginHost::new(core, manifest.path.clone());
    // Each problem is already logged as a warning (with its plugin) on stderr.
    runtime.block_on(async { host.load_manifest(&manifest) });
    Ok(Booted {
        manifest,
        host,
        agent,
    })
}

/// The store the manifest names (`state:`, `DSH_STORE_URL`): the JSONL
/// files under `state_dir`, or PostgreSQL, connected and migrated (an
/// unreachable database or a bad URL is an error here, at start).
pub(crate) fn open_store(
    manifest: &dsh_host::config::Manifest,
) -> Result<Arc<dyn SessionStore>, LogError> {
    match &manifest.store {
        dsh_host::config::StoreConfig::Files => Ok(Arc::new(FileStore::new(&manifest.state_dir))),
        dsh_host::config::StoreConfig::Postgres {
            url,
            retry,
            connect_timeout,
            pool_size,
        } => {
            let store = dsh_host::session::postgres::PgStore::connect(
                &dsh_host::session::postgres::PgOptions {
                    url: url.clone(),
                    retry: *retry,
                    connect_timeout: *connect_timeout,
                    pool_size: *pool_size,
                },
            )?
            .with_transcript_dir(manifest.state_dir.join("sessions"));
            // Private, as with files: the Claude bridge keeps long hook
            // output there.
            dsh_host::session::create_state_dir(&manifest.state_dir.join("sessions"))?;
            tracing::info!(store = %store.shown(), "sessions are kept in PostgreSQL");
            Ok(Arc::new(store))
        }
    }
}
