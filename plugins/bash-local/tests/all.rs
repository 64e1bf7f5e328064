//! Integration tests of `dsh-bash-local` over real processes, one binary.
//!
//! - `runner`: the async runner (exit codes, stdin, cwd, env, timeouts,
//!   cancellation, drop, output caps, spawn errors);
//! - `credentials`: environment scrubbing against the real host env;
//! - `service`: the `process-runner` JSON contract;
//! - `bash_tool`: the `Bash` tool's results, errors and abort signal;
//! - `plugin`: the plugin applied on a fake host, called across the ABI.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite;
