//! The bus of one registry (every plugin instance's listeners and guards,
//! per seam, in dispatch order) plus the three dispatch shapes. A bus never
//! changes once built; the plugin registry publishes a new one whole.

use std::collections::HashMap;
use std::sync::Arc;
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
    /// Whether the plugin reads added context in its authored form (built
    /// against plugin API 1.2 or later); an older one is handed the text
    /// form (ARCHITECTURE.md §3).
    pub reads_authored: bool,
    /// Whether the plugin reads a continuation's steering in parts
    /// (`ContinuationDecision::ContinueParts`, plugin API 1.6); an older one
    /// is handed the parts joined into one reason.
    pub reads_steering_parts: bool,
}

/// How the host runs one plugin's listener and guard calls.
#[derive(Clone, Debug, Default)]
pub struct CallPolicy {
    /// A call that takes longer than this, not counting the time it waits
    /// on `next`, fails closed (`listener_timeout_s`). `None`: no limit.
    pub timeout: Option<Duration>,
    /// Run each call on a plugin thread of its own rather than on the
    /// caller's task, so a plugin that blocks its thread stalls nothing
    /// else (`.so` plugins). `None`: poll inline (built-in plugins). A
    /// listener's synchronous form (`Listener::call_now`) always runs
    /// inline: implementing it declares it cheap.
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
            reads_authored: true,
            reads_steering_parts: true,
        }
    }

    /// The same owner, for a plugin built against `api_version`.
    pub fn built_against(mut self, api_version: &str) -> Owner {
        self.reads_authored = dsh_plugin_api::reads_authored_context(api_version);
        self.reads_steering_parts = dsh_plugin_api::reads_steering_parts(api_version);
        self
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
    pub(crate) listener: Arc<ListenerBox>,
}

#[derive(Clone)]
struct GuardEntry {
    owner: Owner,
    guard: Arc<GuardBox>,
}

/// What one plugin instance registered on the bus, in registration order.
/// Filled while the plugin applies; read-only once it is part of a bus.
#[derive(Default)]
pub struct BusRegistrations {
    listeners: Vec<(Seam, Arc<ListenerBox>)>,
    guards: Vec<Arc<GuardBox>>,
}

impl BusRegistrations {
    /// Adds a listener on `seam`, after the ones added before it.
    pub fn listen(&mut self, seam: Seam, listener: ListenerBox) {
        self.listeners.push((seam, Arc::new(listener)));
    }

    /// Adds a guard, after the ones added before it.
    pub fn guard(&mut self, guard: GuardBox) {
        self.guards.push(Arc::new(guard));
    }

    /// The seams listened on (guards count as [`Seam::Guard`]), in seam
    /// order.
    pub fn seams(&self) -> Vec<Seam> {
        let mut seams: Vec<Seam> = self.listeners.iter().map(|(seam, _)| *seam).collect();
        if !self.guards.is_empty() {
            seams.push(Seam::Guard);
        }
        seams.sort();
        seams.dedup();
        seams
    }
}

/// A notification listener (or guard) that failed; contained and reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerFailure {
    /// The plugin's manifest id.
    pub plugin: Arc<str>,
    /// What went wrong.
    pub message: String,
}

/// The seam bus of one registry: every listener and guard of a set of
/// plugin instances, per seam, in dispatch order. Immutable: a change to
/// the plugins is a new bus in a new registry, published whole, so a
/// dispatch (and a turn) keeps the bus it started with.
#[derive(Default)]
pub struct SeamBus {
    listeners: HashMap<Seam, Arc<[Entry]>>,
    guards: Arc<[GuardEntry]>,
    /// The list of a seam nobody listens on.
    none: Arc<[Entry]>,
}

struct NoopNext;

impl NextCall for NoopNext {
    fn run(&self, _signal: ROption<dsh_plugin_api::ffi::AbortSignalBox>) -> FfiFuture<WireResult> {
        async { RResult::ROk(SeamOutput::Observed.into()) }.into_ffi()
    }
}

impl SeamBus {
    /// An empty bus.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bus of `plugins`: each seam's listeners ordered by their
    /// plugin's position, then by the order `plugins` lists them, then by
    /// registration order.
    pub fn build<'a>(plugins: impl IntoIterator<Item = (&'a Owner, &'a BusRegistrations)>) -> Self {
        let mut listeners: HashMap<Seam, Vec<Entry>> = HashMap::new();
        let mut guards: Vec<GuardEntry> = Vec::new();
        for (owner, registered) in plugins {
            for (seam, listener) in &registered.listeners {
                listeners.entry(*seam).or_default().push(Entry {
                    owner: owner.clone(),
                    listener: listener.clone(),
                });
            }
            guards.extend(registered.guards.iter().map(|guard| GuardEntry {
                owner: owner.clone(),
                guard: guard.clone(),
            }));
        }
        // Stable sorts: equal positions keep the order they came in.
        guards.sort_by_key(|g| g.owner.position);
        SeamBus {
            listeners: listeners
                .into_iter()
                .map(|(seam, mut list)| {
                    list.sort_by_key(|e| e.owner.position);
                    (seam, list.into())
                })
                .collect(),
            guards: guards.into(),
            none: Arc::new([]),
        }
    }

    /// The seams `plugin` listens on, in seam order.
    pub fn seams_of(&self, plugin: &str) -> Vec<Seam> {
        let mut seams: Vec<Seam> = self
            .listeners
            .iter()
            .filter(|(_, list)| list.iter().any(|e| &*e.owner.id == plugin))
            .map(|(seam, _)| *seam)
            .collect();
        if self.guards.iter().any(|g| &*g.owner.id == plugin) {
            seams.push(Seam::Guard);
        }
        seams.sort();
        seams
    }

    /// How many listeners a seam has.
    pub fn listener_count(&self, seam: Seam) -> usize {
        if seam == Seam::Guard {
            return self.guards.len();
        }
        self.listeners.get(&seam).map_or(0, |l| l.len())
    }

    fn snapshot(&self, seam: Seam) -> Arc<[Entry]> {
        self.listeners.get(&seam).unwrap_or(&self.none).clone()
    }

    /// Runs a waterfall. An error names the plugin whose listener failed.
    pub fn waterfall(
        &self,
        input: SeamInput,
        terminal: Arc<dyn Terminal>,
    ) -> FfiFuture<SeamResult> {
        let seam = input.seam().name();
        let listeners = self.snapshot(input.seam());
        let span = crate::telemetry::seam_span(seam, "waterfall");
        let chain = span.in_scope(|| Chain::new(listeners, input, terminal, None).rest());
        let started = std::time::Instant::now();
        tracing::Instrument::instrument(
            async move {
                let answer = typed_result(chain.await);
                crate::telemetry::seam_answered(seam, started, &answer);
                answer
            },
            span,
        )
        .into_ffi()
    }

    /// Runs a waterfall and also returns what each listener answered and
    /// which listeners the host cut off for taking too long.
    pub async fn waterfall_traced(&self, input: SeamInput, terminal: Arc<dyn Terminal>) -> Traced {
        let seam = input.seam().name();
        let listeners = self.snapshot(input.seam());
        let trace: Trace = Arc::default();
        let chain = Chain::new(listeners, input, terminal, Some(trace.clone()));
        let run = chain.run.clone();
        let span = crate::telemetry::seam_span(seam, "waterfall");
        let started = std::time::Instant::now();
        let answer = typed_result(
            tracing::Instrument::instrument(span.in_scope(|| chain.rest()), span).await,
        );
        crate::telemetry::seam_answered(seam, started, &answer);
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
        let seam = input.seam().name();
        let span = crate::telemetry::seam_span(seam, "notification");
        let started = std::time::Instant::now();
        let failures = tracing::Instrument::instrument(self.notify_all(input), span).await;
        crate::telemetry::seam_notified(seam, started);
        failures
    }

    async fn notify_all(&self, input: SeamInput) -> Vec<ListenerFailure> {
        let seam = input.seam().name();
        let listeners = self.listeners.get(&input.seam()).unwrap_or(&self.none);
        let mut failures = Vec::new();
        for entry in listeners.iter() {
            let next = NextCall_TO::from_value(NoopNext, TD_Opaque);
            let budget = entry.owner.budget();
            let call = ListenerCall::start(
                &entry.owner,
                &entry.listener,
                seam,
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
        let span = crate::telemetry::seam_span("guards", "guards");
        let started = std::time::Instant::now();
        let verdict = tracing::Instrument::instrument(self.ask_guards(call), span).await;
        crate::telemetry::guards_answered(started, &verdict);
        verdict
    }

    async fn ask_guards(&self, call: &RArc<ToolCall>) -> GuardVerdict {
        for entry in self.guards.iter() {
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
