//! [`PluginThreads`]: where the calls of `.so` plugins are run, so that a
//! plugin that blocks its thread stalls its own call and nothing else.
//!
//! A listener is plugin code the host cannot preempt. Polled on one of the
//! runtime's workers, a listener that blocks (a `std::thread::sleep`, a
//! blocking read, a spin) would hold that worker and with it every session
//! queued there, and the timer meant to cut it off would never run. So each
//! call of a `.so` listener or guard runs on a thread of a pool of its own
//! (tokio's blocking pool of a runtime that runs nothing else), inside the
//! host runtime's context (`Handle::block_on`), so host timers, processes
//! and services work as they do on a worker. The caller awaits the answer
//! on its own task, where the time limit is kept.
//!
//! Dropping the caller's future (time limit, disposal, cancelled turn) tells
//! the thread to drop the plugin's future, which frees the thread. A call
//! that blocks its thread for good keeps that thread: nothing can take it
//! back. The pool is shut down without waiting for such threads, so a stuck
//! plugin never keeps the process from exiting.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use tokio::runtime::{Builder, Handle, Runtime};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

/// At most this many plugin calls run at once; more wait for a thread.
const MAX_THREADS: usize = 512;

/// A pool of threads that plugin calls run on. Cheap to clone.
#[derive(Clone)]
pub struct PluginThreads {
    inner: Arc<Inner>,
}

struct Inner {
    /// The runtime whose futures plugin calls are.
    host: Handle,
    /// Built on first use; only its blocking pool is used.
    pool: OnceLock<Result<Runtime, String>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(Ok(pool)) = self.pool.take() {
            // Never wait for a plugin that blocks its thread for good.
            pool.shutdown_background();
        }
    }
}

impl std::fmt::Debug for PluginThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PluginThreads")
    }
}

impl PluginThreads {
    /// Threads for plugin calls whose futures belong to `host`.
    pub fn new(host: Handle) -> PluginThreads {
        PluginThreads {
            inner: Arc::new(Inner {
                host,
                pool: OnceLock::new(),
            }),
        }
    }

    /// The runtime plugin futures belong to (its timers time their calls).
    pub(crate) fn host(&self) -> &Handle {
        &self.inner.host
    }

    fn pool(&self) -> Result<&Runtime, &str> {
        self.inner
            .pool
            .get_or_init(|| {
                Builder::new_current_thread()
                    .max_blocking_threads(MAX_THREADS)
                    .thread_name("dsh-plugin")
                    .build()
                    .map_err(|e| format!("cannot start plugin threads: {e}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Runs `call` (which calls into the plugin and returns its future) on a
    /// plugin thread and polls the future there to the end.
    pub(crate) fn run<F, T>(&self, call: impl FnOnce() -> F + Send + 'static) -> Offloaded<T>
    where
        F: Future<Output = T>,
        T: Send + 'static,
    {
        let stop = CancellationToken::new();
        let job = match self.pool() {
            Err(e) => Err(e.to_string()),
            Ok(pool) => {
                let host = self.inner.host.clone();
                let stopped = stop.clone();
                Ok(pool.spawn_blocking(move || {
                    host.block_on(async move {
                        tokio::select! {
                            biased;
                            _ = stopped.cancelled() => None,
                            answer = call() => Some(answer),
                        }
                    })
                }))
            }
        };
        Offloaded {
            job,
            _stop: stop.drop_guard(),
        }
    }
}

/// A plugin call running on a plugin thread. Dropping it ends the call.
pub(crate) struct Offloaded<T> {
    job: Result<JoinHandle<Option<T>>, String>,
    _stop: DropGuard,
}

/// Why an offloaded call gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoAnswer(pub String);

impl<T> Future for Offloaded<T> {
    type Output = Result<T, NoAnswer>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let job = match &mut self.job {
            Ok(job) => job,
            Err(e) => return Poll::Ready(Err(NoAnswer(e.clone()))),
        };
        Pin::new(job).poll(cx).map(|joined| match joined {
            Ok(Some(answer)) => Ok(answer),
            Ok(None) => Err(NoAnswer("the call was stopped".into())),
            Err(e) if e.is_panic() => Err(NoAnswer("the call panicked on its thread".into())),
            Err(e) => Err(NoAnswer(format!("the call's thread ended: {e}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_call_that_blocks_its_thread_leaves_the_runtime_free() {
        let runtime = Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let threads = PluginThreads::new(runtime.handle().clone());
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let stuck = threads.run(move || {
            // Blocks its thread until the test lets it go.
            let _ = release_rx.recv_timeout(Duration::from_secs(60));
            std::future::ready(1)
        });
        let quick = threads.run(|| async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            2
        });
        let answers = runtime.block_on(async {
            let quick = tokio::time::timeout(Duration::from_secs(30), quick).await;
            // The only worker is free: it ran this and the quick call's timer.
            let _ = release_tx.send(());
            let stuck = tokio::time::timeout(Duration::from_secs(30), stuck).await;
            (quick, stuck)
        });
        assert_eq!(answers, (Ok(Ok(2)), Ok(Ok(1))));
    }

    #[test]
    fn dropping_the_call_stops_a_pending_plugin_future() {
        let runtime = Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let threads = PluginThreads::new(runtime.handle().clone());
        let (dropped_tx, dropped_rx) = std::sync::mpsc::channel::<()>();
        struct Tell(std::sync::mpsc::Sender<()>);
        impl Drop for Tell {
            fn drop(&mut self) {
                let _ = self.0.send(());
            }
        }
        let call = threads.run(move || async move {
            let _tell = Tell(dropped_tx);
            std::future::pending::<()>().await
        });
        runtime.block_on(async {
            let waited = tokio::time::timeout(Duration::from_millis(50), call).await;
            assert!(waited.is_err(), "a pending call does not answer");
        });
        dropped_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the plugin's future is dropped on its thread");
    }
}
