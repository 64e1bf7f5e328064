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
    Event(&'static str),
    /// dsh makes calls of this label that the vector does not have.
    ExtraCalls(&'static str),
    /// This payload key is compared as noted in the reason.
    Mapped(&'static str),
    /// This payload key is left out of the comparison.
    PayloadKey(&'static str),
    /// This payload key is compared by JSON type only.
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
        "*",
        Event("PostToolBatch"),
        "dsh has no seam after a step's tool batch",
    ),
    row(
        Claude,
        "S1-all-events",
        Event("MessageDisplay"),
        "dsh streams no display events to hooks",
    ),
    row(
        Claude,
        "S1-bash-only",
        Event("MessageDisplay"),
        "dsh streams no display events to hooks",
    ),
    row(
        Claude,
        "S1-permission-needed",
        Event("MessageDisplay"),
        "dsh streams no display events to hooks",
    ),
    row(
        Claude,
        "S1-all-events",
        Mapped("agent_transcript_path"),
        "the subagent's transcript is its own dsh session log, compared as that path",
    ),
    row(Claude, "S1-all-events", PayloadKey("tool_response.resolvedModel"),
        "dsh's Agent tool has no resolved model name to report (the scripted model has none)"),
    row(Claude, "S1-all-events", PayloadKey("tool_response.usage"),
        "dsh's Agent tool reports no token usage (the scripted model counts none)"),
    row(
        Claude,
        "S1-all-events",
        ToolResults,
        "the Task result is Claude Code's block list with usage text; dsh's Agent tool answers the child's last message as text",
    ),
    row(
        Claude,
        "S31-read-deny-glob",
        ExtraCalls("pre"),
        "Claude Code refuses a Read a deny rule covers while checking the tool's input, before PreToolUse; dsh's permission step follows the pre-execute waterfall (ARCHITECTURE.md §11), so PreToolUse fires first. The refusal and its text are compared",
    ),
    row(
        Claude,
        "S33-*",
        Env("CLAUDE_CODE_ENTRYPOINT"),
        "the interactive CLI (S33 ran in a terminal) says `cli`; dsh's bridge hands hooks `sdk-cli` as `claude -p` does, whoever approves",
    ),
    row(
        Claude,
        "S35-accept-edits-*",
        PayloadKey("tool_response.noOutputExpected"),
        "Claude Code's Bash marks commands it expects to be silent (`touch`, `mkdir`, `rm`) `noOutputExpected: true`; dsh's Bash always says `false`. The permission outcome (the command ran) is compared",
    ),
    // Codex.
    row(
        Codex,
        "*",
        Event("PreModelRequest"),
        "dsh has no seam before each model request",
    ),
    row(
        Codex,
        "*",
        ToolResults,
        "Codex's exec output framing (`Chunk ID`, `Wall time`, token counts) is its tool's; dsh runs its own Bash. Hook text in results is still compared",
    ),
    row(
        Codex,
        "*",
        TypeOnly("tool_response"),
        "Codex's exec_command reports the raw combined output stream (`hi\n`); dsh's Bash is Claude-shaped (stdout and stderr apart, edge newlines stripped, `Exit code N` first) and ignores `workdir`",
    ),
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
        "Codex ran no hook without a trust entry; dsh's bridge runs the files it is given (trust is config discovery's job)",
    ),
];
