//! What listeners answer: one decision enum per waterfall seam, the tool
//! result, and the two forms of "any seam's answer".
//!
//! Decisions are enums, never flags. Each one is declared with abi_stable's
//! `WithNonExhaustive`, so a minor version may append variants: across the
//! boundary a decision travels as its `_NE` form (`PromptDecision_NE`, ...),
//! fixed-size storage plus the vtable of the build that made it, and a build
//! that does not know a variant can hold, clone, compare and drop it but not
//! decode it.
//!
//! [`SeamOutput`] is the typed answer the host and the SDK work with;
//! [`SeamAnswer_NE`] is what crosses the boundary. The conversion one way is
//! total; the other way fails only with [`UnknownAnswer`], which hands the
//! undecodable value back so it can be passed on unchanged.

// `WithNonExhaustive` generates its storage and interface types with
// impls inside anonymous consts; nothing a plugin author can act on.
#![allow(non_local_definitions)]

use abi_stable::{
    StableAbi,
    nonexhaustive_enum::NonExhaustive,
    std_types::{ROption, RString, RVec},
};

use crate::context::AuthoredContext;
use crate::types::{ContentBlock, ContentBlock_NE};

/// Decision of `agent/prompt-submit`.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 16],
    traits(Clone, Debug, PartialEq, Eq)
)))]
pub enum PromptDecision {
    /// Let the prompt through, optionally rewritten and with added context.
    Allow {
        /// Replacement content; `None` keeps the prompt.
        content: ROption<RVec<ContentBlock_NE>>,
        /// Context appended after the prompt, attributed to the plugin.
        additional_context: ROption<RString>,
    },
    /// Veto the prompt.
    Block {
        /// Why; recorded in `prompt/blocked`.
        reason: RString,
    },
    /// `Allow` with its context as authored pieces (since 1.2): the host
    /// stamps each piece a listener adds with that listener's plugin, so
    /// each piece is recorded as its author's `context/message`. Build it
    /// with [`PromptDecision::with_context_first`] and friends
    /// ([`crate::context`]).
    AllowAuthored {
        /// Replacement content; `None` keeps the prompt.
        content: ROption<RVec<ContentBlock_NE>>,
        /// Context appended after the prompt, piece by piece, in order.
        context: RVec<AuthoredContext>,
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

/// Decision of `tools/pre-execute`.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 16],
    traits(Clone, Debug, PartialEq, Eq)
)))]
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
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 16],
    traits(Clone, Debug, PartialEq, Eq)
)))]
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
    pub content: RVec<ContentBlock_NE>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The tool's structured response (canonical JSON), when it has one.
    pub structured: ROption<RString>,
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

/// Decision of `tools/post-execute`.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 16],
    traits(Clone, Debug, PartialEq, Eq)
)))]
pub enum PostToolDecision {
    /// Keep the result, optionally replacing its content.
    Accept {
        /// Replacement content the model sees.
        content: ROption<RVec<ContentBlock_NE>>,
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
    /// `Accept` with its context as authored pieces (since 1.2; see
    /// [`PromptDecision::AllowAuthored`]).
    AcceptAuthored {
        /// Replacement content the model sees.
        content: ROption<RVec<ContentBlock_NE>>,
        /// Context appended after every result of the step, piece by piece.
        context: RVec<AuthoredContext>,
    },
    /// `Block` with its context as authored pieces (since 1.2; see
    /// [`PromptDecision::AllowAuthored`]).
    BlockAuthored {
        /// Feedback for the model.
        feedback: RString,
        /// Context appended after every result of the step, piece by piece.
        context: RVec<AuthoredContext>,
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

/// Decision of `agent/turn-continuation`.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 16],
    traits(Clone, Debug, PartialEq, Eq)
)))]
pub enum ContinuationDecision {
    /// End the turn.
    Stop,
    /// Run another step; the reason is recorded as steering the model reads.
    Continue {
        /// Model-facing steering text.
        reason: ROption<RString>,
    },
    /// `Continue` whose steering is several texts (since 1.6): the model
    /// reads one user message with a text part each, in order, as Claude
    /// Code sends several Stop blocks and Codex several `<hook_prompt>`s.
    /// Build it with [`ContinuationDecision::steer`]. A listener built
    /// against an older minor is handed `Continue` with the parts joined by
    /// [`STEERING_PART_SEPARATOR`]; answering that text unchanged keeps the
    /// parts.
    ContinueParts {
        /// The steering texts, in order.
        parts: RVec<RString>,
    },
}

/// What joins a [`ContinuationDecision::ContinueParts`]'s parts in its text
/// form: for a listener built before 1.6, in the log's `content`, and for a
/// provider that reads only a message's `content`.
pub const STEERING_PART_SEPARATOR: &str = "\n";

impl ContinuationDecision {
    /// Continue with `parts` as the steering: one part is a plain
    /// `Continue`, several a [`ContinuationDecision::ContinueParts`], none
    /// a `Continue` without a reason.
    pub fn steer(parts: Vec<String>) -> Self {
        match parts.len() {
            0 => ContinuationDecision::Continue {
                reason: ROption::RNone,
            },
            1 => ContinuationDecision::Continue {
                reason: ROption::RSome(RString::from(parts.concat())),
            },
            _ => ContinuationDecision::ContinueParts {
                parts: parts.into_iter().map(RString::from).collect(),
            },
        }
    }

    /// The steering texts of a continue, in order (`None`: stop; empty: a
    /// continue without a reason).
    pub fn steering_parts(&self) -> Option<Vec<String>> {
        match self {
            ContinuationDecision::Stop => None,
            ContinuationDecision::Continue { reason } => Some(
                reason
                    .as_ref()
                    .into_option()
                    .map(|r| vec![r.to_string()])
                    .unwrap_or_default(),
            ),
            ContinuationDecision::ContinueParts { parts } => {
                Some(parts.iter().map(|p| p.to_string()).collect())
            }
        }
    }

    /// This decision as a listener built before 1.6 reads it: several parts
    /// joined into one `Continue` reason.
    pub fn into_text_form(self) -> Self {
        match self {
            ContinuationDecision::ContinueParts { parts } => ContinuationDecision::Continue {
                reason: ROption::RSome(RString::from(
                    parts
                        .iter()
                        .map(|p| p.as_str())
                        .collect::<Vec<_>>()
                        .join(STEERING_PART_SEPARATOR),
                )),
            },
            other => other,
        }
    }
}

/// Whether a plugin built against `api_version` reads
/// [`ContinuationDecision::ContinueParts`] (1.6 and later); an older one is
/// handed its text form.
pub fn reads_steering_parts(api_version: &str) -> bool {
    let mut parts = api_version.split('.').map(|p| p.parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => major > 1 || minor >= 6,
        _ => false,
    }
}

macro_rules! into_non_exhaustive {
    ($($ty:ident => $ne:ident),* $(,)?) => {$(
        impl From<$ty> for $ne {
            fn from(value: $ty) -> Self {
                NonExhaustive::new(value)
            }
        }
    )*};
}

into_non_exhaustive!(
    PromptDecision => PromptDecision_NE,
    PreToolDecision => PreToolDecision_NE,
    GuardDecision => GuardDecision_NE,
    PostToolDecision => PostToolDecision_NE,
    ContinuationDecision => ContinuationDecision_NE,
    PermissionDecision => PermissionDecision_NE,
    ElicitationDecision => ElicitationDecision_NE,
    SeamAnswer => SeamAnswer_NE,
);

/// `tools/permission-request` (since 1.4): what a listener says about a
/// call that would ask for permission.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 16],
    traits(Clone, Debug, PartialEq, Eq)
)))]
pub enum PermissionDecision {
    /// No answer: ask as usual (the seam's default).
    Ask,
    /// Allow without asking.
    Allow {
        /// A whole new argument object (JSON text), if any.
        updated_arguments: ROption<RString>,
        /// Rule and mode changes to apply, as a JSON array in Claude Code's
        /// `updatedPermissions` shape (`addRules`, `setMode`, ...).
        updated_permissions: ROption<RString>,
    },
    /// Refuse without asking; the model reads `message`.
    Deny {
        /// What the model reads.
        message: RString,
        /// Also stop the turn.
        interrupt: bool,
    },
}

/// `mcp/elicitation` (since 1.10): the answer an MCP server gets to its
/// `elicitation/create`.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 8],
    traits(Clone, Debug, PartialEq, Eq)
)))]
pub enum ElicitationDecision {
    /// The user answered; `content` is the form's values as a JSON object
    /// (text), if any.
    Accept {
        /// The values, as JSON text.
        content: ROption<RString>,
    },
    /// The user said no.
    Decline,
    /// The user dismissed it (the seam's default: nobody could be asked).
    Cancel,
}

/// Any seam's answer, typed: what the host and the SDK work with.
///
/// It never crosses the boundary itself: [`SeamAnswer_NE`] does.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// `tools/permission-request` (since 1.4).
    Permission(PermissionDecision),
    /// `mcp/elicitation` (since 1.10).
    Elicitation(ElicitationDecision),
}

/// Any seam's answer as it crosses the boundary, inside a
/// [`SeamAnswer_NE`]. Each decision inside is non-exhaustive too, so a
/// minor may add a decision variant or a whole decision type.
///
/// Append variants only; the storage size is fixed for the major.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
#[sabi(kind(WithNonExhaustive(size = [usize; 24], traits(Clone, Debug, PartialEq))))]
#[non_exhaustive]
pub enum SeamAnswer {
    /// A notification listener observed.
    Observed,
    /// `agent/prompt-submit`.
    Prompt(PromptDecision_NE),
    /// `tools/pre-execute`.
    PreTool(PreToolDecision_NE),
    /// `tools/execute`.
    Execute(ToolResult),
    /// `tools/post-execute`.
    PostTool(PostToolDecision_NE),
    /// `agent/turn-continuation`.
    Continuation(ContinuationDecision_NE),
    /// `tools/permission-request` (since 1.4).
    Permission(PermissionDecision_NE),
    /// `mcp/elicitation` (since 1.10).
    Elicitation(ElicitationDecision_NE),
}

impl From<SeamOutput> for SeamAnswer_NE {
    fn from(output: SeamOutput) -> Self {
        let answer = match output {
            SeamOutput::Observed => SeamAnswer::Observed,
            SeamOutput::Prompt(d) => SeamAnswer::Prompt(d.into()),
            SeamOutput::PreTool(d) => SeamAnswer::PreTool(d.into()),
            SeamOutput::Execute(r) => SeamAnswer::Execute(r),
            SeamOutput::PostTool(d) => SeamAnswer::PostTool(d.into()),
            SeamOutput::Continuation(d) => SeamAnswer::Continuation(d.into()),
            SeamOutput::Permission(d) => SeamAnswer::Permission(d.into()),
            SeamOutput::Elicitation(d) => SeamAnswer::Elicitation(d.into()),
        };
        NonExhaustive::new(answer)
    }
}

/// An answer (or a decision inside it) that this build of the plugin API
/// does not know: it came from a build of a later minor.
///
/// It holds the answer as it arrived, so a listener can pass it on
/// unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownAnswer {
    /// The answer, untouched.
    pub answer: Box<SeamAnswer_NE>,
    /// What could not be decoded, e.g. `tools/pre-execute decision #3`.
    pub what: String,
}

impl std::fmt::Display for UnknownAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an answer this build of the plugin API ({}) does not know: {}",
            crate::API_VERSION,
            self.what
        )
    }
}

impl std::error::Error for UnknownAnswer {}

/// Decodes a nested decision, or rebuilds the outer answer around it.
fn decode<E, S, I>(
    inner: NonExhaustive<E, S, I>,
    seam: &str,
    rewrap: fn(NonExhaustive<E, S, I>) -> SeamAnswer,
) -> Result<E, UnknownAnswer>
where
    NonExhaustive<E, S, I>: abi_stable::nonexhaustive_enum::NonExhaustiveSharedOps,
    E: abi_stable::nonexhaustive_enum::GetEnumInfo,
{
    let discriminant = format!("{:?}", inner.get_discriminant());
    inner.into_enum().map_err(|e| UnknownAnswer {
        answer: Box::new(NonExhaustive::new(rewrap(e.into_inner()))),
        what: format!("{seam} decision #{discriminant}"),
    })
}

impl TryFrom<SeamAnswer_NE> for SeamOutput {
    type Error = UnknownAnswer;

    fn try_from(answer: SeamAnswer_NE) -> Result<Self, UnknownAnswer> {
        let discriminant = answer.get_discriminant();
        let answer = answer.into_enum().map_err(|e| UnknownAnswer {
            answer: Box::new(e.into_inner()),
            what: format!("answer #{discriminant}"),
        })?;
        Ok(match answer {
            SeamAnswer::Observed => SeamOutput::Observed,
            SeamAnswer::Prompt(d) => {
                SeamOutput::Prompt(decode(d, "agent/prompt-submit", SeamAnswer::Prompt)?)
            }
            SeamAnswer::PreTool(d) => {
                SeamOutput::PreTool(decode(d, "tools/pre-execute", SeamAnswer::PreTool)?)
            }
            SeamAnswer::Execute(r) => SeamOutput::Execute(r),
            SeamAnswer::PostTool(d) => {
                SeamOutput::PostTool(decode(d, "tools/post-execute", SeamAnswer::PostTool)?)
            }
            SeamAnswer::Continuation(d) => SeamOutput::Continuation(decode(
                d,
                "agent/turn-continuation",
                SeamAnswer::Continuation,
            )?),
            SeamAnswer::Permission(d) => SeamOutput::Permission(decode(
                d,
                "tools/permission-request",
                SeamAnswer::Permission,
            )?),
            SeamAnswer::Elicitation(d) => {
                SeamOutput::Elicitation(decode(d, "mcp/elicitation", SeamAnswer::Elicitation)?)
            }
        })
    }
}
