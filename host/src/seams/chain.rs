//! One waterfall run: the host side of `next`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, NextCall, NextCall_TO, SeamResult, WireResult};
use dsh_plugin_api::{ExecuteInput, SeamInput, SeamOutput};
use futures::future::BoxFuture;
use tokio_util::sync::WaitForCancellationFutureOwned;

use super::bus::Entry;

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
/// (the terminal's answer sits at position `listeners.len()`). Used to
/// attribute decision parts, such as added context, to the plugin that
/// produced them.
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

/// What every level of one waterfall shares, so a level costs one
/// reference count instead of one per field.
pub(crate) struct Waterfall {
    pub(crate) listeners: Arc<[Entry]>,
    pub(crate) terminal: Arc<dyn Terminal>,
    pub(crate) trace: Option<Trace>,
}

/// The rest of a waterfall from `index` on.
pub(crate) struct Chain {
    pub(crate) run: Arc<Waterfall>,
    pub(crate) index: usize,
    pub(crate) input: SeamInput,
}

impl Chain {
    /// A waterfall from its first listener.
    pub(crate) fn new(
        listeners: Arc<[Entry]>,
        input: SeamInput,
        terminal: Arc<dyn Terminal>,
        trace: Option<Trace>,
    ) -> Chain {
        Chain {
            run: Arc::new(Waterfall {
                listeners,
                terminal,
                trace,
            }),
            index: 0,
            input,
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

/// Marks an error message with the plugin it came from, once.
fn attribute(owner: &str, message: RString) -> RString {
    if message.starts_with("plugin `") {
        message
    } else {
        format!("plugin `{owner}`: {message}").into()
    }
}

impl Chain {
    /// Runs the chain from its current listener. Answers travel in their
    /// boundary form; the bus decodes the final one.
    pub(crate) fn start(self) -> FfiFuture<WireResult> {
        let Chain { run, index, input } = self;
        let Some(entry) = run.listeners.get(index) else {
            let fut = run.terminal.run(input);
            return async move {
                let out: SeamResult = fut.await;
                if let RResult::ROk(output) = &out {
                    record(&run.trace, index, &Arc::from(""), output);
                }
                out.map(Into::into)
            }
            .into_ffi();
        };
        let next = Chain {
            run: run.clone(),
            index: index + 1,
            input: input.clone(),
        };
        let fut = entry
            .listener
            .call(input.into(), NextCall_TO::from_value(next, TD_Opaque));
        Level {
            fut,
            run,
            index,
            disposed: None,
        }
        .into_ffi()
    }
}

/// One listener's call in flight: attributes its failure to its plugin,
/// records its answer when traced, and ends the call if the plugin is
/// disposed meanwhile. A hand-written future so a listener that answers at
/// once costs no more than polling it (the disposal watch is set up only
/// when the call has to wait).
struct Level {
    fut: FfiFuture<WireResult>,
    run: Arc<Waterfall>,
    index: usize,
    disposed: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
}

impl Level {
    fn finish(&self, answer: WireResult) -> WireResult {
        let owner = &self.run.listeners[self.index].owner;
        match answer {
            RResult::ROk(out) => {
                if self.run.trace.is_some()
                    && let Ok(typed) = SeamOutput::try_from(out.clone())
                {
                    record(&self.run.trace, self.index, &owner.id, &typed);
                }
                RResult::ROk(out)
            }
            RResult::RErr(e) => RResult::RErr(attribute(&owner.id, e)),
        }
    }
}

impl Future for Level {
    type Output = WireResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<WireResult> {
        let this = self.get_mut();
        if let Poll::Ready(answer) = Pin::new(&mut this.fut).poll(cx) {
            return Poll::Ready(this.finish(answer));
        }
        let owner = &this.run.listeners[this.index].owner;
        let disposed = this
            .disposed
            .get_or_insert_with(|| Box::pin(owner.disposed.clone().cancelled_owned()));
        if disposed.as_mut().poll(cx).is_ready() {
            // Returning drops the call, which ends what it spawned (hook
            // processes die with their futures). The chain fails rather than
            // going on without it: a gate that vanished mid-decision must
            // not let a call through.
            let gone = RString::from("the plugin was disposed during this call");
            return Poll::Ready(RResult::RErr(attribute(&owner.id, gone)));
        }
        Poll::Pending
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
        Chain {
            run: self.run.clone(),
            index: self.index,
            input,
        }
        .start()
    }
}
