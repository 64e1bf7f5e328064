//! The host side of `HostContext`: what a plugin may ask of the host.
//!
//! One context per applied plugin. What the plugin registers while it
//! applies goes into its own [`Instance`], checked against the plugins
//! before it in the registry being built; the registry is published whole
//! afterwards (see [`HostCore::publish`]). Session operations are forwarded
//! to whatever [`SessionControl`] the agent layer installed; without one
//! (e.g. `dsh check`) they fail with a clear message.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use abi_stable::std_types::{ROption, RResult, RStr, RString, RVec, Tuple2};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{GuardBox, HostContext, ListenerBox, ServiceBox, ToolBodyBox};
use dsh_plugin_api::{ConfigProblem, LogLevel, ProblemSeverity, Seam, SessionRef, ToolSpec};

use arc_swap::ArcSwap;

use super::instance::Instance;
use super::snapshot::{HostView, Registry};
use crate::seams::{Owner, PluginThreads};
use crate::session::ContextRole;

/// Session operations plugins may request; implemented by the agent layer.
pub trait SessionControl: Send + Sync {
    /// Adds plugin context to a session, for the model to read in `role`.
    fn inject_context(
        &self,
        plugin: &str,
        session_id: &str,
        text: String,
        role: ContextRole,
    ) -> Result<(), String>;
    /// Appends a record to a session's open turn.
    fn append_record(&self, session_id: &str, record: serde_json::Value) -> Result<(), String>;
    /// [`Self::append_record`] for a record still in its JSON text (as it
    /// crosses the plugin boundary). An agent overrides it to refuse a
    /// record for a session that is not live before reading the text.
    fn append_record_text(&self, session_id: &str, record: &str) -> Result<(), String> {
        let record = serde_json::from_str::<serde_json::Value>(record)
            .map_err(|e| format!("record is not JSON: {e}"))?;
        self.append_record(session_id, record)
    }
    /// Ends a session's open turn after the current step.
    fn halt_turn(&self, plugin: &str, session_id: &str, reason: String) -> Result<(), String>;
    /// Sends a live, unpersisted event to a session's subscribers.
    fn stream_event(&self, session_id: &str, event: serde_json::Value) -> Result<(), String>;
    /// The open sessions, one snapshot each, by id.
    fn sessions(&self) -> Vec<SessionRef> {
        Vec::new()
    }
    /// Moves a session's working directory.
    fn set_session_cwd(&self, session_id: &str, cwd: &str) -> Result<(), String> {
        let _ = (session_id, cwd);
        Err("this agent cannot move a session".into())
    }
    /// Sets `plugin`'s shell prelude for a session (empty clears it).
    fn set_shell_prelude(
        &self,
        plugin: &str,
        session_id: &str,
        script: &str,
    ) -> Result<(), String> {
        let _ = (plugin, session_id, script);
        Err("this agent keeps no shell prelude".into())
    }
    /// The shell prelude of a session: every plugin's, in id order.
    fn shell_prelude(&self, session_id: &str) -> String {
        let _ = session_id;
        String::new()
    }
    /// Sets `plugin`'s shell-tool environment for a session (empty clears
    /// it).
    fn set_session_env(
        &self,
        plugin: &str,
        session_id: &str,
        env: Vec<(String, String)>,
    ) -> Result<(), String> {
        let _ = (plugin, session_id, env);
        Err("this agent keeps no session environment".into())
    }
    /// The shell-tool environment of a session: every plugin's, merged in
    /// id order.
    fn session_env(&self, session_id: &str) -> Vec<(String, String)> {
        let _ = session_id;
        Vec::new()
    }
    /// Moves a session's shell, kept inside its root
    /// (`HostContext::set_session_shell_cwd`): `Some(root)` when the move
    /// was undone.
    fn set_shell_cwd(&self, session_id: &str, cwd: &str) -> Result<Option<String>, String> {
        let _ = (session_id, cwd);
        Err("this agent cannot move a session".into())
    }
    /// Opens a turn whose one prompt is `plugin`'s `text` (plugin API
    /// 1.11), where the session's embedder runs such turns; `context` is
    /// for a running turn's next model request.
    fn open_turn(
        &self,
        plugin: &str,
        session_id: &str,
        text: String,
        context: String,
    ) -> Result<(), String> {
        let _ = (plugin, session_id, text, context);
        Err("this agent cannot open a turn for a plugin".into())
    }
}

/// The host's shared state: the published plugin registry and what
/// plugin contexts need (session operations, state dir, runtime, threads).
pub struct HostCore {
    /// The registry turns start on; replaced whole, never edited.
    registry: ArcSwap<Registry>,
    /// Serializes publishers, so none loses another's change.
    publishing: Mutex<()>,
    sessions: RwLock<Option<Arc<dyn SessionControl>>>,
    state_dir: PathBuf,
    runtime: tokio::runtime::Handle,
    threads: PluginThreads,
    /// The `hook-transport` service, made on first use and kept for the
    /// core's life (its connections and hook servers survive reloads).
    hook_transport: std::sync::OnceLock<crate::hooks::HookTransport>,
    /// The role each plugin's context reaches the model in, by plugin id,
    /// when it is not the user role (`HostContext::set_context_role`).
    context_roles: RwLock<std::collections::HashMap<String, ContextRole>>,
}

impl HostCore {
    /// A core with an empty registry whose timers run on `runtime`.
    pub fn new(state_dir: PathBuf, runtime: tokio::runtime::Handle) -> Arc<Self> {
        Arc::new(HostCore {
            registry: ArcSwap::from_pointee(Registry::default()),
            publishing: Mutex::new(()),
            sessions: RwLock::new(None),
            state_dir,
            threads: PluginThreads::new(runtime.clone()),
            runtime,
            hook_transport: std::sync::OnceLock::new(),
            context_roles: RwLock::default(),
        })
    }

    /// Installs the agent layer's session operations.
    pub fn set_session_control(&self, control: Arc<dyn SessionControl>) {
        *self.sessions.write().unwrap_or_else(|p| p.into_inner()) = Some(control);
    }

    fn session_control(&self) -> Result<Arc<dyn SessionControl>, String> {
        self.sessions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| "no agent is running in this host".to_string())
    }

    /// The threads `.so` plugins' calls run on.
    pub fn plugin_threads(&self) -> &PluginThreads {
        &self.threads
    }

    /// The host's `hook-transport` service ([`crate::hooks`]).
    pub fn hook_transport(&self) -> &crate::hooks::HookTransport {
        self.hook_transport
            .get_or_init(|| crate::hooks::HookTransport::new(&self.state_dir))
    }

    /// The role plugin `id`'s context reaches the model in (the user role
    /// unless it set another with `HostContext::set_context_role`).
    pub fn context_role(&self, id: &str) -> ContextRole {
        self.context_roles
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .copied()
            .unwrap_or_default()
    }

    /// Sets the role plugin `id`'s context reaches the model in.
    pub fn set_context_role(&self, id: &str, role: ContextRole) {
        let mut roles = self
            .context_roles
            .write()
            .unwrap_or_else(|p| p.into_inner());
        if role.is_user() {
            roles.remove(id);
        } else {
            roles.insert(id.to_string(), role);
        }
    }

    /// The state directory.
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }

    /// The registry as published now. A turn takes it once at its start.
    pub fn view(&self) -> HostView {
        self.registry.load_full()
    }

    /// Publishes the registry `next` makes of the current one, in one
    /// atomic swap. Turns holding the previous registry finish on it.
    /// `next` may also leave the registry as it is (`None`).
    pub(crate) fn publish<T>(&self, next: impl FnOnce(&Registry) -> (Option<Registry>, T)) -> T {
        // The guard only orders publishers; nothing behind it can be left
        // half-changed by a panic.
        let _one_at_a_time = self.publishing.lock().unwrap_or_else(|p| p.into_inner());
        let (registry, out) = next(&self.registry.load());
        if let Some(registry) = registry {
            self.registry.store(Arc::new(registry));
        }
        out
    }

    /// Adds an instance that no manifest lists (an embedder's, such as the
    /// ACP server's `approval` service). A tool or service name already
    /// taken is an error naming its holder; nothing is added then.
    pub fn mount(&self, instance: Instance) -> Result<(), String> {
        self.publish(|current| {
            let mut check = Instance::new(instance.owner.clone());
            for tool in &instance.tools {
                let body = tool.body.clone();
                if let Err(e) = check.register_tool_shared(&current.tools, tool.spec.clone(), body)
                {
                    return (None, Err(e));
                }
            }
            for (name, service) in &instance.services {
                if let Err(e) = check.provide_service(&current.services, name, service.clone()) {
                    return (None, Err(e));
                }
            }
            let mut instances = current.instances().to_vec();
            instances.push(Arc::new(instance));
            (Some(Registry::build(instances)), Ok(()))
        })
    }

    /// Mounts one tool as an instance of `owner` (see [`HostCore::mount`]).
    pub fn mount_tool(&self, owner: &str, spec: ToolSpec, body: ToolBodyBox) -> Result<(), String> {
        let mut instance = Instance::new(Owner::new(owner, 0));
        instance.register_tool(&Default::default(), spec, body)?;
        self.mount(instance)
    }

    /// Mounts one service as an instance of `owner` (see
    /// [`HostCore::mount`]).
    pub fn mount_service(
        &self,
        owner: &str,
        name: &str,
        service: ServiceBox,
    ) -> Result<(), String> {
        let mut instance = Instance::new(Owner::new(owner, 0));
        instance.provide_service(&Default::default(), name, service)?;
        self.mount(instance)
    }

    /// Disposes every instance of plugin `id`: leaves it out of the next
    /// registry and ends its calls in flight. Returns how many there were.
    pub fn dispose(&self, id: &str) -> usize {
        let gone = self.publish(|current| {
            let (gone, kept): (Vec<_>, Vec<_>) = current
                .instances()
                .iter()
                .cloned()
                .partition(|i| i.id() == id);
            let next = (!gone.is_empty()).then(|| Registry::build(kept));
            (next, gone)
        });
        for instance in &gone {
            instance.cancel();
        }
        gone.len()
    }

    /// Disposes `instance` (that very one): see [`HostCore::dispose`].
    pub(crate) fn dispose_instance(&self, instance: &Arc<Instance>) {
        self.publish(|current| {
            let kept = current
                .instances()
                .iter()
                .filter(|i| !Arc::ptr_eq(i, instance))
                .cloned()
                .collect();
            (Some(Registry::build(kept)), ())
        });
        instance.cancel();
    }
}

/// What one plugin registers while it applies, checked against the plugins
/// placed before it in the registry being built.
pub(crate) struct Draft {
    /// The plugins before it in the next registry.
    pub(crate) before: Arc<Registry>,
    /// Its registrations so far.
    pub(crate) instance: Instance,
}

/// Config problems a plugin reports while it applies: `Some` until the
/// registry takes them when `apply` returns; later reports are logged.
pub(crate) type ProblemInbox = Arc<Mutex<Option<Vec<ConfigProblem>>>>;

/// The context handed to one plugin.
#[derive(Clone)]
pub struct PluginContext {
    pub(crate) core: Arc<HostCore>,
    pub(crate) owner: Owner,
    pub(crate) config_dir: PathBuf,
    pub(crate) problems: ProblemInbox,
    /// Its registrations while it applies; `None` once `apply` returned
    /// (registrations are accepted only while it applies).
    pub(crate) draft: Arc<Mutex<Option<Draft>>>,
}

impl PluginContext {
    /// Runs `register` on the plugin's draft, or fails if it has applied.
    fn register(
        &self,
        register: impl FnOnce(&mut Draft) -> Result<(), String>,
    ) -> RResult<(), RString> {
        let mut draft = self.draft.lock().unwrap_or_else(|p| p.into_inner());
        let result = match draft.as_mut() {
            Some(draft) => register(draft),
            None => Err(format!(
                "plugin `{}`: listeners, guards, tools and services can only be registered while the plugin applies",
                self.owner.id
            )),
        };
        unit(result)
    }
}

fn unit(r: Result<(), String>) -> RResult<(), RString> {
    match r {
        Ok(()) => RResult::ROk(()),
        Err(e) => RResult::RErr(e.into()),
    }
}

impl HostContext for PluginContext {
    fn plugin_id(&self) -> RString {
        RString::from(&*self.owner.id)
    }

    fn listen(&self, seam: Seam, listener: ListenerBox) -> RResult<(), RString> {
        if seam == Seam::Guard {
            return RResult::RErr("guards are registered with `guard`, not `listen`".into());
        }
        if !seam.is_known() {
            return RResult::RErr(
                format!(
                    "this host (plugin API {}) has no {seam}",
                    dsh_plugin_api::API_VERSION
                )
                .into(),
            );
        }
        self.register(|draft| draft.instance.listen(seam, listener))
    }

    fn guard(&self, guard: GuardBox) -> RResult<(), RString> {
        self.register(|draft| {
            draft.instance.guard(guard);
            Ok(())
        })
    }

    fn register_tool(&self, spec: ToolSpec, body: ToolBodyBox) -> RResult<(), RString> {
        self.register(|draft| {
            let before = draft.before.tools.clone();
            draft.instance.register_tool(&before, spec, body)
        })
    }

    fn provide_service(&self, name: RString, service: ServiceBox) -> RResult<(), RString> {
        self.register(|draft| {
            let before = draft.before.services.clone();
            draft.instance.provide_service(&before, &name, service)
        })
    }

    fn service(&self, name: RStr<'_>) -> ROption<ServiceBox> {
        let name = name.as_str();
        // While applying: its own services, then those of the plugins
        // before it in the registry being built. Afterwards: the published
        // registry's.
        let draft = self.draft.lock().unwrap_or_else(|p| p.into_inner());
        match draft.as_ref() {
            Some(draft) => draft
                .instance
                .service(name)
                .cloned()
                .or_else(|| draft.before.services.get(name))
                .into(),
            None => {
                drop(draft);
                self.core.view().services.get(name).into()
            }
        }
    }

    fn log(&self, level: LogLevel, message: RString) {
        let plugin = &*self.owner.id;
        match level {
            LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            LogLevel::Info => tracing::info!(plugin, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, "{message}"),
            LogLevel::Error => tracing::error!(plugin, "{message}"),
            // A level added after this host was built: the message matters
            // more than its exact severity.
            _ => tracing::info!(plugin, "{message}"),
        }
    }

    fn sleep(&self, millis: u64) -> FfiFuture<()> {
        // Create the timer inside the host runtime: plugin code calling this
        // may run on any thread, and a `.so`'s own tokio has no reactor.
        let _guard = self.core.runtime.enter();
        tokio::time::sleep(Duration::from_millis(millis)).into_ffi()
    }

    fn inject_context(&self, session_id: RString, text: RString) -> RResult<(), RString> {
        let result = self.core.session_control().and_then(|s| {
            let role = self.core.context_role(&self.owner.id);
            s.inject_context(&self.owner.id, &session_id, text.into(), role)
        });
        unit(result)
    }

    fn inject_system_context(&self, session_id: RString, text: RString) -> RResult<(), RString> {
        let result = self.core.session_control().and_then(|s| {
            s.inject_context(
                &self.owner.id,
                &session_id,
                text.into(),
                ContextRole::System,
            )
        });
        unit(result)
    }

    fn append_record(&self, session_id: RString, record: RString) -> RResult<(), RString> {
        // Where the record could go is asked before its text is read: a
        // host without an agent (or a session that is not live) refuses
        // it without parsing it.
        let result = self
            .core
            .session_control()
            .and_then(|s| s.append_record_text(&session_id, &record));
        unit(result)
    }

    fn halt_turn(&self, session_id: RString, reason: RString) -> RResult<(), RString> {
        let result = self
            .core
            .session_control()
            .and_then(|s| s.halt_turn(&self.owner.id, &session_id, reason.into()));
        unit(result)
    }

    fn stream_event(&self, session_id: RString, event: RString) -> RResult<(), RString> {
        let result = serde_json::from_str::<serde_json::Value>(&event)
            .map_err(|e| format!("event is not JSON: {e}"))
            .and_then(|event| {
                self.core
                    .session_control()
                    .and_then(|s| s.stream_event(&session_id, event))
            });
        unit(result)
    }

    fn state_dir(&self) -> RString {
        self.core.state_dir.to_string_lossy().into_owned().into()
    }

    fn config_dir(&self) -> RString {
        self.config_dir.to_string_lossy().into_owned().into()
    }

    fn sessions(&self) -> RVec<SessionRef> {
        // Without an agent (e.g. `dsh check`) there are no sessions.
        self.core
            .session_control()
            .map(|s| s.sessions().into())
            .unwrap_or_default()
    }

    fn set_session_cwd(&self, session_id: RString, cwd: RString) -> RResult<(), RString> {
        let result = self
            .core
            .session_control()
            .and_then(|s| s.set_session_cwd(&session_id, &cwd));
        unit(result)
    }

    fn set_session_shell_prelude(
        &self,
        session_id: RString,
        script: RString,
    ) -> RResult<(), RString> {
        let result = self
            .core
            .session_control()
            .and_then(|s| s.set_shell_prelude(&self.owner.id, &session_id, &script));
        unit(result)
    }

    fn set_context_role(&self, role: RString) -> RResult<(), RString> {
        match role.parse::<ContextRole>() {
            Ok(role) => {
                self.core.set_context_role(&self.owner.id, role);
                RResult::ROk(())
            }
            Err(e) => RResult::RErr(e.into()),
        }
    }

    fn session_shell_prelude(&self, session_id: RString) -> RString {
        self.core
            .session_control()
            .map(|s| s.shell_prelude(&session_id))
            .unwrap_or_default()
            .into()
    }

    fn set_session_env(
        &self,
        session_id: RString,
        env: RVec<Tuple2<RString, RString>>,
    ) -> RResult<(), RString> {
        let mut pairs = Vec::with_capacity(env.len());
        for Tuple2(name, value) in env {
            if name.is_empty() || name.contains(['=', '\0']) {
                return RResult::RErr(
                    format!(
                        "`{}` cannot be an environment variable's name",
                        name.escape_debug()
                    )
                    .into(),
                );
            }
            if value.contains('\0') {
                return RResult::RErr(format!("the value of `{name}` holds a NUL byte").into());
            }
            pairs.push((name.into_string(), value.into_string()));
        }
        let result = self
            .core
            .session_control()
            .and_then(|s| s.set_session_env(&self.owner.id, &session_id, pairs));
        unit(result)
    }

    fn session_env(&self, session_id: RString) -> RVec<Tuple2<RString, RString>> {
        self.core
            .session_control()
            .map(|s| s.session_env(&session_id))
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| Tuple2(k.into(), v.into()))
            .collect()
    }

    fn set_session_shell_cwd(
        &self,
        session_id: RString,
        cwd: RString,
    ) -> RResult<ROption<RString>, RString> {
        match self
            .core
            .session_control()
            .and_then(|s| s.set_shell_cwd(&session_id, &cwd))
        {
            Ok(root) => RResult::ROk(root.map(RString::from).into()),
            Err(e) => RResult::RErr(e.into()),
        }
    }

    fn open_turn(
        &self,
        session_id: RString,
        text: RString,
        context: RString,
    ) -> RResult<(), RString> {
        let result = self.core.session_control().and_then(|s| {
            s.open_turn(
                &self.owner.id,
                &session_id,
                text.into_string(),
                context.into_string(),
            )
        });
        unit(result)
    }

    fn report_problem(&self, problem: ConfigProblem) {
        let mut inbox = self.problems.lock().unwrap_or_else(|p| p.into_inner());
        match inbox.as_mut() {
            Some(pending) => pending.push(problem),
            None => {
                let plugin = &*self.owner.id;
                match problem.severity {
                    ProblemSeverity::Warning => tracing::warn!(plugin, "warning: {problem}"),
                    // An error, or a severity added after this host was
                    // built: said as plainly as an error.
                    _ => tracing::warn!(plugin, "{problem}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use abi_stable::sabi_trait::TD_Opaque;
    use async_ffi::FutureExt as _;
    use dsh_plugin_api::SeamInput_NE;
    use dsh_plugin_api::ffi::{Listener, Listener_TO, NextBox, WireResult};

    use super::*;

    struct Idle;

    impl Listener for Idle {
        fn call(&self, _input: SeamInput_NE, next: NextBox) -> FfiFuture<WireResult> {
            async move { next.run(ROption::RNone).await }.into_ffi()
        }
    }

    #[test]
    fn a_listener_on_a_seam_this_host_does_not_know_is_refused() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let core = HostCore::new(PathBuf::from("/nonexistent"), runtime.handle().clone());
        let owner = Owner::new("p", 0);
        let draft = Arc::new(Mutex::new(Some(Draft {
            before: Arc::new(Registry::build(Vec::new())),
            instance: Instance::new(owner.clone()),
        })));
        let ctx = PluginContext {
            core: core.clone(),
            owner,
            config_dir: PathBuf::new(),
            problems: ProblemInbox::default(),
            draft: draft.clone(),
        };
        let seams = || {
            let draft = draft.lock().unwrap_or_else(|p| p.into_inner());
            draft
                .as_ref()
                .map(|d| d.instance.seams())
                .unwrap_or_default()
        };
        let listener = || Listener_TO::from_value(Idle, TD_Opaque);
        let unknown = Seam::from_number(200);
        assert_eq!(
            ctx.listen(unknown, listener()),
            RResult::RErr(
                format!(
                    "this host (plugin API {}) has no unknown seam #200",
                    dsh_plugin_api::API_VERSION
                )
                .into()
            )
        );
        assert!(seams().is_empty());
        assert_eq!(ctx.listen(Seam::TurnEnd, listener()), RResult::ROk(()));
        assert_eq!(seams(), [Seam::TurnEnd]);
        // No agent: no sessions.
        assert!(ctx.sessions().is_empty());
    }

    #[test]
    fn a_record_nothing_can_take_is_refused_before_its_text_is_read() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let core = HostCore::new(PathBuf::from("/nonexistent"), runtime.handle().clone());
        let ctx = PluginContext {
            core,
            owner: Owner::new("p", 0),
            config_dir: PathBuf::new(),
            problems: ProblemInbox::default(),
            draft: Arc::new(Mutex::new(None)),
        };
        // Without an agent there is nowhere to append: the text is never
        // parsed, so even text that is not JSON gets that answer.
        for record in ["not json", r#"{"type":"hook/invoked"}"#] {
            assert_eq!(
                ctx.append_record("s".into(), record.into()),
                RResult::RErr("no agent is running in this host".into()),
                "{record}"
            );
        }
    }

    #[test]
    fn a_plugin_sets_its_own_context_role_and_an_unknown_one_is_refused() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let core = HostCore::new(PathBuf::from("/nonexistent"), runtime.handle().clone());
        let ctx = |id: &str| PluginContext {
            core: core.clone(),
            owner: Owner::new(id, 0),
            config_dir: PathBuf::new(),
            problems: ProblemInbox::default(),
            draft: Arc::new(Mutex::new(None)),
        };
        let (codex, other) = (ctx("codex"), ctx("other"));
        assert_eq!(core.context_role("codex"), ContextRole::User);
        assert_eq!(codex.set_context_role("developer".into()), RResult::ROk(()));
        assert_eq!(core.context_role("codex"), ContextRole::Developer);
        assert_eq!(core.context_role("other"), ContextRole::User);
        let RResult::RErr(e) = other.set_context_role("assistant".into()) else {
            panic!("`assistant` was taken as a context role");
        };
        assert!(e.contains("`assistant`"), "{e}");
        assert_eq!(core.context_role("other"), ContextRole::User);
        assert_eq!(codex.set_context_role("user".into()), RResult::ROk(()));
        assert_eq!(core.context_role("codex"), ContextRole::User);
    }

    /// One `set_session_env` call: plugin, session, pairs.
    type EnvCall = (String, String, Vec<(String, String)>);

    /// Keeps what plugins set as a session's shell-tool environment.
    #[derive(Default)]
    struct Envs(Mutex<Vec<EnvCall>>);

    impl SessionControl for Envs {
        fn inject_context(
            &self,
            _: &str,
            _: &str,
            _: String,
            _: ContextRole,
        ) -> Result<(), String> {
            Ok(())
        }
        fn append_record(&self, _: &str, _: serde_json::Value) -> Result<(), String> {
            Ok(())
        }
        fn halt_turn(&self, _: &str, _: &str, _: String) -> Result<(), String> {
            Ok(())
        }
        fn stream_event(&self, _: &str, _: serde_json::Value) -> Result<(), String> {
            Ok(())
        }
        fn set_session_env(
            &self,
            plugin: &str,
            session_id: &str,
            env: Vec<(String, String)>,
        ) -> Result<(), String> {
            let mut set = self.0.lock().unwrap_or_else(|p| p.into_inner());
            set.push((plugin.to_string(), session_id.to_string(), env));
            Ok(())
        }
        fn session_env(&self, session_id: &str) -> Vec<(String, String)> {
            let set = self.0.lock().unwrap_or_else(|p| p.into_inner());
            set.iter()
                .filter(|(_, s, _)| s == session_id)
                .flat_map(|(_, _, env)| env.clone())
                .collect()
        }
    }

    #[test]
    fn a_plugins_session_env_reaches_the_agent_and_a_name_no_environment_holds_is_refused() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let core = HostCore::new(PathBuf::from("/nonexistent"), runtime.handle().clone());
        let envs = Arc::new(Envs::default());
        core.set_session_control(envs.clone());
        let ctx = PluginContext {
            core: core.clone(),
            owner: Owner::new("bridge", 0),
            config_dir: PathBuf::new(),
            problems: ProblemInbox::default(),
            draft: Arc::new(Mutex::new(None)),
        };
        let pair = |k: &str, v: &str| Tuple2(RString::from(k), RString::from(v));
        let set = |env: Vec<Tuple2<RString, RString>>| ctx.set_session_env("s1".into(), env.into());
        assert_eq!(
            set(vec![pair("A", "1"), pair("B", "two words")]),
            RResult::ROk(())
        );
        for (bad, says) in [
            (pair("", "x"), "``"),
            (pair("A=B", "x"), "`A=B`"),
            (pair("N", "a\0b"), "`N`"),
        ] {
            let RResult::RErr(e) = set(vec![pair("OK", "1"), bad]) else {
                panic!("a bad pair was taken");
            };
            assert!(e.contains(says), "{e}");
        }
        // Refused whole: nothing of a refused list reached the agent.
        let got: Vec<(String, String)> = ctx
            .session_env("s1".into())
            .into_iter()
            .map(|t| (t.0.into_string(), t.1.into_string()))
            .collect();
        assert_eq!(
            got,
            [
                ("A".to_string(), "1".to_string()),
                ("B".to_string(), "two words".to_string())
            ]
        );
        let calls = envs.0.lock().unwrap_or_else(|p| p.into_inner());
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].0, "bridge");
    }
}
