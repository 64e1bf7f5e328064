//! Plugin loading and lifecycle: built-ins and `.so` files through one path.
//!
//! For every manifest entry (then every `.so` in `plugin_dirs`), in order:
//! resolve the root module (built-in table or [`loader`]), describe it, check
//! its required services are mounted, validate its config against its JSON
//! Schema, and apply it with its own [`context::PluginContext`] into an
//! [`Instance`] of its own. A plugin that fails any step is reported and the
//! rest still load. The instances are published together as one
//! [`Registry`] (one atomic swap; a turn runs on the registry it started
//! with). Dispose leaves a plugin's instance out of the next registry and
//! ends its calls in flight; libraries stay mapped.

pub mod builtin;
pub mod context;
mod elf;
mod instance;
pub mod loader;
mod registry;
mod reload;
pub mod services;
mod snapshot;
mod trust;

pub use context::{HostCore, SessionControl};
pub use instance::Instance;
pub use registry::{PluginHost, PluginRecord, PluginSource, PluginStatus, Problem, Severity};
pub use reload::ReloadReport;
pub use snapshot::{HostView, Registry};
