//! Listener and guard registry plus the three dispatch shapes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{GuardBox, ListenerBox, NextCall, NextCall_TO, SeamResult};
use dsh_plugin_api::{GuardDecision, Seam, SeamInput, SeamOutput, ToolCall};

use super::chain::{Chain, Terminal};

/// Who registered something: the plugin's manifest id and its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Manifest id.
    pub id: Arc<str>,
    /// Position in the manifest; lower runs first.
    pub position: u32,
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

#[derive(Default)]
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
#[derive(Default)]
pub struct SeamBus {
    state: RwLock<BusState>,
}

struct NoopNext;

impl NextCall for NoopNext {
    fn run(&self, _signal: ROption<dsh_plugin_api::ffi::AbortSignalBox>) -> FfiFuture<SeamResult> {
        async { RResult::ROk(SeamOutput::Observed) }.into_ffi()
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

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BusState> {
        // A poisoned lock only means a panic elsewhere mid-update of plain
        // data; every update below is a single assignment, so state is whole.
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BusState> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a listener after every listener of plugins at or before `owner`.
    pub fn listen(&self, owner: Owner, seam: Seam, listener: ListenerBox) {
        let mut state = self.write();
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
        let mut state = self.write();
        state.seq += 1;
        let entry = GuardEntry {
            owner,
            seq: state.seq,
            guard: Arc::new(guard),
        };
        state.guards = insert_sorted(&state.guards, entry, |e| (e.owner.position, e.seq));
    }

    /// Removes everything `plugin` registered; returns how many were removed.
    pub fn remove_owner(&self, plugin: &str) -> usize {
        let mut state = self.write();
        let mut removed = 0;
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
        let state = self.read();
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
            return self.read().guards.len();
        }
        self.read().listeners.get(&seam).map_or(0, |l| l.len())
    }

    fn snapshot(&self, seam: Seam) -> Arc<[Entry]> {
        self.read()
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
        Chain {
            listeners,
            index: 0,
            input,
            terminal,
        }
        .start()
    }

    /// Runs a notification: every listener, in order, each with the same
    /// snapshot. Failures are contained and returned.
    pub async fn notify(&self, input: SeamInput) -> Vec<ListenerFailure> {
        let listeners = self.snapshot(input.seam());
        let mut failures = Vec::new();
        for entry in listeners.iter() {
            let next = NextCall_TO::from_value(NoopNext, TD_Opaque);
            if let RResult::RErr(e) = entry.listener.call(input.clone(), next).await {
                failures.push(ListenerFailure {
                    plugin: entry.owner.id.clone(),
                    message: e.into(),
                });
            }
        }
        failures
    }

    /// Runs every guard in order; the first deny wins. A failing guard is
    /// reported and treated as a deny, since a guard that cannot answer
    /// must not let a call through.
    pub fn check_guards(&self, call: &RArc<ToolCall>) -> GuardVerdict {
        let guards = self.read().guards.clone();
        for entry in guards.iter() {
            match entry.guard.check(call.clone()) {
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
