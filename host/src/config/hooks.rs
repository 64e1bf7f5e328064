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

#[cfg(test)]
mod tests {
    use super::super::Manifest;
    use std::path::Path;

    #[test]
    fn the_manifest_reads_allowed_hosts_and_defaults_to_loopback() {
        let path = Path::new("/etc/dsh/cordis.yml");
        let m = Manifest::from_yaml(path, "plugins: []\n").unwrap();
        assert_eq!(m.hooks.http.allowed_hosts, ["loopback"]);
        let text =
            "plugins: []\nhooks:\n  http:\n    allowed_hosts: [loopback, hooks.example.com]\n";
        let m = Manifest::from_yaml(path, text).unwrap();
        assert_eq!(
            m.hooks.http.allowed_hosts,
            ["loopback", "hooks.example.com"]
        );
    }

    #[test]
    fn a_misspelled_hooks_key_is_refused_naming_it() {
        let path = Path::new("/etc/dsh/cordis.yml");
        let text = "plugins: []\nhooks:\n  http:\n    allowed_host: [example.com]\n";
        let e = Manifest::from_yaml(path, text).unwrap_err().to_string();
        assert!(e.starts_with("/etc/dsh/cordis.yml: "), "{e}");
        assert!(e.contains("allowed_host"), "{e}");
    }
}
