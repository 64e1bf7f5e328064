//! The seam bus: who listens on which seam, and how a seam is dispatched.
//!
//! Listeners are kept per seam in registration order, where the order of a
//! plugin is its position in the manifest. A [`SeamBus`] is immutable: it is
//! built from the plugin instances of one registry (see
//! `crate::plugins::Registry`) and a change to the plugins publishes a new
//! registry with a new bus, so a dispatch (and a whole turn) keeps the
//! listeners it started with. Three dispatch shapes exist:
//!
//! - **waterfall**: the first listener gets `next`, a handle to the rest of
//!   the chain ending in a terminal (the default decision, or the core
//!   dispatch for `tools/execute`); returning without calling it
//!   short-circuits;
//! - **notification**: every listener gets the same immutable snapshot; a
//!   failure is contained to that listener and reported;
//! - **guards**: synchronous, in order, after the pre-execute waterfall;
//!   the first deny wins and nothing can re-allow.
//!
//! Every call into a plugin runs under its [`CallPolicy`]: a `.so` plugin's
//! calls run on [`PluginThreads`] (a plugin that blocks its thread stalls
//! only its own call) and every listener call may have a time limit, which
//! counts the listener's own time, not the time it waits on `next`. A call
//! over its limit fails closed: a waterfall fails (each seam's caller turns
//! that into its safe answer), a guard denies, a notification listener is
//! reported like any failure.
//!
//! A waterfall listener that answers at once (`Listener::call_now`, plugin
//! API 1.5) is asked first, inline on the caller's thread whatever its
//! policy: a pass or an answer there costs no `next`, no future and no
//! allocation (`chain::Rest`); only `Later` makes the call above.
//!
//! The bus calls only plugin code (through the ABI objects); it knows
//! nothing about sessions or tools.

mod authorship;
mod bus;
mod call;
mod chain;
mod steering;
mod threads;

pub use bus::{BusRegistrations, CallPolicy, GuardVerdict, ListenerFailure, Owner, SeamBus};
pub use chain::{Terminal, TerminalFn, Trace, TraceEntry, Traced};
pub use threads::PluginThreads;

#[cfg(test)]
mod now_tests;
#[cfg(test)]
mod tests;
