//! The host side of `HostContext`: what a plugin may ask of the host.
//!
//! One context per applied plugin; it attributes every registration to its
//! plugin so dispose can remove all of it. Session operations are forwarded
//! to whatever [`SessionControl`] the agent layer installed; without one
//! (e.g. `dsh check`) they fail with a clear message.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use abi_stable::std_types::{ROption, RResult, RStr, RString, RVec};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{GuardBox, HostContext, ListenerBox, ServiceBox, ToolBodyBox};
use dsh_plugin_api::{ConfigProblem, LogLevel, ProblemSeverity, Seam, SessionRef, ToolSpec};

use super::services::{ServiceRegistry, ToolRegistry};
use crate::seams::{Owner, PluginThreads, SeamBus};

/// Session operations plugins may request; implemented by the agent layer.
pub trait SessionControl: Send + Sync {
    /// Adds plugin context to a session.
    fn inject_context(&self, plugin: &str, session_id: &str, text: String) -> Result<(), String>;
    /// Appends a record to a session's open turn.
    fn append_record(&self, session_id: &str, record: serde_json::Value) -> Result<(), String>;
    /// Ends a session's open turn after the current step.
    fn halt_turn(&self, plugin: &str, session_id: &str, reason: String) -> Result<(), String>;
    /// Sends a live, unpersisted event to a session's subscribers.
    fn stream_event(&self, session_id: &str, event: serde_json::Value) -> Result<(), String>;
    /// The open sessions, one snapshot each, by id.
    fn sessions(&self) -> Vec<SessionRef> {
        Vec::new()
    }
}

/// Everything plugins register into, shared by all contexts.
pub struct HostCore {
    /// The seam bus.
    pub bus: SeamBus,
    /// Registered tools.
    pub tools: ToolRegistry,
    /// Mounted services.
    pub services: ServiceRegistry,
    sessions: RwLock<Option<Arc<dyn SessionControl>>>,
    state_dir: PathBuf,
    runtime: tokio::runtime::Handle,
    threads: PluginThreads,
}

impl HostCore {
    /// A core whose timers run on `runtime`.
    pub fn new(state_dir: PathBuf, runtime: tokio::runtime::Handle) -> Arc<Self> {
        Arc::new(HostCore {
            bus: SeamBus::new(),
            tools: ToolRegistry::default(),
            services: ServiceRegistry::default(),
            sessions: RwLock::new(None),
            state_dir,
            threads: PluginThreads::new(runtime.clone()),
            runtime,
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

    /// The state directory.
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }

    /// Removes everything `plugin` registered, keeping it usable for turns
    /// that already hold a view (a reload's retirement).
    pub fn retire(&self, plugin: &str) -> usize {
        self.bus.retire_owner(plugin)
            + self.tools.remove_owner(plugin)
            + self.services.remove_owner(plugin)
    }

    /// Removes everything `plugin` registered and ends its calls in flight.
    pub fn dispose(&self, plugin: &str) -> usize {
        self.bus.remove_owner(plugin)
            + self.tools.remove_owner(plugin)
            + self.services.remove_owner(plugin)
    }
}

/// What one turn dispatches through: the bus, tools and services as they
/// were when the turn started, so a reload mid-turn does not change them.
#[derive(Clone)]
pub struct HostView {
    /// The bus snapshot.
    pub bus: crate::seams::BusView,
    /// The tools snapshot.
    pub tools: super::services::ToolsView,
    /// The services snapshot.
    pub services: super::services::ServicesView,
}

impl HostCore {
    /// A snapshot of everything plugins registered, as of now.
    pub fn view(&self) -> HostView {
        HostView {
            bus: self.bus.view(),
            tools: self.tools.view(),
            services: self.services.view(),
        }
    }
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
        self.core.bus.listen(self.owner.clone(), seam, listener);
        RResult::ROk(())
    }

    fn guard(&self, guard: GuardBox) -> RResult<(), RString> {
        self.core.bus.guard(self.owner.clone(), guard);
        RResult::ROk(())
    }

    fn register_tool(&self, spec: ToolSpec, body: ToolBodyBox) -> RResult<(), RString> {
        unit(self.core.tools.register(&self.owner.id, spec, body))
    }

    fn provide_service(&self, name: RString, service: ServiceBox) -> RResult<(), RString> {
        unit(self.core.services.provide(&self.owner.id, &name, service))
    }

    fn service(&self, name: RStr<'_>) -> ROption<ServiceBox> {
        self.core.services.get(name.as_str()).into()
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
        let result = self
            .core
            .session_control()
            .and_then(|s| s.inject_context(&self.owner.id, &session_id, text.into()));
        unit(result)
    }

    fn append_record(&self, session_id: RString, record: RString) -> RResult<(), RString> {
        let result = serde_json::from_str::<serde_json::Value>(&record)
            .map_err(|e| format!("record is not JSON: {e}"))
            .and_then(|record| {
                self.core
                    .session_control()
                    .and_then(|s| s.append_record(&session_id, record))
            });
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
        let ctx = PluginContext {
            core: core.clone(),
            owner: Owner::new("p", 0),
            config_dir: PathBuf::new(),
            problems: ProblemInbox::default(),
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
        assert_eq!(core.bus.listener_count(unknown), 0);
        assert_eq!(ctx.listen(Seam::TurnEnd, listener()), RResult::ROk(()));
        assert_eq!(core.bus.listener_count(Seam::TurnEnd), 1);
        // No agent: no sessions.
        assert!(ctx.sessions().is_empty());
    }
}
