//! [`Session`]: one conversation, its log, its inbox and its turn state.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use abi_stable::std_types::{RString, RVec};
use dsh_plugin_api::{ContentBlock, ContentBlock_NE, MessageSource, SessionRef};
use tokio_util::sync::CancellationToken;

use super::feed::{EventFeed, EventStream, FEED_CAPACITY};
use crate::permissions::{Behavior, PermissionMode, PermissionState, Rule, RuleSource};
use crate::plugins::HostCore;
use crate::session::{ContextRole, LoggedEvent, SessionEvent, SessionLog, TurnEndReason, TurnKind};

/// A prompt waiting in a session's inbox.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// Its content.
    pub content: Vec<ContentBlock_NE>,
    /// Who sent it.
    pub source: MessageSource,
    /// Whether `/compact` in it is a command (an ACP client's prompt,
    /// Claude Code's `-p`), or text for the model, as `codex exec` sends
    /// it (`C90-slash-compact`).
    pub commands: bool,
    /// Whether it goes through `agent/prompt-submit`: everything someone
    /// sent does; a turn a plugin opened ([`Prompt::opened_by`]) does not.
    pub submit: bool,
}

impl Prompt {
    /// A text prompt from the user; `/compact` in it is a command.
    pub fn user(text: impl Into<String>) -> Self {
        Prompt {
            content: vec![ContentBlock::text(text)],
            source: MessageSource::User,
            commands: true,
            submit: true,
        }
    }

    /// The text of a turn `plugin` opened (plugin API 1.11,
    /// `Session::open_turn`): a user message from the plugin, no command,
    /// not submitted (Claude Code runs no UserPromptSubmit for the
    /// `<task-notification>` its wind-down re-invokes the model with,
    /// recorded `S262-ends-in-grace`).
    pub fn opened_by(plugin: &str, text: impl Into<String>) -> Self {
        Prompt {
            content: vec![ContentBlock::text(text)],
            source: MessageSource::plugin(plugin),
            commands: false,
            submit: false,
        }
    }

    /// A prompt given on the command line (`dsh prompt`) to a session that
    /// compacts in `style`: `codex exec` has no slash commands, so with
    /// Codex's style `/compact` is text for the model; with Claude's it is
    /// a command, as in `claude -p`.
    pub fn typed(text: impl Into<String>, style: crate::config::CompactionStyle) -> Self {
        Prompt {
            commands: style != crate::config::CompactionStyle::Codex,
            ..Prompt::user(text)
        }
    }
}

/// How a turn ended, with the events it wrote.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// The turn's id.
    pub turn_id: String,
    /// Why it ended.
    pub reason: TurnEndReason,
    /// The end message (the rejection or error reason), if any.
    pub message: Option<String>,
    /// Every event of the turn, `turn/start` to `turn/end`.
    pub events: Vec<LoggedEvent>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No turn open; an injection opens a one-shot turn.
    Idle,
    /// `agent/session-start` is running; injections wait for it.
    StartingUp,
    /// A turn is open; injections wait for the next flush point.
    InTurn,
}

pub(crate) enum Buffered {
    Context {
        plugin: String,
        text: String,
        role: ContextRole,
    },
    Record(SessionEvent),
    /// A turn a plugin opened while a turn ran (plugin API 1.11): `context`
    /// (system role) if the running turn reaches another flush point, else
    /// the turn with `text` after it ([`super::wind_down`]).
    Opened {
        plugin: String,
        text: String,
        context: String,
    },
}

pub(crate) struct SessionState {
    pub(crate) inbox: VecDeque<Prompt>,
    /// The id the next turn takes, when one was promised (a Codex
    /// `send_input`'s `submission_id` is the turn it starts, C185-*).
    pub(crate) next_turn_id: Option<String>,
    pub(crate) phase: Phase,
    pub(crate) buffered: Vec<Buffered>,
    pub(crate) halt: Option<(String, String)>,
    /// A halt asked for while session-start ran: the next turn ends before
    /// its prompts are submitted (`(plugin, reason)`).
    pub(crate) start_halt: Option<(String, String)>,
    pub(crate) turn_id: String,
    pub(crate) prompt_id: String,
    pub(crate) cancel: CancellationToken,
    /// What the open turn dispatches through (fixed at turn start).
    pub(crate) view: Option<crate::plugins::HostView>,
    /// Turns asked for (`prompt`, `run_turn`) that have not started yet.
    pub(crate) waiting: usize,
    /// A cancel that arrived while a turn was asked for but not started:
    /// the next turn starts cancelled.
    pub(crate) cancel_next: bool,
    /// Where tools and hooks run now (a `Bash` `cd` moves it).
    pub(crate) cwd: PathBuf,
    /// Where the session was before a move not yet announced on
    /// `agent/cwd-changed`.
    pub(crate) moved_from: Option<PathBuf>,
    /// Where a shell move not yet announced went, when it was undone (a
    /// `cd` out of the root: [`Session::set_shell_cwd`]).
    pub(crate) moved_to: Option<PathBuf>,
    /// The directory the session's shell is kept in (Claude Code's original
    /// working directory), when a tool moved the session there
    /// ([`Session::set_cwd`]); else where the session started.
    pub(crate) root: Option<PathBuf>,
    /// The permission mode and rules (`permissions/`).
    pub(crate) perms: PermissionState,
    /// What the model provider said of its last answer: the model's name
    /// and its token accounting (what a parent's `Agent` call reports).
    pub(crate) last_model: Option<String>,
    pub(crate) last_usage: Option<serde_json::Value>,
    /// The context in use against the window, `(used, size)` tokens, as
    /// the model provider last reported it (`stream/usage`), or as the log
    /// kept it (`context/usage`).
    pub(crate) usage: Option<(u64, u64)>,
    /// `usage` was reported since it was last logged.
    pub(crate) usage_unsaved: bool,
    /// A `agent/session-start` held back until the first turn has
    /// compacted (a Codex-style session resumed with its context full:
    /// Codex compacts, then runs SessionStart(resume), `C90-text-then-resume`).
    pub(crate) pending_start: Option<dsh_plugin_api::SessionStartSource>,
    /// Where a turn a plugin opens goes while its embedder runs such turns
    /// (`dsh prompt`, [`super::wind_down`]); `None` refuses them.
    pub(crate) opener: Option<tokio::sync::mpsc::UnboundedSender<Prompt>>,
    /// The other end, until the wind-down takes it.
    pub(crate) opened: Option<tokio::sync::mpsc::UnboundedReceiver<Prompt>>,
}

/// The context in use as `events` last recorded it: the last
/// `context/usage` that no `session/compacted` answered.
fn logged_usage(events: &[LoggedEvent]) -> Option<(u64, u64)> {
    let mut usage = None;
    for logged in events {
        match &logged.event {
            SessionEvent::ContextUsage { used, size } => usage = Some((*used, *size)),
            SessionEvent::Compacted { .. } => usage = None,
            _ => {}
        }
    }
    usage
}

/// One conversation.
pub struct Session {
    /// Session id.
    pub id: String,
    /// Where the session started (its log header's cwd). Tools and hooks
    /// run in [`Session::current_cwd`], which a `cd` moves.
    pub cwd: PathBuf,
    pub(crate) parent: Option<String>,
    pub(crate) agent_type: Option<String>,
    /// Opaque token of the parent's tool call that started this subagent;
    /// every call this session makes refers to it.
    pub(crate) parent_call: std::sync::OnceLock<String>,
    /// The agent that holds it (set when it is registered).
    pub(crate) agent: std::sync::OnceLock<std::sync::Weak<super::Agent>>,
    pub(crate) core: Arc<HostCore>,
    pub(crate) max_steps: u32,
    /// When it compacts without being asked.
    pub(crate) compaction: crate::config::CompactionSettings,
    /// The log's file, fixed for the session's life (read on every seam).
    log_path: PathBuf,
    pub(crate) log: Mutex<SessionLog>,
    pub(crate) state: Mutex<SessionState>,
    pub(crate) turn_lock: tokio::sync::Mutex<()>,
    /// Loaded from its log by this process and no turn started since: the
    /// next `turn/start` says so (`loaded`).
    pub(crate) loaded: std::sync::atomic::AtomicBool,
    pub(crate) feed: Arc<EventFeed>,
    /// The `session` span (telemetry): every turn's span is its child; it
    /// ends when the session is closed.
    pub(crate) span: tracing::Span,
    /// Each plugin's shell prelude, by plugin id ([`super::prelude`]).
    pub(crate) preludes: Mutex<std::collections::BTreeMap<String, String>>,
    /// Each plugin's shell-tool environment (plugin API 1.9), by plugin id.
    pub(crate) envs: Mutex<std::collections::BTreeMap<String, Vec<(String, String)>>>,
    /// The MCP servers this session is connected to (shared with its
    /// subagents).
    pub(crate) mcp: Mutex<Option<Arc<crate::mcp::McpTools>>>,
    /// A Codex-shaped subagent's `subagent/start`, fired inside its first
    /// turn before its prompt ([`super::codex_subagent`]).
    pub(crate) subagent_start: Mutex<Option<dsh_plugin_api::SubagentInfo>>,
    /// A prompt queued while a turn runs joins that turn after its step's
    /// tool calls, as a Codex sub-agent takes a `send_input` (C185d);
    /// otherwise it waits for a turn of its own.
    pub(crate) joins_running_turn: std::sync::atomic::AtomicBool,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.feed.close();
        crate::telemetry::metrics::gauge_add("dsh_sessions_held", &[], -1);
    }
}

impl Session {
    pub(crate) fn new(
        core: Arc<HostCore>,
        log: SessionLog,
        options: &super::AgentOptions,
        perms: PermissionState,
    ) -> Arc<Session> {
        let header = log.header().clone();
        crate::telemetry::metrics::gauge_add("dsh_sessions_held", &[], 1);
        let perms = restore_permissions(perms, log.events());
        let usage = logged_usage(log.events());
        Arc::new(Session {
            id: header.session_id.clone(),
            cwd: PathBuf::from(&header.cwd),
            parent: header.parent_session_id.clone(),
            agent_type: header.agent_type.clone(),
            parent_call: std::sync::OnceLock::new(),
            agent: std::sync::OnceLock::new(),
            core,
            max_steps: options.max_steps,
            compaction: options.compaction,
            log_path: log.path().to_path_buf(),
            log: Mutex::new(log),
            state: Mutex::new(SessionState {
                inbox: VecDeque::new(),
                next_turn_id: None,
                phase: Phase::Idle,
                buffered: Vec::new(),
                halt: None,
                start_halt: None,
                turn_id: String::new(),
                prompt_id: String::new(),
                cancel: CancellationToken::new(),
                view: None,
                waiting: 0,
                cancel_next: false,
                cwd: PathBuf::from(&header.cwd),
                moved_from: None,
                moved_to: None,
                root: None,
                perms,
                last_model: None,
                last_usage: None,
                usage,
                usage_unsaved: false,
                pending_start: None,
                opener: None,
                opened: None,
            }),
            turn_lock: tokio::sync::Mutex::new(()),
            loaded: std::sync::atomic::AtomicBool::new(false),
            feed: EventFeed::new(FEED_CAPACITY),
            span: tracing::trace_span!(parent: None, "session", session = %header.session_id),
            preludes: Mutex::new(std::collections::BTreeMap::new()),
            envs: Mutex::new(std::collections::BTreeMap::new()),
            mcp: Mutex::new(None),
            subagent_start: Mutex::new(None),
            joins_running_turn: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn log(&self) -> MutexGuard<'_, SessionLog> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's log file.
    pub fn log_path(&self) -> PathBuf {
        self.log_path.clone()
    }

    /// Every event so far.
    pub fn events(&self) -> Vec<LoggedEvent> {
        self.log().events().to_vec()
    }

    /// Live events as they are appended, plus unpersisted stream events
    /// (`stream/*`) that providers send while a request runs. Nothing is
    /// dropped for a slow reader: the turn waits for it instead (see
    /// [`super::feed`]); drop the stream when done reading.
    pub fn subscribe(&self) -> EventStream {
        self.feed.subscribe()
    }

    /// Appends an event, logging (not propagating) a file-system failure:
    /// the turn goes on and the failure is visible to operators. Published
    /// under the log's lock, so readers see the log's order.
    pub(crate) fn append(&self, event: SessionEvent) {
        let mut log = self.log();
        match log.append(event) {
            Ok(logged) => {
                crate::telemetry::observe_event(&logged.event);
                self.feed.publish(logged)
            }
            Err(e) => tracing::error!(session = %self.id, "session log append failed: {e}"),
        }
    }

    /// Syncs the log on its writer thread and waits for it off the
    /// runtime's workers.
    /// The failure is logged and returned (a turn whose end is not durable
    /// fails with it).
    pub(crate) async fn sync(&self) -> Result<(), crate::session::LogError> {
        let pending = self.log().sync_later();
        let synced = match pending {
            Ok(pending) => pending.done().await,
            Err(e) => Err(e),
        };
        if let Err(e) = &synced {
            tracing::error!(session = %self.id, "session log sync failed: {e}");
        }
        synced
    }

    /// Waits until every event appended so far is in the log file, so a
    /// listener or hook handed the log's path reads all of it.
    pub(crate) async fn written(&self) {
        let pending = self.log().written_later();
        let done = match pending {
            Ok(pending) => pending.done().await,
            Err(e) => Err(e),
        };
        if let Err(e) = done {
            tracing::error!(session = %self.id, "session log write failed: {e}");
        }
    }

    /// Queues a sync without waiting for it (from code that cannot await);
    /// a failure is logged by the log's writer.
    fn sync_soon(&self) {
        if let Err(e) = self.log().sync_later() {
            tracing::error!(session = %self.id, "session log sync failed: {e}");
        }
    }

    /// The snapshot every seam input carries.
    pub fn session_ref(&self) -> SessionRef {
        let state = self.state();
        SessionRef {
            session_id: RString::from(self.id.as_str()),
            cwd: RString::from(state.cwd.to_string_lossy().as_ref()),
            log_path: RString::from(self.log_path.to_string_lossy().as_ref()),
            permission_mode: RString::from(state.perms.mode.as_str()),
            turn_id: RString::from(state.turn_id.as_str()),
            prompt_id: RString::from(state.prompt_id.as_str()),
            parent_session_id: self.parent.clone().map(RString::from).into(),
            agent_type: self.agent_type.clone().map(RString::from).into(),
        }
    }

    /// Where the session's tools and hooks run now.
    pub fn current_cwd(&self) -> PathBuf {
        self.state().cwd.clone()
    }

    /// Moves the session into `cwd`, an absolute path to a directory
    /// (`HostContext::set_session_cwd`). The move is announced on
    /// `agent/cwd-changed` by the tool call that made it
    /// ([`Session::take_cwd_move`]).
    pub fn set_cwd(&self, cwd: &std::path::Path) -> Result<(), String> {
        if !cwd.is_absolute() {
            return Err(format!("cwd `{}` is not an absolute path", cwd.display()));
        }
        if !cwd.is_dir() {
            return Err(format!("cwd `{}` is not a directory", cwd.display()));
        }
        let mut state = self.state();
        if state.cwd != cwd {
            let old = std::mem::replace(&mut state.cwd, cwd.to_path_buf());
            state.moved_from.get_or_insert(old);
        }
        // A tool that moves the session (a worktree) moves its root too, as
        // `EnterWorktree` moves Claude Code's original directory (S235).
        state.root = Some(cwd.to_path_buf());
        Ok(())
    }

    /// Moves the session's shell to `cwd` as Claude Code keeps its `Bash`
    /// shell: inside the root ([`SessionState::root`]) the move is made
    /// (`None`); outside it, it is announced (`agent/cwd-changed` names
    /// `cwd`) and undone, and the answer is the root the session is back
    /// in (recorded `S238-*`: `Shell cwd was reset to <root>`).
    pub fn set_shell_cwd(&self, cwd: &std::path::Path) -> Result<Option<PathBuf>, String> {
        if !cwd.is_absolute() {
            return Err(format!("cwd `{}` is not an absolute path", cwd.display()));
        }
        if !cwd.is_dir() {
            return Err(format!("cwd `{}` is not a directory", cwd.display()));
        }
        let mut state = self.state();
        // Away from a folder deleted under the session: no move is
        // announced (Claude Code fires no CwdChanged when its shell
        // recovers, S236-deleted-under-session-keep).
        let quiet = !state.cwd.is_dir();
        let root = state.root.clone().unwrap_or_else(|| self.cwd.clone());
        // Compared physically: a shell reports `pwd -P`. A root deleted
        // under the session keeps nothing in (it cannot be gone back to).
        let physical = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        if quiet {
            let back_to_root =
                root.is_dir() && !cwd.starts_with(&physical) && !cwd.starts_with(&root);
            state.cwd = if back_to_root {
                root.clone()
            } else {
                cwd.to_path_buf()
            };
            return Ok(back_to_root.then_some(root));
        }
        if !root.is_dir() || cwd.starts_with(&physical) || cwd.starts_with(&root) {
            if state.cwd != cwd {
                let old = std::mem::replace(&mut state.cwd, cwd.to_path_buf());
                state.moved_from.get_or_insert(old);
            }
            return Ok(None);
        }
        let old = std::mem::replace(&mut state.cwd, root.clone());
        state.moved_from.get_or_insert(old);
        state.moved_to = Some(cwd.to_path_buf());
        Ok(Some(root))
    }

    /// The move not yet announced, as `(old, new)` (`new` where an undone
    /// shell move went); `None` when the session is back where it was.
    pub(crate) fn take_cwd_move(&self) -> Option<(PathBuf, PathBuf)> {
        let mut state = self.state();
        let to = state.moved_to.take();
        let old = state.moved_from.take()?;
        let new = to.unwrap_or_else(|| state.cwd.clone());
        (old != new).then_some((old, new))
    }

    /// The plugins the open turn started with, or the current ones.
    pub(crate) fn view(&self) -> crate::plugins::HostView {
        let state = self.state();
        match &state.view {
            Some(view) => view.clone(),
            None => self.core.view(),
        }
    }

    /// The tools of `view` plus this session's live MCP tools.
    pub(crate) fn tools(
        &self,
        view: &crate::plugins::HostView,
    ) -> crate::plugins::services::ToolsView {
        let mcp = self.mcp.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match mcp {
            Some(mcp) => view.tools.with_extra(mcp.live_tools()),
            None => view.tools.clone(),
        }
    }

    /// The session's MCP servers, if any are connected.
    pub fn mcp(&self) -> Option<Arc<crate::mcp::McpTools>> {
        self.mcp.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether a turn is running.
    pub fn is_busy(&self) -> bool {
        self.state().phase == Phase::InTurn
    }

    /// Queues a prompt for the next turn.
    pub fn enqueue(&self, prompt: Prompt) {
        self.state().inbox.push_back(prompt);
    }

    /// Whether prompts wait for a turn.
    pub(crate) fn has_queued(&self) -> bool {
        !self.state().inbox.is_empty()
    }

    /// Cancels the running turn: its model request and tool calls stop and
    /// it ends `aborted`. With no turn running but one asked for (a
    /// `prompt` or `run_turn` waiting to start, or prompts queued), that
    /// next turn starts cancelled: a cancel is never lost to the moment
    /// before a turn opens. With nothing running or asked for, it does
    /// nothing.
    pub fn cancel(&self) {
        let mut state = self.state();
        if state.phase == Phase::InTurn {
            state.cancel.cancel();
        } else if state.waiting > 0 || !state.inbox.is_empty() {
            state.cancel_next = true;
        }
    }

    /// Adds plugin context (see `HostContext::inject_context`; in the
    /// system role, `HostContext::inject_system_context`).
    pub(crate) fn inject(&self, plugin: &str, text: String, role: ContextRole) {
        let item = Buffered::Context {
            plugin: plugin.to_string(),
            text,
            role,
        };
        self.buffer_or_write(item);
    }

    /// Appends a plugin record (e.g. `hook/invoked`).
    pub(crate) fn record(&self, record: SessionEvent) {
        if self.state().phase == Phase::InTurn {
            self.append(record);
        } else {
            self.buffer_or_write(Buffered::Record(record));
        }
    }

    fn buffer_or_write(&self, item: Buffered) {
        let mut state = self.state();
        state.buffered.push(item);
        let idle = state.phase == Phase::Idle;
        drop(state);
        if idle {
            self.flush_one_shot();
        }
    }

    /// Writes what was buffered while no turn was open as a one-shot
    /// injection turn. Called whenever the session becomes idle (after
    /// session-start, after each turn, on a record between turns), so it
    /// then lets the log's file and thread go until the next write: an idle
    /// session holds no file descriptor (what is queued is still written).
    pub(crate) fn flush_one_shot(&self) {
        if self.state().phase != Phase::Idle {
            return;
        }
        // Turns plugins opened while session-start ran go to their run.
        self.open_held_turns();
        let items = {
            let mut state = self.state();
            if state.phase != Phase::Idle {
                return;
            }
            std::mem::take(&mut state.buffered)
        };
        if !items.is_empty() {
            let turn_id = new_id("turn");
            self.append(self.turn_start(&turn_id, TurnKind::Injection));
            self.write_items(items);
            self.append(SessionEvent::turn_end(
                &turn_id,
                TurnEndReason::Completed,
                None,
            ));
            self.sync_soon();
        }
        self.log().release_idle();
    }

    /// Writes buffered context and records into the open turn.
    pub(crate) fn flush_buffered(&self) {
        let items = std::mem::take(&mut self.state().buffered);
        self.write_items(items);
    }

    /// How many items are buffered now: where a prompt's decision starts.
    pub(crate) fn buffered_len(&self) -> usize {
        self.state().buffered.len()
    }

    /// Drops the context `deciders` buffered from position `from` on: what
    /// a prompt's listeners injected while deciding a prompt that was then
    /// blocked (a blocked prompt's hook context reaches no model, as in
    /// Claude Code). Anything else buffered meanwhile stays.
    pub(crate) fn drop_buffered_context(&self, from: usize, deciders: &[&str]) {
        let mut state = self.state();
        let mut at = 0;
        state.buffered.retain(|item| {
            let keep = at < from
                || !matches!(item, Buffered::Context { plugin, .. }
                    if deciders.contains(&plugin.as_str()));
            at += 1;
            keep
        });
    }

    fn write_items(&self, items: Vec<Buffered>) {
        for item in items {
            match item {
                Buffered::Context { plugin, text, role } => {
                    self.append(SessionEvent::context_as(text, plugin, role))
                }
                Buffered::Record(r) => self.append(r),
                // Reached a flush point of its turn: the model hears of it
                // in the turn's next request.
                Buffered::Opened {
                    plugin, context, ..
                } => self.append(SessionEvent::context_as(
                    context,
                    plugin,
                    ContextRole::System,
                )),
            }
        }
    }

    /// Asks the open turn to end after the current step. Asked while
    /// session-start runs, it stops the session's first turn before any
    /// model request (a SessionStart hook's `continue: false`).
    pub(crate) fn halt(&self, plugin: &str, reason: String) -> Result<(), String> {
        let mut state = self.state();
        match state.phase {
            Phase::InTurn => state.halt.get_or_insert((plugin.to_string(), reason)),
            Phase::StartingUp => state.start_halt.get_or_insert((plugin.to_string(), reason)),
            Phase::Idle => {
                return Err(format!("session `{}` has no open turn to halt", self.id));
            }
        };
        Ok(())
    }
}

/// The configured permissions, then what the log says the session did
/// with them: the last mode an editor set, every "allow always" rule.
fn restore_permissions(mut perms: PermissionState, events: &[LoggedEvent]) -> PermissionState {
    for logged in events {
        match &logged.event {
            SessionEvent::PermissionMode { mode, .. } => match mode.parse::<PermissionMode>() {
                Ok(mode) => {
                    perms.mode = mode;
                    perms.managed = true;
                }
                Err(e) => tracing::warn!("session log: {e}; mode change ignored"),
            },
            SessionEvent::PermissionRule { behavior, rule, .. } => {
                let behavior = match behavior.as_str() {
                    "allow" => Behavior::Allow,
                    "ask" => Behavior::Ask,
                    "deny" => Behavior::Deny,
                    other => {
                        tracing::warn!("session log: rule behavior `{other}`; ignored");
                        continue;
                    }
                };
                match Rule::parse(rule) {
                    Ok(rule) => {
                        perms.rules.push(behavior, RuleSource::Session, rule);
                        perms.managed = true;
                    }
                    Err(e) => tracing::warn!("session log: rule `{rule}`: {e}; ignored"),
                }
            }
            _ => {}
        }
    }
    perms
}

impl Session {
    /// The session's permission mode.
    pub fn permission_mode(&self) -> PermissionMode {
        self.state().perms.mode
    }

    /// A copy of the session's permissions (mode and rules).
    pub fn permissions(&self) -> PermissionState {
        self.state().perms.clone()
    }

    /// Sets the permission mode (an editor's `session/set_mode`, a CLI
    /// flag) and records it, so a resumed session starts in it. Setting
    /// the mode it has changes nothing and records nothing.
    pub fn set_permission_mode(&self, mode: PermissionMode, by: &str) {
        {
            let mut state = self.state();
            if state.perms.managed && state.perms.mode == mode {
                return;
            }
            state.perms.mode = mode;
            state.perms.managed = true;
        }
        self.record(SessionEvent::PermissionMode {
            mode: mode.as_str().into(),
            by: by.into(),
        });
    }

    /// Adds a layer of rules to this session (settings discovered for its
    /// project: managed, user, project, local), merged with the rest by
    /// Claude Code's precedence; makes the session managed. Not recorded:
    /// the layer is configuration, read again when the session is loaded.
    pub fn add_rule_layer(
        &self,
        layer: &crate::permissions::RuleLayer,
    ) -> Result<(), crate::permissions::RuleError> {
        let mut state = self.state();
        state.perms.rules.add_layer(layer)?;
        state.perms.managed = true;
        Ok(())
    }

    /// Adds a rule for the rest of the session (an "allow always" answer,
    /// a hook's `updatedPermissions`), recorded so a resumed session keeps
    /// it.
    pub(crate) fn add_session_rule(&self, behavior: Behavior, rule: Rule, call_id: &str) {
        let text = rule.text().to_string();
        {
            let mut state = self.state();
            state.perms.rules.push(behavior, RuleSource::Session, rule);
            state.perms.managed = true;
        }
        self.record(SessionEvent::PermissionRule {
            behavior: behavior.as_str().into(),
            rule: text,
            call_id: call_id.into(),
        });
    }
}

impl Session {
    /// Allows `rules` (Claude Code's rule syntax) for the rest of the
    /// running turn: a `Skill` call's or a slash command's `allowed-tools`
    /// (Claude Code's `allowed_tools` layer). A rule that does not parse
    /// is skipped, with a warning, and returned with why. Not recorded:
    /// the turn's own.
    pub(crate) fn allow_for_turn(&self, rules: &[String]) -> Vec<String> {
        let mut state = self.state();
        let mut skipped = Vec::new();
        for text in rules {
            match Rule::parse(text) {
                Ok(rule) => state
                    .perms
                    .rules
                    .push(Behavior::Allow, RuleSource::Command, rule),
                Err(e) => {
                    tracing::warn!(session = %self.id, "an allowed tool `{text}`: {e}; skipped");
                    skipped.push(format!("{text}: {e}"));
                }
            }
        }
        skipped
    }

    /// Drops what [`Session::allow_for_turn`] allowed: the turn ended.
    pub(crate) fn end_turn_rules(&self) {
        self.state().perms.rules.remove_source(RuleSource::Command);
    }
}

/// A fresh id with a readable prefix.
impl Session {
    /// `turn/start`, marked `loaded` for the first turn after this process
    /// loaded the session from its log.
    pub(crate) fn turn_start(&self, turn_id: &str, kind: TurnKind) -> SessionEvent {
        let loaded = self.loaded.swap(false, std::sync::atomic::Ordering::SeqCst);
        SessionEvent::TurnStart {
            turn_id: turn_id.into(),
            kind,
            loaded,
        }
    }
}

pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

/// Text of content blocks.
pub(crate) fn content_text(blocks: &[ContentBlock_NE]) -> String {
    dsh_plugin_api::blocks_text(blocks)
}

pub(crate) fn rvec(blocks: &[ContentBlock_NE]) -> RVec<ContentBlock_NE> {
    blocks.iter().cloned().collect()
}
