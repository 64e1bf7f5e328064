//! `policy-gate`: a `tools/pre-execute` listener that denies a tool call
//! whose `command` argument matches one of the configured glob patterns
//! (`*` matches any run of characters; a pattern must match the whole
//! command, so write `*sudo *` to match anywhere). Anything else is passed
//! down the chain untouched: a gate never allows on its own.
//!
//! ```yaml
//! - path: target/debug/libdsh_example_policy_gate.so
//!   config: { deny: ["rm -rf /*", "*sudo *"], tools: [Bash] }
//! ```

use std::sync::Arc;

use dsh_plugin_api::{Host, Next, Plugin, PreToolDecision, RArc, ToolCall, export_plugin};

/// What to deny.
#[derive(Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Glob patterns; a command matching any of them is denied.
    pub deny: Vec<String>,
    /// Tools the gate watches (by name); empty watches every tool.
    pub tools: Vec<String>,
}

/// The gate, holding its config.
pub struct PolicyGate(Config);

impl Plugin for PolicyGate {
    type Config = Config;
    const NAME: &'static str = "policy-gate";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Denies tool calls whose command matches a configured pattern";

    fn apply(_host: &Host, config: Config) -> Result<Self, String> {
        match config.deny.iter().any(|p| p.trim().is_empty()) {
            true => Err("config `deny`: empty pattern".into()),
            false => Ok(PolicyGate(config)),
        }
    }

    async fn pre_execute(
        self: Arc<Self>,
        call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        let watched = self.0.tools.is_empty() || self.0.tools.iter().any(|t| *t == *call.name);
        let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        if watched
            && let Some(command) = args["command"].as_str()
            && let Some(pattern) = self.0.deny.iter().find(|p| glob(p, command.trim()))
        {
            let reason = format!("policy-gate: `{command}` matches denied pattern `{pattern}`");
            return Ok(PreToolDecision::Deny {
                reason: reason.into(),
            });
        }
        next.run().await
    }
}

/// Whole-string glob match where `*` matches any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star) = (0, 0, None);
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => (star, pi) = (Some((pi, ti)), pi + 1),
            Some(&c) if c == t[ti] => (pi, ti) = (pi + 1, ti + 1),
            // Backtrack: let the last `*` swallow one more character.
            _ => match star {
                Some((sp, st)) => (star, pi, ti) = (Some((sp, st + 1)), sp + 1, st + 1),
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

export_plugin!(PolicyGate);

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn glob_matches_whole_commands() {
        assert!(glob("rm -rf /*", "rm -rf /"));
        assert!(glob("rm -rf /*", "rm -rf /home"));
        assert!(!glob("rm -rf /*", "echo rm -rf /"));
        assert!(glob("*sudo *", "cd x && sudo ls"));
        assert!(!glob("*sudo *", "sudoku"));
        assert!(glob("git push*--force*", "git push origin main --force"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
        assert!(glob("ls", "ls") && !glob("ls", "ls -l"));
    }
}
