//! What the loop-level vector tests do not reproduce, and why.
//!
//! Each row names a vector (`*` = every vector of the dialect, `S33-*` =
//! every vector whose name starts `S33-`), the aspect
//! left out or mapped, and the reason. The runner marks every row it uses
//! and the test fails on a row nothing used, so this table cannot go stale.
//! Rows of kind `Mapped` are not skipped: the value is compared against
//! what dsh's equivalent is, as the reason says.

use crate::vectors::Dialect;

/// What a row covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aspect {
    /// Hook calls of this event are not expected: dsh does not fire it.
    /// (No row needs it today: dsh fires every event the vectors record.)
    #[allow(dead_code)]
    Event(&'static str),
    /// dsh makes calls of this label that the vector does not have.
    ExtraCalls(&'static str),
    /// This payload key is compared as noted in the reason.
    Mapped(&'static str),
    /// This payload key is left out of the comparison.
    PayloadKey(&'static str),
    /// This payload key is compared by JSON type only. (No row needs it
    /// today.)
    #[allow(dead_code)]
    TypeOnly(&'static str),
    /// This hook environment variable is left out of the comparison.
    Env(&'static str),
    /// Which tools ran.
    ToolsRan,
    /// The tool results the model read (other than hook text).
    ToolResults,
}

pub struct Row {
    pub dialect: Dialect,
    pub vector: &'static str,
    pub aspect: Aspect,
    pub reason: &'static str,
}

const fn row(dialect: Dialect, vector: &'static str, aspect: Aspect, reason: &'static str) -> Row {
    Row {
        dialect,
        vector,
        aspect,
        reason,
    }
}

use Aspect::*;
use Dialect::{Claude, Codex};

/// The table.
#[rustfmt::skip]
pub const ROWS: &[Row] = &[
    // Both dialects.
    row(
        Claude,
        "*",
        Mapped("transcript_path"),
        "dsh hands hooks its own session log (`<state>/sessions/<id>.jsonl`), not the CLI's transcript; compared as that path",
    ),
    row(
        Codex,
        "*",
        Mapped("transcript_path"),
        "dsh hands hooks its own session log (`<state>/sessions/<id>.jsonl`), not the CLI's rollout file; compared as that path",
    ),
    row(
        Claude,
        "*",
        Mapped("saved file mode"),
        "Claude Code writes saved hook texts 0644; dsh keeps hook output private (0600 files in 0700 folders, issue 8: state is private), checked as 0600",
    ),
    row(
        Codex,
        "*",
        Mapped("saved file mode"),
        "Codex writes saved hook texts 0644 under the shared temp dir; dsh keeps hook output private (0600 files in 0700 folders it owns), checked as 0600",
    ),
    // Claude Code.
    row(
        Claude,
        "S1-all-events",
        Mapped("agent_transcript_path"),
        "the subagent's transcript is its own dsh session log, compared as that path",
    ),
    row(Claude, "S1-permission-needed", PayloadKey("tool_calls"),
        "PostToolBatch lists Claude Code's own permission refusal of `touch` as the response; dsh ran the command (see ToolsRan)"),
    row(
        Claude,
        "S33-*",
        Env("CLAUDE_CODE_ENTRYPOINT"),
        "the interactive CLI (S33 ran in a terminal) says `cli`; dsh's bridge hands hooks `sdk-cli` as `claude -p` does, whoever approves",
    ),
    // Codex.
    row(
        Codex,
        "C3-ups-block-then-resume",
        Mapped("session_id"),
        "Codex kept no rollout for a session whose only prompt was blocked, so `resume --last` started a new session ($SESSION_ID_2); dsh persists the session and resumes it (compared as $SESSION_ID, SessionStart source `resume`)",
    ),
    row(
        Codex,
        "C1-no-trust-bypass",
        ExtraCalls("*"),
        "Codex ran no hook without a per-hook trust entry; dsh runs user and config_path hook files without one (as Codex with --dangerously-bypass-hook-trust) and gates only project hooks (`dsh trust`)",
    ),
];
