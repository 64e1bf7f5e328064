//! `hooks-claude`: runs a user's unmodified Claude Code command hooks on
//! dsh's seams, with the semantics recorded from the real CLI
//! (`tests/fixtures/vectors/claude`).
//!
//! | Claude Code event | dsh seam |
//! |---|---|
//! | SessionStart | `agent/session-start` |
//! | Setup (`dsh prompt --init`, `--maintenance`) | `agent/session-start`, first, once per process ([`events::setup`]) |
//! | UserPromptSubmit | `agent/prompt-submit` |
//! | PreToolUse | `tools/pre-execute` |
//! | PostToolUse / PostToolUseFailure | `tools/post-execute` (ok / `is_error`) |
//! | Stop | `agent/turn-continuation` |
//! | SubagentStart / SubagentStop | `subagent/start` / the subagent's `agent/turn-continuation` |
//! | SessionEnd | `agent/session-end` |
//! | CwdChanged | `agent/cwd-changed` |
//! | InstructionsLoaded (the memory files) | `agent/session-start`, after SessionStart ([`events::instructions_loaded`]); a `Read`'s nested memory: `agent/turn-continuation`, after PostToolBatch ([`events::nested_memory`]) |
//! | ConfigChange | `tools/post-execute`, before PostToolUse, when a settings file changed ([`events::config_change`]) |
//! | FileChanged | `tools/post-execute`, before PostToolUse, when a file SessionStart's `watchPaths` named changed ([`events::file_changed`]) |
//! | PostToolBatch, MessageDisplay | `agent/turn-continuation`, before Stop ([`events::batch`]) |
//! | PermissionRequest | `tools/permission-request` (API 1.4) |
//! | PreCompact / PostCompact | `agent/compact` / `agent/compacted` (API 1.5); each run's line for `/compact`'s output as a `command/display` record (API 1.7) |
//! | UserPromptExpansion (project slash commands, [`slash`]) | `agent/prompt-submit`, before UserPromptSubmit ([`events::user_prompt_expansion`]) |
//! | TaskCreated / TaskCompleted | the `task-events` service the bridge provides, which `tools-tasks` asks ([`events::tasks`]) |
//! | SessionStart `compact` | `agent/session-start` with source `compact` |
//! | WorktreeCreate / WorktreeRemove | inside `EnterWorktree` / `ExitWorktree remove` (the `tools-worktree` built-in), through the `worktree-hooks` service ([`events::worktree`]) |
//! | Elicitation / ElicitationResult | `mcp/elicitation` (API 1.10): Elicitation first; without its answer, the rest of the chain, then ElicitationResult ([`events::elicitation`]) |
//! | StopFailure (with MessageDisplay) | `agent/turn-end` ending `error` on a model error (a subagent's: without MessageDisplay) |
//!
//! The bridge is config parse ([`config`]) + payload build + outcome map
//! (one module per event in [`events`]); running hooks, the exit-code
//! contract, matchers, merging and records are `dsh-hook-protocol`'s. Every
//! entry point is public ([`ClaudeBridge::on_pre_tool_use`], ...) and takes
//! the rest of the waterfall as a closure, so the bridge can be driven
//! without a host. Model-facing texts (deny reasons, `<system-reminder>`
//! blocks, `Stop hook feedback:`) are rendered here byte for byte as Claude
//! Code renders them, long hook texts replaced as Claude Code replaces them
//! ([`persist`]); where they land is the host's business.
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
pub mod memory;
pub mod options;
pub mod output_schema;
pub mod permissions;
pub mod persist;
pub mod rewake;
pub mod rules;
pub mod session_env;
pub mod skill;
pub mod slash;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use dsh_hook_protocol::trust::Skipped;
use dsh_hook_protocol::{HookHost, PluginHost};
use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::{
    CompactInput, CompactedInput, ContinuationDecision, ContinuationInput, CwdChangedInput,
    ElicitationDecision, ElicitationInput, Host, Next, PermissionDecision, PermissionRequestInput,
    Plugin, PostExecuteInput, PostToolDecision, PreToolDecision, PromptDecision, PromptSubmitInput,
    SessionEndInput, SessionStartInput, SubagentInfo, ToolCall, TurnEndInput,
};

pub use config::{ClaudeHook, Config, ConfigPaths};

/// The Claude Code hook bridge.
pub struct ClaudeBridge {
    host: Arc<dyn HookHost>,
    /// The hooks resolved when the bridge was applied.
    initial: Vec<ClaudeHook>,
    /// Where each session's hooks come from ([`discover`]).
    discovery: discover::Discovery,
    /// Each session's hooks as resolved at its last turn start.
    resolved: Mutex<HashMap<String, Arc<discover::Resolution>>>,
    /// The untrusted files each session was last told about.
    noticed: Mutex<HashMap<String, Vec<Skipped>>>,
    project_dir: Option<String>,
    effort: Option<String>,
    /// The model name SessionStart reports after a compaction.
    model: Option<String>,
    /// The gateway StopFailure's server-error text names.
    api_gateway: Option<String>,
    /// Where long hook texts are saved ([`persist`]); `None`: beside the
    /// session's log.
    hook_outputs_dir: Option<std::path::PathBuf>,
    /// Where they go for a session without a log path.
    fallback_outputs_dir: std::path::PathBuf,
    /// Folder of `CLAUDE_ENV_FILE`.
    session_env_dir: std::path::PathBuf,
    /// Variables added to every hook.
    env: std::collections::BTreeMap<String, String>,
    /// When each allowed tool call left pre-execute, for `duration_ms`.
    started: Mutex<HashMap<String, Instant>>,
    /// The last prompt id each session ran: Claude Code still reports it in
    /// SessionEnd, after the turn (when the host's snapshot has none).
    last_prompt: Mutex<HashMap<String, String>>,
    /// Each session's calls of the step running now, for PostToolBatch.
    batches: Mutex<HashMap<String, Vec<serde_json::Value>>>,
    /// Where each session that has moved (`cd`) started: its
    /// `CLAUDE_PROJECT_DIR` when none is configured.
    project_dirs: Mutex<HashMap<String, String>>,
    /// Whether `asyncRewake` hooks run in the background ([`rewake`]).
    async_rewake: rewake::AsyncRewake,
    /// Each running subagent, by its session id: what its SubagentStop
    /// hooks are told when its turn is about to end ([`events::subagent`]).
    subagents: Mutex<HashMap<String, events::subagent::Running>>,
    /// Claude Code's text for the model error that ended a subagent's
    /// turn, by its Agent call's id, until that call's post-execute.
    failed_agents: Mutex<HashMap<String, String>>,
    /// What each session's settings files held when last looked at
    /// ([`events::config_change`]).
    settings_seen: Mutex<HashMap<String, Vec<events::config_change::Seen>>>,
    /// The files each session's SessionStart hooks asked to watch, with
    /// what they held when last looked at ([`events::file_changed`]).
    watched_files: Mutex<HashMap<String, events::file_changed::Watched>>,
    /// Whether sessions load Claude Code's memory files ([`memory`]).
    memory: bool,
    /// The home whose `.claude/CLAUDE.md` is the user's memory file.
    home: std::path::PathBuf,
    /// The move each session's worktree tool announced last, not yet
    /// seen on `agent/cwd-changed` ([`events::worktree`]).
    worktree_moves: Mutex<HashMap<String, String>>,
    /// The bridge itself, for the `worktree-hooks` service (set when a seam
    /// first hands the bridge its `Arc`).
    me: Arc<OnceLock<Weak<ClaudeBridge>>>,
    /// The memory files each session has loaded or read
    /// ([`events::nested_memory`]).
    memory_loaded: Mutex<HashMap<String, std::collections::HashSet<std::path::PathBuf>>>,
    /// InstructionsLoaded payloads waiting for their step's end.
    nested_pending: Mutex<HashMap<String, Vec<serde_json::Value>>>,
    /// The Setup trigger to run before the first SessionStart.
    setup: Option<events::setup::SetupTrigger>,
    /// Whether Setup has run in this process.
    setup_fired: std::sync::atomic::AtomicBool,
}

impl ClaudeBridge {
    /// Loads the configured hook files and reports every problem through
    /// `host` (`dsh check` lists them), with no trust record: project
    /// files run only under `trusted_prefixes`.
    pub fn new(config: Config, host: Arc<dyn HookHost>) -> Self {
        Self::with_state_dir(config, host, None)
    }

    /// As [`ClaudeBridge::new`], with the trust record of `state_dir`. The
    /// hooks are resolved once here for the configured `project_dir` (else
    /// this process's folder), so `dsh check` run in a project lists what is
    /// wrong with its files; sessions resolve their own at each turn.
    pub fn with_state_dir(
        config: Config,
        host: Arc<dyn HookHost>,
        state_dir: Option<std::path::PathBuf>,
    ) -> Self {
        let discovery = discover::Discovery::new(&config, state_dir);
        let home = config
            .home
            .clone()
            .or_else(|| std::env::var("HOME").ok())
            .map(std::path::PathBuf::from)
            .unwrap_or_default();
        let memory = config.memory.unwrap_or(config.discover);
        let here = config
            .project_dir
            .clone()
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let (first, problems) = discovery.check(&here);
        for problem in problems {
            host.report_problem(problem);
        }
        if !config.task_tools {
            for problem in events::tasks::unfired(&first.hooks) {
                host.report_problem(problem);
            }
        }
        if !config.worktree_tools {
            let events = [events::worktree::CREATE, events::worktree::REMOVE];
            for problem in
                events::unfired_without(&first.hooks, &events, "worktree tools", "tools-worktree")
            {
                host.report_problem(problem);
            }
        }
        ClaudeBridge {
            host,
            initial: first.hooks.clone(),
            discovery,
            resolved: Mutex::new(HashMap::new()),
            noticed: Mutex::new(HashMap::new()),
            project_dir: config.project_dir,
            effort: config.effort,
            model: config.model,
            api_gateway: config.api_gateway,
            hook_outputs_dir: config.hook_outputs_dir.map(std::path::PathBuf::from),
            fallback_outputs_dir: std::env::temp_dir().join("dsh").join("hook-outputs"),
            session_env_dir: config
                .session_env_dir
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| std::env::temp_dir().join("dsh").join("session-env")),
            env: config.env,
            started: Mutex::new(HashMap::new()),
            last_prompt: Mutex::new(HashMap::new()),
            project_dirs: Mutex::new(HashMap::new()),
            batches: Mutex::new(HashMap::new()),
            async_rewake: config.async_rewake,
            subagents: Mutex::new(HashMap::new()),
            failed_agents: Mutex::new(HashMap::new()),
            settings_seen: Mutex::new(HashMap::new()),
            watched_files: Mutex::new(HashMap::new()),
            memory,
            home,
            worktree_moves: Mutex::new(HashMap::new()),
            me: Arc::new(OnceLock::new()),
            memory_loaded: Mutex::new(HashMap::new()),
            nested_pending: Mutex::new(HashMap::new()),
            setup: config.setup,
            setup_fired: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Keeps a weak handle on the bridge for the services that run its
    /// hooks (`worktree-hooks`, `task-events`), once a seam hands it over.
    fn remember(self: &Arc<Self>) {
        self.me.get_or_init(|| Arc::downgrade(self));
    }

    /// Resolves `session`'s hooks from the files as they are now (a turn
    /// starts, or the session does) and keeps them for the session's other
    /// hook points; what is wrong with a changed file is logged.
    pub(crate) fn refresh(
        &self,
        session: &dsh_plugin_api::SessionRef,
    ) -> Arc<discover::Resolution> {
        let project = std::path::PathBuf::from(self.project_dir_of(session));
        let host = self.host.clone();
        let resolution = Arc::new(
            self.discovery
                .resolve(&project, &mut |p| host.warn(&format!("hooks-claude: {p}"))),
        );
        if let Ok(mut m) = self.resolved.lock() {
            m.insert(session.session_id.to_string(), resolution.clone());
        }
        resolution
    }

    /// The hooks `session` runs: as resolved at its turn's start, or now
    /// for a session the bridge has not seen start (a subagent's).
    pub(crate) fn hooks_for(
        &self,
        session: &dsh_plugin_api::SessionRef,
    ) -> Arc<discover::Resolution> {
        let known = self
            .resolved
            .lock()
            .ok()
            .and_then(|m| m.get(session.session_id.as_str()).cloned());
        known.unwrap_or_else(|| {
            let project = std::path::PathBuf::from(self.project_dir_of(session));
            let host = self.host.clone();
            Arc::new(
                self.discovery
                    .resolve(&project, &mut |p| host.warn(&format!("hooks-claude: {p}"))),
            )
        })
    }

    /// Tells the session's user which project hooks were skipped for want
    /// of trust (a `user/notice` record, which ACP shows as an agent
    /// message), once per set of files.
    pub(crate) fn notice_untrusted(
        &self,
        session: &dsh_plugin_api::SessionRef,
        resolution: &discover::Resolution,
    ) {
        let Ok(mut noticed) = self.noticed.lock() else {
            return;
        };
        let before = noticed.get(session.session_id.as_str());
        if resolution.skipped.is_empty() || before == Some(&resolution.skipped) {
            if resolution.skipped.is_empty() {
                noticed.remove(session.session_id.as_str());
            }
            return;
        }
        noticed.insert(session.session_id.to_string(), resolution.skipped.clone());
        let text = dsh_hook_protocol::trust::untrusted_notice(
            "Claude Code",
            &resolution.project,
            &resolution.skipped,
        );
        self.host.warn(&format!(
            "hooks-claude: session {}: {text}",
            session.session_id
        ));
        let record =
            dsh_plugin_api::notice::UserNotice::new(text.as_str(), "hooks-claude plugin").record();
        if let Err(e) = self.host.append_record(&session.session_id, &record) {
            self.host.warn(&format!(
                "hooks-claude: notice for session {} dropped: {e}",
                session.session_id
            ));
        }
    }

    /// The `permissions` blocks of the settings layers of a session started
    /// in `cwd`, lowest precedence first (for the permission engine).
    pub fn permission_layers(&self, cwd: &std::path::Path) -> Vec<permissions::PermissionLayer> {
        self.discovery.permission_layers(cwd)
    }

    /// Remembers where a session is when the bridge first hears of it
    /// (session start) or, for a session started before the bridge, where
    /// it was before its first move.
    pub(crate) fn note_project_dir(&self, session: &dsh_plugin_api::SessionRef, old_cwd: &str) {
        if let Ok(mut m) = self.project_dirs.lock() {
            m.entry(session.session_id.to_string())
                .or_insert_with(|| old_cwd.to_string());
        }
    }

    /// `CLAUDE_PROJECT_DIR` for `session`: the configured one, else where
    /// the session (or the parent of a subagent) started, which stays put
    /// when a `cd` moves the session.
    pub(crate) fn project_dir_of(&self, session: &dsh_plugin_api::SessionRef) -> String {
        if let Some(dir) = &self.project_dir {
            return dir.clone();
        }
        let known = self.project_dirs.lock().ok().and_then(|m| {
            session
                .parent_session_id
                .as_ref()
                .into_option()
                .and_then(|p| m.get(p.as_str()))
                .or_else(|| m.get(session.session_id.as_str()))
                .cloned()
        });
        known.unwrap_or_else(|| session.cwd.to_string())
    }

    /// Forgets a closing session's project folder and hooks.
    fn forget_project_dir(&self, session_id: &str) {
        if let Ok(mut m) = self.project_dirs.lock() {
            m.remove(session_id);
        }
        if let Ok(mut m) = self.resolved.lock() {
            m.remove(session_id);
        }
        if let Ok(mut m) = self.noticed.lock() {
            m.remove(session_id);
        }
    }

    /// The hooks resolved when the bridge was applied, in config order.
    pub fn hooks(&self) -> &[ClaudeHook] {
        &self.initial
    }

    fn mark_started(&self, call_id: &str) {
        if let Ok(mut m) = self.started.lock() {
            m.insert(call_id.to_string(), Instant::now());
        }
    }

    /// Remembers the prompt a session is running, for SessionEnd.
    pub(crate) fn note_prompt(&self, session: &dsh_plugin_api::SessionRef) {
        if session.prompt_id.is_empty() {
            return;
        }
        if let Ok(mut m) = self.last_prompt.lock() {
            m.insert(
                session.session_id.to_string(),
                session.prompt_id.to_string(),
            );
        }
    }

    /// Forgets a closing session's last prompt id, returning it.
    fn take_last_prompt(&self, session_id: &str) -> Option<String> {
        self.last_prompt
            .lock()
            .ok()
            .and_then(|mut m| m.remove(session_id))
    }

    fn take_duration_ms(&self, call_id: &str) -> u64 {
        let start = self.started.lock().ok().and_then(|mut m| m.remove(call_id));
        start.map_or(0, |s| {
            u64::try_from(s.elapsed().as_millis()).unwrap_or(u64::MAX)
        })
    }
}

/// Claude Code's `Skill` tool ([`skill`]) and its input check. A second
/// bridge in one manifest finds the names taken and offers none.
fn register_skill(host: &Host, me: &Arc<OnceLock<Weak<ClaudeBridge>>>) {
    use dsh_plugin_api::services::input_check;
    let bridge = |me: &Arc<OnceLock<Weak<ClaudeBridge>>>| me.get().and_then(Weak::upgrade);
    let check = me.clone();
    let served = host.provide_service(
        &input_check::service_name(skill::TOOL_NAME),
        move |method: String, args: serde_json::Value| {
            let answer = match (method.as_str(), bridge(&check)) {
                (input_check::METHOD_CHECK, Some(b)) => {
                    serde_json::from_value::<input_check::CheckRequest>(args)
                        .map(|req| b.check_skill(&req))
                        .map_err(|e| format!("Skill: bad check request: {e}"))
                }
                (input_check::METHOD_CHECK, None) => Ok(serde_json::json!({})),
                (other, _) => Err(format!("Skill: no method `{other}`")),
            };
            async move { answer }
        },
    );
    let run = me.clone();
    let registered = served.and_then(|()| {
        host.register_tool(
            skill::spec(),
            move |call: RArc<dsh_plugin_api::ToolCall>,
                  _signal: dsh_plugin_api::ffi::AbortSignalBox| {
                let bridge = bridge(&run);
                async move {
                    match bridge {
                        Some(b) => b.run_skill(&call),
                        None => dsh_plugin_api::ToolResult::error(
                            "Skill: the Claude bridge has not started a session yet",
                        ),
                    }
                }
            },
        )
    });
    if let Err(e) = registered {
        host.warn(format!("hooks-claude: no Skill tool: {e}"));
    }
}

impl Plugin for ClaudeBridge {
    type Config = Config;
    const NAME: &'static str = "hooks-claude";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const REQUIRES: &'static [&'static str] = &[dsh_hook_protocol::runner::PROCESS_RUNNER];

    fn apply(host: &Host, mut config: Config) -> Result<Self, String> {
        // Relative paths in the manifest resolve against its folder.
        config = config.resolved(|p| host.resolve_path(p));
        let resolve = |p: &std::path::Path| host.resolve_path(p).to_string_lossy().into_owned();
        config.session_env_dir = Some(match config.session_env_dir.as_deref() {
            Some(p) => resolve(p.as_ref()),
            None => std::path::Path::new(&host.state_dir())
                .join("session-env")
                .to_string_lossy()
                .into_owned(),
        });

        let state_dir = std::path::PathBuf::from(host.state_dir());
        let bridge = ClaudeBridge::with_state_dir(
            config,
            Arc::new(PluginHost::new(host.clone())),
            Some(state_dir),
        );
        // WorktreeCreate / WorktreeRemove for the worktree tools. A second
        // bridge in one manifest runs without it (the first one serves).
        let me = bridge.me.clone();
        let served = host.provide_service(
            dsh_plugin_api::services::worktree_hooks::SERVICE,
            move |method: String, args: serde_json::Value| {
                let weak = me.get().cloned().unwrap_or_default();
                events::worktree::serve(weak, method, args)
            },
        );
        if let Err(e) = served {
            host.warn(format!("hooks-claude: no worktree-hooks service: {e}"));
        }
        // TaskCreated / TaskCompleted: the task tools ask this service. The
        // bridge answers once a seam call has handed it over (every tool
        // call's pre-execute does, before the tool runs); a second bridge
        // in one manifest finds the name taken and runs no such hooks.
        let this = bridge.me.clone();
        let provided = host.provide_service(
            dsh_plugin_api::services::task_events::SERVICE,
            move |method, args| {
                let this = this.get().and_then(std::sync::Weak::upgrade);
                async move {
                    match this {
                        Some(bridge) => bridge.on_task_event(&method, args).await,
                        None => Ok(serde_json::json!({})),
                    }
                }
            },
        );
        if let Err(e) = provided {
            host.warn(format!(
                "hooks-claude: TaskCreated and TaskCompleted hooks of this instance will not run: {e}"
            ));
        }
        register_skill(host, &bridge.me);
        Ok(bridge)
    }

    async fn session_start(self: Arc<Self>, input: RArc<SessionStartInput>) -> Result<(), String> {
        self.remember();
        self.on_setup(&input).await;
        self.on_session_start(&input).await;
        self.on_instructions_loaded(&input).await;
        Ok(())
    }

    async fn session_end(self: Arc<Self>, input: RArc<SessionEndInput>) -> Result<(), String> {
        self.on_session_end(&input).await;
        self.forget_project_dir(&input.session.session_id);
        self.forget_memory(&input.session.session_id);
        Ok(())
    }

    async fn cwd_changed(self: Arc<Self>, input: RArc<CwdChangedInput>) -> Result<(), String> {
        self.on_cwd_changed(&input).await;
        Ok(())
    }

    async fn prompt_submit(
        self: Arc<Self>,
        input: RArc<PromptSubmitInput>,
        next: Next<PromptDecision>,
    ) -> Result<PromptDecision, String> {
        self.remember();
        self.on_prompt_submit(&input, || next.run()).await
    }

    async fn pre_execute(
        self: Arc<Self>,
        call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        self.remember();
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

    async fn permission_request(
        self: Arc<Self>,
        input: RArc<PermissionRequestInput>,
        next: Next<PermissionDecision>,
    ) -> Result<PermissionDecision, String> {
        self.on_permission_request(&input, || next.run()).await
    }

    async fn subagent_start(self: Arc<Self>, input: RArc<SubagentInfo>) -> Result<(), String> {
        self.on_subagent_start(&input).await;
        Ok(())
    }

    async fn subagent_end(self: Arc<Self>, input: RArc<SubagentInfo>) -> Result<(), String> {
        self.on_subagent_stop(&input).await;
        Ok(())
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

    async fn turn_end(self: Arc<Self>, input: RArc<TurnEndInput>) -> Result<(), String> {
        self.on_turn_end(&input).await;
        Ok(())
    }
    async fn elicitation(
        self: Arc<Self>,
        input: RArc<ElicitationInput>,
        next: Next<ElicitationDecision>,
    ) -> Result<ElicitationDecision, String> {
        let elicited = self.on_elicitation(&input, || next.run()).await?;
        if elicited.notify {
            // Not waited for, as Claude Code (S250-notification); without a
            // runtime to start them on, run before the answer goes.
            let answer = elicited.answer.clone();
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(async move { self.notify_answer(&input, &answer).await });
                }
                Err(_) => self.notify_answer(&input, &answer).await,
            }
        }
        Ok(elicited.answer)
    }
}
