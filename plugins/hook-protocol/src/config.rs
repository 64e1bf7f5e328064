//! The hook-config shape both dialects share, parsed once at load.
//!
//! ```json
//! { "PreToolUse": [ { "matcher": "Bash",
//!                     "hooks": [ { "type": "command", "command": "...", "timeout": 30 } ] } ] }
//! ```
//!
//! Parsing never fails the plugin: an unreadable or invalid file is a
//! [`ConfigError`] the bridge reports as a config problem (and registers
//! nothing from that file); an unusable group or handler inside a good file
//! is skipped with an error naming its key, and an unknown key is a warning
//! that suggests the key it probably misspells (`matchr` → `matcher`). The
//! host lists both in `dsh check`. Where a file lives and which outer key holds the
//! event map is dialect business (settings files, plugin `hooks.json`,
//! Codex `config.toml` tables); this module starts at the event map.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use dsh_plugin_api::ConfigProblem;

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
    /// The shell command (for an `http` or `socket` hook: its URL, socket
    /// path or server command, what records call it).
    pub command: String,
    /// Where a hook that is not a command runs (`http`, `socket`;
    /// [`crate::handler`]); `None` for a command hook.
    pub transport: Option<crate::transport::Handler>,
    /// Timeout in seconds.
    pub timeout_s: u64,
    /// The config file it came from.
    pub source: String,
    /// Index of its matcher group within the event.
    pub group_index: usize,
    /// Index of the handler within its group.
    pub handler_index: usize,
    /// The handler object as written, for the options a dialect reads
    /// itself (Claude Code's `args`, `if`, `async`, `shell`, ...).
    pub handler: serde_json::Map<String, Value>,
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
    /// Keys a handler may have; others are warned about.
    pub handler_keys: &'static [&'static str],
}

impl ConfigError {
    /// The error as a problem naming its file.
    pub fn problem(&self) -> ConfigProblem {
        let path = match self {
            ConfigError::Read { path, .. }
            | ConfigError::Parse { path, .. }
            | ConfigError::Shape { path, .. } => path,
        };
        ConfigProblem::error(
            path.display().to_string(),
            "",
            match self {
                ConfigError::Read { source, .. } => {
                    format!("cannot read the hooks file: {source}; no hooks loaded from it")
                }
                ConfigError::Parse { message, .. } => {
                    format!("not valid: {message}; no hooks loaded from it")
                }
                ConfigError::Shape { message, .. } => {
                    format!("{message}; no hooks loaded from it")
                }
            },
        )
    }
}

/// What a problem with hooks written in the manifest (a bridge's `hooks`
/// config key) names as its file.
pub const MANIFEST_SOURCE: &str = "the manifest";

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
    parse_json_object(path, text.as_bytes())
}

/// Parses the bytes of `path` as a JSON object.
pub fn parse_json_object(path: &Path, bytes: &[u8]) -> Result<Map<String, Value>, ConfigError> {
    match serde_json::from_slice::<Value>(bytes) {
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

/// Parses an event map into hooks, in file order, pushing a problem for
/// every group or handler it has to skip (an error: a hook the user wrote
/// will not run) and for every key it does not know (a warning: both CLIs
/// ignore unknown keys, but a misspelling usually means something the user
/// asked for is not in effect). `prefix` is the key path of the map in its
/// file (`hooks`, or empty for a bare map).
pub fn parse_event_map(
    map: &Map<String, Value>,
    shape: &HandlerShape,
    source: &str,
    prefix: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Vec<ConfiguredHook> {
    let mut hooks = Vec::new();
    for (event, groups) in map {
        let at = key_path(prefix, event);
        let Some(groups) = groups.as_array() else {
            problems.push(ConfigProblem::error(
                source,
                at,
                "not a list of matcher groups; its hooks never run",
            ));
            continue;
        };
        for (group_index, group) in groups.iter().enumerate() {
            let at = format!("{at}[{group_index}]");
            let mut group_hooks = Group {
                event,
                index: group_index,
                at: &at,
                shape,
                source,
                problems,
            }
            .parse(group);
            hooks.append(&mut group_hooks);
        }
    }
    hooks
}

/// `prefix.key`, or `key` alone.
pub fn key_path(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Keys of a matcher group both CLIs read.
const GROUP_KEYS: [&str; 2] = ["matcher", "hooks"];
/// Handler types the CLIs know, plus dsh's own `socket`; `command`,
/// `socket` and (Claude) `http` hooks run in dsh.
const HANDLER_TYPES: [&str; 5] = ["command", "prompt", "agent", "http", "socket"];

/// One matcher group being parsed.
struct Group<'a> {
    event: &'a str,
    index: usize,
    at: &'a str,
    shape: &'a HandlerShape,
    source: &'a str,
    problems: &'a mut Vec<ConfigProblem>,
}

impl Group<'_> {
    fn error(&mut self, key: String, message: String) {
        self.problems
            .push(ConfigProblem::error(self.source, key, message));
    }

    /// Warns about every key of `object` not in `known`, suggesting the
    /// known key it is closest to; returns the suggestions made.
    fn unknown_keys(
        &mut self,
        object: &Map<String, Value>,
        at: &str,
        known: &[&'static str],
    ) -> Vec<(&'static str, String)> {
        let mut suggested = Vec::new();
        for key in object.keys().filter(|k| !known.contains(&k.as_str())) {
            let hint = suggest(key, known);
            let mut message = format!("unknown key `{key}` is ignored");
            if let Some(hint) = hint {
                message.push_str(&format!(" (did you mean `{hint}`?)"));
                suggested.push((hint, key.clone()));
            }
            self.problems.push(ConfigProblem::warning(
                self.source,
                key_path(at, key),
                message,
            ));
        }
        suggested
    }

    fn parse(mut self, group: &Value) -> Vec<ConfiguredHook> {
        let event = self.event;
        let at = self.at.to_string();
        let Some(group) = group.as_object() else {
            self.error(
                at,
                "a matcher group must be an object; its hooks never run".into(),
            );
            return Vec::new();
        };
        let suggested = self.unknown_keys(group, &at, &GROUP_KEYS);
        let misspelled = |known: &str| {
            suggested
                .iter()
                .find(|(k, _)| *k == known)
                .map(|(_, written)| format!(" (found `{written}`)"))
                .unwrap_or_default()
        };
        let matcher_raw = match group.get("matcher") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.error(
                    key_path(&at, "matcher"),
                    format!("matcher {other} is not a string; the group's hooks never run"),
                );
                return Vec::new();
            }
        };
        let ignores_matcher = (self.shape.ignores_matcher)(event);
        if matcher_raw.is_none() && !ignores_matcher && !misspelled("matcher").is_empty() {
            self.problems.push(ConfigProblem::warning(
                self.source,
                &at,
                format!(
                    "no `matcher`{}: the group matches every {event} subject",
                    misspelled("matcher")
                ),
            ));
        }
        let matcher = if ignores_matcher {
            Matcher::Any
        } else {
            match Matcher::parse(matcher_raw.as_deref(), self.shape.syntax) {
                Ok(m) => m,
                Err(e) => {
                    self.error(
                        key_path(&at, "matcher"),
                        format!(
                            "invalid matcher {:?}: {e}; the group's hooks never run",
                            matcher_raw.as_deref().unwrap_or_default()
                        ),
                    );
                    return Vec::new();
                }
            }
        };
        let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
            let what = if group.contains_key("hooks") {
                "`hooks` is not a list".to_string()
            } else {
                format!("no `hooks` list{}", misspelled("hooks"))
            };
            self.error(at, format!("{what}; the group's hooks never run"));
            return Vec::new();
        };
        let mut hooks = Vec::new();
        for (handler_index, handler) in handlers.iter().enumerate() {
            let at = format!("{at}.hooks[{handler_index}]");
            if let Some((command, transport)) = self.handler(handler, &at) {
                hooks.push(ConfiguredHook {
                    event: event.to_string(),
                    matcher: matcher.clone(),
                    matcher_raw: matcher_raw.clone(),
                    command,
                    transport,
                    timeout_s: timeout_s(handler.get("timeout"), self.shape.default_timeout_s),
                    source: self.source.to_string(),
                    group_index: self.index,
                    handler_index,
                    handler: handler.as_object().cloned().unwrap_or_default(),
                });
            }
        }
        hooks
    }

    /// The command of a usable command handler, or the label and handler
    /// of a usable `http` / `socket` one.
    fn handler(
        &mut self,
        handler: &Value,
        at: &str,
    ) -> Option<(String, Option<crate::transport::Handler>)> {
        let event = self.event;
        let Some(object) = handler.as_object() else {
            self.error(
                at.to_string(),
                "a hook must be an object; it never runs".into(),
            );
            return None;
        };
        let transport_kind = object.get("type").and_then(Value::as_str).filter(|k| {
            *k == "socket" || (*k == "http" && self.shape.syntax == MatcherSyntax::Claude)
        });
        let known = transport_kind
            .and_then(crate::handler::keys_of)
            .unwrap_or(self.shape.handler_keys);
        let suggested = self.unknown_keys(object, at, known);
        let found = |known: &str| {
            suggested
                .iter()
                .find(|(k, _)| *k == known)
                .map(|(_, written)| format!(" (found `{written}`)"))
                .unwrap_or_default()
        };
        if let Some(kind) = transport_kind {
            return match crate::handler::parse(kind, object) {
                Ok(h) => {
                    self.timeout_warning(object, at);
                    Some((h.label(), Some(h)))
                }
                Err(e) => {
                    let key = if e.key.is_empty() {
                        at.to_string()
                    } else {
                        key_path(at, e.key)
                    };
                    self.error(key, format!("{}; the hook never runs", e.message));
                    None
                }
            };
        }
        match object.get("type") {
            Some(Value::String(kind)) if kind == "command" => {}
            Some(Value::String(kind)) if HANDLER_TYPES.contains(&kind.as_str()) => {
                self.problems.push(ConfigProblem::warning(
                    self.source,
                    key_path(at, "type"),
                    format!(
                        "`{kind}` hooks are not supported, only `command`, `socket` (and in \
                         Claude hook files `http`) hooks: this {event} hook never runs"
                    ),
                ));
                return None;
            }
            Some(other) => {
                let hint = other
                    .as_str()
                    .and_then(|k| suggest(k, &HANDLER_TYPES))
                    .map(|h| format!(" (did you mean `{h}`?)"))
                    .unwrap_or_default();
                self.error(
                    key_path(at, "type"),
                    format!("unknown hook type {other}{hint}; the hook never runs"),
                );
                return None;
            }
            None => {
                self.error(
                    at.to_string(),
                    format!("no `type`{}; the hook never runs", found("type")),
                );
                return None;
            }
        }
        let command = object
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if command.trim().is_empty() {
            let what = match object.get("command") {
                None => format!("no `command`{}", found("command")),
                Some(Value::String(_)) => "an empty `command`".to_string(),
                Some(_) => "a `command` that is not a string".to_string(),
            };
            self.error(
                at.to_string(),
                format!("command hook with {what}; the hook never runs"),
            );
            return None;
        }
        self.timeout_warning(object, at);
        Some((command.to_string(), None))
    }

    /// Warns about a `timeout` that is not a positive number.
    fn timeout_warning(&mut self, object: &Map<String, Value>, at: &str) {
        if let Some(t) = object.get("timeout")
            && !matches!(t, Value::Number(n) if n.as_f64().is_some_and(|f| f > 0.0))
        {
            self.problems.push(ConfigProblem::warning(
                self.source,
                key_path(at, "timeout"),
                format!(
                    "timeout {t} is not a positive number of seconds; {}s is used",
                    self.shape.default_timeout_s
                ),
            ));
        }
    }
}

/// The entry of `known` that `name` most likely misspells: the same
/// ignoring case, or at most two edits away (one for short names).
pub fn suggest(name: &str, known: &[&'static str]) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= if k.len() <= 4 { 1 } else { 2 })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance, by characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// A problem for an event name the CLI does not know: an error, since a
/// misspelled event's hooks never run.
pub fn unknown_event(
    source: &str,
    prefix: &str,
    event: &str,
    cli: &str,
    known: &[&'static str],
) -> ConfigProblem {
    let hint = suggest(event, known)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    ConfigProblem::error(
        source,
        key_path(prefix, event),
        format!("unknown {cli} hook event `{event}`{hint}; its hooks never run"),
    )
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
    use dsh_plugin_api::ProblemSeverity;
    use serde_json::json;

    fn shape() -> HandlerShape {
        HandlerShape {
            syntax: MatcherSyntax::Claude,
            default_timeout_s: 600,
            ignores_matcher: |e| e == "UserPromptSubmit" || e == "Stop",
            handler_keys: &["type", "command", "timeout"],
        }
    }

    /// Hooks, then problems as `E|W <key>: <message>`.
    fn parse(v: Value) -> (Vec<ConfiguredHook>, Vec<String>) {
        let mut p = Vec::new();
        let hooks = parse_event_map(
            v.as_object().unwrap(),
            &shape(),
            "/cfg.json",
            "hooks",
            &mut p,
        );
        let lines = p
            .iter()
            .map(|p| {
                assert_eq!(p.file.as_str(), "/cfg.json");
                let sev = match p.severity {
                    ProblemSeverity::Error => "E",
                    ProblemSeverity::Warning => "W",
                    other => panic!("unexpected severity {other:?}"),
                };
                format!("{sev} {}: {}", p.key, p.message)
            })
            .collect();
        (hooks, lines)
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
                {"type": "prompt", "command": "is this ok?"},
                {"type": "command", "command": "ok"}
            ]}]
        }));
        assert_eq!(hooks.len(), 1);
        assert_eq!(
            w,
            [
                "W hooks.PreToolUse[0].hooks[0].type: `prompt` hooks are not supported, only \
              `command`, `socket` (and in Claude hook files `http`) hooks: this PreToolUse hook never runs"
            ]
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
        assert!(
            w[0].starts_with("E hooks.PreToolUse[0].matcher: invalid matcher \"(\""),
            "{w:?}"
        );
    }

    #[test]
    fn malformed_shapes_are_errors() {
        let (hooks, w) = parse(json!({"PreToolUse": {"hooks": []}, "Stop": [{"matcher": 3}]}));
        assert!(hooks.is_empty());
        assert_eq!(
            w,
            [
                "E hooks.PreToolUse: not a list of matcher groups; its hooks never run",
                "E hooks.Stop[0].matcher: matcher 3 is not a string; the group's hooks never run",
            ]
        );
    }

    #[test]
    fn misspelled_keys_are_named_with_the_key_they_misspell() {
        let (hooks, w) = parse(json!({
            "PreToolUse": [
                {"matchr": "Bash", "hooks": [{"type": "command", "command": "broad"}]},
                {"matcher": "Bash", "hook": [{"type": "command", "command": "lost"}]},
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "comand": "lost"},
                    {"typ": "command", "command": "lost"},
                    {"type": "comand", "command": "lost"},
                    {"type": "command", "command": "kept", "timeout": "soon"}
                ]}
            ]
        }));
        assert_eq!(
            hooks.iter().map(|h| h.command.as_str()).collect::<Vec<_>>(),
            ["broad", "kept"]
        );
        assert_eq!(
            w,
            [
                "W hooks.PreToolUse[0].matchr: unknown key `matchr` is ignored (did you mean `matcher`?)",
                "W hooks.PreToolUse[0]: no `matcher` (found `matchr`): the group matches every PreToolUse subject",
                "W hooks.PreToolUse[1].hook: unknown key `hook` is ignored (did you mean `hooks`?)",
                "E hooks.PreToolUse[1]: no `hooks` list (found `hook`); the group's hooks never run",
                "W hooks.PreToolUse[2].hooks[0].comand: unknown key `comand` is ignored (did you mean `command`?)",
                "E hooks.PreToolUse[2].hooks[0]: command hook with no `command` (found `comand`); the hook never runs",
                "W hooks.PreToolUse[2].hooks[1].typ: unknown key `typ` is ignored (did you mean `type`?)",
                "E hooks.PreToolUse[2].hooks[1]: no `type` (found `typ`); the hook never runs",
                "E hooks.PreToolUse[2].hooks[2].type: unknown hook type \"comand\" (did you mean `command`?); the hook never runs",
                "W hooks.PreToolUse[2].hooks[3].timeout: timeout \"soon\" is not a positive number of seconds; 600s is used",
            ]
        );
    }

    #[test]
    fn socket_and_http_handlers_parse_with_their_own_keys() {
        let (hooks, w) = parse(json!({
            "PreToolUse": [{"hooks": [
                {"type": "socket", "path": "/run/h.sock", "timeout": 5},
                {"type": "http", "url": "http://127.0.0.1:8/h", "headers": {"A": "$B"},
                 "allowedEnvVars": ["B"], "urll": 1},
                {"type": "socket"}
            ]}]
        }));
        assert_eq!(
            hooks
                .iter()
                .map(|h| (h.command.as_str(), h.timeout_s))
                .collect::<Vec<_>>(),
            [("/run/h.sock", 5), ("http://127.0.0.1:8/h", 600)]
        );
        assert!(matches!(
            hooks[0].transport,
            Some(crate::transport::Handler::Socket(_))
        ));
        assert!(matches!(
            hooks[1].transport,
            Some(crate::transport::Handler::Http(_))
        ));
        assert_eq!(
            w,
            [
                "W hooks.PreToolUse[0].hooks[1].urll: unknown key `urll` is ignored (did you mean `url`?)",
                "E hooks.PreToolUse[0].hooks[2]: socket hook with neither `path` (a server you run) nor \
                 `command` (a server dsh starts); the hook never runs",
            ]
        );
    }

    #[test]
    fn suggestions_are_close_names_only() {
        let events = ["PreToolUse", "PostToolUse", "Stop"];
        assert_eq!(suggest("PreTooluse", &events), Some("PreToolUse"));
        assert_eq!(suggest("pretooluse", &events), Some("PreToolUse"));
        assert_eq!(suggest("PreToolUs", &events), Some("PreToolUse"));
        assert_eq!(suggest("Stpo", &events), None);
        assert_eq!(suggest("Notification", &events), None);
        let p = unknown_event("/f", "hooks", "PreTooluse", "Claude Code", &events);
        assert_eq!(p.severity, ProblemSeverity::Error);
        assert_eq!(
            p.to_string(),
            "/f: key `hooks.PreTooluse`: unknown Claude Code hook event `PreTooluse` \
             (did you mean `PreToolUse`?); its hooks never run"
        );
    }

    #[test]
    fn unreadable_and_invalid_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.json");
        let err = read_json_object(&missing).unwrap_err();
        assert!(matches!(err, ConfigError::Read { .. }));
        let p = err.problem();
        assert_eq!(p.severity, ProblemSeverity::Error);
        assert!(
            p.to_string()
                .contains("nope.json: cannot read the hooks file"),
            "{p}"
        );
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{ not json").unwrap();
        let err = read_json_object(&bad).unwrap_err();
        assert!(matches!(err, ConfigError::Parse { .. }));
        assert!(err.to_string().contains("bad.json"));
        assert!(
            err.problem().to_string().contains("line 1"),
            "{}",
            err.problem()
        );
        let list = dir.path().join("list.json");
        std::fs::write(&list, "[]").unwrap();
        assert!(matches!(
            read_json_object(&list),
            Err(ConfigError::Shape { .. })
        ));
    }
}
