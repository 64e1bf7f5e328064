//! The wire protocol shared by dsh's two hook bridges (ARCHITECTURE.md §8).
//!
//! A Claude Code or Codex "command hook" is a shell command that gets a JSON
//! payload on stdin and answers with an exit code, stdout and stderr. Both
//! CLIs agree on most of that contract; this crate owns the shared part so a
//! bridge is only config parse + payload build + outcome map:
//!
//! - [`runner`]: how one hook runs (a request to the host's `process-runner`
//!   service behind the small [`HookHost`] trait, so tests can record what a
//!   bridge did), and the answer it gets back: the service contract's own
//!   types from `plugin-api`. The runner never throws.
//! - [`codec`]: the exit-code contract (0 = output, 2 = block with stderr,
//!   anything else = non-blocking error) and the stdout classification (JSON
//!   object, plain text or invalid JSON) per [`Dialect`].
//! - [`matcher`]: matcher strings (`""`, `"*"`, exact name lists, regexes).
//! - [`config`]: the `{Event: [{matcher, hooks: [...]}]}` shape both dialects
//!   share, parsed once at load with warnings instead of errors.
//! - [`merge`]: deny > ask > allow across the hooks of one point.
//! - [`point`]: runs every hook of one point concurrently and appends the
//!   `hook/invoked` + `hook/result` records afterwards, in config order.
//! - [`records`]: the shape of those records.
//! - [`discovery`]: hook files found from a session's cwd, read safely,
//!   re-read when they change, the last good version kept when they break.
//! - [`trust`]: which project hook files the user approved (`dsh trust`).
//! - [`transport`] and [`handler`]: hooks that are not processes (Claude
//!   Code's `http`, dsh's `socket` hook servers), run by the host's
//!   `hook-transport` service and answered in the command contract.
//!
//! With the `local-runner` feature, [`local`] provides a recording
//! [`HookHost`] that runs hooks in `bash-local`'s process runner (the code
//! behind the `process-runner` service), and [`vectors`] drives the
//! recorded CLI vectors: for tests only, since a plugin has no reactor of
//! its own.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod codec;
pub mod config;
pub mod deep_json;
pub mod discovery;
pub mod handler;
#[cfg(feature = "local-runner")]
pub mod local;
pub mod matcher;
pub mod merge;
pub mod paths;
pub mod point;
pub mod records;
pub mod runner;
pub mod transport;
pub mod trust;
#[cfg(feature = "local-runner")]
pub mod vectors;

pub use codec::{Exit, Stdout};
pub use config::{ConfigError, ConfiguredHook, HandlerShape};
pub use matcher::{Matcher, MatcherSyntax};
pub use merge::Permission;
pub use paths::ConfigPaths;
pub use point::{HookRun, Invocation, Outcome};
pub use runner::{HookHost, PluginHost, RunAnswer, RunRequest, hook_request};

/// Which CLI's conventions a hook expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
}

impl Dialect {
    /// Lower-case name used in records and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Claude => "claude",
            Dialect::Codex => "codex",
        }
    }
}

/// Default per-hook timeout, seconds (both CLIs use ten minutes).
pub const DEFAULT_TIMEOUT_S: u64 = 600;
/// Grace between SIGTERM and SIGKILL of a timed-out hook's process group.
pub const KILL_GRACE_MS: u64 = 1500;
/// Hard limit on each of stdout and stderr of one hook: 16 MiB, far above
/// what a decision needs. A hook's output is read whole up to it; past it
/// the hook is killed and its answer is a blocking error (see
/// [`codec::Exit::OutputTooLarge`]), never a cut output parsed as if whole.
pub const MAX_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;
