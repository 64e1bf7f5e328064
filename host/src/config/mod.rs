//! The `cordis.yml` manifest: host settings and the plugin list.
//!
//! Read with figment: YAML, then `DSH_`-prefixed environment variables for
//! the host settings (`DSH_STATE_DIR`, `DSH_SOCKET`, `DSH_LOG_LEVEL`,
//! `DSH_PLUGIN_DIRS`, `DSH_SHUTDOWN_GRACE_S`). Relative paths resolve against the manifest's
//! folder. Every error names the file, and for plugin entries the entry id
//! and the key. A manifest is at most 1 MiB, and an empty one or one
//! that gives a key twice in a mapping is refused (see `strict`).

mod compaction;
mod hooks;
mod input_file;
mod manifest;
mod store;
mod strict;
mod telemetry;

pub use store::{STORE_URL_ENV, StoreConfig};
pub use telemetry::{OTLP_ENDPOINT_ENV, TelemetryConfig};

pub use compaction::{
    CompactionSettings, CompactionStyle, DEFAULT_THRESHOLD as DEFAULT_COMPACTION_THRESHOLD,
};
pub use hooks::{HookSettings, HttpSettings};
pub use input_file::open_input;

pub use manifest::{
    ConfigError, DEFAULT_LISTENER_TIMEOUT, MAX_MANIFEST_BYTES, Manifest, PluginEntry, PluginRef,
    library_id as manifest_library_id,
};
