//! `bash-local`: the built-in plugin that runs local processes.
//!
//! It owns the one place in dsh where child processes are spawned for
//! others, and offers it two ways:
//! - the service [`service::SERVICE_NAME`] (`process-runner`), method
//!   `run`, JSON in / JSON out, used by the hook bridges and by dynamic
//!   plugins (which have no reactor of their own);
//! - the Claude-shaped tool [`bash::TOOL_NAME`] (`Bash`) for the model,
//!   which runs in the session's editor's terminal when it offers one
//!   ([`terminal`]).
//!
//! Both sit on [`runner`], a plain async API other crates and tests may
//! call directly. The shell tools can run their commands in Codex's
//! sandbox ([`sandbox`]: `sandbox_mode`). The plugin runs inside the host process and uses the
//! host's tokio runtime.

pub mod bash;
pub mod cwd;
pub mod exec;
pub mod exec_output;
pub mod prelude;
pub mod runner;
pub mod sandbox;
pub mod service;
pub mod silent;
pub mod terminal;
mod text_service;

use std::sync::Arc;

use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::ffi::AbortSignalBox;
use dsh_plugin_api::{ConfigProblem, Host, Plugin, PluginModuleRef, ToolCall, plugin_module};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use runner::server::{Server, ServerSpec, spawn_server};
pub use runner::{RunAnswer, RunRequest, run, run_cancellable};

/// `bash-local` config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Credential-like environment variables that children may still
    /// inherit, by exact name (the rule is [`runner::env`]: names with KEY,
    /// SECRET, TOKEN, PASSWORD, PASSWD or WEBHOOK, `*_PAT`, `*_DSN`, and
    /// `*_URL`/`*_URI` values with userinfo).
    pub env_allow: Vec<String>,
    /// Cap, in bytes, on the Bash output the model reads (the tail is kept).
    pub max_output_bytes: usize,
    /// Also offer Codex's shell tool `exec_command` ([`exec`]): for
    /// sessions whose hooks are Codex's.
    pub codex_exec_command: bool,
    /// Variables set for `exec_command`'s processes (Codex's
    /// `shell_environment_policy.set`), e.g. the `HOME` whose profile its
    /// login shell reads.
    pub codex_exec_env: std::collections::BTreeMap<String, String>,
    /// The shell the Bash tool runs commands with (`<shell> -c <command>`);
    /// `/bin/bash` by default, as Claude Code runs them (its messages name
    /// the shell: `/bin/bash: -c: line 2: syntax error ...`).
    pub shell: String,
    /// Codex's sandbox for `Bash` and `exec_command` ([`sandbox`]):
    /// `read-only`, `workspace-write`, or `danger-full-access` (no
    /// sandbox, the default).
    pub sandbox_mode: sandbox::SandboxMode,
    /// Codex's `[sandbox_workspace_write]`: `writable_roots`,
    /// `network_access`, `exclude_tmpdir_env_var`, `exclude_slash_tmp`.
    pub sandbox_workspace_write: sandbox::WorkspaceWrite,
    /// The `dsh` binary whose `sandbox-exec` builds the sandbox (default:
    /// this process's own executable, which is `dsh`).
    pub sandbox_helper: Option<std::path::PathBuf>,
    /// Where a `Bash` session whose folder and root were deleted under it
    /// recovers to, as Claude Code recovers to the user's home folder
    /// (S236-deleted-under-session-keep); default: `$HOME`.
    pub home: Option<std::path::PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            env_allow: Vec::new(),
            max_output_bytes: 30_000,
            codex_exec_command: false,
            codex_exec_env: Default::default(),
            shell: "/bin/bash".to_string(),
            sandbox_mode: sandbox::SandboxMode::default(),
            sandbox_workspace_write: sandbox::WorkspaceWrite::default(),
            sandbox_helper: None,
            home: None,
        }
    }
}

impl Config {
    /// The sandbox the shell tools run in, `None` without one.
    pub fn sandbox(&self) -> Result<Option<sandbox::Sandbox>, String> {
        sandbox::Sandbox::new(
            self.sandbox_mode,
            &self.sandbox_workspace_write,
            self.sandbox_helper.as_deref(),
        )
    }
}

/// The plugin. Everything it does is registered in [`Plugin::apply`].
pub struct BashLocal;

impl Plugin for BashLocal {
    type Config = Config;
    const NAME: &'static str = "bash-local";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn apply(host: &Host, config: Config) -> Result<Self, String> {
        let sandbox = config.sandbox()?;
        if let Some(sandbox) = &sandbox {
            let here = std::env::current_dir().unwrap_or_else(|_| "/".into());
            if let Err(reason) = sandbox.probe(&here) {
                host.report_problem(ConfigProblem::error(
                    "",
                    "sandbox_mode",
                    format!(
                        "the {} sandbox cannot be built here, so every Bash and exec_command \
                         call fails without running its command: {reason}",
                        sandbox.mode.as_str()
                    ),
                ));
            }
        }
        let config = Arc::new(config);
        let codex_exec = config.codex_exec_command;
        let exec_env_allow = config.env_allow.clone();
        let exec_env = config.codex_exec_env.clone();

        text_service::provide(host, config.env_allow.clone())?;

        let tool_host = host.clone();
        host.register_tool(
            bash::spec(),
            move |call: RArc<ToolCall>, signal: AbortSignalBox| {
                let config = config.clone();
                let host = tool_host.clone();
                async move { bash::run_call(&call, &config, &host, signal).await }
            },
        )?;
        // Claude Code's refusals of malformed input, before any hook.
        dsh_plugin_api::sdk::claude_input::provide_check(
            host,
            bash::TOOL_NAME,
            bash::claude_schema(),
            dsh_plugin_api::sdk::claude_input::builtin_lenient(bash::TOOL_NAME),
        )?;
        if codex_exec {
            let env_allow = exec_env_allow;
            host.register_tool(
                exec::spec(),
                move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                    let env_allow = env_allow.clone();
                    let env = exec_env.clone();
                    let sandbox = sandbox.clone();
                    async move {
                        let args: Value =
                            serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                        let cwd = std::path::Path::new(call.session.cwd.as_str());
                        exec::run(&args, cwd, &env_allow, &env, sandbox.as_ref()).await
                    }
                },
            )?;
        }
        Ok(BashLocal)
    }
}

/// The plugin's root module, for the host's built-in table.
pub fn module() -> PluginModuleRef {
    plugin_module::<BashLocal>()
}
