//! Typed handles to the rest of a waterfall.

use std::marker::PhantomData;

use abi_stable::std_types::{ROption, RResult};

use crate::ffi::{AbortSignalBox, NextBox};
use crate::seams::{
    ContinuationDecision, PostToolDecision, PreToolDecision, PromptDecision, SeamOutput, ToolResult,
};

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

/// The rest of a waterfall. Call [`Next::run`] to delegate; drop it to
/// short-circuit with your own decision.
pub struct Next<D> {
    inner: NextBox,
    _decision: PhantomData<fn() -> D>,
}

impl<D: FromSeamOutput> Next<D> {
    /// Wraps the raw handle.
    pub fn new(inner: NextBox) -> Self {
        Next {
            inner,
            _decision: PhantomData,
        }
    }

    /// Runs every later listener and returns their decision.
    pub async fn run(self) -> Result<D, String> {
        match self.inner.run(ROption::RNone).await {
            RResult::ROk(output) => D::from_output(output),
            RResult::RErr(e) => Err(e.into()),
        }
    }
}

/// The rest of a `tools/execute` chain, ending in the core dispatch.
pub struct ExecuteNext {
    inner: NextBox,
}

impl ExecuteNext {
    /// Wraps the raw handle.
    pub fn new(inner: NextBox) -> Self {
        ExecuteNext { inner }
    }

    /// Runs the rest of the chain, optionally with a replacement abort signal
    /// (the only thing an around-dispatch wrapper may change).
    pub async fn run(self, signal: Option<AbortSignalBox>) -> Result<ToolResult, String> {
        match self.inner.run(signal.into()).await {
            RResult::ROk(output) => ToolResult::from_output(output),
            RResult::RErr(e) => Err(e.into()),
        }
    }
}
