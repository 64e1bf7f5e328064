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
    /// (No row needs it today.)
    #[allow(dead_code)]
    Event(&'static str),
    /// dsh makes calls of this label that the vector does not have.
    ExtraCalls(&'static str),
    /// This payload key is compared as noted in the reason.
    Mapped(&'static str),
    /// This payload key is left out of the comparison. (No row needs it
    /// today.)
    #[allow(dead_code)]
    PayloadKey(&'static str),
    /// This payload key is compared by JSON type only. (No row needs it
    /// today.)
    #[allow(dead_code)]
    TypeOnly(&'static str),
    /// This hook environment variable is left out of the comparison. (No
    /// row needs it today.)
    #[allow(dead_code)]
    Env(&'static str),
    /// Texts the CLI showed the model that start with this are not
    /// compared. (No row needs it today.)
    #[allow(dead_code)]
    ModelText(&'static str),
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
        Mapped("agent_transcript_path"),
        "a subagent's transcript (the Agent tool's, S1-all-events; the forked agent that writes a compaction's summary, S90-*) is its own dsh session log, compared as that path",
    ),
    row(Claude, "S90-*", Mapped("compaction summary"),
        "the summary message names the CLI's transcript; dsh's names its session log (the path mapped as `transcript_path`), and the CLI's text block before it (the currentDate reminder) is no part of dsh's history: a user message of its own, compared whole"),
    row(Claude, "S110-*", Mapped("compaction summary"),
        "as for S90-*: the summary message with the transcript path mapped to the session log, a user message of its own, compared whole"),
    row(Claude, "S130-*", Mapped("compaction summary"),
        "as for S90-*: the summary message with the transcript path mapped to the session log, a user message of its own, compared whole"),
    row(Claude, "S131-*", Mapped("compaction summary"),
        "as for S90-*: the summary message with the transcript path mapped to the session log, a user message of its own, compared whole"),
    row(Claude, "S160-*", Mapped("compaction summary"),
        "as for S90-*: the summary message with the transcript path mapped to the session log, a user message of its own, compared whole"),
    row(Claude, "S107-reject-then-prompt", Mapped("prompt"),
        "the prompt typed after the dialog's \"No\" is a text block of the user message that carries the refused call's result; dsh's is the user's prompt message, compared whole"),
    // Codex.
    row(
        Codex,
        "C3-ups-block-then-resume",
        Mapped("session_id"),
        "Codex kept no rollout for a session whose only prompt was blocked, so `resume --last` started a new session ($SESSION_ID_2); dsh persists the session and resumes it, as Claude Code does (S190): an ACP session exists from `session/new` on (compared as $SESSION_ID, SessionStart source `resume`)",
    ),
    row(Codex, "C101-on-request-read-only", ToolsRan,
        "the recorder counts a call as run when Codex's `--json` stream has a `command_execution` item for it, and Codex reports none for a command its sandbox refused (it files the failure as a sandbox denial); the command ran in both (touch's own `Read-only file system` error, exit 1, is the result and PostToolUse's `tool_response`, compared) and wrote nothing in either (`files_after_run`, compared)"),
    row(Codex, "C101-never-read-only", ToolsRan,
        "the recorder counts a call as run when Codex's `--json` stream has a `command_execution` item for it, and Codex reports none for a command its sandbox refused (it files the failure as a sandbox denial); the command ran in both (touch's own `Read-only file system` error, exit 1, is the result and PostToolUse's `tool_response`, compared) and wrote nothing in either (`files_after_run`, compared)"),
    row(Codex, "C9*", Mapped("summary request"),
        "Codex's checkpoint prompt, the last input item of its summary request, is the last user message of dsh's (no tools offered), compared whole"),
    row(Codex, "C9*", Mapped("compaction summary"),
        "Codex's summary message after a compaction is a plain user message in dsh's history, compared whole; Codex re-sends its initial context (developer and environment messages) before it, dsh has none"),
    row(Codex, "C9*", Mapped("prompt"),
        "the user's prompt Codex keeps in the history after a compaction is dsh's kept user message, compared whole"),
    row(Codex, "C12*", Mapped("summary request"),
        "Codex's checkpoint prompt, the last input item of its summary request, is the last user message of dsh's (no tools offered), compared whole"),
    row(Codex, "C12*", Mapped("compaction summary"),
        "Codex's summary message after a compaction is a plain user message in dsh's history, compared whole; Codex re-sends its initial context (developer and environment messages) before the last kept prompt, dsh has none"),
    row(Codex, "C12*", Mapped("prompt"),
        "a user prompt Codex keeps after a compaction (cut to its 20,000-token budget, `…N tokens truncated…`, from three input_text items: head, marker, tail) is dsh's kept user message, compared whole"),
];
