//! The everyday commands. This module (and only it) prints to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod acp;
mod approval;
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

/// Permissions given on the command line (`dsh prompt`).
#[derive(Debug, Clone, Default)]
pub(crate) struct CliPermissions {
    /// `--permission-mode`.
    pub(crate) mode: Option<dsh_host::permissions::PermissionMode>,
    /// `--allowedTools`, one rule each.
    pub(crate) allow: Vec<String>,
    /// `--disallowedTools`, one rule each.
    pub(crate) deny: Vec<String>,
}

impl CliPermissions {
    fn is_empty(&self) -> bool {
        self.mode.is_none() && self.allow.is_empty() && self.deny.is_empty()
    }
}

/// Splits `--allowedTools` values as Claude Code does (see
/// [`dsh_host::permissions::split_rule_list`]).
pub(crate) fn split_rules(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| dsh_host::permissions::split_rule_list(v))
        .collect()
}

/// The permissions sessions start with: the manifest's block, then the
/// command line's mode and rules over it. Nothing given: unmanaged.
fn session_permissions(
    manifest: &Manifest,
    cli: &CliPermissions,
) -> Result<dsh_host::permissions::PermissionState, String> {
    use dsh_host::permissions::{RuleLayer, RuleSource};
    let mut state = manifest
        .permissions
        .as_ref()
        .map(|p| p.state())
        .unwrap_or_default();
    if !cli.is_empty() {
        state.managed = true;
        state.mode = cli.mode.unwrap_or(state.mode);
        let mut layer = RuleLayer::new(RuleSource::Cli);
        layer.allow = cli.allow.clone();
        layer.deny = cli.deny.clone();
        state.rules.add_layer(&layer).map_err(|e| e.to_string())?;
    }
    Ok(state)
}

/// A loaded host: the manifest, its plugins and an agent over them.
pub(crate) struct Booted {
    pub(crate) manifest: Manifest,
    pub(crate) host: PluginHost,
    pub(crate) agent: Arc<Agent>,
}

/// Reads the manifest, applies every plugin and starts an agent. Plugin
/// problems are logged as warnings and do not stop the command.
pub(crate) fn boot(
    config: &Path,
    runtime: &tokio::runtime::Runtime,
    cli: &CliPermissions,
) -> Result<Booted, String> {
    boot_as(config, runtime, cli, Entrypoint::Editor)
}

/// Who answers this process's permission questions, as Claude Code tells
/// hooks through `CLAUDE_CODE_ENTRYPOINT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entrypoint {
    /// Nobody (`dsh prompt` off a terminal): `sdk-cli`, as `claude -p`
    /// says.
    Sdk,
    /// Editors (`dsh serve`, `dsh acp`): `sdk-cli` too, and sessions that
    /// take prompts as Claude Code's streaming-input sessions do, so
    /// `asyncRewake` hooks run in the background (recorded, S83).
    Editor,
    /// The user at a terminal (`dsh prompt` on one): `cli`, as the
    /// interactive CLI says (recorded, S33).
    Terminal,
}

/// [`boot`] for a process whose questions `entrypoint` answers: on a
/// terminal, the `hooks-claude` entries hand hooks
/// `CLAUDE_CODE_ENTRYPOINT=cli` (unless their `env` names another value);
/// for editors they background `asyncRewake` hooks (unless their
/// `async_rewake` says otherwise).
pub(crate) fn boot_as(
    config: &Path,
    runtime: &tokio::runtime::Runtime,
    cli: &CliPermissions,
    entrypoint: Entrypoint,
) -> Result<Booted, String> {
    boot_with(config, runtime, cli, entrypoint, None)
}

/// `dsh prompt`'s Setup trigger: `--init` / `--init-only` or
/// `--maintenance`.
pub(crate) fn setup_of(
    init: bool,
    maintenance: bool,
) -> Option<dsh_hooks_claude::events::setup::SetupTrigger> {
    use dsh_hooks_claude::events::setup::SetupTrigger;
    match (init, maintenance) {
        (true, _) => Some(SetupTrigger::Init),
        (false, true) => Some(SetupTrigger::Maintenance),
        (false, false) => None,
    }
}

/// [`boot_as`], the `hooks-claude` entries also told to run their Setup
/// hooks with `setup` before the first session starts (`dsh prompt
/// --init`).
pub(crate) fn boot_with(
    config: &Path,
    runtime: &tokio::runtime::Runtime,
    cli: &CliPermissions,
    entrypoint: Entrypoint,
    setup: Option<dsh_hooks_claude::events::setup::SetupTrigger>,
) -> Result<Booted, String> {
    let mut manifest = Manifest::load(config).map_err(|e| e.to_string())?;
    for entry in &mut manifest.plugins {
        if matches!(&entry.plugin, dsh_host::config::PluginRef::Builtin(n) if n == "hooks-claude") {
            if let Some(trigger) = setup {
                dsh_hooks_claude::config::setup_trigger(&mut entry.config, trigger);
            }
            match entrypoint {
                Entrypoint::Terminal => {
                    dsh_hooks_claude::config::terminal_entrypoint(&mut entry.config)
                }
                Entrypoint::Editor => dsh_hooks_claude::config::editor_sessions(&mut entry.config),
                Entrypoint::Sdk => {}
            }
        }
    }
    let permissions = session_permissions(&manifest, cli)?;
    // Private from the start: plugins may write under it too.
    dsh_host::session::create_state_dir(&manifest.state_dir).map_err(|e| e.to_string())?;
    let store = open_store(&manifest).map_err(|e| e.to_string())?;
    let core = HostCore::new(manifest.state_dir.clone(), runtime.handle().clone());
    let options = AgentOptions {
        permissions,
        settings_rules: claude_settings_rules(&manifest),
        mcp_servers: manifest.mcp_servers.clone(),
        mcp_framing: manifest.mcp_framing,
        compaction: manifest.compaction,
        codex_subagents: manifest.codex_subagents,
        ..AgentOptions::default()
    };
    let agent = Agent::with_store(core.clone(), &manifest.state_dir, store, options);
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

/// The permission rules of the Claude settings files the manifest's
/// `hooks-claude` entry reads (its `config_path` files, and with `discover:
/// true` each session folder's settings), as every session's rule layers.
/// `None` without such an entry, or when its config does not parse (the
/// plugin reports that itself).
fn claude_settings_rules(manifest: &Manifest) -> Option<dsh_host::agent::SettingsRules> {
    let (_, config) = claude_config(manifest)?;
    Some(dsh_host::agent::SettingsRules::claude(
        config,
        manifest.state_dir.clone(),
    ))
}

/// The enabled `hooks-claude` entry's id and config, its paths resolved
/// against the manifest's folder.
fn claude_config(manifest: &Manifest) -> Option<(String, dsh_hooks_claude::config::Config)> {
    let entry = manifest.plugins.iter().find(|e| {
        !e.disabled && e.plugin == dsh_host::config::PluginRef::Builtin("hooks-claude".into())
    })?;
    let config: dsh_hooks_claude::config::Config =
        serde_json::from_value(entry.config.clone()).ok()?;
    let dir = manifest
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Some((entry.id.clone(), config.resolved(|p| dir.join(p))))
}
