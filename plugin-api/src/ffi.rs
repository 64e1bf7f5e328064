//! The objects that cross the host/plugin boundary.
//!
//! Every one is a `#[sabi_trait]` object, so its vtable layout is checked at
//! load like any other type. Every async call returns an
//! [`FfiFuture`](async_ffi::FfiFuture); every fallible call returns an
//! `RResult` whose error is a message (errors are data, never panics).
//!
//! Plugin authors rarely touch these directly: [`crate::sdk`] wraps them.

// sabi_trait generates undocumented companion items and impls inside
// anonymous consts; neither is something a plugin author can act on.
#![allow(missing_docs, non_local_definitions)]

use abi_stable::{
    sabi_trait,
    std_types::{RArc, RBox, ROption, RResult, RStr, RString},
};
use async_ffi::FfiFuture;

use crate::seams::{GuardDecision, Seam, SeamInput, SeamOutput, ToolCall, ToolResult};
use crate::types::{ConfigProblem, LogLevel, ToolSpec};

/// Result of a listener or of `next`: the seam's answer or a failure message.
pub type SeamResult = RResult<SeamOutput, RString>;

/// The rest of a waterfall after the current listener.
///
/// Calling it runs every later listener (and, for `tools/execute`, the core
/// dispatch) and returns their combined answer; returning without calling it
/// short-circuits the chain.
#[sabi_trait]
pub trait NextCall: Send + Sync {
    /// Runs the rest of the chain. `signal` replaces the abort signal for
    /// the rest of a `tools/execute` chain and is ignored elsewhere.
    fn run(&self, signal: ROption<AbortSignalBox>) -> FfiFuture<SeamResult>;
}

/// Owned handle to the rest of a chain.
pub type NextBox = NextCall_TO<'static, RBox<()>>;

/// A listener on one seam.
#[sabi_trait]
pub trait Listener: Send + Sync {
    /// Handles one seam event.
    fn call(&self, input: SeamInput, next: NextBox) -> FfiFuture<SeamResult>;
}

/// Owned listener handle.
pub type ListenerBox = Listener_TO<'static, RBox<()>>;

/// A synchronous guard that runs after the whole pre-execute waterfall.
#[sabi_trait]
pub trait Guard: Send + Sync {
    /// Deny or abstain; a guard can never re-allow.
    fn check(&self, call: RArc<ToolCall>) -> RResult<GuardDecision, RString>;
}

/// Owned guard handle.
pub type GuardBox = Guard_TO<'static, RBox<()>>;

/// Fires when work must stop (turn cancelled, timeout, shutdown).
#[sabi_trait]
pub trait AbortSignal: Clone + Send + Sync {
    /// Whether the signal has fired.
    fn is_aborted(&self) -> bool;
    /// Resolves once the signal fires.
    fn aborted(&self) -> FfiFuture<()>;
}

/// Shared abort-signal handle.
pub type AbortSignalBox = AbortSignal_TO<'static, RArc<()>>;

/// The body of a tool.
#[sabi_trait]
pub trait ToolBody: Send + Sync {
    /// Runs the tool. Failures are results with `is_error`, never panics.
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult>;
}

/// Owned tool body.
pub type ToolBodyBox = ToolBody_TO<'static, RBox<()>>;

/// A named service a plugin provides to others: JSON text in, JSON text out.
#[sabi_trait]
pub trait Service: Clone + Send + Sync {
    /// Calls `method` with JSON `args`; the answer is JSON text or an error.
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>>;
}

/// Shared service handle.
pub type ServiceBox = Service_TO<'static, RArc<()>>;

/// What the host offers a plugin while it is applied and afterwards.
///
/// Registrations are attributed to the plugin, so disposing it removes every
/// listener, guard, tool and service it registered.
#[sabi_trait]
pub trait HostContext: Clone + Send + Sync {
    /// The plugin's manifest id.
    fn plugin_id(&self) -> RString;
    /// Registers a listener on a seam (after those registered before it).
    fn listen(&self, seam: Seam, listener: ListenerBox) -> RResult<(), RString>;
    /// Registers a guard.
    fn guard(&self, guard: GuardBox) -> RResult<(), RString>;
    /// Registers a tool; fails if the name is taken.
    fn register_tool(&self, spec: ToolSpec, body: ToolBodyBox) -> RResult<(), RString>;
    /// Provides a named service; fails if the name is taken.
    fn provide_service(&self, name: RString, service: ServiceBox) -> RResult<(), RString>;
    /// Looks up a service now (optional services are looked up at call time).
    fn service(&self, name: RStr<'_>) -> ROption<ServiceBox>;
    /// Logs through the host's tracing subscriber.
    fn log(&self, level: LogLevel, message: RString);
    /// Sleeps on the host's timer.
    fn sleep(&self, millis: u64) -> FfiFuture<()>;
    /// Adds context to a session, attributed to this plugin. During a tool
    /// step it is buffered until every result of the step is recorded; while
    /// the session is idle it opens a one-shot injection turn.
    fn inject_context(&self, session_id: RString, text: RString) -> RResult<(), RString>;
    /// Appends a record (a JSON object with a `type`) to the session log of
    /// an open turn.
    fn append_record(&self, session_id: RString, record: RString) -> RResult<(), RString>;
    /// Ends the session's open turn after the current step, without another
    /// model request.
    fn halt_turn(&self, session_id: RString, reason: RString) -> RResult<(), RString>;
    /// The host's state directory.
    fn state_dir(&self) -> RString;
    /// Sends a live, unpersisted event to a session's subscribers (e.g. a
    /// model provider streaming text deltas to an editor). `event` is a JSON
    /// object with a `type` such as `stream/text`.
    fn stream_event(&self, session_id: RString, event: RString) -> RResult<(), RString>;
    /// The folder of the manifest that loaded this plugin: relative paths
    /// in a plugin's config resolve against it.
    fn config_dir(&self) -> RString;
    /// Reports a problem with the plugin's configuration (or a file it
    /// names). While the plugin applies, the host lists it with the
    /// plugin's problems (`dsh check`; an error makes the check fail);
    /// afterwards it is logged.
    fn report_problem(&self, problem: ConfigProblem);
}

/// Shared host-context handle.
pub type HostContextBox = HostContext_TO<'static, RArc<()>>;
