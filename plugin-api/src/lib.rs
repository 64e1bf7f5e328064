//! The only crate a dsh plugin links.
//!
//! A dsh plugin listens on typed *seams* (the lifecycle points of a coding
//! agent) and answers with small typed decisions. This crate owns everything
//! that crosses the boundary between the host and a plugin:
//!
//! - [`types`], [`seams`] and [`decisions`]: ABI-stable content blocks,
//!   message sources, every seam, its input snapshot and its decision;
//! - [`ffi`]: the `#[sabi_trait]` objects the host and plugins call across
//!   the boundary (host context, listeners, `next`, guards, tools, services,
//!   abort signals), all async calls as FFI-safe futures;
//! - [`root`]: the plugin root module, carrying [`API_VERSION`];
//! - [`compat`]: the load-time check that applies the policy below;
//! - [`sdk`]: a safe SDK ([`Plugin`] with default methods and
//!   [`export_plugin!`]) that catches panics at the boundary. A plugin needs
//!   no other dependency for the boundary: the `R*` types it meets are
//!   re-exported here;
//! - [`context`]: added context as pieces, each with the plugin that added
//!   it, and the helpers a listener folds its own piece on with;
//! - [`credentials`]: which environment variables hold credentials (the
//!   process runner's scrub rule);
//! - [`services`]: the typed JSON contracts of the host services dsh relies
//!   on (`process-runner`, `approval`, `model`), with their evolution rule.
//!
//! Built-in plugins use exactly the same API as a `.so`: the host turns both
//! into a [`root::PluginModuleRef`] and never special-cases either.
//!
//! This crate has no async runtime and performs no I/O. Plugins that need a
//! timer, a process or the session log ask the host through [`sdk::Host`];
//! a plugin never blocks its thread (see the SDK's
//! [rules](sdk#what-a-plugin-must-not-do)).
//!
//! # Compatibility policy
//!
//! [`API_VERSION`] is this crate's version, `major.minor.patch`. A host
//! loads a plugin built against its own major and a minor no newer than its
//! own; it refuses every other plugin at load, with one line naming both
//! versions. abi_stable checks every type layout at load, in the direction
//! this policy needs ([`compat`]).
//!
//! Every enum that crosses the boundary can grow: the field-less ones
//! ([`Seam`], [`SessionStartSource`], [`LogLevel`], [`ProblemSeverity`]) are
//! numbers with named constants, the others (inputs, answers, decisions,
//! content blocks, message sources) are abi_stable `WithNonExhaustive` enums
//! that travel as their `_NE` form, which a build that does not know a
//! variant can still hold, clone, compare and drop, but not decode.
//!
//! **A minor may add**, always at the end, never reordering, renaming or
//! removing anything:
//!
//! - a seam: a [`Seam`] constant with the next free number, a [`SeamInput`]
//!   variant, a [`Plugin`] method with a default body, and its dispatch in
//!   the host;
//! - a variant to any boundary enum: a decision, a content block kind, a
//!   message source, a session-start reason, a log level; or a new kind of
//!   decision as a [`SeamAnswer`] variant;
//! - a method on a `#[sabi_trait]` object, after the method marked
//!   `#[sabi(last_prefix_field)]`, with a default body (a host method goes on
//!   [`ffi::HostContext`]);
//! - a root-module field after `apply`, which the host reads through its
//!   `Option` accessor ([`root`]);
//! - new types, functions and SDK conveniences.
//!
//! **Only a major may** change or remove any of the above; add a field to a
//! plain `#[repr(C)]` struct (the snapshots such as [`SessionRef`],
//! [`ToolCall`] and the `*Input` types, [`ToolResult`],
//! [`PluginDescriptor`]); move a `last_prefix_field` marker; change the
//! storage size or trait set of a non-exhaustive enum; or change a seam's
//! number or name. New data for an existing seam arrives in a minor through
//! a host method the plugin asks, or with the next major.
//!
//! **An old plugin in a newer host** (built against `1.x`, host `1.y`,
//! `x < y`) loads and works, and never sees what it does not know. It
//! cannot name a newer seam, so it is never called for one (and if a newer
//! input reached it anyway, the SDK would delegate to `next`, or observe for
//! a notification). If the rest of a chain answers with a decision it
//! cannot decode, [`Next::run`] returns an error, and if the listener
//! returns that error the SDK passes the undecoded answer on unchanged, as
//! if the plugin had delegated. Root-module fields it lacks read as `None`
//! in the host.
//!
//! **A newer plugin in an older host** (built against `1.y`, host `1.x`,
//! `x < y`) is refused at load: *built against plugin API 1.y.0, this host
//! speaks 1.x.0*. It may rely on a seam, a host method or a decision the
//! host lacks, and a plugin silently doing less than its author intended (a
//! gate that never gates) is worse than one that does not load: upgrade the
//! host, or build the plugin against the host's minor.
//!
//! **Rebuilding** a plugin against a newer minor needs no change, except
//! that the enums a plugin builds and matches (decisions, content blocks,
//! message sources) are not `#[non_exhaustive]`, so that the host must
//! handle every variant it knows; a plugin that matches one exhaustively may
//! need an arm for a new variant. ([`SeamInput`] and [`SeamAnswer`] are
//! `#[non_exhaustive]`.) Its existing `.so` keeps working either way.
//!
//! # Adding a seam
//!
//! (`agent/turn-end` was added in 1.1 by following this list.)
//!
//! 1. `seams.rs`: a [`Seam`] constant with the next free number and its row
//!    in the seam table (event name, notification or not); its snapshot
//!    struct; a [`SeamInput`] variant at the end and its arm in
//!    [`SeamInput::seam`].
//! 2. For a waterfall with a new kind of answer, in `decisions.rs`: the
//!    decision enum (`WithNonExhaustive`), a [`SeamOutput`] and a
//!    [`SeamAnswer`] variant at the end, both conversions; and its
//!    `seam_output!` line in `sdk/next.rs`.
//! 3. The SDK: a [`Plugin`] method whose default body returns `Unheard`
//!    (`sdk/mod.rs`); its arm in `SeamAdapter::call` and its row in
//!    [`listened`] (`sdk/adapter.rs`); override it in the `Everything` test
//!    plugin (`sdk/tests.rs`), whose test fails until the row exists.
//! 4. The host: dispatch it where it happens (`bus.notify` for a
//!    notification, `bus.waterfall` for a waterfall) with the registry the
//!    turn holds, and map it in the hook bridges if a hook event corresponds.
//! 5. Bump the minor in `plugin-api/Cargo.toml` and
//!    [`FIXTURE_FUTURE_API_VERSION`], note it under "Versions" below and in
//!    the README's "Plugin API versions", and test that a `.so` listener on
//!    it fires (`tests/tests/suite/abi_evolution.rs`).
//!
//! # Versions
//!
//! - **1.0.0**: the first version under this policy (frozen in
//!   `tests/fixtures/plugins/frozen-api-1.0`). Builds from before it, which
//!   also said 1.0.0, have other layouts and are refused at load.
//! - **1.1.0**: the `agent/turn-end` seam ([`TurnEndInput`],
//!   [`Plugin::turn_end`]); [`ffi::HostContext::sessions`] and
//!   [`Host::sessions`]; the root-module field `description`
//!   ([`Plugin::DESCRIPTION`]); [`ffi::HostContext::report_problem`] and
//!   [`Host::report_problem`] with [`ConfigProblem`] and
//!   [`ProblemSeverity`].
//! - **1.2.0**: authored context ([`context`]): [`AuthoredContext`],
//!   [`PromptDecision::AllowAuthored`], [`PostToolDecision::AcceptAuthored`]
//!   and [`PostToolDecision::BlockAuthored`], whose pieces the host stamps
//!   with their authors. A listener built against 1.0 or 1.1 is handed the
//!   text form of these decisions (pieces joined by [`CONTEXT_SEPARATOR`]),
//!   so it keeps folding and replacing context as before.
//! - **1.3.0**: the `agent/cwd-changed` seam ([`CwdChangedInput`],
//!   [`Plugin::cwd_changed`]) and [`ffi::HostContext::set_session_cwd`]
//!   with [`Host::set_session_cwd`]: a shell tool's `cd` persists in its
//!   session.
//! - **1.4.0**: [`ffi::HostContext::set_session_shell_prelude`] and
//!   [`ffi::HostContext::session_shell_prelude`] with
//!   [`Host::set_session_shell_prelude`] and [`Host::session_shell_prelude`]:
//!   script a shell tool runs before each command of a session (Claude
//!   Code's `CLAUDE_ENV_FILE`); the `agent/model-request` seam
//!   ([`ModelRequestInput`], [`Plugin::model_request`]) before each model
//!   request (Codex's `PreModelRequest`); the `process-runner` method
//!   `spawn` ([`services::process_runner::METHOD_SPAWN`]).
//!   Also in 1.4.0: the `tools/permission-request` seam
//!   ([`PermissionRequestInput`], [`PermissionDecision`],
//!   [`Plugin::permission_request`]): Claude Code's `PermissionRequest`.
//! - **1.5.0**: the `agent/compact` waterfall ([`CompactInput`],
//!   [`Plugin::compact`], answered with a [`PromptDecision`]) and the
//!   `agent/compacted` notification ([`CompactedInput`],
//!   [`Plugin::compacted`]): Claude Code's `PreCompact` and `PostCompact`.
//! - **1.5.0**: listeners that answer at once: [`ffi::Listener::call_now`]
//!   with [`ffi::Immediate`], and [`Plugin::pre_execute_now`] with [`Now`].
//!   The host asks the synchronous form first, on the caller's thread (a
//!   `.so`'s too): a pass or an answer there costs no `next`, no future and
//!   no allocation. Listeners built against 1.0–1.4 answer `Later` and are
//!   called as before.
//! - **1.6.0**: images in the `model` service's messages
//!   ([`services::model::ChatMessage::images`],
//!   [`services::model::MessageImage`]): a tool result's image blocks reach
//!   the provider (Claude Code's `Read` of an image). A provider built
//!   against an older minor ignores the field and reads the text.
//! - **1.6.0**: steering in several parts:
//!   [`ContinuationDecision::ContinueParts`] (a listener built against an
//!   older minor is handed `Continue` with the parts joined by
//!   [`STEERING_PART_SEPARATOR`], and its unchanged answer keeps them;
//!   [`reads_steering_parts`]) and [`services::model::ChatMessage::parts`]
//!   (a provider built against an older minor reads the joined `content`).
//! - **1.7.0**: the `command/display` record ([`display::CommandDisplay`]):
//!   a line a plugin adds, with `Host::append_record`, to the output of the
//!   command the session runs (Claude Code's `/compact` names each
//!   PreCompact and PostCompact hook run). A record, not an ABI type: older
//!   plugins and hosts are unaffected.
//! - **1.7.0** (also): system-role context:
//!   [`ffi::HostContext::inject_system_context`] with
//!   [`Host::inject_system_context`] (the model reads the text as a
//!   `system` message at its place; [`services::model::ChatMessage`]'s
//!   `role` is then `system` with a `source`). Plugins built against an
//!   older minor keep `inject_context` (user role) and never see the new
//!   role (a provider built before 1.7 sends it as it sends any other
//!   role it does not know).
//! - **1.8.0**: a plugin's context role:
//!   [`ffi::HostContext::set_context_role`] with [`Host::set_context_role`]
//!   (`user`, `developer` or `system`): everything the plugin adds as
//!   context afterwards (injected, in a decision, after a tool step)
//!   reaches the model in that role; [`services::model::ChatMessage`]'s
//!   `role` is then `developer` (or `system`) with a `source`. Codex's
//!   hook context is `developer`-role. Plugins built against an older
//!   minor keep the user role.
//! - **1.9.0**: a session's environment for its shell tool:
//!   [`ffi::HostContext::set_session_env`] and
//!   [`ffi::HostContext::session_env`] with [`Host::set_session_env`] and
//!   [`Host::session_env`]: each plugin's `(name, value)` pairs, merged in
//!   plugin id order, reach the `Bash` tool's commands of the session and
//!   its subagents (Claude Code's settings `env`). A shell tool built
//!   against an older minor does not read it; a plugin built against one
//!   never sets it.
//! - **1.10.0**: the `mcp/elicitation` waterfall ([`ElicitationInput`],
//!   [`ElicitationDecision`], [`Plugin::elicitation`]): an MCP server asks
//!   the user for input during a tool call (Claude Code's `Elicitation`
//!   and `ElicitationResult`); the host's default asks the `elicitation`
//!   service ([`services::elicitation`], an ACP editor), else `Cancel`.
//! - **1.11.0**: turns a plugin opens: [`ffi::HostContext::open_turn`]
//!   with [`Host::open_turn`]: a turn whose one prompt is the plugin's
//!   text, a user message with no `agent/prompt-submit`, taken only where
//!   the session's embedder runs such turns (a `dsh prompt` run, whose
//!   wind-down after its last turn runs them: `bash-local` reports a
//!   background job that ended as `claude -p` does, recorded `S262-*`);
//!   asked while a turn runs, the plugin's system context reaches that
//!   turn's next model request instead, if it makes one. Refused in ACP and
//!   daemon sessions, where a plugin injects context instead. The
//!   `agent/session-end` reason [`SESSION_END_WIND_DOWN_KILLED`]: the
//!   session ends after `dsh prompt` killed the background jobs its grace
//!   did not see end (Claude Code runs no SessionEnd hook then, recorded
//!   `S260-left-running`). A plugin built against an older minor never
//!   opens a turn, and reads the reason as any other.
#![deny(missing_docs)]

pub mod compat;
pub mod context;
pub mod credentials;
pub mod decisions;
pub mod display;
pub mod ffi;
pub mod notice;
pub mod root;
pub mod sdk;
pub mod seams;
pub mod services;
pub mod types;

pub use abi_stable;
pub use abi_stable::std_types::{RArc, RBox, ROption, RResult, RStr, RString, RVec};
pub use async_ffi;
pub use schemars;
pub use serde;
pub use serde_json;

pub use context::{AuthoredContext, CONTEXT_SEPARATOR, join_context, reads_authored_context};
pub use decisions::*;
pub use root::{PluginDescriptor, PluginModule, PluginModuleRef};
pub use sdk::{
    ExecuteNext, Host, Next, NoConfig, Now, Plugin, abort_signal, listened, plugin_module,
};
pub use seams::*;
pub use types::*;

/// The version of the host/plugin contract (semver): this crate's version.
///
/// A plugin built against another major, or a newer minor, is refused at
/// load; the host accepts plugins built against any older minor of its
/// major (see the crate's compatibility policy).
#[cfg(not(any(feature = "__fixture-api-major-2", feature = "__fixture-future-minor")))]
pub const API_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Deliberately wrong API version, used only by the loader's refusal tests.
#[cfg(feature = "__fixture-api-major-2")]
pub const API_VERSION: &str = "2.0.0";

/// The next minor, claimed (with an extra seam input and root-module field)
/// by the fixture that proves a plugin from a newer minor is
/// refused. Bump it with the crate's minor.
#[doc(hidden)]
pub const FIXTURE_FUTURE_API_VERSION: &str = "1.12.0";

/// The API version the future-minor fixture claims.
#[cfg(feature = "__fixture-future-minor")]
pub const API_VERSION: &str = FIXTURE_FUTURE_API_VERSION;

/// The major component of a semver string, if it has one.
pub fn api_major(version: &str) -> Option<u64> {
    version.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_version_is_semver_with_a_major() {
        let parts: Vec<&str> = API_VERSION.split('.').collect();
        assert_eq!(parts.len(), 3, "{API_VERSION}");
        assert!(
            parts.iter().all(|p| p.parse::<u64>().is_ok()),
            "{API_VERSION}"
        );
        assert_eq!(api_major(API_VERSION), parts[0].parse().ok());
    }

    #[test]
    fn the_future_minor_fixture_claims_the_next_minor() {
        let minor = |v: &str| -> (u64, u64) {
            let mut parts = v.split('.').map(|p| p.parse::<u64>().unwrap_or(u64::MAX));
            (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
        };
        let (major, this) = minor(env!("CARGO_PKG_VERSION"));
        assert_eq!(minor(FIXTURE_FUTURE_API_VERSION), (major, this + 1));
        assert!(!compat::api_accepts(
            env!("CARGO_PKG_VERSION"),
            FIXTURE_FUTURE_API_VERSION
        ));
    }
}
