//! The hook-config shape both dialects share, parsed once at load.
//!
//! ```json
//! { "PreToolUse": [ { "matcher": "Bash",
//!                     "hooks": [ { "type": "command", "command": "...", "timeout": 30 } ] } ] }
//! ```
//!
//! Parsing never fails the plugin: an unreadable or invalid file is a
//! [`ConfigError`] the bridge logs as a warning (and registers nothing from
//! that file); an unusable group or handler inside a good file is skipped
//! with a warning naming it. Where a file lives and which outer key holds the
//! event map is dialect business (settings files, plugin `hooks.json`,
//! Codex `config.toml` tables); this module starts at the event map.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::matcher::{Matcher, MatcherSyntax};

/// Why a config file yields no hooks.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read hooks config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid JSON or TOML.
    #[error("cannot parse hooks config {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The file parsed but does not have the hooks shape.
    #[error("invalid hooks config {path}: {message}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// One command hook as configured.
#[derive(Clone, Debug)]
pub struct ConfiguredHook {
    /// The event name as written (`PreToolUse`, ...).
    pub event: String,
    /// The group's matcher, parsed.
    pub matcher: Matcher,
    /// The group's matcher as written.
    pub matcher_raw: Option<String>,
    /// The shell command.
    pub command: String,
    /// Timeout in seconds.
    pub timeout_s: u64,
    /// The config file it came from.
    pub source: String,
    /// Index of its matcher group within the event.
    pub group_index: usize,
    /// Index of the handler within its group.
    pub handler_index: usize,
}

/// Dialect rules the shared parser needs.
#[derive(Clone, Copy, Debug)]
pub struct HandlerShape {
    /// How matchers are read.
    pub syntax: MatcherSyntax,
    /// Timeout for handlers that give none, seconds.
    pub default_timeout_s: u64,
    /// Events whose matcher is ignored (it is neither validated nor used).
    pub ignores_matcher: fn(&str) -> bool,
}

/// Reads a file to a string, as a [`ConfigError`] on failure.
pub fn read_file(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads and parses a JSON file that must hold an object.
pub fn read_json_object(path: &Path) -> Result<Map<String, Value>, ConfigError> {
    let text = read_file(path)?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ConfigError::Shape {
            path: path.to_path_buf(),
            message: "the top level is not a JSON object".into(),
        }),
        Err(e) => Err(ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// Parses an event map into hooks, in file order, pushing a warning for
/// every group or handler it has to skip.
pub fn parse_event_map(
    map: &Map<String, Value>,
    shape: &HandlerShape,
    source: &str,
    warnings: &mut Vec<String>,
) -> Vec<ConfiguredHook> {
    let mut hooks = Vec::new();
    for (event, groups) in map {
        let Some(groups) = groups.as_array() else {
            warnings.push(format!(
                "{source}: hooks for {event} are not a list of matcher groups; skipped"
            ));
            continue;
        };
        for (group_index, group) in groups.iter().enumerate() {
            parse_group(
                event,
                group_index,
                group,
                shape,
                source,
                warnings,
                &mut hooks,
            );
        }
    }
    hooks
}

fn parse_group(
    event: &str,
    group_index: usize,
    group: &Value,
    shape: &HandlerShape,
    source: &str,
    warnings: &mut Vec<String>,
    hooks: &mut Vec<ConfiguredHook>,
) {
    let Some(group) = group.as_object() else {
        warnings.push(format!(
            "{source}: a {event} matcher group is not an object; skipped"
        ));
        return;
    };
    let matcher_raw = match group.get("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            warnings.push(format!(
                "{source}: {event} matcher {other} is not a string; group skipped"
            ));
            return;
        }
    };
    let matcher = if (shape.ignores_matcher)(event) {
        Matcher::Any
    } else {
        match Matcher::parse(matcher_raw.as_deref(), shape.syntax) {
            Ok(m) => m,
            Err(e) => {
                warnings.push(format!(
                    "{source}: invalid {event} matcher {:?}: {e}; group skipped",
                    matcher_raw.as_deref().unwrap_or_default()
                ));
                return;
            }
        }
    };
    let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
        warnings.push(format!(
            "{source}: a {event} matcher group has no `hooks` list; skipped"
        ));
        return;
    };
    for (handler_index, handler) in handlers.iter().enumerate() {
        let kind = handler
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("<none>");
        if kind != "command" {
            warnings.push(format!(
                "{source}: skipping a `{kind}` hook for {event}: only command hooks are supported"
            ));
            continue;
        }
        let command = handler
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if command.trim().is_empty() {
            warnings.push(format!(
                "{source}: skipping a {event} command hook with no command"
            ));
            continue;
        }
        hooks.push(ConfiguredHook {
            event: event.to_string(),
            matcher: matcher.clone(),
            matcher_raw: matcher_raw.clone(),
            command: command.to_string(),
            timeout_s: timeout_s(handler.get("timeout"), shape.default_timeout_s),
            source: source.to_string(),
            group_index,
            handler_index,
        });
    }
}

/// A `timeout` in seconds: a positive number (fractions round up), else the
/// default. Never below one second.
fn timeout_s(raw: Option<&Value>, default: u64) -> u64 {
    let secs = match raw {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f > 0.0).map(|f| f.ceil() as u64)),
        _ => None,
    };
    secs.unwrap_or(default).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shape() -> HandlerShape {
        HandlerShape {
            syntax: MatcherSyntax::Claude,
            default_timeout_s: 600,
            ignores_matcher: |e| e == "UserPromptSubmit" || e == "Stop",
        }
    }

    fn parse(v: Value) -> (Vec<ConfiguredHook>, Vec<String>) {
        let mut w = Vec::new();
        let hooks = parse_event_map(v.as_object().unwrap(), &shape(), "/cfg.json", &mut w);
        (hooks, w)
    }

    #[test]
    fn groups_and_handlers_keep_file_order() {
        let (hooks, w) = parse(json!({
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "a", "timeout": 5},
                    {"type": "command", "command": "b"}
                ]},
                {"hooks": [{"type": "command", "command": "c", "timeout": 0.5}]}
            ],
            "Stop": [{"matcher": "[", "hooks": [{"type": "command", "command": "d"}]}]
        }));
        assert!(w.is_empty(), "{w:?}");
        let seen: Vec<(&str, &str, u64, usize, usize)> = hooks
            .iter()
            .map(|h| {
                (
                    h.event.as_str(),
                    h.command.as_str(),
                    h.timeout_s,
                    h.group_index,
                    h.handler_index,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("PreToolUse", "a", 5, 0, 0),
                ("PreToolUse", "b", 600, 0, 1),
                ("PreToolUse", "c", 1, 1, 0),
                ("Stop", "d", 600, 0, 0),
            ]
        );
        assert!(
            hooks[3].matcher.matches("anything"),
            "Stop ignores its matcher"
        );
    }

    #[test]
    fn non_command_handlers_are_skipped_with_a_warning_naming_type_and_event() {
        let (hooks, w) = parse(json!({
            "PreToolUse": [{"hooks": [
                {"type": "prompt", "prompt": "is this ok?"},
                {"type": "command", "command": "ok"}
            ]}]
        }));
        assert_eq!(hooks.len(), 1);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("`prompt`") && w[0].contains("PreToolUse"),
            "{w:?}"
        );
    }

    #[test]
    fn invalid_regex_skips_only_its_group() {
        let (hooks, w) = parse(json!({
            "PreToolUse": [
                {"matcher": "(", "hooks": [{"type": "command", "command": "bad"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "good"}]}
            ]
        }));
        assert_eq!(
            hooks.iter().map(|h| h.command.as_str()).collect::<Vec<_>>(),
            ["good"]
        );
        assert!(w[0].contains("invalid PreToolUse matcher"), "{w:?}");
    }

    #[test]
    fn malformed_shapes_warn() {
        let (hooks, w) = parse(json!({"PreToolUse": {"hooks": []}, "Stop": [{"matcher": 3}]}));
        assert!(hooks.is_empty());
        assert_eq!(w.len(), 2, "{w:?}");
    }

    #[test]
    fn unreadable_and_invalid_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.json");
        assert!(matches!(
            read_json_object(&missing),
            Err(ConfigError::Read { .. })
        ));
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{ not json").unwrap();
        let err = read_json_object(&bad).unwrap_err();
        assert!(matches!(err, ConfigError::Parse { .. }));
        assert!(err.to_string().contains("bad.json"));
        let list = dir.path().join("list.json");
        std::fs::write(&list, "[]").unwrap();
        assert!(matches!(
            read_json_object(&list),
            Err(ConfigError::Shape { .. })
        ));
    }
}
