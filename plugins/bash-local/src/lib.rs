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

pub mod background;
pub mod bash;
pub mod cwd;
pub mod exec;
pub mod large;
pub mod prelude;
pub mod runner;
pub mod sandbox;
pub mod service;
pub mod silent;
pub mod task_tools;
pub mod terminal;
mod text_service;

use std::sync::Arc;

use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::ffi::AbortSignalBox;
use dsh_plugin_api::seams::{ModelRequestInput, SessionEndInput};
use dsh_plugin_api::{ConfigProblem, Host, Plugin, PluginModuleRef, ToolCall, plugin_module};
use serde::{Deserialize, Serialize};

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
    /// Cap on the Bash output kept in `tool_response.stdout`, in UTF-16
    /// units as Claude Code counts (its head is kept); a successful command
    /// that printed more is saved whole and the model reads a preview
    /// ([`large`]).
    pub max_output_bytes: usize,
    /// Also offer Codex's shell tools `exec_command` and `write_stdin`
    /// ([`exec`]): for sessions whose hooks are Codex's.
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
    /// Where background `Bash` jobs write their output
    /// (`<dir>/<project slug>/<session>/tasks/<id>.output`, as Claude Code
    /// lays them out under its temp folder); default: `<temp>/dsh-<uid>`.
    pub background_dir: Option<std::path::PathBuf>,
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
            background_dir: None,
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

/// The plugin. Everything it does is registered in [`Plugin::apply`]; it
/// keeps the background jobs ([`background`]) and Codex's running
/// commands ([`exec::store`]), which end with their session or with it.
pub struct BashLocal {
    jobs: Arc<background::Jobs>,
    /// Codex's shell tools and the processes they keep, when offered.
    exec: Option<Arc<exec::ExecContext>>,
}

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
        let jobs = Arc::new(background::Jobs::new(
            config
                .background_dir
                .clone()
                .unwrap_or_else(background::Jobs::default_root),
        ));
        let config = Arc::new(config);
        let codex_exec = config.codex_exec_command;
        let exec_env_allow = config.env_allow.clone();
        let exec_env = config.codex_exec_env.clone();

        text_service::provide(host, config.env_allow.clone())?;

        let tool_host = host.clone();
        let tool_jobs = jobs.clone();
        host.register_tool(
            bash::spec(),
            move |call: RArc<ToolCall>, signal: AbortSignalBox| {
                let config = config.clone();
                let host = tool_host.clone();
                let jobs = tool_jobs.clone();
                async move { bash::run_call(&call, &config, &host, &jobs, signal).await }
            },
        )?;
        // Claude Code's tools for background shells, offered with `Bash`.
        let output_jobs = jobs.clone();
        host.register_tool(
            task_tools::output_spec(),
            move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                let jobs = output_jobs.clone();
                async move { task_tools::output(&call, &jobs).await }
            },
        )?;
        let stop_jobs = jobs.clone();
        host.register_tool(
            task_tools::stop_spec(),
            move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                let jobs = stop_jobs.clone();
                async move { task_tools::stop(&call, &jobs).await }
            },
        )?;
        task_tools::provide_checks(host, &jobs)?;
        jobs.provide(host)?;
        // Claude Code's refusals of malformed input, before any hook.
        dsh_plugin_api::sdk::claude_input::provide_check(
            host,
            bash::TOOL_NAME,
            bash::claude_schema(),
            dsh_plugin_api::sdk::claude_input::builtin_lenient(bash::TOOL_NAME),
        )?;
        let exec = if codex_exec {
            let ctx = Arc::new(exec::ExecContext {
                env_allow: exec_env_allow,
                env: exec_env,
                sandbox,
                processes: exec::store::ExecSessions::default(),
            });
            let run_ctx = ctx.clone();
            host.register_tool(
                exec::spec(),
                move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                    let ctx = run_ctx.clone();
                    async move { exec::run(&call, &ctx).await }
                },
            )?;
            let write_ctx = ctx.clone();
            host.register_tool(
                exec::write_stdin::spec(),
                move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                    let ctx = write_ctx.clone();
                    async move { exec::write_stdin::run(&call, &ctx).await }
                },
            )?;
            Some(ctx)
        } else {
            None
        };
        Ok(BashLocal { jobs, exec })
    }

    async fn session_end(self: Arc<Self>, input: RArc<SessionEndInput>) -> Result<(), String> {
        self.jobs.end_session(&input.session.session_id).await;
        if let Some(exec) = &self.exec {
            exec.processes.end_session(&input.session.session_id);
        }
        Ok(())
    }

    async fn model_request(self: Arc<Self>, input: RArc<ModelRequestInput>) -> Result<(), String> {
        self.jobs.request_sent(&input.session.session_id);
        Ok(())
    }
}

/// The plugin's root module, for the host's built-in table.
pub fn module() -> PluginModuleRef {
    plugin_module::<BashLocal>()
}
