//! Re-applying a changed manifest to a running host.
//!
//! The next registry is built whole, off to the side, then published in one
//! atomic swap. Unchanged plugins carry their instance over untouched; new
//! ones are applied; a plugin whose entry, position, config or library file
//! changed is applied again into a new instance (a rebuilt `.so` is mapped
//! from a fresh copy, since mapped libraries are never unloaded), and if
//! that fails its previous instance is carried over instead and the failure
//! is reported. Removed plugins are left out. Turns already running keep
//! the registry they started with; instances that only it holds are dropped
//! with it when the last such turn ends.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde::Serialize;

use std::sync::Arc;

use super::registry::{PluginHost, PluginRecord, PluginStatus, Staging};
use crate::config::{Manifest, PluginEntry, PluginRef};

/// What a reload did, by plugin id.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct ReloadReport {
    /// Applied for the first time.
    pub added: Vec<String>,
    /// Applied again into a new instance, which replaced the previous one.
    pub changed: Vec<String>,
    /// Left out of the next registry.
    pub removed: Vec<String>,
    /// Left running as they were.
    pub unchanged: Vec<String>,
    /// Changed, but the new entry failed: the previous instance runs on.
    pub kept: Vec<String>,
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
    /// Applies the difference between what is loaded and `manifest`: builds
    /// the whole next registry off to the side, then publishes it in one
    /// swap. A changed plugin whose new entry fails keeps its previous
    /// instance ([`PluginStatus::Kept`], and a problem says so).
    pub fn reload(&mut self, manifest: &Manifest) -> ReloadReport {
        self.problems.clear();
        crate::hooks::install(&self.core, &manifest.hooks);
        let desired = self.desired_entries(manifest);
        let previous_instances = self.instances();
        let previous = std::mem::take(&mut self.records);
        let mut report = ReloadReport::default();
        // Instances others mounted (not from this manifest) stay.
        let foreign: Vec<_> = self
            .core
            .view()
            .instances()
            .iter()
            .filter(|i| !previous_instances.iter().any(|p| Arc::ptr_eq(p, i)))
            .cloned()
            .collect();
        let mut staging = Staging::new(foreign);
        for entry in &desired {
            let old = previous.iter().find(|r| r.id == entry.id);
            let record = match old {
                Some(old) if unchanged(old, entry) => {
                    report.unchanged.push(entry.id.clone());
                    let mut record = old.clone();
                    if let PluginStatus::Kept(_) = record.status {
                        // Back to the entry it runs with.
                        record.status = PluginStatus::Applied;
                    }
                    record
                }
                _ => {
                    let record = self.build_entry(entry, &staging.before);
                    match old {
                        Some(old)
                            if old.instance.is_some()
                                && !record.status.is_running()
                                && !entry.disabled =>
                        {
                            report.kept.push(entry.id.clone());
                            self.kept(old, &record)
                        }
                        Some(_) => {
                            report.changed.push(entry.id.clone());
                            record
                        }
                        None => {
                            report.added.push(entry.id.clone());
                            record
                        }
                    }
                }
            };
            if let Some(instance) = &record.instance {
                staging.push(instance);
            }
            self.records.push(record);
        }
        report.removed = previous
            .iter()
            .filter(|r| !desired.iter().any(|e| e.id == r.id))
            .map(|r| r.id.clone())
            .collect();
        self.records.sort_by_key(|r| r.position);
        // Turns already running finish on the registry they started with;
        // instances only it holds are dropped with it.
        self.publish(&previous_instances);
        report
    }

    /// The record of a plugin whose new entry failed (`failed`) and that
    /// keeps running as `old`.
    fn kept(&mut self, old: &PluginRecord, failed: &PluginRecord) -> PluginRecord {
        let why = match &failed.status {
            PluginStatus::Failed(why) | PluginStatus::Skipped(why) => why.clone(),
            other => format!("{other:?}"),
        };
        // The failure itself was reported as a problem already.
        self.problem(
            Some(&old.id),
            "the new entry did not apply; the previous instance keeps running with its previous config".to_string(),
        );
        let mut record = old.clone();
        record.status = PluginStatus::Kept(why);
        record
    }
}

/// Whether `record` already runs `entry` as it is now.
fn unchanged(record: &PluginRecord, entry: &PluginEntry) -> bool {
    match &record.entry {
        Some(old) => {
            same_entry(old, entry)
                && stamp_of(&entry.plugin) == record.stamp
                && matches!(
                    record.status,
                    PluginStatus::Applied | PluginStatus::Disabled | PluginStatus::Kept(_)
                )
        }
        None => false,
    }
}
