//! `compaction:` in the manifest: when a session's history is replaced by a
//! model-written summary without being asked (`/compact` always works).
//!
//! ```yaml
//! compaction:
//!   auto: true        # compact before a turn once the context is this full
//!   threshold: 0.9    # share of the model's context window (0 < t <= 1)
//!   style: claude     # whose compaction: claude (default) or codex
//! ```
//!
//! `style` says whose compaction a session reproduces ([`CompactionStyle`]):
//! Claude Code's (summary prompt, continuation message, compacted when a
//! turn ends) or Codex's (recorded `C90-*`: its prompt, its summary message
//! after the user's earlier prompts, compacted before the model is asked
//! again: within a turn after a tool step, or before the next turn).
//!
//! The share is measured on what the model provider reports (its
//! `stream/usage` events: tokens in use against the window, e.g.
//! `model-openai` with `context_window` set); a provider that reports none
//! never triggers it.

use serde::{Deserialize, Serialize};

/// The default `threshold`.
pub const DEFAULT_THRESHOLD: f64 = 0.9;

/// Automatic compaction settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompactionSettings {
    /// Compact automatically.
    pub auto: bool,
    /// The share of the context window in use at which it does.
    pub threshold: f64,
    /// Whose compaction: Claude Code's or Codex's.
    pub style: CompactionStyle,
}

/// Whose compaction a session reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionStyle {
    /// Claude Code's `/compact` (`S90-*`): the summary prompt with
    /// `<analysis>`/`<summary>`, the continuation message in place of the
    /// whole history; automatic compaction when a turn ends.
    #[default]
    Claude,
    /// Codex's (`C90-*`): its checkpoint prompt, then the user's earlier
    /// prompts and its summary message; automatic compaction before the
    /// model is asked again (after a tool step, or before the next turn).
    Codex,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            auto: true,
            threshold: DEFAULT_THRESHOLD,
            style: CompactionStyle::Claude,
        }
    }
}

impl CompactionSettings {
    /// Checks the values: `threshold` is a share, above 0 and at most 1.
    pub fn check(&self) -> Result<(), String> {
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(format!(
                "compaction.threshold: {} is not a share of the context window (0 < threshold <= 1)",
                self.threshold
            ));
        }
        Ok(())
    }

    /// Whether `used` tokens of a `size`-token window call for compaction.
    pub fn due(&self, used: u64, size: u64) -> bool {
        self.auto && size > 0 && used as f64 >= self.threshold * size as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_at_the_share_and_never_when_off_or_without_a_window() {
        let s = CompactionSettings::default();
        assert!(!s.due(89, 100));
        assert!(s.due(90, 100));
        assert!(!s.due(1000, 0));
        let off = CompactionSettings { auto: false, ..s };
        assert!(!off.due(100, 100));
    }

    #[test]
    fn a_threshold_outside_the_share_is_refused_with_its_key() {
        for t in [0.0, -0.5, 1.5, f64::NAN] {
            let s = CompactionSettings {
                auto: true,
                threshold: t,
                ..CompactionSettings::default()
            };
            let e = s.check().unwrap_err();
            assert!(e.contains("compaction.threshold"), "{e}");
        }
        assert!(CompactionSettings::default().check().is_ok());
    }
}
