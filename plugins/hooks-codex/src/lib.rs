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
//! | PreCompact / PostCompact | `agent/compact` / `agent/compacted` (API 1.5) |
//! | SessionEnd | `agent/session-end` |
//! | Interrupt | `agent/turn-end` (reason `aborted`) |
//! | SubagentStart | `subagent/start` |
//! | SubagentStop | a sub-agent's `agent/turn-continuation` (instead of Stop) |
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
pub mod discover;
pub mod events;
pub mod hook_trust;
pub mod output;
pub mod spill;
pub mod tool;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dsh_hook_protocol::{HookHost, PluginHost};
use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::{
    CompactInput, CompactedInput, ContinuationDecision, ContinuationInput, Host, ModelRequestInput,
    Next, Plugin, PostExecuteInput, PostToolDecision, PreToolDecision, PromptDecision,
    PromptSubmitInput, SessionEndInput, SessionStartInput, SubagentInfo, ToolCall, TurnEndInput,
};

pub use config::{CodexHook, Config, ConfigPaths};

/// The Codex hook bridge.
pub struct CodexBridge {
    host: Arc<dyn HookHost>,
    /// The hooks resolved when the bridge was applied.
    initial: Vec<CodexHook>,
    /// Where each session's hooks come from ([`discover`]).
    discovery: discover::Discovery,
    /// Each session's hooks as resolved at its last turn start.
    resolved: Mutex<HashMap<String, Arc<discover::Resolution>>>,
    /// What each session was last told about hooks that did not run for
    /// want of trust.
    noticed: Mutex<HashMap<String, String>>,
    model: String,
    env: std::collections::BTreeMap<String, String>,
    /// Where over-long hook texts are saved whole ([`spill`]).
    hook_outputs_dir: std::path::PathBuf,
    /// Codex's tool-output budget, for block messages.
    tool_output_tokens: usize,
    /// Each running sub-agent's main-session transcript, by its session id
    /// (from `subagent/start` to `subagent/end`).
    subagents: Mutex<HashMap<String, serde_json::Value>>,
    /// The host offers `spawn_agent`: SubagentStart/SubagentStop run.
    spawn_agent: bool,
}

impl CodexBridge {
    /// Loads the configured hook files and reports every problem through
    /// `host` (`dsh check` lists them), with no trust record: project
    /// files run only under `trusted_prefixes`.
    pub fn new(config: Config, host: Arc<dyn HookHost>) -> Self {
        Self::with_state_dir(config, host, None)
    }

    /// As [`CodexBridge::new`], with the trust record of `state_dir`. The
    /// hooks are resolved once here for this process's folder, so `dsh
    /// check` run in a project lists what is wrong with its files.
    pub fn with_state_dir(
        config: Config,
        host: Arc<dyn HookHost>,
        state_dir: Option<std::path::PathBuf>,
    ) -> Self {
        let discovery = discover::Discovery::new(&config, state_dir);
        let here = std::env::current_dir().unwrap_or_default();
        let (first, problems) = discovery.check(&here);
        for problem in problems {
            host.report_problem(problem);
        }
        if !config.spawn_agent {
            for problem in events::subagent::unfired(&first.hooks) {
                host.report_problem(problem);
            }
        }
        CodexBridge {
            host,
            initial: first.hooks.clone(),
            discovery,
            resolved: Mutex::new(HashMap::new()),
            noticed: Mutex::new(HashMap::new()),
            model: config.model,
            env: config.env,
            hook_outputs_dir: config
                .hook_outputs_dir
                .map(std::path::PathBuf::from)
                .unwrap_or_else(spill::default_dir),
            tool_output_tokens: config.tool_output_tokens,
            subagents: Mutex::new(HashMap::new()),
            spawn_agent: config.spawn_agent,
        }
    }

    fn resolve_now(&self, session: &dsh_plugin_api::SessionRef) -> discover::Resolution {
        let host = self.host.clone();
        self.discovery
            .resolve(std::path::Path::new(session.cwd.as_str()), &mut |p| {
                host.warn(&format!("hooks-codex: {p}"))
            })
    }

    /// Resolves `session`'s hooks from the files as they are now (a turn
    /// starts, or the session does) and keeps them for its other points.
    pub(crate) fn refresh(
        &self,
        session: &dsh_plugin_api::SessionRef,
    ) -> Arc<discover::Resolution> {
        let resolution = Arc::new(self.resolve_now(session));
        if let Ok(mut m) = self.resolved.lock() {
            m.insert(session.session_id.to_string(), resolution.clone());
        }
        resolution
    }

    /// The hooks `session` runs: as resolved at its turn's start, or now
    /// for a session the bridge has not seen start.
    pub(crate) fn hooks_for(
        &self,
        session: &dsh_plugin_api::SessionRef,
    ) -> Arc<discover::Resolution> {
        let known = self
            .resolved
            .lock()
            .ok()
            .and_then(|m| m.get(session.session_id.as_str()).cloned());
        known.unwrap_or_else(|| Arc::new(self.resolve_now(session)))
    }

    /// Tells the session's user which project hooks were skipped for want
    /// of trust and which hooks for want of review (a `user/notice`
    /// record), once per change.
    pub(crate) fn notice_untrusted(
        &self,
        session: &dsh_plugin_api::SessionRef,
        resolution: &discover::Resolution,
    ) {
        let Ok(mut noticed) = self.noticed.lock() else {
            return;
        };
        let mut parts = Vec::new();
        if !resolution.skipped.is_empty() {
            parts.push(dsh_hook_protocol::trust::untrusted_notice(
                "Codex",
                &resolution.project,
                &resolution.skipped,
            ));
        }
        if !resolution.unreviewed.is_empty() {
            parts.push(discover::unreviewed_notice(
                &resolution.project,
                &resolution.unreviewed,
            ));
        }
        if parts.is_empty() {
            noticed.remove(session.session_id.as_str());
            return;
        }
        let text = parts.join("\n");
        if noticed.get(session.session_id.as_str()) == Some(&text) {
            return;
        }
        noticed.insert(session.session_id.to_string(), text.clone());
        self.host.warn(&format!(
            "hooks-codex: session {}: {text}",
            session.session_id
        ));
        let record =
            dsh_plugin_api::notice::UserNotice::new(text.as_str(), "hooks-codex plugin").record();
        if let Err(e) = self.host.append_record(&session.session_id, &record) {
            self.host.warn(&format!(
                "hooks-codex: notice for session {} dropped: {e}",
                session.session_id
            ));
        }
    }

    /// Forgets a closing session.
    fn forget(&self, session_id: &str) {
        if let Ok(mut m) = self.resolved.lock() {
            m.remove(session_id);
        }
        if let Ok(mut m) = self.noticed.lock() {
            m.remove(session_id);
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

    /// The hooks resolved when the bridge was applied, in Codex's order.
    pub fn hooks(&self) -> &[CodexHook] {
        &self.initial
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
        let resolve = |p: &str| host.resolve_path(p).to_string_lossy().into_owned();
        config.hook_outputs_dir = config.hook_outputs_dir.as_deref().map(resolve);
        config.codex_home = config.codex_home.as_deref().map(resolve);
        config.trusted_prefixes = config.trusted_prefixes.iter().map(|p| resolve(p)).collect();
        let state_dir = std::path::PathBuf::from(host.state_dir());
        // Codex gives the model every hook's context (SessionStart,
        // UserPromptSubmit, PreToolUse, PostToolUse) as a developer
        // message; an older host keeps it user-role.
        if let Err(e) = host.set_context_role("developer") {
            host.warn(format!("hooks-codex: context stays user-role: {e}"));
        }
        Ok(CodexBridge::with_state_dir(
            config,
            Arc::new(PluginHost::new(host.clone())),
            Some(state_dir),
        ))
    }

    async fn session_start(self: Arc<Self>, input: RArc<SessionStartInput>) -> Result<(), String> {
        self.on_session_start(&input).await;
        Ok(())
    }

    async fn session_end(self: Arc<Self>, input: RArc<SessionEndInput>) -> Result<(), String> {
        self.on_session_end(&input).await;
        self.forget(&input.session.session_id);
        Ok(())
    }

    async fn turn_end(self: Arc<Self>, input: RArc<TurnEndInput>) -> Result<(), String> {
        self.on_turn_end(&input).await;
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

    async fn compact(
        self: Arc<Self>,
        input: RArc<CompactInput>,
        next: Next<PromptDecision>,
    ) -> Result<PromptDecision, String> {
        self.on_pre_compact(&input, || next.run()).await
    }

    async fn compacted(self: Arc<Self>, input: RArc<CompactedInput>) -> Result<(), String> {
        self.on_post_compact(&input).await;
        Ok(())
    }

    async fn turn_continuation(
        self: Arc<Self>,
        input: RArc<ContinuationInput>,
        next: Next<ContinuationDecision>,
    ) -> Result<ContinuationDecision, String> {
        if input.session.parent_session_id.is_some() {
            return self.on_subagent_stop(&input, || next.run()).await;
        }
        self.on_stop(&input, || next.run()).await
    }

    async fn subagent_start(self: Arc<Self>, input: RArc<SubagentInfo>) -> Result<(), String> {
        self.on_subagent_start(&input).await;
        Ok(())
    }

    async fn subagent_end(self: Arc<Self>, input: RArc<SubagentInfo>) -> Result<(), String> {
        self.on_subagent_end(&input).await;
        Ok(())
    }
}
