//! Answering a waterfall at once (since 1.5): [`Now`], what a listener's
//! synchronous form returns ([`Plugin::pre_execute_now`]).
//!
//! The host asks the synchronous form first, on the caller's thread, even
//! for a `.so` (no plugin thread, no time limit: nothing can cut off a
//! synchronous call). A listener that decides or passes there costs the
//! host no `next`, no future and no allocation; [`Now::Later`] hands the
//! call to the plugin's async method as before. Use it for what is cheap
//! and never blocks: a look at the arguments, a lookup in memory.
//!
//! [`Plugin::pre_execute_now`]: super::Plugin::pre_execute_now

use std::panic::{AssertUnwindSafe, catch_unwind};

use abi_stable::std_types::RResult;

use super::adapter::panic_message;
use crate::decisions::SeamOutput;
use crate::ffi::Immediate;

/// What a listener's synchronous form answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Now<D> {
    /// Delegate: the chain goes on as after `next.run().await`, and the
    /// listener hands on what the rest answers.
    Pass,
    /// Decide here, without the rest of the chain (a short-circuit).
    Decide(D),
    /// Nothing to say at once: the host calls the async method.
    Later,
}

/// What the SDK's default synchronous form returns: [`Now::Later`]. Only
/// this module can make one, so an override (whatever it does) returns
/// another type, and [`super::listened`] tells the two apart.
pub(crate) struct UnheardNow;

impl<D> From<UnheardNow> for Now<D> {
    fn from(_: UnheardNow) -> Self {
        Now::Later
    }
}

/// Runs a synchronous form, catching a panic, and wraps its answer for
/// the boundary.
pub(crate) fn immediate<D>(
    answer: impl FnOnce() -> Now<D>,
    wrap: fn(D) -> SeamOutput,
) -> Immediate {
    match catch_unwind(AssertUnwindSafe(answer)) {
        Ok(Now::Later) => Immediate::Later,
        Ok(Now::Pass) => Immediate::Pass,
        Ok(Now::Decide(decision)) => Immediate::Answer(RResult::ROk(wrap(decision).into())),
        Err(panic) => Immediate::Answer(RResult::RErr(
            format!("listener panicked: {}", panic_message(&panic)).into(),
        )),
    }
}
