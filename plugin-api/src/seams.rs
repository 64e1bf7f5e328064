//! Every seam, its input snapshot and its decision (ARCHITECTURE.md §3).
//!
//! Snapshots travel as `RArc`s: listeners share one immutable copy and
//! cannot change what the next listener sees. Decisions are enums, never
//! flags. Tool arguments and structured results cross as canonical JSON text.

use abi_stable::{
    StableAbi,
    std_types::{RArc, ROption, RString, RVec},
};

use crate::ffi::AbortSignalBox;
use crate::types::{ContentBlock, MessageSource, SessionRef};

/// The interception points of an agent. Names are the contract.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seam {
    /// `agent/session-start`: notification; may inject context.
    SessionStart,
    /// `agent/session-end`: notification when a session closes.
    SessionEnd,
    /// `agent/prompt-submit`: waterfall per drained prompt.
    PromptSubmit,
    /// `tools/pre-execute`: waterfall gate.
    PreExecute,
    /// Guards: synchronous deny-or-abstain after the pre-execute waterfall.
    Guard,
    /// `tools/execute`: around-dispatch waterfall.
    Execute,
    /// `tools/post-execute`: waterfall that may transform the result.
    PostExecute,
    /// `tools/result`: notification after everything.
    ToolResult,
    /// `agent/turn-continuation`: waterfall deciding stop or continue.
    TurnContinuation,
    /// `subagent/start`: notification.
    SubagentStart,
    /// `subagent/end`: notification.
    SubagentEnd,
}

impl Seam {
    /// Every seam, in pipeline order.
    pub const ALL: [Seam; 11] = [
        Seam::SessionStart,
        Seam::SessionEnd,
        Seam::PromptSubmit,
        Seam::PreExecute,
        Seam::Guard,
        Seam::Execute,
        Seam::PostExecute,
        Seam::ToolResult,
        Seam::TurnContinuation,
        Seam::SubagentStart,
        Seam::SubagentEnd,
    ];

    /// The seam's event name, as written in the design.
    pub fn name(self) -> &'static str {
        match self {
            Seam::SessionStart => "agent/session-start",
            Seam::SessionEnd => "agent/session-end",
            Seam::PromptSubmit => "agent/prompt-submit",
            Seam::PreExecute => "tools/pre-execute",
            Seam::Guard => "tools/guard",
            Seam::Execute => "tools/execute",
            Seam::PostExecute => "tools/post-execute",
            Seam::ToolResult => "tools/result",
            Seam::TurnContinuation => "agent/turn-continuation",
            Seam::SubagentStart => "subagent/start",
            Seam::SubagentEnd => "subagent/end",
        }
    }

    /// Whether listeners on this seam only observe.
    pub fn is_notification(self) -> bool {
        matches!(
            self,
            Seam::SessionStart
                | Seam::SessionEnd
                | Seam::ToolResult
                | Seam::SubagentStart
                | Seam::SubagentEnd
        )
    }
}

impl std::fmt::Display for Seam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why `agent/session-start` fired.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionStartSource {
    /// A fresh or forked session.
    Startup,
    /// A session reloaded from disk.
    Resume,
    /// The conversation was cleared.
    Clear,
    /// The conversation was compacted.
    Compact,
}

impl SessionStartSource {
    /// Wire name (`startup`, `resume`, `clear`, `compact`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStartSource::Startup => "startup",
            SessionStartSource::Resume => "resume",
            SessionStartSource::Clear => "clear",
            SessionStartSource::Compact => "compact",
        }
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

/// Snapshot for `agent/session-end`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct SessionEndInput {
    /// The session.
    pub session: SessionRef,
    /// Why it ended (`other`, `clear`, `logout`, ...).
    pub reason: RString,
}

/// Snapshot for `agent/prompt-submit`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct PromptSubmitInput {
    /// The session (its turn is already open).
    pub session: SessionRef,
    /// The prompt as submitted.
    pub content: RVec<ContentBlock>,
    /// Who submitted it.
    pub source: MessageSource,
}

/// Decision of `agent/prompt-submit`.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum PromptDecision {
    /// Let the prompt through, optionally rewritten and with added context.
    Allow {
        /// Replacement content; `None` keeps the prompt.
        content: ROption<RVec<ContentBlock>>,
        /// Context appended after the prompt, attributed to the plugin.
        additional_context: ROption<RString>,
    },
    /// Veto the prompt.
    Block {
        /// Why; recorded in `prompt/blocked`.
        reason: RString,
    },
}

impl PromptDecision {
    /// Allow unchanged.
    pub fn allow() -> Self {
        PromptDecision::Allow {
            content: ROption::RNone,
            additional_context: ROption::RNone,
        }
    }
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

/// Decision of `tools/pre-execute`.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum PreToolDecision {
    /// Run the tool.
    Allow {
        /// A replacement for the whole argument object (canonical JSON),
        /// applied as one unit: history, audit and presentation all see it,
        /// and the log keeps the original call too. `None` runs as called.
        updated_arguments: ROption<RString>,
    },
    /// Do not run it; the model gets an error result with the reason.
    Deny {
        /// Why.
        reason: RString,
    },
    /// Ask the approval service.
    Ask {
        /// Why approval is needed.
        reason: ROption<RString>,
    },
}

impl PreToolDecision {
    /// Allow as called.
    pub fn allow() -> Self {
        PreToolDecision::Allow {
            updated_arguments: ROption::RNone,
        }
    }
}

/// Decision of a guard.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum GuardDecision {
    /// No opinion.
    Abstain,
    /// Deny, whatever the waterfall said.
    Deny {
        /// Why.
        reason: RString,
    },
}

/// A normalized tool result: always JSON-safe.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// What the model reads.
    pub content: RVec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The tool's structured response (canonical JSON), when it has one.
    pub structured: ROption<RString>,
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

/// Decision of `tools/post-execute`.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum PostToolDecision {
    /// Keep the result, optionally replacing its content.
    Accept {
        /// Replacement content the model sees.
        content: ROption<RVec<ContentBlock>>,
        /// Context appended after every result of the step.
        additional_context: ROption<RString>,
    },
    /// Feed back to the model as a blocking error alongside the result.
    Block {
        /// Feedback for the model.
        feedback: RString,
        /// Context appended after every result of the step.
        additional_context: ROption<RString>,
    },
}

impl PostToolDecision {
    /// Accept unchanged.
    pub fn accept() -> Self {
        PostToolDecision::Accept {
            content: ROption::RNone,
            additional_context: ROption::RNone,
        }
    }
}

/// Snapshot for `agent/turn-continuation`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct ContinuationInput {
    /// The session.
    pub session: SessionRef,
    /// Steps run so far in this turn.
    pub step_count: u32,
    /// What the loop would do on its own.
    pub default: ContinuationDecision,
    /// How many continues were forced in a row just before this one
    /// (non-zero means a continuation hook is already active).
    pub consecutive_continues: u32,
    /// The model's last text in this turn.
    pub last_assistant_message: RString,
}

/// Decision of `agent/turn-continuation`.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum ContinuationDecision {
    /// End the turn.
    Stop,
    /// Run another step; the reason is recorded as steering the model reads.
    Continue {
        /// Model-facing steering text.
        reason: ROption<RString>,
    },
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

/// Any seam's input, as it crosses the boundary.
#[repr(C, u8)]
#[derive(StableAbi, Clone)]
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
        }
    }
}

/// Any seam's answer, as it crosses the boundary.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum SeamOutput {
    /// A notification listener observed.
    Observed,
    /// `agent/prompt-submit`.
    Prompt(PromptDecision),
    /// `tools/pre-execute`.
    PreTool(PreToolDecision),
    /// `tools/execute`.
    Execute(ToolResult),
    /// `tools/post-execute`.
    PostTool(PostToolDecision),
    /// `agent/turn-continuation`.
    Continuation(ContinuationDecision),
}

impl ToolResult {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: RVec::from(vec![ContentBlock::text(text)]),
            is_error: false,
            structured: ROption::RNone,
        }
    }

    /// A failed result whose text explains the failure.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            content: RVec::from(vec![ContentBlock::text(text)]),
            is_error: true,
            structured: ROption::RNone,
        }
    }

    /// Attaches a structured response (canonical JSON text).
    pub fn with_structured(mut self, json: impl Into<String>) -> Self {
        self.structured = ROption::RSome(RString::from(json.into()));
        self
    }

    /// The text of every text block, joined by newlines.
    pub fn text_content(&self) -> String {
        crate::types::blocks_text(&self.content)
    }
}
