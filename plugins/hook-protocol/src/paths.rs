//! Where a bridge reads its hook files from: one path or a list, as the
//! manifest gives them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One path or a list of paths, read in order (lowest precedence first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ConfigPaths {
    /// A single file.
    One(String),
    /// Several files, read in order.
    Many(Vec<String>),
}

impl Default for ConfigPaths {
    fn default() -> Self {
        ConfigPaths::Many(Vec::new())
    }
}

impl ConfigPaths {
    /// The paths, in order.
    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            ConfigPaths::One(p) => vec![PathBuf::from(p)],
            ConfigPaths::Many(ps) => ps.iter().map(PathBuf::from).collect(),
        }
    }

    /// The same list with every path passed through `resolve` (e.g. made
    /// absolute against the manifest's folder).
    pub fn resolved(&self, resolve: impl Fn(&Path) -> PathBuf) -> ConfigPaths {
        ConfigPaths::Many(
            self.paths()
                .iter()
                .map(|p| resolve(p).to_string_lossy().into_owned())
                .collect(),
        )
    }
}
