//! This suite's additions to the shared test support (re-exported here):
//! the in-process [`AgentHost`] with its [`Load`]s, event helpers, timed
//! waits; plus an executable-script writer.

use std::path::Path;

pub use dsh_test_support::agent::{AgentHost, Load};
pub use dsh_test_support::events::{Outcome, events_of, kinds, of_kind};
pub use dsh_test_support::wait::{wait_for, within};

/// An executable shell script at `path`.
pub fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

