//! Re-applying a changed manifest to a running host.
//!
//! Removed plugins are disposed; new ones are applied; a plugin whose entry,
//! position, config or library file changed is disposed and applied again
//! (a rebuilt `.so` is mapped from a fresh copy, since mapped libraries are
//! never unloaded). Unchanged plugins keep running untouched. Turns already
//! running keep the plugins they started with: they dispatch through a
//! snapshot taken at turn start.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde::Serialize;

use super::registry::{PluginHost, PluginStatus};
use crate::config::{Manifest, PluginEntry, PluginRef};

/// What a reload did, by plugin id.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct ReloadReport {
    /// Applied for the first time.
    pub added: Vec<String>,
    /// Disposed and applied again.
    pub changed: Vec<String>,
    /// Disposed.
    pub removed: Vec<String>,
    /// Left running as they were.
    pub unchanged: Vec<String>,
}

/// A library file's modification time and size, to notice a rebuild.
pub(crate) fn stamp_of(plugin: &PluginRef) -> Option<(SystemTime, u64)> {
    match plugin {
        PluginRef::Builtin(_) => None,
        PluginRef::Library(path) => {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.modified().ok()?, meta.len()))
        }
    }
}

/// Copies `path` under the state dir with a unique name, keeping its mode.
pub(crate) fn fresh_copy(state_dir: &Path, path: &Path) -> Result<PathBuf, String> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let dir = state_dir.join("plugin-copies");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let copy = dir.join(format!("{stem}-{}-{n}.so", std::process::id()));
    std::fs::copy(path, &copy)
        .map_err(|e| format!("{}: cannot copy for reload: {e}", path.display()))?;
    Ok(copy)
}

fn same_entry(old: &PluginEntry, new: &PluginEntry) -> bool {
    old.plugin == new.plugin
        && old.config == new.config
        && old.disabled == new.disabled
        && old.index == new.index
        && old.listener_timeout == new.listener_timeout
}

impl PluginHost {
    /// Applies the difference between what is loaded and `manifest`.
    pub fn reload(&mut self, manifest: &Manifest) -> ReloadReport {
        self.problems.clear();
        let desired = self.desired_entries(manifest);
        let mut report = ReloadReport::default();
        let mut kept = Vec::new();
        for record in std::mem::take(&mut self.records) {
            let wanted = desired.iter().find(|e| e.id == record.id);
            let unchanged = match (wanted, &record.entry) {
                (Some(new), Some(old)) => {
                    same_entry(old, new)
                        && stamp_of(&new.plugin) == record.stamp
                        && matches!(
                            record.status,
                            PluginStatus::Applied | PluginStatus::Disabled
                        )
                }
                _ => false,
            };
            if unchanged {
                report.unchanged.push(record.id.clone());
                kept.push(record);
                continue;
            }
            if record.status == PluginStatus::Applied {
                // Turns already running finish on it; new ones never see it.
                self.core.retire(&record.id);
            }
            if wanted.is_some() {
                report.changed.push(record.id.clone());
            } else {
                report.removed.push(record.id.clone());
            }
        }
        self.records = kept;
        for entry in desired {
            if report.unchanged.contains(&entry.id) {
                continue;
            }
            if !report.changed.contains(&entry.id) {
                report.added.push(entry.id.clone());
            }
            self.load_entry(&entry);
        }
        self.records.sort_by_key(|r| r.position);
        report
    }
}
