//! The bridge's config and the Codex hook files it points at.
//!
//! A file is either a `hooks.json` (`{"hooks": {Event: [groups]}}`) or a
//! `config.toml` whose `[hooks]` tables hold the same groups
//! (`[[hooks.PreToolUse]]` / `[[hooks.PreToolUse.hooks]]`, or inline
//! tables). `timeout` is in seconds; `timeoutSec` is not a Codex key.
//!
//! Codex numbers every command handler it discovers (its *display order*),
//! walking files in order and, within a file, events in a fixed order
//! rather than file order; the number appears in the `hook_run_id` of Stop
//! continuations (`stop:2:/…/hooks.json`, vectors `C5-*`). The bridge counts
//! the same way, including handlers of events dsh does not fire.
//!
//! Every problem is a typed [`ConfigProblem`] naming the file and the key
//! (`dsh check` lists them): an unreadable or invalid file, an unknown
//! (misspelled) event name, a group or handler that cannot run are errors;
//! an unknown key and events dsh does not fire are warnings. A bridge that
//! ends up with no hook at all is an error.

use std::path::Path;

pub use dsh_hook_protocol::ConfigPaths;

use dsh_hook_protocol::config::{self as shared, ConfigError, HandlerShape};
use dsh_hook_protocol::discovery::Parsed;
use dsh_hook_protocol::{ConfiguredHook, MatcherSyntax};
use dsh_plugin_api::{ConfigProblem, ProblemSeverity};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every Codex event the bridge runs hooks for.
pub const SUPPORTED_EVENTS: [&str; 12] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreModelRequest",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SessionEnd",
    "Interrupt",
    "SubagentStart",
    "SubagentStop",
];

/// The order in which Codex walks the events of one file when it numbers
/// handlers. Recorded: `UserPromptSubmit` and `PreModelRequest` come before
/// `Stop` (vectors `C5-*`); the rest follows Codex's `HookEventsToml`.
pub const DISCOVERY_ORDER: [&str; 14] = [
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreModelRequest",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "StopFailure",
    "Interrupt",
];

/// Keys a Codex command handler may have; any other is warned about.
pub const HANDLER_KEYS: [&str; 5] = ["type", "command", "timeout", "async", "statusMessage"];

/// Config of the `hooks-codex` plugin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Codex `hooks.json` and/or `config.toml` files. One path or a list.
    pub config_path: ConfigPaths,
    /// The model name stamped on payloads (`model`).
    pub model: String,
    /// Timeout of hooks that set none, seconds.
    pub default_timeout_s: u64,
    /// Variables added to the environment hooks inherit (empty by default:
    /// Codex passes the environment unchanged), e.g. to give hooks a
    /// different `HOME` or `PATH`.
    pub env: std::collections::BTreeMap<String, String>,
    /// Where hook texts too long for the model are saved whole (default
    /// `$TMPDIR/hook_outputs`, as Codex).
    pub hook_outputs_dir: Option<String>,
    /// Codex's budget for a tool output the model reads, in tokens of 4
    /// bytes: a PreToolUse block's `Command blocked by PreToolUse hook: …`
    /// text longer than this is cut in the middle as Codex cuts it. Codex
    /// takes it from its model's metadata; the default, 3,000, is what it
    /// used for a model it has no metadata for (recorded).
    pub tool_output_tokens: usize,
    /// Layer each session's hooks from its folder as Codex does:
    /// `$CODEX_HOME/hooks.json` and `config.toml`, then every
    /// `.codex/hooks.json` and `.codex/config.toml` from the project root
    /// down to the session's folder; `config_path` files stay a layer of
    /// their own. See [`crate::discover`].
    pub discover: bool,
    /// Codex's home (default `$CODEX_HOME`, else `$HOME/.codex`): the
    /// daemon's user may not be the projects' owner.
    pub codex_home: Option<String>,
    /// What marks a project root (Codex's `project_root_markers`).
    pub project_root_markers: Vec<String>,
    /// Folders whose project hooks run without `dsh trust` (a server's
    /// checkouts).
    pub trusted_prefixes: Vec<String>,
    /// Hooks written in the manifest itself: an event map as in a hooks
    /// file (`{"PreToolUse": [...]}`), loaded after the files.
    pub hooks: Option<serde_json::Map<String, Value>>,
    /// Run the discovered user and project hooks without Codex's per-hook
    /// review (`trusted_hash` in `$CODEX_HOME/config.toml`), as Codex's
    /// `--dangerously-bypass-hook-trust` does. A project must still be
    /// trusted. See [`crate::discover`].
    pub bypass_hook_trust: bool,
    /// Whether the host offers Codex's `spawn_agent` (the manifest's
    /// `subagent_tools: codex`, which sets this on every `hooks-codex`
    /// entry): only then do SubagentStart and SubagentStop hooks run; off,
    /// they are reported as hooks that never run.
    pub spawn_agent: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            config_path: ConfigPaths::default(),
            model: String::new(),
            default_timeout_s: dsh_hook_protocol::DEFAULT_TIMEOUT_S,
            env: Default::default(),
            hook_outputs_dir: None,
            tool_output_tokens: crate::spill::DEFAULT_TOOL_OUTPUT_TOKENS,
            discover: false,
            codex_home: None,
            project_root_markers: vec![".git".into()],
            trusted_prefixes: Vec::new(),
            hooks: None,
            bypass_hook_trust: false,
            spawn_agent: false,
        }
    }
}

/// One configured hook and its Codex handler number.
#[derive(Clone, Debug)]
pub struct CodexHook {
    /// The hook.
    pub hook: ConfiguredHook,
    /// Codex's display order of the handler.
    pub display_order: usize,
}

impl CodexHook {
    /// Codex's `hook_run_id`: `<event-label>:<display order>:<file>`.
    pub fn run_id(&self) -> String {
        format!(
            "{}:{}:{}",
            event_label(&self.hook.event),
            self.display_order,
            self.hook.source
        )
    }
}

/// Codex's kebab-case label of an event (`Stop` → `stop`).
pub fn event_label(event: &str) -> String {
    lower_cased(event, '-')
}

/// An event name in lower case, `sep` before each inner capital
/// (`PreToolUse` → `pre-tool-use` / `pre_tool_use`).
pub(crate) fn lower_cased(event: &str, sep: char) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push(sep);
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Hooks loaded from every configured file, and what was wrong with them.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The hooks of supported events, in discovery order.
    pub hooks: Vec<CodexHook>,
    /// Every problem found, naming its file and key.
    pub problems: Vec<ConfigProblem>,
}

fn ignores_matcher(event: &str) -> bool {
    matches!(event, "UserPromptSubmit" | "Stop")
}

/// The handler rules of Codex hooks, with `default_timeout_s`.
pub fn shape(default_timeout_s: u64) -> HandlerShape {
    HandlerShape {
        syntax: MatcherSyntax::Codex,
        default_timeout_s,
        ignores_matcher,
        handler_keys: &HANDLER_KEYS,
    }
}

/// The hooks of one file, numbered from 0 within it.
#[derive(Debug, Default)]
pub struct FileHooks {
    /// Hooks of supported events, `display_order` counted in this file.
    pub hooks: Vec<CodexHook>,
    /// Every command handler Codex numbers in the file (also those of
    /// events dsh does not fire), so the next file's numbers follow on.
    pub handlers: usize,
}

/// Parses one `hooks.json` or `config.toml` from its bytes (a file without
/// hooks has none); problems inside it are in the result.
pub fn parse_file(
    path: &Path,
    bytes: &[u8],
    default_timeout_s: u64,
) -> Result<Parsed<FileHooks>, ConfigError> {
    let Some((events, prefix)) = read_events(path, bytes)? else {
        return Ok(Parsed {
            value: FileHooks::default(),
            problems: Vec::new(),
        });
    };
    let path = std::path::absolute(path).unwrap_or(path.to_path_buf());
    Ok(parse_events(
        &events,
        prefix,
        &path.display().to_string(),
        default_timeout_s,
    ))
}

/// The hooks of one event map (a file's, or the manifest's `hooks`) found
/// at key path `prefix` of `source`.
pub fn parse_events(
    events: &Map<String, Value>,
    prefix: &str,
    source: &str,
    default_timeout_s: u64,
) -> Parsed<FileHooks> {
    let shape = shape(default_timeout_s);
    let mut problems = Vec::new();
    let mut file = FileHooks::default();
    let source = source.to_string();
    for event in events
        .keys()
        .filter(|e| !DISCOVERY_ORDER.contains(&e.as_str()))
    {
        problems.push(shared::unknown_event(
            &source,
            prefix,
            event,
            "Codex",
            &DISCOVERY_ORDER,
        ));
    }
    let mut not_fired = Vec::new();
    for event in DISCOVERY_ORDER {
        let Some(groups) = events.get(event) else {
            continue;
        };
        let mut one = Map::new();
        one.insert(event.to_string(), groups.clone());
        for hook in shared::parse_event_map(&one, &shape, &source, prefix, &mut problems) {
            let order = file.handlers;
            file.handlers += 1;
            if SUPPORTED_EVENTS.contains(&event) {
                file.hooks.push(CodexHook {
                    hook,
                    display_order: order,
                });
            } else if !not_fired.contains(&event) {
                not_fired.push(event);
            }
        }
    }
    if !not_fired.is_empty() {
        problems.push(ConfigProblem::warning(
            &source,
            prefix,
            format!(
                "dsh does not fire these Codex events, their hooks never run: {}",
                not_fired.join(", ")
            ),
        ));
    }
    Parsed {
        value: file,
        problems,
    }
}

/// Every command hook of one file, of every event Codex knows (also those
/// dsh does not fire), as Codex reviews them; problems inside the file are
/// left to `dsh check`.
pub fn all_hooks(path: &Path, bytes: &[u8]) -> Result<Vec<ConfiguredHook>, ConfigError> {
    let Some((events, prefix)) = read_events(path, bytes)? else {
        return Ok(Vec::new());
    };
    let path = std::path::absolute(path).unwrap_or(path.to_path_buf());
    let known: Map<String, Value> = DISCOVERY_ORDER
        .iter()
        .filter_map(|e| events.get(*e).map(|g| (e.to_string(), g.clone())))
        .collect();
    let mut problems = Vec::new();
    Ok(shared::parse_event_map(
        &known,
        &shape(dsh_hook_protocol::DEFAULT_TIMEOUT_S),
        &path.display().to_string(),
        prefix,
        &mut problems,
    ))
}

/// The hooks written in the manifest (`hooks`), parsed as a file of their
/// own that comes after the `config_path` files.
pub fn inline_hooks(config: &Config) -> Option<Parsed<FileHooks>> {
    config.hooks.as_ref().map(|events| {
        parse_events(
            events,
            "hooks",
            shared::MANIFEST_SOURCE,
            config.default_timeout_s,
        )
    })
}

/// The hooks `config` gives a session in this process's folder and every
/// problem with them, exactly as the bridge resolves them at start
/// ([`crate::discover::Discovery::check`]).
pub fn load(config: &Config) -> Loaded {
    let here = std::env::current_dir().unwrap_or_default();
    let (resolution, problems) = crate::discover::Discovery::new(config, None).check(&here);
    Loaded {
        hooks: resolution.hooks,
        problems,
    }
}

/// A bridge that loads no hook runs nothing: an error (unless an error
/// already says why).
pub(crate) fn no_hooks_is_an_error(
    paths: &[std::path::PathBuf],
    empty: bool,
    problems: &mut Vec<ConfigProblem>,
) {
    let explained = problems
        .iter()
        .any(|p| p.severity == ProblemSeverity::Error);
    if !empty || explained {
        return;
    }
    let message = if paths.is_empty() {
        "no hooks file is configured; the bridge runs no hooks".to_string()
    } else {
        let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        format!(
            "no usable hook in {}; the bridge runs no hooks",
            files.join(", ")
        )
    };
    problems.push(ConfigProblem::error("", "config_path", message));
}

/// A file's event map and the key path it sits at (`hooks`, or empty).
type Events = (Map<String, Value>, &'static str);

/// The event map of one file and its key path, `None` when it has no
/// hooks at all.
fn read_events(path: &Path, bytes: &[u8]) -> Result<Option<Events>, ConfigError> {
    let shape_error = |message: &str| ConfigError::Shape {
        path: path.to_path_buf(),
        message: message.into(),
    };
    let top = if path.extension().is_some_and(|e| e == "toml") {
        let text = std::str::from_utf8(bytes).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        match serde_json::to_value(table) {
            Ok(Value::Object(map)) => map,
            _ => return Err(shape_error("the TOML does not convert to a JSON object")),
        }
    } else {
        shared::parse_json_object(path, bytes)?
    };
    // A hooks.json holds `hooks` and at most a `description` (vector
    // `C206-top-level-extra-key`: any other key rejects the file).
    let is_json = path.extension().is_none_or(|e| e != "toml");
    if is_json
        && top.contains_key("hooks")
        && let Some(key) = top
            .keys()
            .find(|k| !matches!(k.as_str(), "hooks" | "description"))
    {
        return Err(shape_error(&format!(
            "unknown key `{key}` (a hooks file holds `hooks` and `description`); Codex rejects \
             the whole file, so none of its hooks run"
        )));
    }
    let found = match top.get("hooks") {
        Some(Value::Object(events)) => Some((events.clone(), "hooks")),
        Some(_) => return Err(shape_error("key `hooks`: not a table of events")),
        None if top.values().all(Value::is_array) && !top.is_empty() => Some((top, "")),
        None => None,
    };
    if let Some((events, prefix)) = &found
        && let Some(message) = bad_value(events, prefix)
    {
        return Err(shape_error(&message));
    }
    Ok(found)
}

/// The first value Codex's hook file schema cannot read, which makes Codex
/// reject the whole file (`failed to parse hooks config`): none of its
/// hooks run. Recorded: a handler `timeout` that is not a `u64` (`-1`,
/// `1.5`, `"5"`; `0` and `null` are read: vectors `C204-*`), a `command`,
/// `statusMessage` or group `matcher` that is not a string, an `async`
/// that is not a boolean, a `type` that is none of Codex's
/// (`command`, `mcp_tool`, `prompt`, `agent`) (vectors `C205-*`) nor dsh's
/// own `socket`.
fn bad_value(events: &Map<String, Value>, prefix: &str) -> Option<String> {
    const TYPES: [&str; 5] = ["command", "mcp_tool", "prompt", "agent", "socket"];
    let dot = if prefix.is_empty() { "" } else { "." };
    let wrong = |at: String, value: &Value, want: &str| {
        format!(
            "key `{at}`: {value} is not {want}; Codex rejects the whole file, so none of its \
             hooks run"
        )
    };
    events.iter().find_map(|(event, groups)| {
        // An event of its own name is a list of groups (recorded
        // `C206b_event_object`: an object rejects the file).
        if !DISCOVERY_ORDER.contains(&event.as_str()) {
            return None;
        }
        let Some(groups) = groups.as_array() else {
            return Some(wrong(
                format!("{prefix}{dot}{event}"),
                groups,
                "a list of groups",
            ));
        };
        groups.iter().enumerate().find_map(|(g, group)| {
            let at = format!("{prefix}{dot}{event}[{g}]");
            if let Some(m) = group
                .get("matcher")
                .filter(|m| !m.is_null() && !m.is_string())
            {
                return Some(wrong(format!("{at}.matcher"), m, "a string"));
            }
            let handlers = group.get("hooks")?;
            let Some(handlers) = handlers.as_array() else {
                return Some(wrong(format!("{at}.hooks"), handlers, "a list of handlers"));
            };
            handlers.iter().enumerate().find_map(|(h, handler)| {
                let key = |k: &str| format!("{at}.hooks[{h}].{k}");
                let field = |k: &str| handler.get(k).filter(|v| !v.is_null());
                // `type` is required, and a command handler needs its
                // `command` (`C206-handler-without-type`, recorded
                // `C206f_handler_without_command`).
                // A key Codex does not know hints at a misspelling.
                let found = handler
                    .as_object()
                    .into_iter()
                    .flat_map(|o| o.keys())
                    .find(|k| !HANDLER_KEYS.contains(&k.as_str()) && *k != "commandWindows")
                    .map(|k| format!(" (found `{k}`)"))
                    .unwrap_or_default();
                let missing = |what: &str| {
                    format!(
                        "key `{at}.hooks[{h}]`: {what}{found}; Codex rejects the whole file, so \
                         none of its hooks run"
                    )
                };
                match handler.get("type") {
                    None => return Some(missing("no `type`")),
                    Some(t) if t == "command" && handler.get("command").is_none() => {
                        return Some(missing("command hook with no `command`"));
                    }
                    _ => {}
                }
                if let Some(t) = field("timeout").filter(|t| t.as_u64().is_none()) {
                    return Some(wrong(key("timeout"), t, "a whole number of seconds"));
                }
                if let Some(t) =
                    field("type").filter(|t| !t.as_str().is_some_and(|t| TYPES.contains(&t)))
                {
                    return Some(wrong(
                        key("type"),
                        t,
                        "one of command, mcp_tool, prompt, agent, socket",
                    ));
                }
                for k in ["command", "statusMessage"] {
                    if let Some(v) = field(k).filter(|v| !v.is_string()) {
                        return Some(wrong(key(k), v, "a string"));
                    }
                }
                field("async")
                    .filter(|v| !v.is_boolean())
                    .map(|v| wrong(key("async"), v, "a boolean"))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn load_one(path: String) -> Loaded {
        load(&Config {
            config_path: ConfigPaths::One(path),
            ..Config::default()
        })
    }

    #[test]
    fn hooks_json_numbers_handlers_in_codex_event_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "hooks.json",
            r#"{"hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "stop"}]}],
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "ups"}]}],
                "PreModelRequest": [{"hooks": [{"type": "command", "command": "pmr"}]}]
            }}"#,
        );
        let loaded = load_one(p.clone());
        let got: Vec<(&str, usize)> = loaded
            .hooks
            .iter()
            .map(|h| (h.hook.event.as_str(), h.display_order))
            .collect();
        assert_eq!(
            got,
            [("UserPromptSubmit", 0), ("PreModelRequest", 1), ("Stop", 2)]
        );
        assert_eq!(loaded.hooks[2].run_id(), format!("stop:2:{p}"));
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    }

    #[test]
    fn config_toml_tables_both_forms() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "config.toml",
            r#"model = "m"

[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "pre"
timeout = 5

[hooks]
Stop = [{ hooks = [{ type = "command", command = "stop" }] }]
"#,
        );
        let loaded = load_one(p);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let got: Vec<(&str, &str, u64)> = loaded
            .hooks
            .iter()
            .map(|h| {
                (
                    h.hook.event.as_str(),
                    h.hook.command.as_str(),
                    h.hook.timeout_s,
                )
            })
            .collect();
        assert_eq!(got, [("PreToolUse", "pre", 5), ("Stop", "stop", 600)]);
        assert!(loaded.hooks[0].hook.matcher.matches("Bash"));
    }

    #[test]
    fn a_value_codex_cannot_read_rejects_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["-1", "1.5", "\"5\""] {
            let p = write(
                dir.path(),
                "hooks.json",
                &format!(
                    r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "s"}}]}}],
                       "PreToolUse": [{{"hooks": [{{"type": "command", "command": "p", "timeout": {bad}}}]}}]}}}}"#
                ),
            );
            let loaded = load_one(p);
            assert!(loaded.hooks.is_empty(), "timeout {bad}: {:?}", loaded.hooks);
            assert!(
                loaded.problems.iter().any(|pr| pr
                    .message
                    .contains("key `hooks.PreToolUse[0].hooks[0].timeout`")
                    && pr.message.contains("Codex rejects the whole file")),
                "timeout {bad}: {:?}",
                loaded.problems
            );
        }
        // C205: wrong types elsewhere reject the file the same way.
        for (bad, key) in [
            (r#""async": "yes""#, "hooks[0].async"),
            (r#""statusMessage": 5"#, "hooks[0].statusMessage"),
            (r#""type": "shell""#, "hooks[0].type"),
            (r#""command": 5"#, "hooks[0].command"),
        ] {
            let p = write(
                dir.path(),
                "hooks.json",
                &format!(
                    r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "s"}}]}}],
                       "PreToolUse": [{{"hooks": [{{"type": "command", "command": "p", {bad}}}]}}]}}}}"#
                ),
            );
            let loaded = load_one(p);
            assert!(loaded.hooks.is_empty(), "{bad}: {:?}", loaded.hooks);
            assert!(
                loaded
                    .problems
                    .iter()
                    .any(|pr| pr.message.contains(&format!("PreToolUse[0].{key}`"))),
                "{bad}: {:?}",
                loaded.problems
            );
        }
        // C206: shapes Codex's schema cannot read reject the file too.
        for bad in [
            r#"{"hooks": {"PreToolUse": [{"matcher": 5, "hooks": [{"type": "command", "command": "p"}]}]}}"#,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s"}]}], "PostToolUse": {"hooks": []}}}"#,
            r#"{"hooks": {"Stop": [{"hooks": {}}], "PreToolUse": [{"hooks": [{"type": "command", "command": "p"}]}]}}"#,
            r#"{"hooks": {"Stop": [{"hooks": [{"command": "s"}]}]}}"#,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s"}, {"type": "command"}]}]}}"#,
            r#"{"version": 1, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s"}]}]}}"#,
        ] {
            let p = write(dir.path(), "hooks.json", bad);
            let loaded = load_one(p);
            assert!(loaded.hooks.is_empty(), "{bad}: {:?}", loaded.hooks);
            assert!(
                loaded
                    .problems
                    .iter()
                    .any(|pr| pr.message.contains("Codex rejects the whole file")),
                "{bad}: {:?}",
                loaded.problems
            );
        }
        // A description, a group without `hooks` and a null matcher are read.
        let p = write(
            dir.path(),
            "hooks.json",
            r#"{"description": "d", "hooks": {"PreToolUse": [{"matcher": null, "hooks": [{"type": "command", "command": "p"}]}, {"matcher": "Bash"}]}}"#,
        );
        assert_eq!(load_one(p).hooks.len(), 1);
        for good in ["0", "null", "7"] {
            let p = write(
                dir.path(),
                "hooks.json",
                &format!(
                    r#"{{"hooks": {{"PreToolUse": [{{"hooks": [{{"type": "command", "command": "p", "timeout": {good}}}]}}]}}}}"#
                ),
            );
            assert_eq!(load_one(p).hooks.len(), 1, "timeout {good}");
        }
    }

    #[test]
    fn timeout_sec_is_not_a_codex_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "hooks.json",
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s", "timeoutSec": 3}]}]}}"#,
        );
        let loaded = load_one(p.clone());
        assert_eq!(loaded.hooks[0].hook.timeout_s, 600);
        assert_eq!(
            loaded
                .problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            [format!(
                "{p}: key `hooks.Stop[0].hooks[0].timeoutSec`: unknown key `timeoutSec` is ignored"
            )]
        );
    }

    #[test]
    fn a_toml_without_hooks_loads_nothing_and_broken_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let plain = write(dir.path(), "config.toml", "model = \"m\"\n");
        let loaded = load_one(plain.clone());
        assert!(loaded.hooks.is_empty());
        assert_eq!(
            loaded
                .problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            [format!(
                "key `config_path`: no usable hook in {plain}; the bridge runs no hooks"
            )]
        );
        let broken = write(dir.path(), "bad.toml", "[hooks\n");
        let loaded = load_one(broken);
        assert!(
            loaded.problems[0].to_string().contains("bad.toml"),
            "{:?}",
            loaded.problems
        );
        let missing = dir.path().join("nope.json").display().to_string();
        assert!(
            load_one(missing).problems[0]
                .to_string()
                .contains("nope.json")
        );
        let wrong = write(dir.path(), "hooks.json", r#"{"hooks": 3}"#);
        let problems = load_one(wrong).problems;
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].to_string().contains("key `hooks`"),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .all(|p| p.severity == ProblemSeverity::Error)
        );
    }

    #[test]
    fn a_misspelled_event_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "hooks.json",
            r#"{"hooks": {"PreTooluse": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
        );
        let problems = load_one(p.clone()).problems;
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].severity, ProblemSeverity::Error);
        assert_eq!(
            problems[0].to_string(),
            format!(
                "{p}: key `hooks.PreTooluse`: unknown Codex hook event `PreTooluse` \
                 (did you mean `PreToolUse`?); its hooks never run"
            )
        );
    }

    #[test]
    fn labels_are_kebab_case() {
        assert_eq!(event_label("Stop"), "stop");
        assert_eq!(event_label("PreToolUse"), "pre-tool-use");
        assert_eq!(event_label("UserPromptSubmit"), "user-prompt-submit");
    }
}
