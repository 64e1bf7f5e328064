//! Timed waits for async tests: every wait ends in a panic naming what it
//! waited for once its limit passes; nothing sleeps to synchronize (polling
//! is for conditions with no event to await). Sync tests use
//! [`crate::background::wait_until`].

use std::future::Future;
use std::time::Duration;

/// The generous default limit for a wait.
pub const WAIT: Duration = Duration::from_secs(30);

/// Awaits `fut`, failing the test after `limit`.
pub async fn within<T>(what: &str, limit: Duration, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {limit:?} waiting for {what}"),
    }
}

/// Polls `done` until it holds; fails after `limit`.
pub async fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    within(what, limit, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}
