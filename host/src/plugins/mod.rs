//! Plugin loading and lifecycle: built-ins and `.so` files through one path.
//!
//! For every manifest entry (then every `.so` in `plugin_dirs`), in order:
//! resolve the root module (built-in table or [`loader`]), describe it, check
//! its required services are mounted, validate its config against its JSON
//! Schema, and apply it with its own [`context::PluginContext`]. A plugin
//! that fails any step is reported and the rest still load. Dispose removes
//! everything a plugin registered; libraries stay mapped.

pub mod builtin;
pub mod context;
pub mod loader;
mod registry;
mod reload;
pub mod services;
mod trust;

pub use context::{HostCore, HostView, SessionControl};
pub use registry::{PluginHost, PluginRecord, PluginSource, PluginStatus, Problem, Severity};
pub use reload::ReloadReport;
