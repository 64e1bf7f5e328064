//! The one test-support crate for dsh's tests: the end-to-end suite and
//! benchmarks (`dsh-tests`), the host's integration tests, and the plugins'
//! tests all boot hosts, mock models and wait the same way.
//!
//! - [`agent`]: [`agent::AgentHost`], the one way to boot an in-process
//!   agent (built-ins, the plugins a test names, a scripted model), and
//!   [`events`] to read what its turns did.
//! - [`artifacts`]: the real things under test, built once per test run:
//!   the `dsh` binary and the example `.so` plugins (from this workspace),
//!   and the fixture plugins (`tests/fixtures/plugins`, a workspace of its
//!   own). `cargo test` needs no manual build step first.
//! - [`host`]: a [`host::TestHost`] (a `PluginHost` on its own tokio runtime
//!   in a throwaway state directory) with helpers to dispatch seams.
//! - [`process`]: running a command with a timeout, and the `dsh` binary.
//! - [`daemon`]: a running `dsh serve` (its notify socket and stderr in
//!   reach) and a plain JSON-RPC client for its socket.
//! - [`background`]: a process that runs while the test acts on it (to
//!   signal, kill or race), and timed waits for what it does.
//! - [`acp_stdio`]: a raw JSON-RPC client over `dsh acp`'s stdio.
//! - [`openai_mock`]: the scripted OpenAI-compatible server on 127.0.0.1.
//! - [`stateless_model`]: a stateless one for load (a tool call after the
//!   user's message, text otherwise), with keep-alive.
//! - [`fake_host`]: the fake plugin host for plugin unit tests.
//! - [`postgres`]: a real PostgreSQL server of a test's own.
//! - [`wait`]: timed waits for async tests.
//! - [`permissions`]: an [`agent::AgentHost`] whose sessions start with
//!   given permissions, and a recorded run's permissions.
//!
//! Every wait here has a timeout; nothing sleeps to synchronize.

// Test support: a broken fixture or build must stop the run loudly.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)]

pub mod acp_stdio;
pub mod agent;
pub mod artifacts;
pub mod background;
pub mod daemon;
pub mod events;
pub mod fake_host;
pub mod host;
pub mod listeners;
pub mod openai_mock;
pub mod permissions;
pub mod postgres;
pub mod process;
pub mod stateless_model;
pub mod wait;

use std::path::{Path, PathBuf};

pub use artifacts::{Artifacts, example, fixture};
pub use host::{TestHost, TestSignal};
pub use process::{Outcome, dsh_command, run, run_dsh};

/// The workspace root (the folder holding `cordis.yml`).
pub fn workspace_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().unwrap_or(crate_dir).to_path_buf()
}

/// A throwaway directory, removed on drop.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dsh-test-")
        .tempdir()
        .expect("create a temp dir")
}

/// Copies `src` into `dir` as `name` with permission bits `mode`.
pub fn copy_with_mode(src: &Path, dir: &Path, name: &str, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dst = dir.join(name);
    std::fs::copy(src, &dst)
        .unwrap_or_else(|e| panic!("copy {} to {}: {e}", src.display(), dst.display()));
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode)).expect("chmod the copy");
    dst
}
