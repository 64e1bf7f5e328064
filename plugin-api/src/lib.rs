//! The only crate a dsh plugin links.
//!
//! A dsh plugin listens on typed *seams* (the lifecycle points of a coding
//! agent) and answers with small typed decisions. This crate owns everything
//! that crosses the boundary between the host and a plugin:
//!
//! - [`types`] and [`seams`]: ABI-stable content blocks, message sources, the
//!   input snapshot of every seam and every seam's decision;
//! - [`ffi`]: the `#[sabi_trait]` objects the host and plugins call across
//!   the boundary (host context, listeners, `next`, guards, tools, services,
//!   abort signals), all async calls as FFI-safe futures;
//! - [`root`]: the plugin root module, carrying [`API_VERSION`];
//! - [`sdk`]: a safe SDK ([`Plugin`] with default methods and
//!   [`export_plugin!`]) that catches panics at the boundary;
//! - [`credentials`]: which environment variables hold credentials (the
//!   process runner's scrub rule).
//!
//! Built-in plugins use exactly the same API as a `.so`: the host turns both
//! into a [`root::PluginModuleRef`] and never special-cases either.
//!
//! This crate has no async runtime and performs no I/O. Plugins that need a
//! timer, a process or the session log ask the host through [`sdk::Host`];
//! a plugin never blocks its thread (see the SDK's
//! [rules](sdk#what-a-plugin-must-not-do)).
#![deny(missing_docs)]

pub mod credentials;
pub mod ffi;
pub mod root;
pub mod sdk;
pub mod seams;
pub mod types;

pub use abi_stable;
pub use async_ffi;
pub use schemars;
pub use serde;
pub use serde_json;

pub use root::{PluginDescriptor, PluginModule, PluginModuleRef};
pub use sdk::{ExecuteNext, Host, Next, NoConfig, Plugin, plugin_module};
pub use seams::*;
pub use types::*;

/// The version of the host/plugin contract (semver).
///
/// A plugin built against another major version is refused at load; the
/// host accepts plugins built against any minor of its own major.
#[cfg(not(feature = "__fixture-api-major-2"))]
pub const API_VERSION: &str = "1.0.0";

/// Deliberately wrong API version, used only by the loader's refusal tests.
#[cfg(feature = "__fixture-api-major-2")]
pub const API_VERSION: &str = "2.0.0";

/// The major component of a semver string, if it has one.
pub fn api_major(version: &str) -> Option<u64> {
    version.split('.').next()?.parse().ok()
}
