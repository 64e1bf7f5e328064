//! The manifest's `hooks:` section: settings of the host's
//! `hook-transport` service (`crate::hooks`), which runs `http` and
//! `socket` hooks for the hook bridges.
//!
//! ```yaml
//! hooks:
//!   http:
//!     allowed_hosts: [loopback, hooks.example.com, "*.corp.example"]
//! ```

use serde::{Deserialize, Serialize};

/// The manifest's `hooks:` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookSettings {
    /// `hooks.http`.
    pub http: HttpSettings,
}

/// `hooks.http`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Hosts an `http` hook may call: exact names or addresses,
    /// `*.example.com`, `*` (any), `loopback` (`localhost`, 127.0.0.0/8,
    /// `::1`). Default: `[loopback]`.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            allowed_hosts: dsh_hook_protocol::transport::default_allowed_hosts(),
        }
    }
}
