//! Which project hook files the user approved, as Codex has it: a project's
//! hooks run only once it is trusted, and a file that changed since is
//! untrusted again until it is approved again.
//!
//! The record is `<state_dir>/trust.json` (0600, written whole through a
//! temporary file and a rename):
//!
//! ```json
//! {"projects": {"/abs/project": {"trusted_at_ms": 1764590000000,
//!   "files": {"/abs/project/.codex/hooks.json": "sha256:…"}}}}
//! ```
//!
//! A project is keyed by its root ([`crate::discovery::project_root`]); it
//! lists each project-level hook file that was approved with the
//! [`sha256`](crate::discovery::sha256) of the exact bytes approved. A file
//! is [`Trust::Trusted`] when the project holding it lists it with the hash
//! of its bytes now, or when it lies under a prefix the manifest trusts (for
//! servers whose checkouts are trusted as a whole); listed with another hash
//! it is [`Trust::Modified`]; not listed at all it is [`Trust::Untrusted`].
//! `dsh trust PATH` approves the files as they are at that moment, so an
//! edit made after it is caught.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The trust record's file name under the state directory.
pub const TRUST_FILE: &str = "trust.json";

/// Why the trust record cannot be used.
#[derive(Debug, Error)]
pub enum TrustError {
    /// It could not be read.
    #[error("cannot read the trust record {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// It is not a trust record.
    #[error("the trust record {path} is not valid: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// It could not be written.
    #[error("cannot write the trust record {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Whether one project hook file may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Approved as it is now (or under a trusted prefix).
    Trusted,
    /// Approved once, changed since.
    Modified,
    /// Never approved.
    Untrusted,
}

impl Trust {
    /// How a notice names the state.
    pub fn describe(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Modified => "changed since it was trusted",
            Trust::Untrusted => "not trusted",
        }
    }
}

/// One trusted project.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedProject {
    /// When it was (last) approved, ms since the epoch.
    #[serde(default)]
    pub trusted_at_ms: u64,
    /// Each approved file and the hash of the bytes approved.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// The whole record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustStore {
    /// Trusted projects by root.
    #[serde(default)]
    pub projects: BTreeMap<String, TrustedProject>,
}

/// The record's path under `state_dir`.
pub fn trust_path(state_dir: &Path) -> PathBuf {
    state_dir.join(TRUST_FILE)
}

impl TrustStore {
    /// Reads the record; none yet is an empty one.
    pub fn load(state_dir: &Path) -> Result<TrustStore, TrustError> {
        let path = trust_path(state_dir);
        let bytes = match crate::discovery::read_bounded(&path) {
            Ok(bytes) => bytes,
            Err(crate::ConfigError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(TrustStore::default());
            }
            Err(crate::ConfigError::Read { source, .. }) => {
                return Err(TrustError::Read { path, source });
            }
            Err(other) => {
                return Err(TrustError::Parse {
                    path,
                    message: other.to_string(),
                });
            }
        };
        serde_json::from_slice(&bytes).map_err(|e| TrustError::Parse {
            path,
            message: e.to_string(),
        })
    }

    /// Writes the record whole (0600, through a rename).
    pub fn save(&self, state_dir: &Path) -> Result<(), TrustError> {
        let path = trust_path(state_dir);
        let write_error = |source| TrustError::Write {
            path: path.clone(),
            source,
        };
        let tmp = state_dir.join(format!(".{TRUST_FILE}.{}", std::process::id()));
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| write_error(std::io::Error::other(e)))?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(write_error)?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(write_error)?;
        std::fs::rename(&tmp, &path).map_err(write_error)
    }

    /// Whether `file`, whose bytes hash to `hash`, may run. `prefixes` are
    /// the folders the manifest trusts whole.
    pub fn status(&self, file: &Path, hash: &str, prefixes: &[PathBuf]) -> Trust {
        if prefixes.iter().any(|p| file.starts_with(p)) {
            return Trust::Trusted;
        }
        let key = file.to_string_lossy();
        let mut seen = false;
        for (root, project) in &self.projects {
            if !file.starts_with(root) {
                continue;
            }
            match project.files.get(key.as_ref()) {
                Some(h) if h == hash => return Trust::Trusted,
                Some(_) => seen = true,
                None => {}
            }
        }
        if seen {
            Trust::Modified
        } else {
            Trust::Untrusted
        }
    }

    /// Approves `files` (each with its hash now) under project `root`,
    /// keeping what the project already had approved.
    pub fn approve(&mut self, root: &Path, files: &[(PathBuf, String)], now_ms: u64) {
        let project = self
            .projects
            .entry(root.to_string_lossy().into_owned())
            .or_default();
        project.trusted_at_ms = now_ms;
        for (file, hash) in files {
            project
                .files
                .insert(file.to_string_lossy().into_owned(), hash.clone());
        }
    }

    /// Forgets project `root` (and every project inside it); the roots
    /// removed.
    pub fn revoke(&mut self, root: &Path) -> Vec<String> {
        let gone: Vec<String> = self
            .projects
            .keys()
            .filter(|k| Path::new(k).starts_with(root))
            .cloned()
            .collect();
        for k in &gone {
            self.projects.remove(k);
        }
        gone
    }
}

/// A project-level hook file a session did not run, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub file: PathBuf,
    /// Its trust state.
    pub trust: Trust,
}

/// Each file `config_path` lists that is missing: an error (a discovered
/// file may be absent; a listed one was meant to be there).
pub fn missing_listed(explicit: &[PathBuf]) -> Vec<dsh_plugin_api::ConfigProblem> {
    explicit
        .iter()
        .filter_map(|path| {
            let source = std::fs::symlink_metadata(path).err()?;
            let e = crate::config::ConfigError::Read {
                path: path.clone(),
                source,
            };
            Some(e.problem())
        })
        .collect()
}

/// A warning for each project file of `project` skipped for want of
/// trust, naming the `dsh trust` that approves it.
pub fn skipped_warnings(skipped: &[Skipped], project: &Path) -> Vec<dsh_plugin_api::ConfigProblem> {
    skipped
        .iter()
        .map(|s| {
            dsh_plugin_api::ConfigProblem::warning(
                s.file.display().to_string(),
                "",
                format!(
                    "project hooks {}; they do not run until `dsh trust {}`",
                    s.trust.describe(),
                    project.display()
                ),
            )
        })
        .collect()
}

/// The notice a user gets when project hooks were skipped: which files,
/// why, and the command that trusts them.
pub fn untrusted_notice(cli: &str, project: &Path, skipped: &[Skipped]) -> String {
    let mut text = format!(
        "dsh: {cli} project hooks in {} were not run because the project is not trusted:\n",
        project.display()
    );
    for s in skipped {
        text.push_str(&format!(
            "  - {} ({})\n",
            s.file.display(),
            s.trust.describe()
        ));
    }
    text.push_str(&format!(
        "Review them, then run `dsh trust {}` to let them run from the next turn on.",
        project.display()
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approved_changed_unknown_and_prefixed_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = TrustStore::default();
        let root = Path::new("/p");
        let f = PathBuf::from("/p/.codex/hooks.json");
        store.approve(root, &[(f.clone(), "sha256:a".into())], 1);
        assert_eq!(store.status(&f, "sha256:a", &[]), Trust::Trusted);
        assert_eq!(store.status(&f, "sha256:b", &[]), Trust::Modified);
        let other = PathBuf::from("/p/sub/.codex/hooks.json");
        assert_eq!(store.status(&other, "sha256:a", &[]), Trust::Untrusted);
        assert_eq!(
            store.status(&other, "sha256:a", &[PathBuf::from("/p/sub")]),
            Trust::Trusted
        );
        // A prefix is whole components: /p/su does not cover /p/sub.
        assert_eq!(
            store.status(&other, "sha256:a", &[PathBuf::from("/p/su")]),
            Trust::Untrusted
        );
        store.save(dir.path()).unwrap();
        let back = TrustStore::load(dir.path()).unwrap();
        assert_eq!(back, store);
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(trust_path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mut back = back;
        assert_eq!(back.revoke(root), ["/p"]);
        assert_eq!(back.status(&f, "sha256:a", &[]), Trust::Untrusted);
    }

    #[test]
    fn a_missing_record_is_empty_and_a_broken_one_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(TrustStore::load(dir.path()).unwrap(), TrustStore::default());
        std::fs::write(trust_path(dir.path()), "{").unwrap();
        let err = TrustStore::load(dir.path()).unwrap_err();
        assert!(err.to_string().contains("trust.json"), "{err}");
    }
}
