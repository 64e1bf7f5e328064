//! This suite's additions to the shared test support (re-exported here):
//! the in-process [`AgentHost`] with its [`Load`]s, event helpers, timed
//! waits; plus an executable-script writer and a headless approval policy.

use std::path::Path;

use dsh_plugin_api::{Host, Plugin};
pub use dsh_test_support::agent::{AgentHost, Load};
pub use dsh_test_support::events::{Outcome, events_of, kinds, of_kind};
pub use dsh_test_support::wait::{wait_for, within};
use serde_json::json;

/// An executable shell script at `path`.
pub fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `claude -p`'s approval policy, as a native plugin: there is nobody to
/// ask, so every `ask` is refused and the model reads the hook's reason
/// (vectors `S3-ask*`). dsh itself mounts no approval service headless.
pub struct HeadlessApproval;

/// A plugin config with no keys.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct NoConfig {}

impl Plugin for HeadlessApproval {
    type Config = NoConfig;
    const NAME: &'static str = "headless-approval";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &Host, _config: Self::Config) -> Result<Self, String> {
        host.provide_service("approval", |_method, args| async move {
            Ok(json!({"outcome": "reject", "reason": args["reason"]}))
        })?;
        Ok(HeadlessApproval)
    }
}
