//! Listener and guard registry plus the three dispatch shapes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{
    GuardBox, ListenerBox, NextCall, NextCall_TO, SeamResult, WireResult, typed_result,
};
use dsh_plugin_api::{GuardDecision, GuardDecision_NE, Seam, SeamInput, SeamOutput, ToolCall};
use tokio_util::sync::CancellationToken;

use super::call::{Budget, Cut, ListenerCall};
use super::chain::{Chain, Terminal, Trace, Traced};
use super::threads::PluginThreads;

/// Who registered something: the plugin's manifest id and its position.
#[derive(Clone, Debug)]
pub struct Owner {
    /// Manifest id.
    pub id: Arc<str>,
    /// Position in the manifest; lower runs first.
    pub position: u32,
    /// Fires when the plugin is disposed: its calls still in flight are
    /// dropped (killing what they spawned) and the chain goes on without it.
    pub disposed: CancellationToken,
    /// How the host runs the plugin's listener and guard calls.
    pub calls: CallPolicy,
}

/// How the host runs one plugin's listener and guard calls.
#[derive(Clone, Debug, Default)]
pub struct CallPolicy {
    /// A call that takes longer than this, not counting the time it waits
    /// on `next`, fails closed (`listener_timeout_s`). `None`: no limit.
    pub timeout: Option<Duration>,
    /// Run each call on a plugin thread of its own rather than on the
    /// caller's task, so a plugin that blocks its thread stalls nothing
    /// else (`.so` plugins). `None`: poll inline (built-in plugins).
    pub threads: Option<PluginThreads>,
}

impl Owner {
    /// An owner that has not been disposed, whose calls run inline with no
    /// time limit.
    pub fn new(id: &str, position: u32) -> Owner {
        Owner {
            id: Arc::from(id),
            position,
            disposed: CancellationToken::new(),
            calls: CallPolicy::default(),
        }
    }

    /// The same owner with `calls` as its call policy.
    pub fn with_calls(mut self, calls: CallPolicy) -> Owner {
        self.calls = calls;
        self
    }

    /// The clock of one call, when the plugin has a time limit.
    pub(crate) fn budget(&self) -> Option<Arc<Budget>> {
        self.calls.timeout.map(Budget::start)
    }
}

#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) owner: Owner,
    seq: u64,
    pub(crate) listener: Arc<ListenerBox>,
}

#[derive(Clone)]
struct GuardEntry {
    owner: Owner,
    seq: u64,
    guard: Arc<GuardBox>,
}

#[derive(Default, Clone)]
struct BusState {
    seq: u64,
    listeners: HashMap<Seam, Arc<[Entry]>>,
    guards: Arc<[GuardEntry]>,
}

/// A notification listener (or guard) that failed; contained and reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerFailure {
    /// The plugin's manifest id.
    pub plugin: Arc<str>,
    /// What went wrong.
    pub message: String,
}

/// The seam bus. Cheap to share behind an `Arc`.
///
/// Its state is copy-on-write: every change swaps in a new immutable state,
/// and [`SeamBus::view`] hands out the current one. A turn that holds a view
/// keeps dispatching to the plugins it started with, even across a reload.
#[derive(Default)]
pub struct SeamBus {
    state: RwLock<Arc<BusState>>,
}

/// An immutable snapshot of the bus: dispatches through the listeners that
/// were registered when it was taken.
#[derive(Clone, Default)]
pub struct BusView {
    state: Arc<BusState>,
}

struct NoopNext;

impl NextCall for NoopNext {
    fn run(&self, _signal: ROption<dsh_plugin_api::ffi::AbortSignalBox>) -> FfiFuture<WireResult> {
        async { RResult::ROk(SeamOutput::Observed.into()) }.into_ffi()
    }
}

fn insert_sorted<T: Clone>(list: &[T], item: T, key: impl Fn(&T) -> (u32, u64)) -> Arc<[T]> {
    let mut items = list.to_vec();
    let at = items.partition_point(|e| key(e) <= key(&item));
    items.insert(at, item);
    items.into()
}

impl SeamBus {
    /// An empty bus.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies `change` to a copy of the state and swaps it in.
    fn update<T>(&self, change: impl FnOnce(&mut BusState) -> T) -> T {
        // A poisoned lock only means a panic elsewhere mid-update; updates
        // swap whole states, so the state behind it is always consistent.
        let mut guard = self.state.write().unwrap_or_else(|p| p.into_inner());
        let mut next = (**guard).clone();
        let out = change(&mut next);
        *guard = Arc::new(next);
        out
    }

    /// The current snapshot.
    pub fn view(&self) -> BusView {
        BusView {
            state: self.state.read().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }

    /// Adds a listener after every listener of plugins at or before `owner`.
    pub fn listen(&self, owner: Owner, seam: Seam, listener: ListenerBox) {
        self.update(|state| Self::add_listener(state, owner, seam, listener))
    }

    fn add_listener(state: &mut BusState, owner: Owner, seam: Seam, listener: ListenerBox) {
        state.seq += 1;
        let entry = Entry {
            owner,
            seq: state.seq,
            listener: Arc::new(listener),
        };
        let current = state
            .listeners
            .get(&seam)
            .cloned()
            .unwrap_or_else(|| Arc::new([]));
        let updated = insert_sorted(&current, entry, |e| (e.owner.position, e.seq));
        state.listeners.insert(seam, updated);
    }

    /// Adds a guard.
    pub fn guard(&self, owner: Owner, guard: GuardBox) {
        self.update(|state| Self::add_guard(state, owner, guard))
    }

    fn add_guard(state: &mut BusState, owner: Owner, guard: GuardBox) {
        state.seq += 1;
        let entry = GuardEntry {
            owner,
            seq: state.seq,
            guard: Arc::new(guard),
        };
        state.guards = insert_sorted(&state.guards, entry, |e| (e.owner.position, e.seq));
    }

    /// Removes everything `plugin` registered; returns how many were removed.
    /// Calls of the plugin still in flight are ended (see [`Owner`]).
    pub fn remove_owner(&self, plugin: &str) -> usize {
        self.update(|state| Self::drop_owner(state, plugin, true))
    }

    /// Removes everything `plugin` registered but lets turns that already
    /// hold a view keep using it to the end (a reload's retirement).
    pub fn retire_owner(&self, plugin: &str) -> usize {
        self.update(|state| Self::drop_owner(state, plugin, false))
    }

    fn drop_owner(state: &mut BusState, plugin: &str, end_calls: bool) -> usize {
        let mut removed = 0;
        let owners = state
            .listeners
            .values()
            .flat_map(|l| l.iter().map(|e| &e.owner))
            .chain(state.guards.iter().map(|g| &g.owner));
        for owner in owners.filter(|o| end_calls && &*o.id == plugin) {
            owner.disposed.cancel();
        }
        for list in state.listeners.values_mut() {
            let kept: Vec<Entry> = list
                .iter()
                .filter(|e| &*e.owner.id != plugin)
                .cloned()
                .collect();
            removed += list.len() - kept.len();
            *list = kept.into();
        }
        let kept: Vec<GuardEntry> = state
            .guards
            .iter()
            .filter(|e| &*e.owner.id != plugin)
            .cloned()
            .collect();
        removed += state.guards.len() - kept.len();
        state.guards = kept.into();
        removed
    }

    /// The seams `plugin` listens on, in seam order.
    pub fn seams_of(&self, plugin: &str) -> Vec<Seam> {
        self.view().seams_of(plugin)
    }

    /// How many listeners a seam has.
    pub fn listener_count(&self, seam: Seam) -> usize {
        self.view().listener_count(seam)
    }

    /// Runs a waterfall on the current snapshot.
    pub fn waterfall(
        &self,
        input: SeamInput,
        terminal: Arc<dyn Terminal>,
    ) -> FfiFuture<SeamResult> {
        self.view().waterfall(input, terminal)
    }

    /// Runs a notification on the current snapshot.
    pub async fn notify(&self, input: SeamInput) -> Vec<ListenerFailure> {
        self.view().notify(input).await
    }

    /// Runs the guards of the current snapshot.
    pub async fn check_guards(&self, call: &RArc<ToolCall>) -> GuardVerdict {
        self.view().check_guards(call).await
    }
}

impl BusView {
    /// The seams `plugin` listens on, in seam order.
    pub fn seams_of(&self, plugin: &str) -> Vec<Seam> {
        let state = &self.state;
        let mut seams: Vec<Seam> = state
            .listeners
            .iter()
            .filter(|(_, list)| list.iter().any(|e| &*e.owner.id == plugin))
            .map(|(seam, _)| *seam)
            .collect();
        if state.guards.iter().any(|g| &*g.owner.id == plugin) {
            seams.push(Seam::Guard);
        }
        seams.sort();
        seams
    }

    /// How many listeners a seam has.
    pub fn listener_count(&self, seam: Seam) -> usize {
        if seam == Seam::Guard {
            return self.state.guards.len();
        }
        self.state.listeners.get(&seam).map_or(0, |l| l.len())
    }

    fn snapshot(&self, seam: Seam) -> Arc<[Entry]> {
        self.state
            .listeners
            .get(&seam)
            .cloned()
            .unwrap_or_else(|| Arc::new([]))
    }

    /// Runs a waterfall. An error names the plugin whose listener failed.
    pub fn waterfall(
        &self,
        input: SeamInput,
        terminal: Arc<dyn Terminal>,
    ) -> FfiFuture<SeamResult> {
        let listeners = self.snapshot(input.seam());
        let chain = Chain::new(listeners, input, terminal, None).start();
        async move { typed_result(chain.await) }.into_ffi()
    }

    /// Runs a waterfall and also returns what each listener answered and
    /// which listeners the host cut off for taking too long.
    pub async fn waterfall_traced(&self, input: SeamInput, terminal: Arc<dyn Terminal>) -> Traced {
        let listeners = self.snapshot(input.seam());
        let trace: Trace = Arc::default();
        let chain = Chain::new(listeners, input, terminal, Some(trace.clone()));
        let run = chain.run.clone();
        let answer = typed_result(chain.start().await);
        let mut entries = std::mem::take(&mut *trace.lock().unwrap_or_else(|p| p.into_inner()));
        entries.sort_by_key(|e| e.index);
        Traced {
            answer,
            trace: entries,
            timed_out: run.take_timed_out(),
        }
    }

    /// Runs a notification: every listener, in order, each with the same
    /// snapshot. Failures are contained and returned.
    pub async fn notify(&self, input: SeamInput) -> Vec<ListenerFailure> {
        let listeners = self.snapshot(input.seam());
        let mut failures = Vec::new();
        for entry in listeners.iter() {
            let next = NextCall_TO::from_value(NoopNext, TD_Opaque);
            let budget = entry.owner.budget();
            let call = ListenerCall::start(
                &entry.owner,
                &entry.listener,
                input.clone().into(),
                next,
                budget,
            );
            // A plugin disposed mid-call, or one over its time limit, is
            // reported; dropping the call ends whatever it was running.
            let message = match call.await {
                Ok(RResult::ROk(_)) => continue,
                Ok(RResult::RErr(e)) => e.into(),
                Err(cut) => cut.message(),
            };
            failures.push(ListenerFailure {
                plugin: entry.owner.id.clone(),
                message,
            });
        }
        failures
    }

    /// Runs every guard in order; the first deny wins. A failing guard,
    /// or one over its plugin's time limit, is reported and treated as a
    /// deny, since a guard that cannot answer must not let a call through.
    pub async fn check_guards(&self, call: &RArc<ToolCall>) -> GuardVerdict {
        let guards = self.state.guards.clone();
        for entry in guards.iter() {
            match decode_guard(check_guard(entry, call).await) {
                RResult::ROk(GuardDecision::Abstain) => {}
                RResult::ROk(GuardDecision::Deny { reason }) => {
                    return GuardVerdict::Deny {
                        plugin: entry.owner.id.clone(),
                        reason: reason.into(),
                    };
                }
                RResult::RErr(e) => {
                    return GuardVerdict::Deny {
                        plugin: entry.owner.id.clone(),
                        reason: format!("guard of plugin `{}` failed: {e}", entry.owner.id),
                    };
                }
            }
        }
        GuardVerdict::Abstain
    }
}

/// A guard's answer, typed; one this host does not know is a failure.
fn decode_guard(answer: RResult<GuardDecision_NE, RString>) -> RResult<GuardDecision, RString> {
    match answer {
        RResult::ROk(decision) => match decision.into_enum() {
            Ok(decision) => RResult::ROk(decision),
            Err(e) => RResult::RErr(
                format!("answered with a decision this host does not know: {e}").into(),
            ),
        },
        RResult::RErr(e) => RResult::RErr(e),
    }
}

/// Asks one guard, on a plugin thread and within its time limit when its
/// plugin has them.
async fn check_guard(
    entry: &GuardEntry,
    call: &RArc<ToolCall>,
) -> RResult<GuardDecision_NE, RString> {
    let Some(threads) = &entry.owner.calls.threads else {
        return entry.guard.check(call.clone());
    };
    let (guard, call) = (entry.guard.clone(), call.clone());
    let job = threads.run(move || std::future::ready(guard.check(call)));
    let limit = entry.owner.calls.timeout;
    let answer = match limit {
        None => Ok(job.await),
        Some(limit) => {
            let timed = {
                // The timer belongs to the host runtime, whoever polls it.
                let _inside = threads.host().enter();
                tokio::time::timeout(limit, job)
            };
            timed.await
        }
    };
    match answer {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => RResult::RErr(RString::from(e.0)),
        Err(_) => RResult::RErr(RString::from(
            Cut::TimedOut(limit.unwrap_or_default()).message(),
        )),
    }
}

/// The combined answer of every guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardVerdict {
    /// Nobody objected.
    Abstain,
    /// A guard denied.
    Deny {
        /// Which plugin.
        plugin: Arc<str>,
        /// Why.
        reason: String,
    },
}
