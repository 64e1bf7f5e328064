//! The safe plugin SDK.
//!
//! Implement [`Plugin`] (every seam method has a default that delegates or
//! observes) and export the type with [`export_plugin!`](crate::export_plugin).
//! The SDK listens exactly on the seams whose methods you override (see
//! [`listened`]; there is no list to keep in sync), converts typed values to
//! and from the ABI types, and catches every panic at the boundary, turning
//! it into a listener failure the host reports. Guards, tools and services
//! are registered on the [`Host`] in [`Plugin::apply`].
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
//! The one exception is a listener's synchronous form
//! ([`Plugin::pre_execute_now`], since 1.5): overriding it declares it
//! cheap, and the host runs it inline on the caller's thread without a time
//! limit, so it must do nothing but look at its input and its own memory.
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
//!     fn apply(_host: &Host, config: Config) -> Result<Self, String> { Ok(NoWord(config.word)) }
//!     async fn pre_execute(self: Arc<Self>, call: RArc<ToolCall>,
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
pub mod claude_input;
pub mod codex_exec;
pub mod codex_text;
mod host;
mod next;
mod now;
pub mod persisted;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use abi_stable::std_types::RArc;
use serde::{Serialize, de::DeserializeOwned};

pub use adapter::{listened, plugin_module};
pub use host::{Host, abort_signal};
pub use next::{ExecuteNext, FromSeamOutput, Next};
pub use now::Now;

use crate::decisions::*;
use crate::seams::*;

/// What a seam method returns when the plugin did not override it.
///
/// Only this module can make one, so an override (whatever it does) never
/// returns this type: [`listened`] tells overridden methods from defaults
/// by the type they return, and registers listeners for the former only.
/// Polling it runs the default behaviour (delegate or observe), which the
/// host never asks for since no listener is registered.
pub(crate) struct Unheard<T>(Pin<Box<dyn Future<Output = Result<T, String>> + Send>>);

impl<T> Unheard<T> {
    fn new(fut: impl Future<Output = Result<T, String>> + Send + 'static) -> Self {
        Unheard(Box::pin(fut))
    }

    fn observed() -> Self
    where
        T: Default + Send + 'static,
    {
        Unheard::new(async { Ok(T::default()) })
    }
}

impl<T> Future for Unheard<T> {
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.as_mut().poll(cx)
    }
}

/// Config for a plugin that takes none: accepts only an empty mapping.
#[derive(Debug, Default, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// A dsh plugin. Every seam method has a default: waterfalls delegate to
/// `next`, notifications observe nothing. The plugin listens on exactly
/// the seams whose methods it overrides ([`listened`]).
pub trait Plugin: Sized + Send + Sync + 'static {
    /// The typed config; missing keys take their defaults.
    type Config: Serialize + DeserializeOwned + schemars::JsonSchema + Default;
    /// The plugin's name.
    const NAME: &'static str;
    /// The plugin's version.
    const VERSION: &'static str;
    /// One line on what the plugin does, shown by `dsh plugins` (since
    /// 1.1; empty shows nothing).
    const DESCRIPTION: &'static str = "";
    /// Services the plugin cannot work without; missing ones skip it.
    const REQUIRES: &'static [&'static str] = &[];
    /// Services the plugin uses when present.
    const OPTIONAL: &'static [&'static str] = &[];

    /// Builds the plugin; may register guards, tools and services on
    /// `host`.
    fn apply(host: &Host, config: Self::Config) -> Result<Self, String>;

    /// `agent/session-start`.
    fn session_start(
        self: Arc<Self>,
        input: RArc<SessionStartInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `agent/session-end`.
    fn session_end(
        self: Arc<Self>,
        input: RArc<SessionEndInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `agent/prompt-submit`.
    fn prompt_submit(
        self: Arc<Self>,
        input: RArc<PromptSubmitInput>,
        next: Next<PromptDecision>,
    ) -> impl Future<Output = Result<PromptDecision, String>> + Send {
        let _ = input;
        Unheard::new(next.run())
    }

    /// `tools/pre-execute`.
    fn pre_execute(
        self: Arc<Self>,
        call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> impl Future<Output = Result<PreToolDecision, String>> + Send {
        let _ = call;
        Unheard::new(next.run())
    }

    /// `tools/pre-execute`, answered at once (since 1.5; see [`Now`]).
    /// Asked before [`Plugin::pre_execute`], on the caller's thread even in
    /// a `.so`, without a time limit: keep it cheap, never block in it.
    /// [`Now::Pass`] delegates and [`Now::Decide`] short-circuits, both
    /// without a future, a `next` or an allocation in the host;
    /// [`Now::Later`] goes on to [`Plugin::pre_execute`]. Overriding
    /// either method listens on the seam. Write the override's return
    /// type as `impl Into<Now<PreToolDecision>>`.
    fn pre_execute_now(self: Arc<Self>, call: RArc<ToolCall>) -> impl Into<Now<PreToolDecision>> {
        let _ = call;
        now::UnheardNow
    }

    /// `tools/execute`, around the core dispatch.
    fn execute(
        self: Arc<Self>,
        input: RArc<ExecuteInput>,
        next: ExecuteNext,
    ) -> impl Future<Output = Result<ToolResult, String>> + Send {
        let _ = input;
        Unheard::new(next.run(None))
    }

    /// `tools/post-execute`.
    fn post_execute(
        self: Arc<Self>,
        input: RArc<PostExecuteInput>,
        next: Next<PostToolDecision>,
    ) -> impl Future<Output = Result<PostToolDecision, String>> + Send {
        let _ = input;
        Unheard::new(next.run())
    }

    /// `tools/result`.
    fn tool_result(
        self: Arc<Self>,
        input: RArc<PostExecuteInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `agent/turn-continuation`.
    fn turn_continuation(
        self: Arc<Self>,
        input: RArc<ContinuationInput>,
        next: Next<ContinuationDecision>,
    ) -> impl Future<Output = Result<ContinuationDecision, String>> + Send {
        let _ = input;
        Unheard::new(next.run())
    }

    /// `subagent/start`.
    fn subagent_start(
        self: Arc<Self>,
        input: RArc<SubagentInfo>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `subagent/end`.
    fn subagent_end(
        self: Arc<Self>,
        input: RArc<SubagentInfo>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `agent/turn-end` (since 1.1): the turn has ended; `input.reason`
    /// says how.
    fn turn_end(
        self: Arc<Self>,
        input: RArc<TurnEndInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `tools/permission-request` (since 1.4): a call would ask for
    /// permission and someone can be asked. Answer `Allow` or `Deny` to
    /// decide without asking, or pass `next`'s answer on (`Ask`: ask).
    fn permission_request(
        self: Arc<Self>,
        input: RArc<PermissionRequestInput>,
        next: Next<PermissionDecision>,
    ) -> impl Future<Output = Result<PermissionDecision, String>> + Send {
        let _ = input;
        Unheard::new(next.run())
    }

    /// `agent/cwd-changed` (since 1.3): the session's working directory
    /// moved from `input.old_cwd` to `input.new_cwd`.
    fn cwd_changed(
        self: Arc<Self>,
        input: RArc<CwdChangedInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `agent/model-request` (since 1.4): a request to the model is about
    /// to be sent.
    fn model_request(
        self: Arc<Self>,
        input: RArc<ModelRequestInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }

    /// `agent/compact` (since 1.5): the session's history is about to be
    /// summarized. Answer `Block` to keep it, or pass `next`'s answer on
    /// (with context of your own: more summary instructions).
    fn compact(
        self: Arc<Self>,
        input: RArc<CompactInput>,
        next: Next<PromptDecision>,
    ) -> impl Future<Output = Result<PromptDecision, String>> + Send {
        let _ = input;
        Unheard::new(next.run())
    }

    /// `agent/compacted` (since 1.5): the session's history was replaced by
    /// `input.summary`.
    fn compacted(
        self: Arc<Self>,
        input: RArc<CompactedInput>,
    ) -> impl Future<Output = Result<(), String>> + Send {
        let _ = input;
        Unheard::observed()
    }
    /// `mcp/elicitation` (since 1.10): an MCP server asks the user for
    /// input during a tool call. Answer `Accept`, `Decline` or `Cancel`, or
    /// pass `next`'s answer on (the editor's, or `Cancel` when nobody could
    /// be asked).
    fn elicitation(
        self: Arc<Self>,
        input: RArc<ElicitationInput>,
        next: Next<ElicitationDecision>,
    ) -> impl Future<Output = Result<ElicitationDecision, String>> + Send {
        let _ = input;
        Unheard::new(next.run())
    }
}

/// Exports a [`Plugin`] as the root module of a `cdylib`.
///
/// Expands to the static abi_stable's loader looks for (what
/// `#[abi_stable::export_root_module]` would generate), naming only paths
/// inside this crate: the plugin's `Cargo.toml` needs no `abi_stable`.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        /// The plugin's root module, as abi_stable's loader finds it.
        #[doc(hidden)]
        #[unsafe(no_mangle)]
        #[allow(non_upper_case_globals)]
        pub static _1as_0lib_1header_0root_bmodule_bloader: $crate::abi_stable::library::LibHeader = {
            extern "C" fn dsh_plugin_root_module() -> $crate::abi_stable::library::RootModuleResult {
                $crate::abi_stable::library::__call_root_module_loader(
                    $crate::plugin_module::<$plugin>,
                )
            }
            // SAFETY: the constructor returns the root module type the
            // header is declared for, as `#[export_root_module]` does.
            unsafe {
                $crate::abi_stable::library::LibHeader::from_constructor::<$crate::PluginModuleRef>(
                    dsh_plugin_root_module,
                    $crate::abi_stable::library::CheckTypeLayout::Yes,
                )
            }
        };
    };
}
