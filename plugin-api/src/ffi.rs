//! The objects that cross the host/plugin boundary.
//!
//! Every one is a `#[sabi_trait]` object, so its vtable layout is checked at
//! load like any other type. Every async call returns an
//! [`FfiFuture`](async_ffi::FfiFuture); every fallible call returns an
//! `RResult` whose error is a message (errors are data, never panics).
//!
//! Each trait marks with `#[sabi(last_prefix_field)]` the last method the
//! first version of its major had: methods a minor adds go after it, each
//! with a default body, which is what a caller gets from an object made by
//! an older build whose vtable lacks the method (see the crate's
//! compatibility policy). Never move the marker within a major.
//!
//! Plugin authors rarely touch these directly: [`crate::sdk`] wraps them.

// sabi_trait generates undocumented companion items and impls inside
// anonymous consts; neither is something a plugin author can act on.
#![allow(missing_docs, non_local_definitions)]

use abi_stable::{
    StableAbi, sabi_trait,
    std_types::{RArc, RBox, ROption, RResult, RStr, RString, RVec, Tuple2},
};
use async_ffi::FfiFuture;

use crate::decisions::{GuardDecision_NE, SeamAnswer_NE, SeamOutput, ToolResult};
use crate::seams::{Seam, SeamInput_NE, ToolCall};
use crate::types::{ConfigProblem, LogLevel, SessionRef, ToolSpec};

/// A seam's typed answer or a failure message: what the host's chain and
/// the SDK work with. Never crosses the boundary; [`WireResult`] does.
pub type SeamResult = RResult<SeamOutput, RString>;

/// A listener's or `next`'s answer as it crosses the boundary.
pub type WireResult = RResult<SeamAnswer_NE, RString>;

/// The rest of a waterfall after the current listener.
///
/// Calling it runs every later listener (and, for `tools/execute`, the core
/// dispatch) and returns their combined answer; returning without calling it
/// short-circuits the chain.
#[sabi_trait]
pub trait NextCall: Send + Sync {
    /// Runs the rest of the chain. `signal` replaces the abort signal for
    /// the rest of a `tools/execute` chain and is ignored elsewhere.
    #[sabi(last_prefix_field)]
    fn run(&self, signal: ROption<AbortSignalBox>) -> FfiFuture<WireResult>;
}

/// Owned handle to the rest of a chain.
pub type NextBox = NextCall_TO<'static, RBox<()>>;

/// A listener on one seam.
#[sabi_trait]
pub trait Listener: Send + Sync {
    /// Handles one seam event.
    #[sabi(last_prefix_field)]
    fn call(&self, input: SeamInput_NE, next: NextBox) -> FfiFuture<WireResult>;
    /// Answers a waterfall event at once, without a future (since 1.5): the
    /// host asks this first, on the caller's thread, and makes [`call`]
    /// only for [`Immediate::Later`]. Implementing it declares the
    /// listener's synchronous part cheap and non-blocking: it runs inline
    /// even for a `.so` (no plugin thread, no time limit, since nothing
    /// can cut off a synchronous call), and an [`Immediate::Pass`] costs
    /// no `next`, no future and no allocation. Asked on waterfall seams
    /// only. The default (every listener built before 1.5) is `Later`.
    ///
    /// [`call`]: Listener::call
    fn call_now(&self, input: &SeamInput_NE) -> Immediate {
        let _ = input;
        Immediate::Later
    }
}

/// What a listener answers at once through [`Listener::call_now`] (since
/// 1.5). Fixed for the major: a new form would be a new method.
#[repr(u8)]
#[derive(StableAbi)]
// Returned by value and matched at once, never stored: boxing the answer
// would be an allocation per call, which this form exists to avoid.
#[allow(clippy::large_enum_variant)]
pub enum Immediate {
    /// Nothing to say at once: the host makes the asynchronous
    /// [`Listener::call`].
    Later,
    /// Delegate: the chain goes on as if the listener had called `next`
    /// and returned its answer unchanged.
    Pass,
    /// This answer or failure, as if the listener's call had returned it
    /// without calling `next` (a short-circuit).
    Answer(WireResult),
}

/// Owned listener handle.
pub type ListenerBox = Listener_TO<'static, RBox<()>>;

/// A synchronous guard that runs after the whole pre-execute waterfall.
#[sabi_trait]
pub trait Guard: Send + Sync {
    /// Deny or abstain; a guard can never re-allow.
    #[sabi(last_prefix_field)]
    fn check(&self, call: RArc<ToolCall>) -> RResult<GuardDecision_NE, RString>;
}

/// Owned guard handle.
pub type GuardBox = Guard_TO<'static, RBox<()>>;

/// Fires when work must stop (turn cancelled, timeout, shutdown).
#[sabi_trait]
pub trait AbortSignal: Clone + Send + Sync {
    /// Whether the signal has fired.
    fn is_aborted(&self) -> bool;
    /// Resolves once the signal fires.
    #[sabi(last_prefix_field)]
    fn aborted(&self) -> FfiFuture<()>;
}

/// Shared abort-signal handle.
pub type AbortSignalBox = AbortSignal_TO<'static, RArc<()>>;

/// The body of a tool.
#[sabi_trait]
pub trait ToolBody: Send + Sync {
    /// Runs the tool. Failures are results with `is_error`, never panics.
    #[sabi(last_prefix_field)]
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult>;
}

/// Owned tool body.
pub type ToolBodyBox = ToolBody_TO<'static, RBox<()>>;

/// A named service a plugin provides to others: JSON text in, JSON text out.
#[sabi_trait]
pub trait Service: Clone + Send + Sync {
    /// Calls `method` with JSON `args`; the answer is JSON text or an error.
    #[sabi(last_prefix_field)]
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
    #[sabi(last_prefix_field)]
    fn config_dir(&self) -> RString;
    /// The sessions open in this host, one snapshot each, by id (since
    /// 1.1). A plugin working outside a seam (a tool, a service, a timer)
    /// finds its sessions here.
    fn sessions(&self) -> RVec<SessionRef> {
        RVec::new()
    }
    /// Reports a problem with the plugin's configuration (or a file it
    /// names), since 1.1. While the plugin applies, the host lists it with
    /// the plugin's problems (`dsh check`; an error makes the check fail);
    /// afterwards it is logged. The default drops it: every host that
    /// speaks 1.1 implements it.
    fn report_problem(&self, problem: ConfigProblem) {
        let _ = problem;
    }
    /// Moves a session's working directory (since 1.3): a shell tool whose
    /// command ended in another directory (`cd sub`) reports it here, and
    /// later tool calls and hooks of that session run there. `cwd` must
    /// be an absolute path to a directory. The host fires
    /// `agent/cwd-changed` once the tool call that moved it has finished
    /// its post-execute phase. The default refuses: every host that
    /// speaks 1.3 implements it.
    fn set_session_cwd(&self, session_id: RString, cwd: RString) -> RResult<(), RString> {
        let _ = (session_id, cwd);
        RResult::RErr(RString::from("this host cannot move a session's cwd"))
    }
    /// Sets this plugin's shell prelude for a session (since 1.4): script
    /// text a shell tool runs in the same shell before each command of
    /// that session and of its subagents (Claude Code sources what
    /// SessionStart hooks wrote into `CLAUDE_ENV_FILE` this way). Empty
    /// clears it. Each plugin has its own; a shell tool runs them in
    /// plugin id order. The default refuses: every host that speaks 1.4
    /// implements it.
    fn set_session_shell_prelude(
        &self,
        session_id: RString,
        script: RString,
    ) -> RResult<(), RString> {
        let _ = (session_id, script);
        RResult::RErr(RString::from("this host keeps no shell prelude"))
    }
    /// The shell prelude a shell tool runs before each command of a
    /// session (since 1.4): every plugin's, in plugin id order, joined by
    /// a newline; a subagent's session has its root session's. Empty when
    /// there is none (and in a host older than 1.4).
    fn session_shell_prelude(&self, session_id: RString) -> RString {
        let _ = session_id;
        RString::new()
    }
    /// Adds context the model reads as a system-role message at its place
    /// in the conversation (since 1.7), attributed to this plugin and
    /// buffered like [`Self::inject_context`]: Claude Code's background
    /// task notifications (an `asyncRewake` hook's exit 2). The default
    /// refuses: every host that speaks 1.7 implements it.
    fn inject_system_context(&self, session_id: RString, text: RString) -> RResult<(), RString> {
        let _ = (session_id, text);
        RResult::RErr(RString::from(
            "this host cannot add system-role context (plugin API 1.7)",
        ))
    }
    /// Sets the role the model reads this plugin's context in (since 1.8):
    /// `user` (the default), `developer` or `system`. It applies to what
    /// the plugin adds afterwards through [`Self::inject_context`], the
    /// context pieces of its decisions and a tool step's context, in every
    /// session (Codex gives every hook's context to the model as a
    /// `developer` message). Steering and
    /// [`Self::inject_system_context`] keep their roles. Another role is
    /// refused with its name. The default refuses: every host that speaks
    /// 1.8 implements it.
    fn set_context_role(&self, role: RString) -> RResult<(), RString> {
        let _ = role;
        RResult::RErr(RString::from(
            "this host cannot change a plugin's context role (plugin API 1.8)",
        ))
    }
    /// Sets this plugin's environment for a session's shell tool (since
    /// 1.9): `(name, value)` pairs a shell tool's commands of that session
    /// and of its subagents get on top of their own environment, as Claude
    /// Code's commands get its settings files' `env`. An empty list clears
    /// it. Each plugin has its own; [`Self::session_env`] merges them in
    /// plugin id order. A name that is empty or holds `=` or NUL, or a value
    /// holding NUL, is refused by name. The default refuses: every host
    /// that speaks 1.9 implements it.
    fn set_session_env(
        &self,
        session_id: RString,
        env: RVec<Tuple2<RString, RString>>,
    ) -> RResult<(), RString> {
        let _ = (session_id, env);
        RResult::RErr(RString::from(
            "this host keeps no session environment (plugin API 1.9)",
        ))
    }
    /// The environment a shell tool gives a session's commands (since
    /// 1.9): every plugin's pairs, in plugin id order, a later plugin's
    /// value for a name replacing an earlier one's; a subagent's session
    /// has its root session's. Empty when there is none (and in a host
    /// older than 1.9).
    fn session_env(&self, session_id: RString) -> RVec<Tuple2<RString, RString>> {
        let _ = session_id;
        RVec::new()
    }
    /// Moves a session's shell the way Claude Code keeps its `Bash` shell
    /// (since 1.10): to `cwd` (absolute) when it is inside the session's
    /// root (the directory [`Self::set_session_cwd`] last moved the
    /// session to, else where it started), answering `None`; else the move
    /// to `cwd` is still announced on `agent/cwd-changed` but undone, and
    /// the answer is the root the session is back in. The default refuses:
    /// every host that speaks 1.10 implements it.
    fn set_session_shell_cwd(
        &self,
        session_id: RString,
        cwd: RString,
    ) -> RResult<ROption<RString>, RString> {
        let _ = (session_id, cwd);
        RResult::RErr(RString::from(
            "this host does not keep a shell in its session's root (plugin API 1.10)",
        ))
    }
    /// Opens a turn in a session (since 1.11) whose one prompt is `text`,
    /// a user message from this plugin: no `agent/prompt-submit` runs for
    /// it (nobody typed it), and the turn runs as any other (steps,
    /// `agent/turn-continuation`, `agent/turn-end`). Only a session whose
    /// embedder runs plugin-opened turns takes it: today a `dsh prompt`
    /// run, whose wind-down after its last turn runs them (as `claude -p`
    /// re-invokes the model when a background job ends within its grace).
    /// Asked while a turn of that session runs, the host holds it: if the
    /// turn asks the model again, `context` reaches that request instead,
    /// as system context at the next flush point (as
    /// [`Self::inject_system_context`] would add it), and no turn is
    /// opened; if the turn ends first, the turn with `text` follows it (as
    /// Claude Code runs a notification still queued when its turn ends).
    /// Anywhere else (an ACP or daemon session) it is refused, and the
    /// plugin says what it has to say another way. `Ok` means the text or
    /// the context will reach the model; the call does not wait for it. The
    /// default refuses.
    fn open_turn(
        &self,
        session_id: RString,
        text: RString,
        context: RString,
    ) -> RResult<(), RString> {
        let _ = (session_id, text, context);
        RResult::RErr(RString::from(
            "this host cannot open a turn for a plugin (plugin API 1.11)",
        ))
    }
}

/// Shared host-context handle.
pub type HostContextBox = HostContext_TO<'static, RArc<()>>;

/// A typed result as it crosses the boundary.
pub fn wire_result(result: SeamResult) -> WireResult {
    result.map(SeamAnswer_NE::from)
}

/// A result from across the boundary, typed. An answer this build does not
/// know becomes a failure naming it.
pub fn typed_result(result: WireResult) -> SeamResult {
    match result {
        RResult::ROk(answer) => match SeamOutput::try_from(answer) {
            Ok(output) => RResult::ROk(output),
            Err(unknown) => RResult::RErr(format!("a listener answered with {unknown}").into()),
        },
        RResult::RErr(e) => RResult::RErr(e),
    }
}
