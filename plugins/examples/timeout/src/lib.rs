//! `timeout`: an around-dispatch wrapper on `tools/execute` that gives
//! every tool call at most `millis` milliseconds.
//!
//! A `.so` has no reactor of its own (its copy of tokio would have none), so
//! the deadline is the host's timer (`Host::sleep`). The wrapper hands the
//! rest of the chain a replacement abort signal that fires at the deadline
//! or when the original fires (the only thing a wrapper may change), and
//! races the dispatch against the deadline: on timeout the dispatch is
//! dropped and the model gets an `is_error` result saying so.
//!
//! ```yaml
//! - path: target/debug/libdsh_example_timeout.so
//!   config: { millis: 120000 }
//! ```

use std::pin::pin;
use std::sync::Arc;

use dsh_plugin_api::async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignal, AbortSignalBox};
use dsh_plugin_api::{
    ExecuteInput, ExecuteNext, Host, Plugin, RArc, ToolResult, abort_signal, export_plugin,
};
use futures::future::{Either, FutureExt as _, Shared, select};

/// How long a tool may run.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Milliseconds before the call is abandoned with an error result.
    pub millis: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { millis: 120_000 }
    }
}

/// The wrapper: the host (for its timer) and the limit.
pub struct Timeout {
    host: Host,
    millis: u64,
}

impl Plugin for Timeout {
    type Config = Config;
    const NAME: &'static str = "timeout";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Gives every tool call a time limit, on the host's timer";

    fn apply(host: &Host, config: Config) -> Result<Self, String> {
        match config.millis {
            0 => Err("config `millis` must be at least 1".into()),
            millis => Ok(Timeout {
                host: host.clone(),
                millis,
            }),
        }
    }

    async fn execute(
        self: Arc<Self>,
        input: RArc<ExecuteInput>,
        next: ExecuteNext,
    ) -> Result<ToolResult, String> {
        let deadline = self.host.sleep(self.millis).shared();
        let signal = Deadline {
            parent: input.signal.clone(),
            deadline: deadline.clone(),
        };
        let dispatch = next.run(Some(abort_signal(signal)));
        match select(deadline, pin!(dispatch)).await {
            Either::Left(((), _abandoned)) => Ok(ToolResult::error(format!(
                "tool `{}` timed out after {} ms",
                input.call.name, self.millis
            ))),
            Either::Right((result, _)) => result,
        }
    }
}

/// Fires at the deadline or when the signal it replaces fires.
#[derive(Clone)]
struct Deadline {
    parent: AbortSignalBox,
    deadline: Shared<FfiFuture<()>>,
}

impl AbortSignal for Deadline {
    fn is_aborted(&self) -> bool {
        self.parent.is_aborted() || self.deadline.peek().is_some()
    }

    fn aborted(&self) -> FfiFuture<()> {
        let (parent, deadline) = (self.parent.aborted(), self.deadline.clone());
        async move { select(parent, deadline).await.factor_first().0 }.into_ffi()
    }
}

export_plugin!(Timeout);
