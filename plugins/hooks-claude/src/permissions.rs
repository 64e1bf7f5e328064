//! The `permissions` block of each Claude Code settings layer, read as it
//! is written, per layer and with its source, so the permission-rule engine
//! can merge them by Claude Code's precedence (managed > local > project >
//! user; deny > ask > allow). Nothing here matches or decides: this module
//! only reads (`allow`, `ask`, `deny` rule lists and `defaultMode`).

use std::path::{Path, PathBuf};

use dsh_plugin_api::ConfigProblem;
use serde_json::{Map, Value};

/// Which settings layer a block came from, lowest precedence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PermissionSource {
    /// `~/.claude/settings.json`.
    User,
    /// `<project>/.claude/settings.json`.
    Project,
    /// `<project>/.claude/settings.local.json`.
    Local,
    /// A file the manifest lists in `config_path` (like Claude Code's
    /// `--settings` flag layer).
    Explicit,
    /// The managed settings file.
    Managed,
}

/// One layer's rules, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionRules {
    /// `permissions.allow`.
    pub allow: Vec<String>,
    /// `permissions.ask`.
    pub ask: Vec<String>,
    /// `permissions.deny`.
    pub deny: Vec<String>,
    /// `permissions.defaultMode`.
    pub default_mode: Option<String>,
}

/// The rules of one settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionLayer {
    /// Its layer.
    pub source: PermissionSource,
    /// The file.
    pub file: PathBuf,
    /// Whether dsh trusts the file (user, explicit and managed files
    /// always; project files once `dsh trust` approved them as they are).
    /// An untrusted project's hooks do not run; whether its rules apply is
    /// the permission engine's decision, so they are returned marked.
    pub trusted: bool,
    /// The rules.
    pub rules: PermissionRules,
}

/// Reads `permissions` from a settings object; a problem for each part
/// that is not the shape Claude Code reads (such a part is left out).
pub(crate) fn parse(
    settings: &Map<String, Value>,
    source: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<PermissionRules> {
    let block = settings.get("permissions")?;
    let Some(block) = block.as_object() else {
        problems.push(ConfigProblem::error(
            source,
            "permissions",
            "not an object; its rules are ignored",
        ));
        return None;
    };
    let mut list = |key: &str| -> Vec<String> {
        match block.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| match v.as_str() {
                    Some(s) => Some(s.to_string()),
                    None => {
                        problems.push(ConfigProblem::error(
                            source,
                            format!("permissions.{key}[{i}]"),
                            "a rule must be a string; it is ignored",
                        ));
                        None
                    }
                })
                .collect(),
            Some(_) => {
                problems.push(ConfigProblem::error(
                    source,
                    format!("permissions.{key}"),
                    "not a list of rules; it is ignored",
                ));
                Vec::new()
            }
        }
    };
    let allow = list("allow");
    let ask = list("ask");
    let deny = list("deny");
    let default_mode = match block.get("defaultMode") {
        None => None,
        Some(Value::String(mode)) => Some(mode.clone()),
        Some(_) => {
            problems.push(ConfigProblem::error(
                source,
                "permissions.defaultMode",
                "not a string; it is ignored",
            ));
            None
        }
    };
    Some(PermissionRules {
        allow,
        ask,
        deny,
        default_mode,
    })
}

/// Reads one file's block outside any cache (for tools and tests).
pub fn read_file_rules(path: &Path) -> Option<PermissionRules> {
    let bytes = dsh_hook_protocol::discovery::read_bounded(path).ok()?;
    let map = dsh_hook_protocol::config::parse_json_object(path, &bytes).ok()?;
    parse(&map, &path.display().to_string(), &mut Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_and_mode_are_read_as_written_and_bad_parts_named() {
        let v = json!({"permissions": {
            "allow": ["Bash(git diff:*)", 3],
            "deny": ["Read(./.env)"],
            "ask": "Bash",
            "defaultMode": "acceptEdits"
        }});
        let mut problems = Vec::new();
        let rules = parse(v.as_object().unwrap(), "/s.json", &mut problems).unwrap();
        assert_eq!(
            rules,
            PermissionRules {
                allow: vec!["Bash(git diff:*)".into()],
                ask: vec![],
                deny: vec!["Read(./.env)".into()],
                default_mode: Some("acceptEdits".into()),
            }
        );
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            lines,
            [
                "/s.json: key `permissions.allow[1]`: a rule must be a string; it is ignored",
                "/s.json: key `permissions.ask`: not a list of rules; it is ignored",
            ]
        );
        assert_eq!(parse(&Map::new(), "/s", &mut problems), None);
    }
}
