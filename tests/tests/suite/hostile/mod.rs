//! The hostile-input suite (issue 8): what an attacker, a careless user and
//! a crashing machine do to dsh, each through real processes, real files
//! and real sockets; only the model is scripted.
//! - [`sessions`]: session ids that are paths, private state, damaged logs
//!   and `dsh sessions repair`;
//! - [`session_processes`]: one writer per log, a crash mid-tool resumed
//!   into a valid conversation, SIGINT and SIGTERM to `dsh prompt`.

mod session_processes;
mod session_support;
mod sessions;
