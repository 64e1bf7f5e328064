//! The `exec_command` processes still running after their call returned,
//! per dsh session, under Codex's session ids: random numbers in
//! `1000..100000` (recorded `C207-*`: 30497, 4157, ...), unique among the
//! session's live processes.
//!
//! A process leaves when a `write_stdin` sees it end (a later one gets
//! `Unknown process id`), when its session ends (killed), and when the
//! session already holds [`MAX_PROCESSES`]: then, as Codex prunes, one
//! outside the [`PROTECTED_RECENT`] most recently used goes, an ended one
//! first, else the least recently used (killed).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dsh_plugin_api::sdk::codex_exec::FinishedCall;
use tokio::time::Instant;

use super::process::ExecProcess;

/// The most processes one session keeps (Codex's
/// `MAX_UNIFIED_EXEC_PROCESSES`).
pub const MAX_PROCESSES: usize = 64;
/// How many of the most recently used processes pruning spares.
pub const PROTECTED_RECENT: usize = 8;

/// One kept process.
#[derive(Clone)]
pub struct Kept {
    /// The process.
    pub process: Arc<ExecProcess>,
    /// The `exec_command` call that started it.
    pub call: FinishedCall,
    last_used: Instant,
}

/// Every session's kept processes.
#[derive(Default)]
pub struct ExecSessions {
    by_session: Mutex<HashMap<String, HashMap<i32, Kept>>>,
}

impl ExecSessions {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashMap<i32, Kept>>> {
        self.by_session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `process` for `session`; returns its new id.
    pub fn insert(&self, session: &str, process: Arc<ExecProcess>, call: FinishedCall) -> i32 {
        let mut all = self.sessions();
        let kept = all.entry(session.to_string()).or_default();
        if kept.len() >= MAX_PROCESSES {
            prune(kept);
        }
        let id = loop {
            let id = random_id();
            if !kept.contains_key(&id) {
                break id;
            }
        };
        kept.insert(
            id,
            Kept {
                process,
                call,
                last_used: Instant::now(),
            },
        );
        id
    }

    /// The process `id` of `session`, marked as used now.
    pub fn get(&self, session: &str, id: i32) -> Option<Kept> {
        let mut all = self.sessions();
        let kept = all.get_mut(session)?.get_mut(&id)?;
        kept.last_used = Instant::now();
        Some(kept.clone())
    }

    /// Forgets the process `id` of `session`.
    pub fn remove(&self, session: &str, id: i32) {
        let mut all = self.sessions();
        if let Some(kept) = all.get_mut(session) {
            kept.remove(&id);
            if kept.is_empty() {
                all.remove(session);
            }
        }
    }

    /// Kills and forgets every process of `session`.
    pub fn end_session(&self, session: &str) {
        let gone = self.sessions().remove(session);
        for (_, kept) in gone.into_iter().flatten() {
            kept.process.kill();
        }
    }

    /// How many processes `session` keeps.
    pub fn count(&self, session: &str) -> usize {
        self.sessions().get(session).map_or(0, HashMap::len)
    }
}

/// Removes (and kills) one process outside the most recently used.
fn prune(kept: &mut HashMap<i32, Kept>) {
    let mut by_use: Vec<(i32, Instant, bool)> = kept
        .iter()
        .map(|(id, k)| (*id, k.last_used, k.process.ended()))
        .collect();
    by_use.sort_by_key(|(_, used, _)| std::cmp::Reverse(*used));
    let candidates = &by_use[PROTECTED_RECENT.min(by_use.len())..];
    let victim = candidates
        .iter()
        .find(|(_, _, ended)| *ended)
        .or_else(|| candidates.last())
        .map(|(id, _, _)| *id);
    if let Some(k) = victim.and_then(|id| kept.remove(&id)) {
        tracing::info!(
            "exec_command: {MAX_PROCESSES} processes kept, stopping the least recently used"
        );
        k.process.kill();
    }
}

/// A number in `1000..100000`.
fn random_id() -> i32 {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let n = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    1000 + i32::try_from(n % 99_000).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_codexs_range() {
        for _ in 0..1000 {
            let id = random_id();
            assert!((1000..100_000).contains(&id), "{id}");
        }
    }
}
