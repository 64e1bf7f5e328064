//! One waterfall run: the host side of `next`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{
    AbortSignalBox, Immediate, NextCall, NextCall_TO, SeamResult, WireResult,
};
use dsh_plugin_api::{AuthoredContext, ExecuteInput, SeamInput, SeamInput_NE, SeamOutput};
use futures::future::BoxFuture;

use super::authorship::{self, Stamped};
use super::bus::{Entry, ListenerFailure, Owner};
use super::call::{Budget, Cut, InNext, ListenerCall};
use super::steering;

/// What a waterfall ends in once every listener delegated.
pub trait Terminal: Send + Sync {
    /// Produces the final answer for `input`.
    fn run(&self, input: SeamInput) -> BoxFuture<'static, SeamResult>;
}

/// A [`Terminal`] made from a closure.
pub struct TerminalFn<F>(pub F);

impl<F> Terminal for TerminalFn<F>
where
    F: Fn(SeamInput) -> BoxFuture<'static, SeamResult> + Send + Sync,
{
    fn run(&self, input: SeamInput) -> BoxFuture<'static, SeamResult> {
        (self.0)(input)
    }
}

/// What each listener of one waterfall answered, by chain position
/// (the terminal's answer sits at position `listeners.len()`), with the
/// context pieces stamped with their authors. Used to find the plugin that
/// produced a decision.
pub type Trace = Arc<std::sync::Mutex<Vec<TraceEntry>>>;

/// One listener's answer within a traced waterfall.
#[derive(Clone, Debug)]
pub struct TraceEntry {
    /// Position in the chain.
    pub index: usize,
    /// The plugin (empty for the terminal).
    pub plugin: Arc<str>,
    /// What it returned.
    pub output: dsh_plugin_api::SeamOutput,
}

/// A waterfall's answer with what the host learnt while running it.
#[derive(Debug)]
pub struct Traced {
    /// The chain's answer.
    pub answer: SeamResult,
    /// What each listener answered, by chain position.
    pub trace: Vec<TraceEntry>,
    /// The listeners the host cut off for going over their time limit, in
    /// the order it happened. The chain's answer is then usually their
    /// failure, but a listener upstream may have caught it.
    pub timed_out: Vec<ListenerFailure>,
}

impl Traced {
    /// A waterfall that never ran and failed with `message`.
    pub fn failed(message: RString) -> Traced {
        Traced {
            answer: RResult::RErr(message),
            trace: Vec::new(),
            timed_out: Vec::new(),
        }
    }

    /// A waterfall that never ran and stands for `output`.
    pub fn answered(output: dsh_plugin_api::SeamOutput) -> Traced {
        Traced {
            answer: RResult::ROk(output),
            trace: Vec::new(),
            timed_out: Vec::new(),
        }
    }
}

/// What every level of one waterfall shares, so a level costs one
/// reference count instead of one per field.
pub(crate) struct Waterfall {
    pub(crate) listeners: Arc<[Entry]>,
    pub(crate) terminal: Arc<dyn Terminal>,
    pub(crate) trace: Option<Trace>,
    timed_out: std::sync::Mutex<Vec<ListenerFailure>>,
    /// The failures this run already marked with their plugin: a listener
    /// that passes one of them on unchanged (its `next` failed) is not
    /// blamed for it. Known by identity, never by the message's wording, so
    /// a plugin cannot pass its own failure off as another's.
    attributed: std::sync::Mutex<Vec<RString>>,
    /// Whether the seam's decision can carry added context, whose authors
    /// the host stamps level by level ([`authorship`]).
    context: bool,
    /// The stamped context pieces each level answered with, by chain
    /// position, until the level above reads what its `next` handed it.
    answered: std::sync::Mutex<Vec<Option<Vec<AuthoredContext>>>>,
    /// Whether the seam's decision can carry steering in parts, which a
    /// listener built before plugin API 1.6 reads joined ([`steering`]).
    steering: bool,
    /// The steering parts each level answered with, by chain position,
    /// until the level above reads what its `next` handed it.
    steered: std::sync::Mutex<Vec<Option<Vec<String>>>>,
}

impl Waterfall {
    /// The listeners cut off so far.
    pub(crate) fn take_timed_out(&self) -> Vec<ListenerFailure> {
        std::mem::take(&mut *self.timed_out.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Marks `message` with the plugin it came from, unless it is a failure
    /// this run already marked, passed on unchanged.
    fn attribute(&self, owner: &str, message: RString) -> RString {
        let mut marked = self.attributed.lock().unwrap_or_else(|p| p.into_inner());
        if marked.contains(&message) {
            return message;
        }
        let message: RString = format!("plugin `{owner}`: {message}").into();
        marked.push(message.clone());
        message
    }

    /// Stamps the answer of the level at `index` (`plugin` empty for the
    /// terminal), keeps its pieces for the level above, records it when
    /// traced, and returns it in the form the level above reads.
    fn stamp(&self, index: usize, plugin: &Arc<str>, answer: SeamOutput) -> SeamOutput {
        let mut answered = self.answered.lock().unwrap_or_else(|p| p.into_inner());
        let handed = answered.get_mut(index + 1).and_then(Option::take);
        let Stamped { output, pieces } = authorship::stamp(plugin, answer, handed.as_deref());
        if let Some(slot) = answered.get_mut(index) {
            *slot = pieces;
        }
        drop(answered);
        record(&self.trace, index, plugin, &output);
        let reads_authored = index
            .checked_sub(1)
            .and_then(|above| self.listeners.get(above))
            .is_none_or(|above| above.owner.reads_authored);
        authorship::for_caller(output, reads_authored)
    }

    /// Keeps the steering parts of the answer of the level at `index`
    /// (`plugin` empty for the terminal) for the level above, restores the
    /// parts an older listener answered unchanged, records it when traced,
    /// and returns it in the form the level above reads.
    fn steer(&self, index: usize, plugin: &Arc<str>, answer: SeamOutput) -> SeamOutput {
        let reads = |at: Option<usize>| {
            at.and_then(|at| self.listeners.get(at))
                .is_none_or(|entry| entry.owner.reads_steering_parts)
        };
        let mut steered = self.steered.lock().unwrap_or_else(|p| p.into_inner());
        let handed = steered.get_mut(index + 1).and_then(Option::take);
        let answer = if reads(Some(index)) {
            answer
        } else {
            steering::restore(answer, handed)
        };
        if let Some(slot) = steered.get_mut(index) {
            *slot = steering::parts(&answer);
        }
        drop(steered);
        record(&self.trace, index, plugin, &answer);
        steering::for_caller(answer, reads(index.checked_sub(1)))
    }

    /// What the level at `index` (of plugin `owner`) hands the level above
    /// when it answered `answer`: its failure attributed to its plugin, the
    /// context its answer carries stamped, its answer recorded when traced.
    fn finish(&self, index: usize, owner: &Owner, answer: WireResult) -> WireResult {
        match answer {
            RResult::ROk(out) if self.context => match SeamOutput::try_from(out) {
                Ok(typed) => RResult::ROk(self.stamp(index, &owner.id, typed).into()),
                // Not decodable by this build: passed on as it came.
                Err(unknown) => RResult::ROk(*unknown.answer),
            },
            RResult::ROk(out) if self.steering => match SeamOutput::try_from(out) {
                Ok(typed) => RResult::ROk(self.steer(index, &owner.id, typed).into()),
                Err(unknown) => RResult::ROk(*unknown.answer),
            },
            RResult::ROk(out) => {
                if self.trace.is_some()
                    && let Ok(typed) = SeamOutput::try_from(out.clone())
                {
                    record(&self.trace, index, &owner.id, &typed);
                }
                RResult::ROk(out)
            }
            RResult::RErr(e) => RResult::RErr(self.attribute(&owner.id, e)),
        }
    }

    /// What the terminal (at chain position `index`) hands the last
    /// listener.
    fn terminal_answer(&self, index: usize, out: SeamResult) -> WireResult {
        match out {
            RResult::ROk(output) if self.context => {
                RResult::ROk(self.stamp(index, nobody(), output).into())
            }
            RResult::ROk(output) if self.steering => {
                RResult::ROk(self.steer(index, nobody(), output).into())
            }
            RResult::ROk(output) => {
                record(&self.trace, index, nobody(), &output);
                RResult::ROk(output.into())
            }
            RResult::RErr(e) => RResult::RErr(e),
        }
    }

    /// Hands `answer`, the answer of the level at `at`, up through the
    /// levels `first..at` that passed at once ([`Immediate::Pass`]), nearest
    /// first, as each would have handed up what its `next` answered.
    fn passed_up(&self, first: usize, at: usize, mut answer: WireResult) -> WireResult {
        let passed = self.listeners.get(first..at).unwrap_or_default();
        for (offset, entry) in passed.iter().enumerate().rev() {
            answer = self.finish(first + offset, &entry.owner, answer);
        }
        answer
    }
}

/// The plugin name the terminal's answers carry: none.
fn nobody() -> &'static Arc<str> {
    static NOBODY: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from(""));
    &NOBODY
}

/// The rest of a waterfall from `index` on.
pub(crate) struct Chain {
    pub(crate) run: Arc<Waterfall>,
    pub(crate) index: usize,
    pub(crate) input: SeamInput,
    /// The clock of the listener this is the `next` of, stopped while the
    /// rest of the chain runs.
    pub(crate) caller: Option<Arc<Budget>>,
}

impl Chain {
    /// A waterfall from its first listener.
    pub(crate) fn new(
        listeners: Arc<[Entry]>,
        input: SeamInput,
        terminal: Arc<dyn Terminal>,
        trace: Option<Trace>,
    ) -> Chain {
        let context = matches!(
            input,
            SeamInput::PromptSubmit(_) | SeamInput::PostExecute(_) | SeamInput::Compact(_)
        );
        // Only seams whose answers carry context stamp authors: the others
        // (pre-execute, the hot path) allocate nothing for it.
        let levels = if context { listeners.len() + 1 } else { 0 };
        let steering = matches!(input, SeamInput::TurnContinuation(_));
        let steered_levels = if steering { listeners.len() + 1 } else { 0 };
        if let Some(trace) = &trace {
            // One entry per level: room made once, not level by level.
            let mut entries = trace.lock().unwrap_or_else(|p| p.into_inner());
            let more = (listeners.len() + 1).saturating_sub(entries.len());
            entries.reserve(more);
        }
        Chain {
            run: Arc::new(Waterfall {
                listeners,
                terminal,
                trace,
                timed_out: Default::default(),
                attributed: Default::default(),
                context,
                answered: std::sync::Mutex::new(vec![None; levels]),
                steering,
                steered: std::sync::Mutex::new(vec![None; steered_levels]),
            }),
            index: 0,
            input,
            caller: None,
        }
    }
}

fn record(
    trace: &Option<Trace>,
    index: usize,
    plugin: &Arc<str>,
    output: &dsh_plugin_api::SeamOutput,
) {
    if let Some(trace) = trace {
        trace
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(TraceEntry {
                index,
                plugin: plugin.clone(),
                output: output.clone(),
            });
    }
}

impl Chain {
    /// Runs the chain from its current listener, as the boundary future
    /// `next` hands a listener.
    pub(crate) fn start(self) -> FfiFuture<WireResult> {
        self.rest().into_ffi()
    }

    /// Runs the chain from its current listener, as a future of its own
    /// type (the bus awaits it without a box). Nothing runs until it is
    /// polled.
    pub(crate) fn rest(self) -> Rest {
        Rest {
            state: State::Start(self),
            first: 0,
            at: 0,
        }
    }
}

/// Asks `entry`'s listener for an answer at once ([`Listener::call_now`]).
/// The call runs here, on the caller's thread, whatever the plugin's call
/// policy: implementing it declares it cheap.
///
/// [`Listener::call_now`]: dsh_plugin_api::ffi::Listener::call_now
fn ask_now(entry: &Entry, input: &SeamInput_NE, seam: &'static str) -> Immediate {
    let answer = entry.listener.call_now(input);
    let failed = match &answer {
        Immediate::Later => return answer,
        Immediate::Pass | Immediate::Answer(RResult::ROk(_)) => false,
        Immediate::Answer(RResult::RErr(_)) => true,
    };
    // Telemetry as for a call: a `listener` span for each that answered.
    let span = tracing::trace_span!("listener", plugin = %entry.owner.id, seam, outcome = tracing::field::Empty);
    span.record("outcome", if failed { "failed" } else { "answered" });
    if failed {
        crate::telemetry::metrics::inc(
            "dsh_listener_failures_total",
            &[("plugin", &*entry.owner.id), ("seam", seam)],
        );
    }
    answer
}

/// The rest of a waterfall from one position on. When first polled, it
/// asks each listener in turn for an answer at once: one that passes costs
/// no `next`, no future and no allocation; one that answers ends the walk;
/// the first that has nothing to say at once gets its asynchronous call
/// (or, past the last listener, the terminal runs). The answer then goes
/// up through the listeners that passed, as if each had delegated.
pub(crate) struct Rest {
    state: State,
    /// The chain position this run started at.
    first: usize,
    /// The position whose answer is awaited (every one before it passed).
    at: usize,
}

// A level of one waterfall, held by value: boxing a variant would be an
// allocation per level.
#[allow(clippy::large_enum_variant)]
enum State {
    /// Not polled yet.
    Start(Chain),
    /// A listener answered at once.
    Answered(WireResult, Arc<Waterfall>),
    /// A listener's asynchronous call.
    Calling(Level),
    /// The terminal.
    Ending(BoxFuture<'static, SeamResult>, Arc<Waterfall>),
    /// Answered.
    Done,
}

impl Rest {
    /// Walks the listeners from the chain's position on (see [`Rest`]).
    fn begin(&mut self, chain: Chain) -> State {
        let Chain {
            run, index, input, ..
        } = chain;
        self.first = index;
        self.at = index;
        let seam = input.seam().name();
        // Converted once for every listener asked.
        let mut boundary: Option<SeamInput_NE> = None;
        while let Some(entry) = run.listeners.get(self.at) {
            let asked = boundary.get_or_insert_with(|| input.clone().into());
            match ask_now(entry, asked, seam) {
                Immediate::Pass => self.at += 1,
                Immediate::Answer(answer) => {
                    let answer = run.finish(self.at, &entry.owner, answer);
                    return State::Answered(answer, run);
                }
                Immediate::Later => {
                    let budget = entry.owner.budget();
                    let next = Chain {
                        run: run.clone(),
                        index: self.at + 1,
                        input: input.clone(),
                        caller: budget.clone(),
                    };
                    let next = NextCall_TO::from_value(next, TD_Opaque);
                    let call = ListenerCall::start(
                        &entry.owner,
                        &entry.listener,
                        seam,
                        boundary.take().unwrap_or_else(|| input.into()),
                        next,
                        budget,
                    );
                    return State::Calling(Level {
                        call,
                        run,
                        index: self.at,
                    });
                }
            }
        }
        State::Ending(run.terminal.run(input), run)
    }
}

impl Future for Rest {
    type Output = WireResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<WireResult> {
        let this = self.get_mut();
        if let State::Start(_) = &this.state
            && let State::Start(chain) = std::mem::replace(&mut this.state, State::Done)
        {
            this.state = this.begin(chain);
        }
        if let State::Answered(..) = &this.state
            && let State::Answered(answer, run) = std::mem::replace(&mut this.state, State::Done)
        {
            return Poll::Ready(run.passed_up(this.first, this.at, answer));
        }
        let (answer, run) = match &mut this.state {
            State::Start(_) | State::Answered(..) | State::Done => return Poll::Pending,
            State::Calling(level) => match Pin::new(&mut *level).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(answer) => (answer, level.run.clone()),
            },
            State::Ending(fut, run) => match fut.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(out) => (run.terminal_answer(this.at, out), run.clone()),
            },
        };
        this.state = State::Done;
        Poll::Ready(run.passed_up(this.first, this.at, answer))
    }
}

/// One listener's call in flight: attributes its failure to its plugin,
/// stamps the authors of the context its answer carries, records its
/// answer when traced, and fails the chain if the plugin is
/// disposed meanwhile or goes over its time limit. A hand-written future so
/// a listener that answers at once costs no more than polling it.
struct Level {
    call: ListenerCall,
    run: Arc<Waterfall>,
    index: usize,
}

impl Level {
    fn finish(&self, answer: WireResult) -> WireResult {
        self.run.finish(self.index, self.call.owner(), answer)
    }
}

impl Future for Level {
    type Output = WireResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<WireResult> {
        let this = self.get_mut();
        let cut = match Pin::new(&mut this.call).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(answer)) => return Poll::Ready(this.finish(answer)),
            Poll::Ready(Err(cut)) => cut,
        };
        // The chain fails rather than going on without the listener: a gate
        // that vanished or did not decide in time must not let a call through.
        let owner = this.call.owner();
        let message = cut.message();
        if let Cut::TimedOut(_) = cut {
            this.run
                .timed_out
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(ListenerFailure {
                    plugin: owner.id.clone(),
                    message: message.clone(),
                });
        }
        Poll::Ready(RResult::RErr(this.run.attribute(&owner.id, message.into())))
    }
}

impl NextCall for Chain {
    fn run(&self, signal: ROption<AbortSignalBox>) -> FfiFuture<WireResult> {
        let input = match (signal, &self.input) {
            // The only thing an around-dispatch wrapper may change.
            (ROption::RSome(signal), SeamInput::Execute(exec)) => {
                SeamInput::Execute(RArc::new(ExecuteInput {
                    call: exec.call.clone(),
                    signal,
                }))
            }
            _ => self.input.clone(),
        };
        let rest = Chain {
            run: self.run.clone(),
            index: self.index,
            input,
            caller: None,
        }
        .start();
        match &self.caller {
            None => rest,
            Some(budget) => InNext {
                fut: rest,
                budget: budget.clone(),
                entered: false,
            }
            .into_ffi(),
        }
    }
}
