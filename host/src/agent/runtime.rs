//! [`Agent`]: the live sessions of one host, and the session operations
//! plugins reach through their context.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use abi_stable::std_types::{RArc, RString};
use dsh_plugin_api::{
    SeamInput, SessionEndInput, SessionRef, SessionStartInput, SessionStartSource,
};

use super::session::{Phase, Session, new_id};
use crate::plugins::{HostCore, SessionControl};
use crate::session::{
    ContextRole, FileStore, LogError, LoggedEvent, SessionEvent, SessionHeader, SessionLog,
    SessionStore,
};

/// Loop settings.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Steps after which a turn ends with an error.
    pub max_steps: u32,
    /// The permissions every new session starts with (the manifest's
    /// `permissions:` and the CLI's flags); unmanaged by default.
    pub permissions: crate::permissions::PermissionState,
    /// The rules of the Claude settings files a session's folder has
    /// (`hooks-claude`'s files), added to each new or loaded session.
    pub settings_rules: Option<super::SettingsRules>,
    /// The manifest's MCP servers, which every session connects to.
    pub mcp_servers: Vec<crate::mcp::McpServerSpec>,
    /// How the model is shown MCP results (manifest `mcp_result_framing`).
    pub mcp_framing: crate::mcp::McpFraming,
    /// When sessions compact without being asked (`compaction:`).
    pub compaction: crate::config::CompactionSettings,
    /// Offer Codex's `spawn_agent` and `wait_agent` beside `Agent`
    /// (manifest `subagent_tools: codex`).
    pub codex_subagents: bool,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            max_steps: 64,
            permissions: Default::default(),
            settings_rules: None,
            mcp_servers: Vec::new(),
            mcp_framing: crate::mcp::McpFraming::Plain,
            compaction: Default::default(),
            codex_subagents: false,
        }
    }
}

/// Runs a log's blocking file work (create, read, repair on load) on the
/// runtime's blocking pool, not on a worker thread.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, LogError> + Send + 'static,
) -> Result<T, LogError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(LogError::Io {
            path: std::path::PathBuf::new(),
            message: format!("the session log's file work did not finish: {e}"),
        })
    })
}

/// The live sessions of one host.
pub struct Agent {
    pub(crate) core: Arc<HostCore>,
    state_dir: PathBuf,
    store: Arc<dyn SessionStore>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    pub(crate) options: AgentOptions,
    /// What new and loaded sessions start with (`options.permissions`
    /// until a reload replaces it).
    permissions: Mutex<crate::permissions::PermissionState>,
    /// Itself, for its sessions (a compaction's forked agent).
    me: Weak<Agent>,
}

struct Control(Weak<Agent>);

impl Control {
    fn session(&self, id: &str) -> Result<Arc<Session>, String> {
        let agent = self
            .0
            .upgrade()
            .ok_or_else(|| "the agent has shut down".to_string())?;
        agent
            .get(id)
            .ok_or_else(|| format!("no live session `{id}`"))
    }
}

impl SessionControl for Control {
    fn inject_context(
        &self,
        plugin: &str,
        session_id: &str,
        text: String,
        role: ContextRole,
    ) -> Result<(), String> {
        self.session(session_id)?.inject(plugin, text, role);
        Ok(())
    }

    fn append_record(&self, session_id: &str, record: serde_json::Value) -> Result<(), String> {
        // The same test as `SessionEvent::kind` being empty (every typed
        // variant has a type), made before the session is looked up and
        // the record typed: a record for a session that is not live (a
        // hook outside a turn) costs no typing at all.
        if record
            .get("type")
            .and_then(serde_json::Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err("a record needs a string `type`".into());
        }
        let session = self.session(session_id)?;
        session.record(SessionEvent::from_value(record));
        Ok(())
    }

    fn append_record_text(&self, session_id: &str, record: &str) -> Result<(), String> {
        // The session first: a record for a session that is not live (a
        // hook outside a turn) is refused before its text is read.
        let session = self.session(session_id)?;
        let record = serde_json::from_str::<serde_json::Value>(record)
            .map_err(|e| format!("record is not JSON: {e}"))?;
        if record
            .get("type")
            .and_then(serde_json::Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err("a record needs a string `type`".into());
        }
        session.record(SessionEvent::from_value(record));
        Ok(())
    }

    fn halt_turn(&self, plugin: &str, session_id: &str, reason: String) -> Result<(), String> {
        self.session(session_id)?.halt(plugin, reason)
    }

    fn set_session_cwd(&self, session_id: &str, cwd: &str) -> Result<(), String> {
        self.session(session_id)?.set_cwd(Path::new(cwd))
    }

    fn set_shell_cwd(&self, session_id: &str, cwd: &str) -> Result<Option<String>, String> {
        let root = self.session(session_id)?.set_shell_cwd(Path::new(cwd))?;
        Ok(root.map(|r| r.to_string_lossy().into_owned()))
    }

    fn set_shell_prelude(
        &self,
        plugin: &str,
        session_id: &str,
        script: &str,
    ) -> Result<(), String> {
        self.session(session_id)?.set_shell_prelude(plugin, script);
        Ok(())
    }

    fn shell_prelude(&self, session_id: &str) -> String {
        let Some(agent) = self.0.upgrade() else {
            return String::new();
        };
        super::prelude::of_session(&agent, session_id)
    }

    fn set_session_env(
        &self,
        plugin: &str,
        session_id: &str,
        env: Vec<(String, String)>,
    ) -> Result<(), String> {
        self.session(session_id)?.set_session_env(plugin, env);
        Ok(())
    }

    fn session_env(&self, session_id: &str) -> Vec<(String, String)> {
        let Some(agent) = self.0.upgrade() else {
            return Vec::new();
        };
        super::prelude::env_of_session(&agent, session_id)
    }

    fn open_turn(
        &self,
        plugin: &str,
        session_id: &str,
        text: String,
        context: String,
    ) -> Result<(), String> {
        self.session(session_id)?.open_turn(plugin, text, context)
    }

    fn stream_event(&self, session_id: &str, event: serde_json::Value) -> Result<(), String> {
        let event = SessionEvent::from_value(event);
        if event.kind().is_empty() {
            return Err("a stream event needs a string `type`".into());
        }
        let session = self.session(session_id)?;
        // The provider's report of the context in use: what automatic
        // compaction measures ([`crate::config::CompactionSettings`]).
        if let SessionEvent::StreamUsage { used, size } = &event {
            let mut state = session.state();
            state.usage = Some((*used, *size));
            state.usage_unsaved = true;
        }
        // Live only: never logged, never waited for.
        session.feed.publish(LoggedEvent::live(event));
        Ok(())
    }

    fn sessions(&self) -> Vec<SessionRef> {
        let Some(agent) = self.0.upgrade() else {
            return Vec::new();
        };
        let mut live: Vec<Arc<Session>> = agent
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        live.sort_by(|a, b| a.id.cmp(&b.id));
        live.iter().map(|s| s.session_ref()).collect()
    }
}

impl Agent {
    /// An agent over `core`, keeping sessions under `state_dir`. Installs
    /// itself as the core's session control and registers the `Agent` tool.
    pub fn new(core: Arc<HostCore>, state_dir: &Path, options: AgentOptions) -> Arc<Agent> {
        Self::with_store(
            core,
            state_dir,
            Arc::new(FileStore::new(state_dir)),
            options,
        )
    }

    /// An agent keeping its sessions in `store` (`state_dir` still holds
    /// the daemon's other state).
    pub fn with_store(
        core: Arc<HostCore>,
        state_dir: &Path,
        store: Arc<dyn SessionStore>,
        options: AgentOptions,
    ) -> Arc<Agent> {
        let agent = Arc::new_cyclic(|me| Agent {
            core: core.clone(),
            state_dir: state_dir.to_path_buf(),
            store,
            sessions: Mutex::new(HashMap::new()),
            permissions: Mutex::new(options.permissions.clone()),
            options,
            me: me.clone(),
        });
        core.set_session_control(Arc::new(Control(Arc::downgrade(&agent))));
        super::rule_services::mount(&agent);
        super::subagent::register_tool(&agent);
        if agent.options.codex_subagents {
            super::codex_subagent::register_tools(&agent);
        }
        agent
    }

    /// The permissions sessions created or loaded from now on start with
    /// (a daemon's reloaded manifest); open sessions keep theirs.
    pub fn set_default_permissions(&self, permissions: crate::permissions::PermissionState) {
        *self.permissions.lock().unwrap_or_else(|p| p.into_inner()) = permissions;
    }

    fn default_permissions(&self) -> crate::permissions::PermissionState {
        self.permissions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The shared plugin core.
    pub fn core(&self) -> &Arc<HostCore> {
        &self.core
    }

    /// A live session.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Ids of the live sessions.
    pub fn live_sessions(&self) -> Vec<String> {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    fn insert(&self, session: Arc<Session>) {
        let _ = session.agent.set(self.me.clone());
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.id.clone(), session);
    }

    /// Creates a session in `cwd` and fires `agent/session-start {startup}`.
    pub async fn create_session(
        &self,
        cwd: &Path,
        id: Option<String>,
    ) -> Result<Arc<Session>, LogError> {
        self.create_child(cwd, id, None, None).await
    }

    pub(crate) async fn create_child(
        &self,
        cwd: &Path,
        id: Option<String>,
        parent: Option<String>,
        agent_type: Option<String>,
    ) -> Result<Arc<Session>, LogError> {
        let id = id.unwrap_or_else(|| new_id("ses"));
        let mut header = SessionHeader::new(&id, &cwd.to_string_lossy());
        header.parent_session_id = parent.clone();
        header.agent_type = agent_type;
        let store = self.store.clone();
        let log = off_the_runtime(move || SessionLog::create_in(store.as_ref(), header)).await?;
        // A subagent works under its parent's mode and rules, as in Claude Code.
        let perms = parent
            .as_deref()
            .and_then(|p| self.get(p))
            .map_or_else(|| self.default_permissions(), |p| p.permissions());
        let session = Session::new(self.core.clone(), log, &self.options, perms);
        if parent.is_none() {
            self.add_settings_rules(&session);
        }
        self.insert(session.clone());
        if parent.is_none() {
            self.start(&session, SessionStartSource::Startup).await;
        }
        Ok(session)
    }

    /// Loads a session from disk (repairing it) and fires
    /// `agent/session-start {resume}`. A live session is returned as is.
    pub async fn resume_session(&self, id: &str) -> Result<Arc<Session>, LogError> {
        if let Some(live) = self.get(id) {
            return Ok(live);
        }
        let session = self.load_session(id).await?;
        self.start(&session, SessionStartSource::Resume).await;
        Ok(session)
    }

    /// Loads a session from disk (repairing it) without firing
    /// session-start, for callers that replay it first (ACP `session/load`);
    /// they then call [`Agent::fire_session_start`] with `Resume`.
    pub async fn load_session(&self, id: &str) -> Result<Arc<Session>, LogError> {
        if let Some(live) = self.get(id) {
            return Ok(live);
        }
        crate::session::check_session_id(id)?;
        let store = self.store.clone();
        let owned = id.to_string();
        let log = off_the_runtime(move || SessionLog::open_in(store.as_ref(), &owned)).await?;
        // Another load of the same id may have finished meanwhile.
        if let Some(live) = self.get(id) {
            return Ok(live);
        }
        // A subagent reloaded while its parent is live (Codex's
        // `resume_agent`) starts from its parent's permissions, as it was
        // created with them; its own logged changes are laid over them.
        let base = log
            .header()
            .parent_session_id
            .as_deref()
            .and_then(|p| self.get(p))
            .map_or_else(|| self.default_permissions(), |p| p.permissions());
        let session = Session::new(self.core.clone(), log, &self.options, base);
        if session.parent.is_none() {
            self.add_settings_rules(&session);
        }
        session
            .loaded
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.insert(session.clone());
        Ok(session)
    }

    /// Adds the rule layers of the Claude settings files of `session`'s
    /// folder ([`AgentOptions::settings_rules`]); a rule that does not
    /// parse is logged and its layer left out.
    fn add_settings_rules(&self, session: &Session) {
        let Some(rules) = &self.options.settings_rules else {
            return;
        };
        for layer in rules.layers(&session.cwd) {
            if let Err(e) = session.add_rule_layer(&layer) {
                tracing::warn!(session = %session.id, "settings permissions: {e}; layer ignored");
            }
        }
    }

    /// Fires `agent/session-start` for a session loaded with
    /// [`Agent::load_session`].
    pub async fn fire_session_start(&self, session: &Arc<Session>, source: SessionStartSource) {
        self.start(session, source).await;
    }

    /// The state directory sessions live under.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Where sessions are kept.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    /// The session `dsh prompt --continue` continues in `cwd`: of the
    /// stored top-level sessions (no subagent's) whose folder is `cwd`, the
    /// one active last (its last stamped event, else its creation; a tie
    /// goes to the one created later). A session whose prompts were all
    /// blocked counts: Claude Code continues it too (recorded S190).
    /// `None` when there is none; damaged logs are passed over.
    pub async fn latest_session(&self, cwd: &Path) -> Result<Option<String>, LogError> {
        let store = self.store.clone();
        let cwd = cwd.display().to_string();
        off_the_runtime(move || {
            let mut best: Option<(u64, String)> = None;
            for stored in store.list()? {
                let Ok(header) = &stored.header else { continue };
                if header.cwd != cwd || header.parent_session_id.is_some() {
                    continue;
                }
                let Ok(snapshot) = store.read(&stored.id) else {
                    continue;
                };
                let last = snapshot
                    .events
                    .iter()
                    .rev()
                    .find_map(|e| e.ts)
                    .unwrap_or(header.created_ms);
                // Listed oldest first: `>=` lets a later one win a tie.
                if best.as_ref().is_none_or(|(at, _)| last >= *at) {
                    best = Some((last, stored.id.clone()));
                }
            }
            Ok(best.map(|(_, id)| id))
        })
        .await
    }

    /// Whether a session with this id is stored (never for an id that is
    /// not of dsh's form).
    pub fn exists(&self, id: &str) -> bool {
        self.store.exists(id)
    }

    /// Fires session-start; its context waits for the listeners and lands
    /// in a one-shot turn, so it is in history before the first request.
    async fn start(&self, session: &Arc<Session>, source: SessionStartSource) {
        session.written().await;
        // Codex, resumed with its context full, compacts at the start of
        // the first turn and runs SessionStart(resume) after the compaction
        // (`C90-text-then-resume`): the turn fires it.
        if source == SessionStartSource::Resume
            && session.compacts_like_codex()
            && session.auto_compaction_due()
        {
            session.state().pending_start = Some(source);
            return;
        }
        session.state().phase = Phase::StartingUp;
        let input = SessionStartInput {
            session: session.session_ref(),
            source,
        };
        let failures = self
            .core
            .view()
            .bus
            .notify(SeamInput::SessionStart(RArc::new(input)))
            .await;
        {
            let mut state = session.state();
            for f in failures {
                tracing::warn!(session = %session.id, plugin = %f.plugin, "session-start listener failed: {}", f.message);
                state.buffered.push(super::session::Buffered::Record(
                    SessionEvent::listener_failed("agent/session-start", &f.plugin, &f.message),
                ));
            }
            state.phase = Phase::Idle;
        }
        session.flush_one_shot();
    }

    /// Connects `session` to the manifest's MCP servers plus `extra` (a
    /// client's, which replace manifest servers of the same name). The
    /// servers that failed are returned for the caller to show the user;
    /// the session goes on without them.
    pub async fn connect_mcp(
        &self,
        session: &Arc<Session>,
        extra: Vec<crate::mcp::McpServerSpec>,
    ) -> Vec<crate::mcp::McpError> {
        let mut specs = self.options.mcp_servers.clone();
        specs.extend(extra);
        if specs.is_empty() {
            return Vec::new();
        }
        // Their elicitation requests go to this session's plugins.
        let elicitor: Arc<dyn crate::mcp::Elicitor> =
            Arc::new(super::elicitation::SessionElicitor(Arc::downgrade(session)));
        let (tools, failed) = crate::mcp::McpTools::connect(
            &specs,
            &session.current_cwd(),
            self.options.mcp_framing,
            Some(elicitor),
        )
        .await;
        *session.mcp.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(tools));
        failed
    }

    /// Fires `agent/session-end` and forgets the live session.
    pub async fn close_session(&self, id: &str, reason: &str) {
        let Some(session) = self.get(id) else {
            return;
        };
        // Its MCP servers end with it (their subagents' too).
        session.mcp.lock().unwrap_or_else(|p| p.into_inner()).take();
        // So do the children it left open (Codex's spawned agents).
        let children: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|s| s.parent.as_deref() == Some(id))
            .cloned()
            .collect();
        for child in children {
            child.cancel();
            Box::pin(self.close_session(&child.id, reason)).await;
        }
        session.written().await;
        let input = SessionEndInput {
            session: session.session_ref(),
            reason: RString::from(reason),
        };
        for f in self
            .core
            .view()
            .bus
            .notify(SeamInput::SessionEnd(RArc::new(input)))
            .await
        {
            tracing::warn!(session = %id, plugin = %f.plugin, "session-end listener failed: {}", f.message);
        }
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}
