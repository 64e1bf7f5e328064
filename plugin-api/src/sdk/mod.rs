//! The safe plugin SDK.
//!
//! Implement [`Plugin`] (every seam method has a default that delegates or
//! observes), list the seams you listen on in [`Plugin::SEAMS`], and export
//! the type with [`export_plugin!`](crate::export_plugin). The SDK registers
//! one listener per listed seam, converts typed values to and from the ABI
//! types, and catches every panic at the boundary, turning it into a
//! listener failure the host reports.
//!
//! # What a plugin must not do
//!
//! - **Block its thread.** No `std::thread::sleep`, blocking file or socket
//!   reads, `std::process::Command::output`, waits on a lock another call
//!   may hold, or spinning in a listener, guard or tool. Await instead:
//!   [`Host::sleep`] for timers, the host's services (the `process-runner`)
//!   for processes.
//! - **Do I/O that needs a runtime of its own.** A `.so` links its own copy
//!   of any async runtime, and that copy has no reactor or timer driver:
//!   `tokio::net`, `tokio::time` or `tokio::process` used directly from a
//!   plugin panic or never wake. Ask the host.
//! - **Take long.** Each listener and guard call has a time limit
//!   (`listener_timeout_s` in the plugin's manifest entry; 30 s by default
//!   for a `.so`). Only the listener's own time counts: the time it waits on
//!   `next` is not charged to it.
//!
//! The host contains a plugin that does these anyway: each call of a `.so`
//! listener or guard runs on a plugin thread of its own, so blocking it
//! stalls only that call (never another session), and a call over its limit
//! is cut off and fails closed (a gate denies or blocks, a notification is
//! reported as failed). A thread blocked for good is abandoned, not
//! reclaimed: a plugin that does this leaks a thread per call.
//!
//! ```ignore
//! use dsh_plugin_api::*;
//! use std::sync::Arc;
//!
//! #[derive(Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! #[serde(default, deny_unknown_fields)]
//! pub struct Config { pub word: String }
//!
//! pub struct NoWord(String);
//!
//! impl Plugin for NoWord {
//!     type Config = Config;
//!     const NAME: &'static str = "no-word";
//!     const VERSION: &'static str = env!("CARGO_PKG_VERSION");
//!     const SEAMS: &'static [Seam] = &[Seam::PreExecute];
//!     fn apply(_host: &Host, config: Config) -> Result<Self, String> { Ok(NoWord(config.word)) }
//!     async fn pre_execute(self: Arc<Self>, call: abi_stable::std_types::RArc<ToolCall>,
//!                          next: Next<PreToolDecision>) -> Result<PreToolDecision, String> {
//!         if call.arguments.contains(&*self.0) {
//!             return Ok(PreToolDecision::Deny { reason: "forbidden word".into() });
//!         }
//!         next.run().await
//!     }
//! }
//! export_plugin!(NoWord);
//! ```

mod adapter;
mod host;
mod next;

use std::future::Future;
use std::sync::Arc;

use abi_stable::std_types::RArc;
use serde::{Serialize, de::DeserializeOwned};

pub use adapter::plugin_module;
pub use host::Host;
pub use next::{ExecuteNext, FromSeamOutput, Next};

use crate::seams::*;

/// Config for a plugin that takes none: accepts only an empty mapping.
#[derive(Debug, Default, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// A dsh plugin. Every seam method has a default: waterfalls delegate to
/// `next`, notifications observe nothing, guards abstain.
pub trait Plugin: Sized + Send + Sync + 'static {
    /// The typed config; missing keys take their defaults.
    type Config: Serialize + DeserializeOwned + schemars::JsonSchema + Default;
    /// The plugin's name.
    const NAME: &'static str;
    /// The plugin's version.
    const VERSION: &'static str;
    /// The seams this plugin listens on; only these get a listener.
    const SEAMS: &'static [Seam] = &[];
    /// Services the plugin cannot work without; missing ones skip it.
    const REQUIRES: &'static [&'static str] = &[];
    /// Services the plugin uses when present.
    const OPTIONAL: &'static [&'static str] = &[];

    /// Builds the plugin; may register tools and services on `host`.
    fn apply(host: &Host, config: Self::Config) -> Result<Self, String>;

    /// `agent/session-start`.
    fn session_start(
        self: Arc<Self>,
        input: RArc<SessionStartInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        async { Ok(()) }
    }

    /// `agent/session-end`.
    fn session_end(
        self: Arc<Self>,
        input: RArc<SessionEndInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        async { Ok(()) }
    }

    /// `agent/prompt-submit`.
    fn prompt_submit(
        self: Arc<Self>,
        input: RArc<PromptSubmitInput>,
        next: Next<PromptDecision>,
    ) -> impl Future<Output = Result<PromptDecision, String>> + Send {
        let _ = input;
        next.run()
    }

    /// `tools/pre-execute`.
    fn pre_execute(
        self: Arc<Self>,
        call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> impl Future<Output = Result<PreToolDecision, String>> + Send {
        let _ = call;
        next.run()
    }

    /// A guard, run after the whole pre-execute waterfall.
    fn guard(&self, call: &ToolCall) -> GuardDecision {
        let _ = call;
        GuardDecision::Abstain
    }

    /// `tools/execute`, around the core dispatch.
    fn execute(
        self: Arc<Self>,
        input: RArc<ExecuteInput>,
        next: ExecuteNext,
    ) -> impl Future<Output = Result<ToolResult, String>> + Send {
        let _ = input;
        next.run(None)
    }

    /// `tools/post-execute`.
    fn post_execute(
        self: Arc<Self>,
        input: RArc<PostExecuteInput>,
        next: Next<PostToolDecision>,
    ) -> impl Future<Output = Result<PostToolDecision, String>> + Send {
        let _ = input;
        next.run()
    }

    /// `tools/result`.
    fn tool_result(
        self: Arc<Self>,
        input: RArc<PostExecuteInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        async { Ok(()) }
    }

    /// `agent/turn-continuation`.
    fn turn_continuation(
        self: Arc<Self>,
        input: RArc<ContinuationInput>,
        next: Next<ContinuationDecision>,
    ) -> impl Future<Output = Result<ContinuationDecision, String>> + Send {
        let _ = input;
        next.run()
    }

    /// `subagent/start`.
    fn subagent_start(
        self: Arc<Self>,
        input: RArc<SubagentInfo>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        async { Ok(()) }
    }

    /// `subagent/end`.
    fn subagent_end(
        self: Arc<Self>,
        input: RArc<SubagentInfo>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        async { Ok(()) }
    }
}

/// Exports a [`Plugin`] as the root module of a `cdylib`.
///
/// The plugin crate must list `abi_stable` among its own dependencies (same
/// version as this crate's): abi_stable's root-module attribute expands to
/// paths that name `::abi_stable` directly.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        #[$crate::abi_stable::export_root_module]
        pub fn dsh_plugin_root_module() -> $crate::PluginModuleRef {
            $crate::plugin_module::<$plugin>()
        }
    };
}
