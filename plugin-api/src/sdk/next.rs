//! Typed handles to the rest of a waterfall.
//!
//! `next` answers with a [`SeamAnswer_NE`](crate::SeamAnswer_NE), which this
//! module decodes into the seam's decision. An answer from a newer build
//! that this build cannot decode is an error for the listener, and is kept
//! aside in a [`Passthrough`]: if the listener returns that error, the SDK
//! answers with the kept value unchanged, as if the listener had delegated.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use abi_stable::std_types::{ROption, RResult};

use crate::decisions::{
    ContinuationDecision, ElicitationDecision, PermissionDecision, PostToolDecision,
    PreToolDecision, PromptDecision, SeamAnswer_NE, SeamOutput, ToolResult,
};
use crate::ffi::{AbortSignalBox, NextBox, WireResult};

/// Converts the untyped answer of a chain into a seam's decision type.
pub trait FromSeamOutput: Sized {
    /// The decision, or an error naming what arrived instead.
    fn from_output(output: SeamOutput) -> Result<Self, String>;
    /// Wraps the decision for the boundary.
    fn into_output(self) -> SeamOutput;
}

macro_rules! seam_output {
    ($ty:ty, $variant:ident) => {
        impl FromSeamOutput for $ty {
            fn from_output(output: SeamOutput) -> Result<Self, String> {
                match output {
                    SeamOutput::$variant(d) => Ok(d),
                    other => Err(format!(
                        concat!("expected a ", stringify!($variant), " decision, got {:?}"),
                        other
                    )),
                }
            }
            fn into_output(self) -> SeamOutput {
                SeamOutput::$variant(self)
            }
        }
    };
}

seam_output!(PromptDecision, Prompt);
seam_output!(PreToolDecision, PreTool);
seam_output!(ToolResult, Execute);
seam_output!(PostToolDecision, PostTool);
seam_output!(ContinuationDecision, Continuation);
seam_output!(PermissionDecision, Permission);
seam_output!(ElicitationDecision, Elicitation);

/// Where an undecodable answer from `next` waits, shared by one listener
/// call and its `next`.
#[derive(Clone, Default)]
pub(crate) struct Passthrough(Arc<Mutex<Option<SeamAnswer_NE>>>);

impl Passthrough {
    fn keep(&self, answer: SeamAnswer_NE) {
        // A poisoned lock only means a panic elsewhere; the slot is a
        // plain value either way.
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(answer);
    }

    /// The kept answer, if `next` produced one this build cannot decode.
    pub(crate) fn take(&self) -> Option<SeamAnswer_NE> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Decodes `next`'s answer, keeping an undecodable one aside.
async fn run_next(
    inner: NextBox,
    signal: ROption<AbortSignalBox>,
    passthrough: &Passthrough,
) -> Result<SeamOutput, String> {
    let answer: WireResult = inner.run(signal).await;
    match answer {
        RResult::ROk(answer) => SeamOutput::try_from(answer).map_err(|unknown| {
            let message = format!("the rest of the chain answered with {unknown}");
            passthrough.keep(*unknown.answer);
            message
        }),
        RResult::RErr(e) => Err(e.into()),
    }
}

/// The rest of a waterfall. Call [`Next::run`] to delegate; drop it to
/// short-circuit with your own decision.
pub struct Next<D> {
    inner: NextBox,
    passthrough: Passthrough,
    _decision: PhantomData<fn() -> D>,
}

impl<D: FromSeamOutput> Next<D> {
    /// Wraps the raw handle.
    pub fn new(inner: NextBox) -> Self {
        Next::with_passthrough(inner, Passthrough::default())
    }

    pub(crate) fn with_passthrough(inner: NextBox, passthrough: Passthrough) -> Self {
        Next {
            inner,
            passthrough,
            _decision: PhantomData,
        }
    }

    /// Runs every later listener and returns their decision.
    ///
    /// A decision this build of the API does not know (from a plugin built
    /// against a later minor) is an error; returning that error from the
    /// listener passes the decision on unchanged.
    pub async fn run(self) -> Result<D, String> {
        D::from_output(run_next(self.inner, ROption::RNone, &self.passthrough).await?)
    }
}

/// The rest of a `tools/execute` chain, ending in the core dispatch.
pub struct ExecuteNext {
    inner: NextBox,
    passthrough: Passthrough,
}

impl ExecuteNext {
    /// Wraps the raw handle.
    pub fn new(inner: NextBox) -> Self {
        ExecuteNext::with_passthrough(inner, Passthrough::default())
    }

    pub(crate) fn with_passthrough(inner: NextBox, passthrough: Passthrough) -> Self {
        ExecuteNext { inner, passthrough }
    }

    /// Runs the rest of the chain, optionally with a replacement abort signal
    /// (the only thing an around-dispatch wrapper may change).
    pub async fn run(self, signal: Option<AbortSignalBox>) -> Result<ToolResult, String> {
        ToolResult::from_output(run_next(self.inner, signal.into(), &self.passthrough).await?)
    }
}
