//! One listener call in flight, with what the host puts around it: the
//! plugin's thread (for `.so` plugins, see [`super::threads`]), its time
//! limit, and its disposal.
//!
//! The time limit counts the listener's own time only. While it waits on
//! `next` (the rest of the chain: later listeners, hook scripts, the tool
//! itself) its clock is stopped, since each of those has its own limit; the
//! clock runs again when `next` answers. A listener over its limit is cut
//! off (its future is dropped, or, if it blocks its thread, abandoned there)
//! and the call fails with [`Cut::TimedOut`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use abi_stable::std_types::{RResult, RString};
use async_ffi::FfiFuture;
use dsh_plugin_api::SeamInput_NE;
use dsh_plugin_api::ffi::{ListenerBox, NextBox, WireResult};
use futures::task::AtomicWaker;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::WaitForCancellationFutureOwned;

use super::bus::Owner;
use super::threads::Offloaded;

/// The longest a clock runs before its limit is due: a `listener_timeout_s`
/// past the clock's range (e.g. `1e19`) is no limit, not an overflow.
const FOREVER: Duration = Duration::from_secs(30 * 365 * 86_400);

/// Why the host ended a call without the listener's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The plugin was disposed during the call.
    Disposed,
    /// The listener used up its time limit.
    TimedOut(Duration),
}

impl Cut {
    /// The failure message (without the plugin, which callers add).
    pub(crate) fn message(self) -> String {
        match self {
            Cut::Disposed => "the plugin was disposed during this call".into(),
            Cut::TimedOut(limit) => format!(
                "did not answer within {} s (listener_timeout_s); the call failed closed",
                limit.as_secs_f64()
            ),
        }
    }
}

/// A listener's own-time clock, stopped while it waits on `next`.
pub(crate) struct Budget {
    limit: Duration,
    clock: Mutex<Clock>,
    /// Woken when `next` answers and the clock runs again.
    resumed: AtomicWaker,
}

struct Clock {
    /// How many `next` calls the listener is waiting on.
    waiting: u32,
    /// Own time used before the current run of the clock.
    spent: Duration,
    /// When the clock last started; `None` while stopped.
    since: Option<Instant>,
}

impl Budget {
    /// A clock that starts now.
    pub(crate) fn start(limit: Duration) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            clock: Mutex::new(Clock {
                waiting: 0,
                spent: Duration::ZERO,
                since: Some(Instant::now()),
            }),
            resumed: AtomicWaker::new(),
        })
    }

    fn clock(&self) -> std::sync::MutexGuard<'_, Clock> {
        // The clock is a few plain fields, consistent after any panic.
        self.clock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// When the limit runs out at this pace; `None` while the clock is
    /// stopped.
    fn deadline(&self) -> Option<Instant> {
        let clock = self.clock();
        clock
            .since
            .map(|since| since + self.limit.saturating_sub(clock.spent).min(FOREVER))
    }

    fn enter_next(&self) {
        let mut clock = self.clock();
        if clock.waiting == 0
            && let Some(since) = clock.since.take()
        {
            clock.spent += since.elapsed();
        }
        clock.waiting += 1;
    }

    fn leave_next(&self) {
        let mut clock = self.clock();
        clock.waiting = clock.waiting.saturating_sub(1);
        if clock.waiting == 0 {
            clock.since = Some(Instant::now());
            drop(clock);
            self.resumed.wake();
        }
    }
}

/// The future of a `next` call: stops its caller's clock while pending.
pub(crate) struct InNext {
    pub(crate) fut: FfiFuture<WireResult>,
    pub(crate) budget: Arc<Budget>,
    pub(crate) entered: bool,
}

impl Future for InNext {
    type Output = WireResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<WireResult> {
        let this = self.get_mut();
        if !this.entered {
            this.budget.enter_next();
            this.entered = true;
        }
        let answer = Pin::new(&mut this.fut).poll(cx);
        if answer.is_ready() {
            this.entered = false;
            this.budget.leave_next();
        }
        answer
    }
}

impl Drop for InNext {
    fn drop(&mut self) {
        if self.entered {
            self.budget.leave_next();
        }
    }
}

enum Running {
    /// Polled on the caller's task (built-in plugins).
    Inline(FfiFuture<WireResult>),
    /// Polled on a plugin thread (`.so` plugins).
    Offloaded(Offloaded<WireResult>),
}

/// The time limit of one call: its clock and, once the call has had to
/// wait, the timer set to its deadline.
struct Limit {
    budget: Arc<Budget>,
    timer: Option<Pin<Box<Sleep>>>,
    runtime: Option<tokio::runtime::Handle>,
}

/// One listener call with the host's protections around it.
pub(crate) struct ListenerCall {
    running: Running,
    owner: Owner,
    disposed: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    limit: Option<Limit>,
    /// The `listener` span (telemetry), entered while the call is polled.
    span: tracing::Span,
    seam: &'static str,
}

impl ListenerCall {
    /// Starts `listener` on `input`. `budget` is the call's clock (made
    /// with [`Owner::budget`]); the same clock must stop while `next` runs.
    pub(crate) fn start(
        owner: &Owner,
        listener: &Arc<ListenerBox>,
        seam: &'static str,
        input: SeamInput_NE,
        next: NextBox,
        budget: Option<Arc<Budget>>,
    ) -> ListenerCall {
        let span = tracing::trace_span!("listener", plugin = %owner.id, seam, outcome = tracing::field::Empty);
        let running = match &owner.calls.threads {
            None => Running::Inline(span.in_scope(|| listener.call(input, next))),
            Some(threads) => {
                let listener = listener.clone();
                Running::Offloaded(threads.run(move || listener.call(input, next)))
            }
        };
        let runtime = owner
            .calls
            .threads
            .as_ref()
            .map(|t| t.host().clone())
            .or_else(|| tokio::runtime::Handle::try_current().ok());
        ListenerCall {
            span,
            seam,
            running,
            owner: owner.clone(),
            disposed: None,
            limit: budget.map(|budget| Limit {
                budget,
                timer: None,
                runtime,
            }),
        }
    }

    /// The plugin whose listener this is.
    pub(crate) fn owner(&self) -> &Owner {
        &self.owner
    }
}

impl Limit {
    /// Whether the limit has run out; arranges a wake-up otherwise.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = self.budget.deadline() else {
            // Waiting on `next`: the clock is stopped until it answers.
            self.budget.resumed.register(cx.waker());
            if self.budget.deadline().is_some() {
                cx.waker().wake_by_ref();
            }
            return false;
        };
        let timer = match &mut self.timer {
            Some(timer) => {
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                timer
            }
            None => {
                // Without a runtime there is no clock to keep; the call
                // then runs unbounded (only unit tests poll outside one).
                let Some(runtime) = &self.runtime else {
                    return false;
                };
                // Created inside the host runtime: this may be polled on a
                // plugin thread.
                let _inside = runtime.enter();
                self.timer
                    .insert(Box::pin(tokio::time::sleep_until(deadline)))
            }
        };
        timer.as_mut().poll(cx).is_ready()
    }
}

impl Future for ListenerCall {
    type Output = Result<WireResult, Cut>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let answer = this.poll_call(cx);
        if let Poll::Ready(answer) = &answer {
            let failed = !matches!(answer, Ok(RResult::ROk(_)));
            this.span
                .record("outcome", if failed { "failed" } else { "answered" });
            if failed {
                crate::telemetry::metrics::inc(
                    "dsh_listener_failures_total",
                    &[("plugin", &*this.owner.id), ("seam", this.seam)],
                );
            }
        }
        answer
    }
}

impl ListenerCall {
    fn poll_call(&mut self, cx: &mut Context<'_>) -> Poll<Result<WireResult, Cut>> {
        let this = self;
        let _inside = this.span.enter();
        let answer = match &mut this.running {
            Running::Inline(fut) => Pin::new(fut).poll(cx),
            Running::Offloaded(job) => Pin::new(job)
                .poll(cx)
                .map(|joined| joined.unwrap_or_else(|e| RResult::RErr(RString::from(e.0)))),
        };
        if let Poll::Ready(answer) = answer {
            return Poll::Ready(Ok(answer));
        }
        // Set up only when the call has to wait, so a listener that answers
        // at once costs no more than polling it.
        let disposed = this
            .disposed
            .get_or_insert_with(|| Box::pin(this.owner.disposed.clone().cancelled_owned()));
        if disposed.as_mut().poll(cx).is_ready() {
            // Returning drops the call, which ends what it spawned (hook
            // processes die with their futures).
            return Poll::Ready(Err(Cut::Disposed));
        }
        if let Some(limit) = &mut this.limit
            && limit.expired(cx)
        {
            return Poll::Ready(Err(Cut::TimedOut(limit.budget.limit)));
        }
        Poll::Pending
    }
}
