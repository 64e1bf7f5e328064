//! The host services' contracts, typed once: what a caller sends through
//! [`Host::call_service`](crate::Host::call_service) and what a provider
//! answers, for the three services dsh itself relies on:
//!
//! - [`process_runner`]: run one program (`bash-local` provides it; the
//!   hook bridges and any `.so` without a reactor call it);
//! - [`approval`]: ask whoever owns a session whether a tool may run (the
//!   ACP server provides it; the loop's pre-tool `ask` calls it);
//! - [`model`]: one completion (`model-scripted`, `model-openai`, or a
//!   provider shipped as a `.so`; the agent loop calls it);
//! - [`editor_fs`]: a session's files as its editor holds them (the ACP
//!   server provides it when the editor offers its file system; the file
//!   tools call it);
//! - [`editor_terminal`]: a command run in a terminal of the session's
//!   editor (the ACP server provides it when the editor offers terminals;
//!   the `Bash` tool calls it);
//! - [`input_check`]: a tool's own check of a call's input, before any
//!   listener hears of it (`tools-worktree` provides one per tool);
//! - [`worktree_hooks`]: who makes and removes a non-git worktree (the
//!   Claude bridge, for WorktreeCreate / WorktreeRemove hooks);
//! - [`elicitation`]: an MCP server's request for input answered by the
//!   session's editor (the ACP server provides it; the `mcp/elicitation`
//!   seam's default calls it);
//! - [`task_events`]: a task list's tool asks whether a task may be
//!   created or completed (the Claude bridge provides it; `tools-tasks`
//!   calls it);
//! - [`turn_rules`]: rules allowed for the rest of a session's turn (a
//!   slash command's `allowed-tools`; the agent provides it, the Claude
//!   bridge calls it);
//! - [`read_rules`]: which files a session's `Read` deny rules keep from it
//!   (the agent provides it; `Glob` and `Grep` call it);
//! - [`background_tasks`]: the background shell jobs a session has running
//!   (`bash-local` provides it; the Claude bridge's Stop payload lists them,
//!   `dsh prompt`'s wind-down waits for them).
//!
//! Services travel as JSON strings over the ABI (a `call_service` takes
//! and returns text), so these types are plain serde types, not ABI-stable
//! ones: a caller and a provider built against different minors of this
//! crate still understand each other as long as the JSON does.
//!
//! # Evolution rule
//!
//! Each contract has a `VERSION` (today 1 for all three). Within a version:
//!
//! - a minor of this crate may add a field to a request or an answer only
//!   with `#[serde(default)]` (and, for answers, a default that means "the
//!   provider did not say"), so an older caller or provider that omits it
//!   is still read the old way;
//! - readers ignore keys they do not know (no `deny_unknown_fields`), so a
//!   newer peer's extra fields are harmless;
//! - a new enum variant (an approval outcome, a model error kind) is added
//!   only where the reader already has a fallback for unknown values, and
//!   the fallback is documented on the enum.
//!
//! Renaming, removing or changing the meaning of a field is a new
//! `VERSION` and a new method name (`run2`), never a silent change; the
//! old method stays until the next major of this crate.

pub mod approval;
pub mod background_tasks;
pub mod editor_fs;
pub mod editor_terminal;
pub mod elicitation;
pub mod input_check;
pub mod model;
pub mod process_runner;
pub mod read_rules;
pub mod task_events;
pub mod turn_rules;
pub mod worktree_hooks;
