//! The runner's data is the `process-runner` contract itself
//! ([`dsh_plugin_api::services::process_runner`]): [`RunRequest`] (what to
//! run) and [`RunAnswer`] (how it ended), defined once in `plugin-api` so
//! the hook bridges, dynamic plugins and this runner share one type.

use tokio::time::Instant;

pub use dsh_plugin_api::services::process_runner::{
    DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_OUTPUT_BYTES, Overflow, RunAnswer, RunRequest,
};

/// An answer for a program that could not be started.
pub(crate) fn spawn_failure(message: String, started: Instant) -> RunAnswer {
    tracing::debug!(error = %message, "process-runner: spawn failed");
    RunAnswer {
        duration_ms: elapsed_ms(started),
        ..RunAnswer::spawn_failure(message)
    }
}

pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
