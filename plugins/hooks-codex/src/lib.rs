//! `hooks-codex`: runs a user's unmodified Codex command hooks
//! (`hooks.json` or the `[hooks]` tables of `config.toml`) on dsh's seams,
//! with the semantics recorded from the real CLI
//! (`tests/fixtures/vectors/codex`).
//!
//! | Codex event | dsh seam |
//! |---|---|
//! | SessionStart | `agent/session-start` |
//! | UserPromptSubmit | `agent/prompt-submit` |
//! | PreToolUse | `tools/pre-execute` |
//! | PostToolUse | `tools/post-execute` |
//! | Stop | `agent/turn-continuation` |
//! | SessionEnd | `agent/session-end` |
//!
//! The bridge is config parse ([`config`]) + payload build + outcome map
//! (one module per event in [`events`], Codex's strict output schemas in
//! [`output`], the shell-tool mapping in [`tool`], Codex's cap on hook text
//! the model reads in [`spill`]); running hooks, the
//! exit-code contract, matchers and records are `dsh-hook-protocol`'s.
//! Every entry point is public and takes the rest of the waterfall as a
//! closure, so the bridge can be driven without a host.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod config;
pub mod events;
pub mod output;
pub mod spill;
pub mod tool;

use std::sync::Arc;

use dsh_hook_protocol::{HookHost, PluginHost};
use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::{
    ContinuationDecision, ContinuationInput, Host, ModelRequestInput, Next, Plugin,
    PostExecuteInput, PostToolDecision, PreToolDecision, PromptDecision, PromptSubmitInput,
    SessionEndInput, SessionStartInput, ToolCall,
};

pub use config::{CodexHook, Config, ConfigPaths};

/// The Codex hook bridge.
pub struct CodexBridge {
    host: Arc<dyn HookHost>,
    hooks: Vec<CodexHook>,
    model: String,
    env: std::collections::BTreeMap<String, String>,
    /// Where over-long hook texts are saved whole ([`spill`]).
    hook_outputs_dir: std::path::PathBuf,
    /// Codex's tool-output budget, for block messages.
    tool_output_tokens: usize,
}

impl CodexBridge {
    /// Loads the configured hook files (once) and reports every problem
    /// through `host` (`dsh check` lists them).
    pub fn new(config: Config, host: Arc<dyn HookHost>) -> Self {
        let loaded = config::load(&config);
        for problem in loaded.problems {
            host.report_problem(problem);
        }
        CodexBridge {
            host,
            hooks: loaded.hooks,
            model: config.model,
            env: config.env,
            hook_outputs_dir: config
                .hook_outputs_dir
                .map(std::path::PathBuf::from)
                .unwrap_or_else(spill::default_dir),
            tool_output_tokens: config.tool_output_tokens,
        }
    }

    /// `text` as Codex lets the model read it ([`spill::cap`]): whole, or
    /// cut with its whole saved to a file.
    pub(crate) fn cap(&self, session_id: &str, text: String) -> String {
        match spill::cap(&self.hook_outputs_dir, session_id, text) {
            Ok(text) => text,
            Err((text, why)) => {
                self.host.warn(&format!("hooks-codex: {why}"));
                text
            }
        }
    }

    /// The hooks loaded at start, in Codex's discovery order.
    pub fn hooks(&self) -> &[CodexHook] {
        &self.hooks
    }
}

impl Plugin for CodexBridge {
    type Config = Config;
    const NAME: &'static str = "hooks-codex";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const REQUIRES: &'static [&'static str] = &[dsh_hook_protocol::runner::PROCESS_RUNNER];

    fn apply(host: &Host, mut config: Config) -> Result<Self, String> {
        // Relative paths in the manifest resolve against its folder.
        config.config_path = config.config_path.resolved(|p| host.resolve_path(p));
        config.hook_outputs_dir = config
            .hook_outputs_dir
            .as_deref()
            .map(|p| host.resolve_path(p).to_string_lossy().into_owned());

        Ok(CodexBridge::new(
            config,
            Arc::new(PluginHost::new(host.clone())),
        ))
    }

    async fn session_start(self: Arc<Self>, input: RArc<SessionStartInput>) -> Result<(), String> {
        self.on_session_start(&input).await;
        Ok(())
    }

    async fn session_end(self: Arc<Self>, input: RArc<SessionEndInput>) -> Result<(), String> {
        self.on_session_end(&input).await;
        Ok(())
    }

    async fn model_request(self: Arc<Self>, input: RArc<ModelRequestInput>) -> Result<(), String> {
        self.on_model_request(&input).await;
        Ok(())
    }

    async fn prompt_submit(
        self: Arc<Self>,
        input: RArc<PromptSubmitInput>,
        next: Next<PromptDecision>,
    ) -> Result<PromptDecision, String> {
        self.on_prompt_submit(&input, || next.run()).await
    }

    async fn pre_execute(
        self: Arc<Self>,
        call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        self.on_pre_tool_use(&call, || next.run()).await
    }

    async fn post_execute(
        self: Arc<Self>,
        input: RArc<PostExecuteInput>,
        next: Next<PostToolDecision>,
    ) -> Result<PostToolDecision, String> {
        self.on_post_tool_use(&input, || next.run()).await
    }

    async fn turn_continuation(
        self: Arc<Self>,
        input: RArc<ContinuationInput>,
        next: Next<ContinuationDecision>,
    ) -> Result<ContinuationDecision, String> {
        self.on_stop(&input, || next.run()).await
    }
}
