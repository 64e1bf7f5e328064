//! Every seam and the input snapshot each one carries (ARCHITECTURE.md §3).
//!
//! Snapshots travel as `RArc`s: listeners share one immutable copy and
//! cannot change what the next listener sees. Tool arguments and structured
//! results cross as canonical JSON text. What a listener answers lives in
//! [`crate::decisions`].
//!
//! Both ways of naming a seam can grow in a minor version (see the crate's
//! compatibility policy): [`Seam`] is a number with named constants, not a
//! Rust enum, and [`SeamInput`] crosses the boundary as a
//! [`SeamInput_NE`], which a build that does not know a variant can still
//! hold, clone and drop.

// `WithNonExhaustive` generates its storage and interface types with
// impls inside anonymous consts; nothing a plugin author can act on.
#![allow(non_local_definitions)]

use abi_stable::{
    StableAbi,
    nonexhaustive_enum::NonExhaustive,
    std_types::{RArc, ROption, RString, RVec},
};

use crate::decisions::{ContinuationDecision, ContinuationDecision_NE, ToolResult};
use crate::ffi::AbortSignalBox;
use crate::types::{ContentBlock_NE, MessageSource_NE, SessionRef};

/// An interception point of an agent. Names are the contract.
///
/// A seam is a number with named constants rather than a Rust enum, so a
/// minor version can add seams without changing its layout: a plugin built
/// before a seam existed never names it, and a host refuses to register a
/// listener on a number it does not know. The constants are named like
/// enum variants (`Seam::PreExecute`) and work in patterns.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seam(u8);

// The constants read like the enum variants they replace, so code matching
// on `Seam::PreExecute` keeps reading as it did.
#[allow(non_upper_case_globals)]
impl Seam {
    /// `agent/session-start`: notification; may inject context.
    pub const SessionStart: Seam = Seam(0);
    /// `agent/session-end`: notification when a session closes.
    pub const SessionEnd: Seam = Seam(1);
    /// `agent/prompt-submit`: waterfall per drained prompt.
    pub const PromptSubmit: Seam = Seam(2);
    /// `tools/pre-execute`: waterfall gate.
    pub const PreExecute: Seam = Seam(3);
    /// Guards: synchronous deny-or-abstain after the pre-execute waterfall.
    pub const Guard: Seam = Seam(4);
    /// `tools/execute`: around-dispatch waterfall.
    pub const Execute: Seam = Seam(5);
    /// `tools/post-execute`: waterfall that may transform the result.
    pub const PostExecute: Seam = Seam(6);
    /// `tools/result`: notification after everything.
    pub const ToolResult: Seam = Seam(7);
    /// `agent/turn-continuation`: waterfall deciding stop or continue.
    pub const TurnContinuation: Seam = Seam(8);
    /// `subagent/start`: notification.
    pub const SubagentStart: Seam = Seam(9);
    /// `subagent/end`: notification.
    pub const SubagentEnd: Seam = Seam(10);
    /// `agent/turn-end`: notification once a turn has ended, with how it
    /// ended. Since 1.1.
    pub const TurnEnd: Seam = Seam(11);
    /// `agent/cwd-changed`: notification once a session's working
    /// directory has moved (a shell tool's `cd`). Since 1.3.
    pub const CwdChanged: Seam = Seam(12);
    /// `agent/model-request`: notification before each request to the
    /// model (Codex's `PreModelRequest`). Since 1.4.
    pub const ModelRequest: Seam = Seam(13);
    /// `tools/permission-request`: waterfall when a tool call would ask
    /// someone for permission and someone can be asked, before they are
    /// (Claude Code's `PermissionRequest`). Since 1.4.
    pub const PermissionRequest: Seam = Seam(14);
    /// `agent/compact`: waterfall before a session's history is replaced
    /// by a summary (Claude Code's `PreCompact`), answered with a
    /// [`crate::PromptDecision`]: `Block` keeps the history, the context of
    /// an `Allow` is added to the summary instructions. Since 1.5.
    pub const Compact: Seam = Seam(15);
    /// `agent/compacted`: notification once a session's history was
    /// replaced by a summary (Claude Code's `PostCompact`). Since 1.5.
    pub const Compacted: Seam = Seam(16);
    /// `mcp/elicitation`: waterfall when an MCP server asks the user for
    /// input during a tool call (`elicitation/create`), answered with an
    /// [`crate::ElicitationDecision`] (Claude Code's `Elicitation` and
    /// `ElicitationResult`). The host's default asks the `elicitation`
    /// service (an ACP editor) and without one is `Cancel`, as `claude -p`
    /// answers. Since 1.10.
    pub const Elicitation: Seam = Seam(17);
}

/// Every seam this build knows: its constant, its event name, whether it
/// is a notification. Append only; a seam's number never changes.
const SEAMS: &[(Seam, &str, bool)] = &[
    (Seam::SessionStart, "agent/session-start", true),
    (Seam::SessionEnd, "agent/session-end", true),
    (Seam::PromptSubmit, "agent/prompt-submit", false),
    (Seam::PreExecute, "tools/pre-execute", false),
    (Seam::Guard, "tools/guard", false),
    (Seam::Execute, "tools/execute", false),
    (Seam::PostExecute, "tools/post-execute", false),
    (Seam::ToolResult, "tools/result", true),
    (Seam::TurnContinuation, "agent/turn-continuation", false),
    (Seam::SubagentStart, "subagent/start", true),
    (Seam::SubagentEnd, "subagent/end", true),
    (Seam::TurnEnd, "agent/turn-end", true),
    (Seam::CwdChanged, "agent/cwd-changed", true),
    (Seam::ModelRequest, "agent/model-request", true),
    (Seam::PermissionRequest, "tools/permission-request", false),
    (Seam::Compact, "agent/compact", false),
    (Seam::Compacted, "agent/compacted", true),
    (Seam::Elicitation, "mcp/elicitation", false),
];

impl Seam {
    /// Every seam this build knows, in pipeline order.
    pub const ALL: &'static [Seam] = &{
        let mut all = [Seam(0); SEAMS.len()];
        let mut i = 0;
        while i < SEAMS.len() {
            all[i] = SEAMS[i].0;
            i += 1;
        }
        all
    };

    fn entry(self) -> Option<&'static (Seam, &'static str, bool)> {
        SEAMS.iter().find(|(seam, _, _)| *seam == self)
    }

    /// Whether this build knows the seam (a number from a newer build
    /// may not be).
    pub fn is_known(self) -> bool {
        self.entry().is_some()
    }

    /// The seam's event name, e.g. `tools/pre-execute`; `unknown` for a
    /// seam this build does not know.
    pub fn name(self) -> &'static str {
        self.entry().map_or("unknown", |(_, name, _)| name)
    }

    /// The seam called `name` (e.g. `tools/pre-execute`), if this build
    /// knows it.
    pub fn from_name(name: &str) -> Option<Seam> {
        SEAMS
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(s, _, _)| *s)
    }

    /// The seam's number, stable across versions.
    pub fn number(self) -> u8 {
        self.0
    }

    /// The seam with number `number`, whether this build knows it or not.
    pub const fn from_number(number: u8) -> Seam {
        Seam(number)
    }

    /// Whether listeners on this seam only observe.
    pub fn is_notification(self) -> bool {
        self.entry()
            .is_some_and(|(_, _, notification)| *notification)
    }
}

impl std::fmt::Display for Seam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.entry() {
            Some((_, name, _)) => f.write_str(name),
            None => write!(f, "unknown seam #{}", self.0),
        }
    }
}

impl std::fmt::Debug for Seam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Seam({self})")
    }
}

/// Why `agent/session-start` fired: a number with named constants (like
/// [`Seam`]), so a minor may add reasons.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionStartSource(u8);

// Named like the enum variants they replace.
#[allow(non_upper_case_globals)]
impl SessionStartSource {
    /// A fresh or forked session.
    pub const Startup: SessionStartSource = SessionStartSource(0);
    /// A session reloaded from disk.
    pub const Resume: SessionStartSource = SessionStartSource(1);
    /// The conversation was cleared.
    pub const Clear: SessionStartSource = SessionStartSource(2);
    /// The conversation was compacted.
    pub const Compact: SessionStartSource = SessionStartSource(3);
}

impl SessionStartSource {
    /// Wire name (`startup`, `resume`, `clear`, `compact`), `unknown` for a
    /// reason this build does not know.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStartSource::Startup => "startup",
            SessionStartSource::Resume => "resume",
            SessionStartSource::Clear => "clear",
            SessionStartSource::Compact => "compact",
            _ => "unknown",
        }
    }
}

impl std::fmt::Debug for SessionStartSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionStartSource({})", self.as_str())
    }
}

/// Snapshot for `agent/session-start`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct SessionStartInput {
    /// The session.
    pub session: SessionRef,
    /// Why it started.
    pub source: SessionStartSource,
}

/// The `agent/session-end` reason when `dsh prompt` ends a session after
/// killing the background jobs its wind-down grace did not see end (since
/// 1.11): `claude -p` exits then without running SessionEnd hooks
/// (recorded `S260-left-running`), so the Claude bridge runs none; other
/// plugins clean up as for any end.
pub const SESSION_END_WIND_DOWN_KILLED: &str = "wind-down-killed";

/// Snapshot for `agent/session-end`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct SessionEndInput {
    /// The session.
    pub session: SessionRef,
    /// Why it ended (`other`, `clear`, `logout`, ...;
    /// [`SESSION_END_WIND_DOWN_KILLED`]).
    pub reason: RString,
}

/// Snapshot for `agent/prompt-submit`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct PromptSubmitInput {
    /// The session (its turn is already open).
    pub session: SessionRef,
    /// The prompt as submitted.
    pub content: RVec<ContentBlock_NE>,
    /// Who submitted it.
    pub source: MessageSource_NE,
}

/// The sealed identity of one tool call, immutable for the whole pipeline.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct ToolCall {
    /// The session the call belongs to.
    pub session: SessionRef,
    /// The model's call id.
    pub call_id: RString,
    /// Tool name as the model called it.
    pub name: RString,
    /// Arguments, canonical JSON text, materialized once.
    pub arguments: RString,
    /// Opaque token of the parent call when this call is nested.
    pub parent: ROption<RString>,
}

/// Snapshot for `tools/execute`: the call plus the current abort signal.
#[repr(C)]
#[derive(StableAbi, Clone)]
pub struct ExecuteInput {
    /// The sealed call.
    pub call: RArc<ToolCall>,
    /// Fires when the call must stop.
    pub signal: AbortSignalBox,
}

/// Snapshot for `tools/post-execute` and `tools/result`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct PostExecuteInput {
    /// The sealed call.
    pub call: RArc<ToolCall>,
    /// The result so far (protected: listeners get a copy).
    pub result: ToolResult,
    /// Whether the call was denied before it ran.
    pub denied: bool,
}

/// Snapshot for `agent/turn-continuation`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct ContinuationInput {
    /// The session.
    pub session: SessionRef,
    /// Steps run so far in this turn.
    pub step_count: u32,
    /// What the loop would do on its own (see
    /// [`ContinuationInput::default_decision`]).
    pub default: ContinuationDecision_NE,
    /// How many continues were forced in a row just before this one
    /// (non-zero means a continuation hook is already active).
    pub consecutive_continues: u32,
    /// The model's last text in this turn.
    pub last_assistant_message: RString,
}

impl ContinuationInput {
    /// What the loop would do on its own, if this build knows that
    /// decision.
    pub fn default_decision(&self) -> Option<ContinuationDecision> {
        self.default.as_enum().ok().cloned()
    }
}

/// Snapshot for `subagent/start` and `subagent/end`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct SubagentInfo {
    /// The parent session.
    pub parent: SessionRef,
    /// The child session id.
    pub child_session_id: RString,
    /// The child's log file.
    pub child_log_path: RString,
    /// Agent type, e.g. `general-purpose`.
    pub agent_type: RString,
    /// The task description.
    pub description: RString,
    /// The prompt given to the child.
    pub prompt: RString,
    /// The parent's tool call id.
    pub call_id: RString,
    /// The child's final text (end only).
    pub result: ROption<RString>,
}

/// Snapshot for `agent/turn-end` (since 1.1).
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct TurnEndInput {
    /// The session; its `turn_id` and `prompt_id` are the ended turn's.
    pub session: SessionRef,
    /// How the turn ended: `completed`, `aborted`, `error`, `disposed`,
    /// `max-tokens` or `rejected` (the `reason` of its `turn/end` record).
    pub reason: RString,
    /// The ending's message, if any (an error, a halt or block reason).
    pub message: ROption<RString>,
}

/// Snapshot for `tools/permission-request` (since 1.4): a call that would
/// ask for permission.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct PermissionRequestInput {
    /// The call, with the arguments it would run with.
    pub call: RArc<ToolCall>,
    /// Why it asks (a hook's reason, a rule, the tool's own text).
    pub reason: RString,
    /// The rule changes the asker would offer, as a JSON array in Claude
    /// Code's `permission_suggestions` shape (`[]` when none).
    pub suggestions: RString,
}

/// Snapshot for `agent/cwd-changed` (since 1.3).
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct CwdChangedInput {
    /// The session, already in its new directory (`session.cwd` is
    /// `new_cwd`).
    pub session: SessionRef,
    /// Where the session was.
    pub old_cwd: RString,
    /// Where it is now.
    pub new_cwd: RString,
}

/// Snapshot for `agent/model-request` (since 1.4): a request to the model
/// is about to be sent.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct ModelRequestInput {
    /// The session whose turn asks.
    pub session: SessionRef,
    /// The request's id, fresh for every request.
    pub request_id: RString,
    /// The turn's step the request is for (1-based).
    pub step: u32,
    /// Which attempt at this request (1 for the first).
    pub attempt: u32,
}

/// Snapshot for `agent/compact` (since 1.5): a session's history is about
/// to be summarized.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct CompactInput {
    /// The session.
    pub session: SessionRef,
    /// What asked for it: `manual` (the `/compact` prompt) or `auto` (the
    /// context window filled up).
    pub trigger: RString,
    /// The instructions given with `/compact`, if any.
    pub custom_instructions: ROption<RString>,
}

/// Snapshot for `agent/compacted` (since 1.5): a session's history was
/// replaced by a summary.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct CompactedInput {
    /// The session.
    pub session: SessionRef,
    /// `manual` or `auto`, as for `agent/compact`.
    pub trigger: RString,
    /// The model's answer to the summary request, whole.
    pub summary: RString,
}

/// Snapshot for `mcp/elicitation` (since 1.10): an MCP server asks the
/// user for input while one of its tools runs.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct ElicitationInput {
    /// The session whose tool call the server is answering.
    pub session: SessionRef,
    /// The server's name (as in `mcp__<server>__<tool>`).
    pub server: RString,
    /// What the server tells the user.
    pub message: RString,
    /// `form` (answered with content matching `requested_schema`) or `url`
    /// (the user goes to `url`). dsh's MCP client offers forms only, as
    /// Claude Code does, and refuses a url-mode request before this seam;
    /// `url` and `elicitation_id` are for a host that accepts them.
    pub mode: RString,
    /// The form's JSON Schema as JSON text (form mode).
    pub requested_schema: ROption<RString>,
    /// Where the user should go (url mode).
    pub url: ROption<RString>,
    /// The server's id for this elicitation (url mode).
    pub elicitation_id: ROption<RString>,
}

/// Any seam's input. It crosses the boundary as a [`SeamInput_NE`]
/// (`NonExhaustive`): a variant added in a later minor sits in the same
/// storage, and a build that does not know it gets an error from
/// `as_enum`/`into_enum` instead of undefined behaviour.
///
/// Append variants only; the storage size is fixed for the major.
#[repr(u8)]
#[derive(StableAbi, Clone)]
#[sabi(kind(WithNonExhaustive(size = [usize; 8], traits(Clone))))]
#[non_exhaustive]
pub enum SeamInput {
    /// `agent/session-start`.
    SessionStart(RArc<SessionStartInput>),
    /// `agent/session-end`.
    SessionEnd(RArc<SessionEndInput>),
    /// `agent/prompt-submit`.
    PromptSubmit(RArc<PromptSubmitInput>),
    /// `tools/pre-execute`.
    PreExecute(RArc<ToolCall>),
    /// `tools/execute`.
    Execute(RArc<ExecuteInput>),
    /// `tools/post-execute`.
    PostExecute(RArc<PostExecuteInput>),
    /// `tools/result`.
    ToolResult(RArc<PostExecuteInput>),
    /// `agent/turn-continuation`.
    TurnContinuation(RArc<ContinuationInput>),
    /// `subagent/start`.
    SubagentStart(RArc<SubagentInfo>),
    /// `subagent/end`.
    SubagentEnd(RArc<SubagentInfo>),
    /// `agent/turn-end` (since 1.1).
    TurnEnd(RArc<TurnEndInput>),
    /// `agent/cwd-changed` (since 1.3).
    CwdChanged(RArc<CwdChangedInput>),
    /// `agent/model-request` (since 1.4).
    ModelRequest(RArc<ModelRequestInput>),
    /// `tools/permission-request` (since 1.4).
    PermissionRequest(RArc<PermissionRequestInput>),
    /// `agent/compact` (since 1.5).
    Compact(RArc<CompactInput>),
    /// `agent/compacted` (since 1.5).
    Compacted(RArc<CompactedInput>),
    /// `mcp/elicitation` (since 1.10).
    Elicitation(RArc<ElicitationInput>),
    /// Test-only: a seam from a minor this crate has not reached, for the
    /// fixture that proves a newer plugin is refused.
    #[cfg(feature = "__fixture-future-minor")]
    #[doc(hidden)]
    FixtureFuture(RArc<TurnEndInput>),
}

impl SeamInput {
    /// The seam this input belongs to.
    pub fn seam(&self) -> Seam {
        match self {
            SeamInput::SessionStart(_) => Seam::SessionStart,
            SeamInput::SessionEnd(_) => Seam::SessionEnd,
            SeamInput::PromptSubmit(_) => Seam::PromptSubmit,
            SeamInput::PreExecute(_) => Seam::PreExecute,
            SeamInput::Execute(_) => Seam::Execute,
            SeamInput::PostExecute(_) => Seam::PostExecute,
            SeamInput::ToolResult(_) => Seam::ToolResult,
            SeamInput::TurnContinuation(_) => Seam::TurnContinuation,
            SeamInput::SubagentStart(_) => Seam::SubagentStart,
            SeamInput::SubagentEnd(_) => Seam::SubagentEnd,
            SeamInput::TurnEnd(_) => Seam::TurnEnd,
            SeamInput::CwdChanged(_) => Seam::CwdChanged,
            SeamInput::ModelRequest(_) => Seam::ModelRequest,
            SeamInput::PermissionRequest(_) => Seam::PermissionRequest,
            SeamInput::Compact(_) => Seam::Compact,
            SeamInput::Compacted(_) => Seam::Compacted,
            SeamInput::Elicitation(_) => Seam::Elicitation,
            #[cfg(feature = "__fixture-future-minor")]
            SeamInput::FixtureFuture(_) => Seam(200),
        }
    }
}

impl From<SeamInput> for SeamInput_NE {
    fn from(input: SeamInput) -> Self {
        NonExhaustive::new(input)
    }
}
