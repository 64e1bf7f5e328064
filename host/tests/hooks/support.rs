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

/// The interactive CLI's permission dialog in a recorded run where nobody
/// answered it (S33-*: a PermissionRequest hook decided every time): an
/// approval service is mounted, so PermissionRequest fires, and any ask
/// that reaches it is refused with a text no recording has, failing the
/// comparison.
pub struct DialogStandIn;

impl dsh_plugin_api::Plugin for DialogStandIn {
    type Config = dsh_plugin_api::NoConfig;
    const NAME: &'static str = "dialog-stand-in";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &dsh_plugin_api::Host, _config: Self::Config) -> Result<Self, String> {
        host.provide_service("approval", |_method, _args| async move {
            Ok(serde_json::json!({"outcome": "reject", "reason": "the recorded run never showed the dialog"}))
        })?;
        Ok(DialogStandIn)
    }
}

/// The interactive CLI's permission dialog answered "No" from the terminal
/// (`tty_answers` `2` to "Do you want to proceed?", S107): dsh's terminal
/// `n`, a rejection that stops the turn.
pub struct DialogRejects;

impl dsh_plugin_api::Plugin for DialogRejects {
    type Config = dsh_plugin_api::NoConfig;
    const NAME: &'static str = "dialog-rejects";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &dsh_plugin_api::Host, _config: Self::Config) -> Result<Self, String> {
        host.provide_service("approval", |_method, _args| async move {
            Ok(serde_json::json!({"outcome": "reject",
                "reason": dsh_host::permissions::USER_REJECTED, "interrupt": true}))
        })?;
        Ok(DialogRejects)
    }
}

/// Each message of the recorded `requests` that `pick` selects, where it
/// first appears (later requests repeat the conversation): the request's
/// index, the message's index in it, and that request's messages.
pub fn first_appearances(
    requests: &[serde_json::Value],
    pick: impl Fn(&serde_json::Value) -> bool,
) -> Vec<(usize, usize, Vec<serde_json::Value>)> {
    let mut out = Vec::new();
    for (r, req) in requests.iter().enumerate() {
        let msgs = req["messages"].as_array().cloned().unwrap_or_default();
        for (j, m) in msgs.iter().enumerate() {
            let earlier = || {
                requests[..r].iter().any(|q| {
                    q["messages"]
                        .as_array()
                        .is_some_and(|ms| ms.iter().any(|x| x == m))
                })
            };
            if pick(m) && !earlier() {
                out.push((r, j, msgs.clone()));
            }
        }
    }
    out
}
