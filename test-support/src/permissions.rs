//! Booting an [`AgentHost`] whose sessions start with given permissions
//! (what `dsh prompt --allowedTools ...` and a manifest's `permissions:`
//! give the CLI's agent), and reading a recorded Claude Code run's
//! permission flags and settings into them.

use std::path::Path;

use dsh_host::agent::AgentOptions;
use dsh_host::permissions::{
    PermissionMode, PermissionState, RuleLayer, RuleSet, RuleSource, split_rule_list,
};
use serde_json::{Value, json};

use crate::agent::{AgentHost, Load};

impl AgentHost {
    /// As [`AgentHost::scripted`], with every session starting with
    /// `permissions`.
    pub fn scripted_with_permissions(
        root: &Path,
        loads: Vec<Load>,
        script: Value,
        permissions: PermissionState,
    ) -> AgentHost {
        let record = root.join("requests.jsonl");
        let model = Load::builtin(
            "model",
            "model-scripted",
            json!({"script": script, "record": record}),
        );
        let options = AgentOptions {
            permissions,
            ..AgentOptions::default()
        };
        AgentHost::with_options(root, json!({}), loads, model, options)
    }
}

/// The permissions a recorded `claude` invocation ran with: its
/// `--permission-mode`, `--allowedTools` and `--disallowedTools` (the CLI
/// layer) and the `permissions` of the settings files it read (`settings`,
/// as the project layer).
pub fn from_claude_argv(argv: &[String], settings: &[Value]) -> PermissionState {
    let mut state = PermissionState {
        managed: true,
        ..PermissionState::default()
    };
    let mut cli = RuleLayer::new(RuleSource::Cli);
    let mut args = argv.iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--permission-mode" => {
                if let Some(m) = args.next() {
                    state.mode = m.parse::<PermissionMode>().expect("a recorded mode");
                }
            }
            "--allowedTools" | "--allowed-tools" => cli
                .allow
                .extend(args.next().map(|v| split_rule_list(v)).unwrap_or_default()),
            "--disallowedTools" | "--disallowed-tools" => cli
                .deny
                .extend(args.next().map(|v| split_rule_list(v)).unwrap_or_default()),
            _ => {}
        }
    }
    let mut layers = vec![cli];
    for s in settings {
        let list = |k: &str| -> Vec<String> {
            s["permissions"][k]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        layers.push(RuleLayer {
            source: RuleSource::Project,
            allow: list("allow"),
            ask: list("ask"),
            deny: list("deny"),
        });
    }
    state.rules = RuleSet::from_layers(&layers).expect("recorded rules parse");
    state
}

/// What `codex exec` runs with: it reports `bypassPermissions` to hooks
/// whatever its sandbox and approval flags (vectors `C1-perm-*`).
pub fn codex_exec() -> PermissionState {
    PermissionState {
        mode: PermissionMode::BypassPermissions,
        managed: true,
        ..PermissionState::default()
    }
}
