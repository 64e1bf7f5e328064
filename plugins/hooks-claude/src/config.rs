//! The bridge's config and the Claude Code hook files it points at.
//!
//! `config_path` names one file or several, read once at load. Each may be
//! a settings file (`.claude/settings.json`: its `hooks` key), a plugin's
//! `hooks/hooks.json` (same `hooks` key; a file under `plugin_root` makes
//! its hooks plugin hooks, which get `CLAUDE_PLUGIN_ROOT` and
//! `CLAUDE_PLUGIN_DATA`), or a bare event map. Every problem is a typed
//! [`ConfigProblem`] naming the file and the key (`dsh check` lists them):
//! an unreadable or invalid file, an unknown (misspelled) event name, a
//! group or handler that cannot run are errors; an unknown key Claude Code
//! also ignores, a hook type dsh does not run and events dsh does not fire
//! are warnings. A bridge that ends up with no hook at all is an error.

use std::path::Path;

pub use dsh_hook_protocol::ConfigPaths;

use dsh_hook_protocol::config::{self as shared, ConfigError, HandlerShape};
use dsh_hook_protocol::discovery::Parsed;
use dsh_hook_protocol::{ConfiguredHook, MatcherSyntax};
use dsh_plugin_api::{ConfigProblem, ProblemSeverity};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every Claude Code event the bridge runs hooks for.
pub const SUPPORTED_EVENTS: [&str; 28] = [
    "Setup",
    "PostToolBatch",
    "MessageDisplay",
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
    "CwdChanged",
    "PermissionRequest",
    "PreCompact",
    "PostCompact",
    "StopFailure",
    "ConfigChange",
    "FileChanged",
    "InstructionsLoaded",
    "UserPromptExpansion",
    // With the `tools-worktree` built-in (events/worktree.rs).
    "WorktreeCreate",
    "WorktreeRemove",
    "Elicitation",
    "ElicitationResult",
    "TaskCreated",
    "TaskCompleted",
    // Only its `elicitation_response` type (events/elicitation.rs): the
    // others never fired in `claude -p` (S1, S90, S92, S184).
    "Notification",
];

/// Every hook event Claude Code 2.1 knows (vector `S1-all-events`); a name
/// outside this list is a misspelling, and its hooks never run.
pub const KNOWN_EVENTS: [&str; 30] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "PermissionRequest",
    "PermissionDenied",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Setup",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "CwdChanged",
    "FileChanged",
    "ConfigChange",
    "InstructionsLoaded",
    "MessageDisplay",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "WorktreeCreate",
    "WorktreeRemove",
];

/// Keys a Claude Code hook handler may have (command, prompt, agent and
/// http hooks, Claude Code 2.1.197's schema); any other is warned about.
/// What each does for a command hook is [`crate::options`].
pub const HANDLER_KEYS: [&str; 19] = [
    "type",
    "command",
    "args",
    "if",
    "shell",
    "timeout",
    "async",
    "asyncRewake",
    "rewakeMessage",
    "rewakeSummary",
    "statusMessage",
    "once",
    "prompt",
    "model",
    "continueOnBlock",
    "url",
    "headers",
    "allowedEnvVars",
    "describe",
];

/// Config of the `hooks-claude` plugin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Claude Code hook files: settings files, plugin `hooks/hooks.json`
    /// files or bare event maps. One path or a list.
    pub config_path: ConfigPaths,
    /// Root of a Claude Code plugin; files under it are plugin hook files.
    pub plugin_root: Option<String>,
    /// `CLAUDE_PROJECT_DIR` for hooks; defaults to the session's cwd.
    pub project_dir: Option<String>,
    /// Timeout of hooks that set none, seconds.
    pub default_timeout_s: u64,
    /// The `effort.level` Claude Code reports in tool and Stop payloads (and
    /// as `CLAUDE_EFFORT`); `null` leaves both out.
    pub effort: Option<String>,
    /// Where hook texts too long for the model are saved whole, as
    /// `<dir>/<session>/tool-results/…`. Unset (the default): the folder
    /// of the session's log, so the files sit beside the transcript hooks
    /// are shown, as in Claude Code; see [`crate::persist`].
    pub hook_outputs_dir: Option<String>,
    /// Folder of `CLAUDE_ENV_FILE` (Claude Code's `~/.claude/session-env`):
    /// SessionStart hooks get `<dir>/<session>/sessionstart-hook-<n>.sh`.
    /// Default `<state_dir>/session-env`.
    pub session_env_dir: Option<String>,
    /// Variables added to every hook's environment. The default is what
    /// Claude Code 2.1.197 adds to identify itself (vector
    /// `S20-env-passthrough`); a map given here replaces it whole.
    pub env: std::collections::BTreeMap<String, String>,
    /// Layer each session's hooks from its project as Claude Code does
    /// (`~/.claude/settings.json`, `<project>/.claude/settings.json`,
    /// `<project>/.claude/settings.local.json`, enabled plugins' hooks,
    /// managed settings); `config_path` files stay a layer of their own.
    /// See [`crate::discover`].
    pub discover: bool,
    /// The home whose `.claude/` holds the user layer and the installed
    /// plugins (default `$HOME`): the daemon's user may not be the
    /// projects' owner.
    pub home: Option<String>,
    /// Load Claude Code's memory files (`~/.claude/CLAUDE.md` and
    /// `~/.claude/rules/`, and from `/` down to the session's folder
    /// `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/`, `CLAUDE.local.md`,
    /// with their `@imports`) when a session starts: their text reaches the
    /// model before the first prompt and each is told to the
    /// InstructionsLoaded hooks ([`crate::memory`]); and what a `Read`
    /// brings (a subfolder's files, rules whose `paths:` match it) after
    /// that step. Unset: as `discover`.
    pub memory: Option<bool>,
    /// Claude Code's managed settings file (default
    /// `/etc/claude-code/managed-settings.json`).
    pub managed_settings: Option<String>,
    /// Folders whose project hooks run without `dsh trust` (a server's
    /// checkouts): a project file under one of them is trusted.
    pub trusted_prefixes: Vec<String>,
    /// Hooks written in the manifest itself: an event map as in a hooks
    /// file (`{"PreToolUse": [...]}`), loaded after the files.
    pub hooks: Option<serde_json::Map<String, Value>>,
    /// The model name SessionStart reports after a compaction (Claude
    /// Code's `model`, e.g. `claude-opus-4-8`); unset leaves it out.
    pub model: Option<String>,
    /// The inference gateway (`host:port`) a server error's text names, as
    /// Claude Code names its `ANTHROPIC_BASE_URL` in StopFailure's
    /// `last_assistant_message`; unset leaves that sentence out.
    pub api_gateway: Option<String>,
    /// Whether `asyncRewake` hooks run in the background (`background`,
    /// as Claude Code with streaming input: an editor's session) or are
    /// waited for (`wait`, as `claude -p`); see [`crate::rewake`]. Unset
    /// in the manifest: `background` under `dsh serve` and `dsh acp`,
    /// `wait` under `dsh prompt`.
    pub async_rewake: crate::rewake::AsyncRewake,
    /// Run the Setup hooks with this trigger (`init`, `maintenance`) before
    /// the first session's SessionStart, as `claude --init` /
    /// `--maintenance` do ([`crate::events::setup`]); `dsh prompt --init`
    /// sets it. Unset: no Setup.
    pub setup: Option<crate::events::setup::SetupTrigger>,
    /// Whether the host offers Claude Code's task tools (`tools-tasks` in
    /// the manifest sets it): TaskCreated and TaskCompleted hooks fire only
    /// from those tools; without them the bridge warns that such hooks
    /// never run ([`crate::events::tasks`]).
    pub task_tools: bool,
    /// Whether the host offers Claude Code's worktree tools
    /// (`tools-worktree` in the manifest sets it): WorktreeCreate and
    /// WorktreeRemove hooks fire only from those tools; without them the
    /// bridge warns that such hooks never run ([`crate::events::worktree`]).
    pub worktree_tools: bool,
}

impl Config {
    /// The same config with every path it reads from (`config_path`,
    /// `plugin_root`, `project_dir`, `home`, `managed_settings`,
    /// `trusted_prefixes`, `hook_outputs_dir`) made absolute by `resolve`
    /// (the manifest's folder for relative ones).
    pub fn resolved(mut self, resolve: impl Fn(&Path) -> std::path::PathBuf) -> Config {
        let one = |p: &str| resolve(Path::new(p)).to_string_lossy().into_owned();
        self.config_path = self.config_path.resolved(&resolve);
        self.plugin_root = self.plugin_root.as_deref().map(one);
        self.project_dir = self.project_dir.as_deref().map(one);
        self.home = self.home.as_deref().map(one);
        self.managed_settings = self.managed_settings.as_deref().map(one);
        self.trusted_prefixes = self.trusted_prefixes.iter().map(|p| one(p)).collect();
        self.hook_outputs_dir = self.hook_outputs_dir.as_deref().map(one);
        self
    }
}

/// Claude Code 2.1.197's identity variables for hooks, as recorded
/// (`CLAUDECODE`, `CLAUDE_PROJECT_DIR` and `CLAUDE_CODE_SESSION_ID` are set
/// apart: they are not identity but session facts).
pub fn default_env() -> std::collections::BTreeMap<String, String> {
    [
        ("AI_AGENT", "claude-code_2-1-197_harness"),
        ("CLAUDE_CODE_CHILD_SESSION", "1"),
        ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli"),
        ("COREPACK_ENABLE_AUTO_PIN", "0"),
        ("NoDefaultCurrentDirectoryInExePath", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A bridge config (as written in the manifest) that runs the Setup hooks
/// with `trigger` (`dsh prompt --init`, `--maintenance`).
pub fn setup_trigger(config: &mut serde_json::Value, trigger: crate::events::setup::SetupTrigger) {
    if config.is_null() {
        *config = serde_json::json!({});
    }
    if let Some(object) = config.as_object_mut() {
        object.insert("setup".into(), trigger.as_str().into());
    }
}

/// A bridge config (as written in the manifest) for a process whose
/// questions the user answers at a terminal: `CLAUDE_CODE_ENTRYPOINT=cli`,
/// as the interactive CLI hands its hooks (recorded, S33; `claude -p` says
/// `sdk-cli`). Sets it in the config's `env`, or in Claude Code's identity
/// variables when the config sets no `env`; an `env` naming another value
/// is the operator's and is kept.
pub fn terminal_entrypoint(config: &mut serde_json::Value) {
    if config.is_null() {
        *config = serde_json::json!({});
    }
    let Some(object) = config.as_object_mut() else {
        return;
    };
    let env = object
        .entry("env")
        .or_insert_with(|| serde_json::json!(default_env()));
    if let Some(env) = env.as_object_mut()
        && env.get("CLAUDE_CODE_ENTRYPOINT").and_then(|v| v.as_str()) == Some("sdk-cli")
    {
        env.insert("CLAUDE_CODE_ENTRYPOINT".into(), "cli".into());
    }
}

/// A bridge config (as written in the manifest) for a process that
/// serves editors (`dsh serve`, `dsh acp`): their sessions take prompts as
/// Claude Code's SDK sessions do, with streaming input, so `asyncRewake`
/// hooks run in the background (recorded, S83). A config that says
/// `async_rewake` keeps it.
pub fn editor_sessions(config: &mut serde_json::Value) {
    if config.is_null() {
        *config = serde_json::json!({});
    }
    if let Some(object) = config.as_object_mut() {
        object
            .entry("async_rewake")
            .or_insert_with(|| serde_json::json!("background"));
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            config_path: ConfigPaths::default(),
            plugin_root: None,
            project_dir: None,
            default_timeout_s: dsh_hook_protocol::DEFAULT_TIMEOUT_S,
            effort: Some("high".into()),
            hook_outputs_dir: None,
            session_env_dir: None,
            env: default_env(),
            discover: false,
            home: None,
            memory: None,
            managed_settings: None,
            trusted_prefixes: Vec::new(),
            model: None,
            api_gateway: None,
            hooks: None,
            async_rewake: crate::rewake::AsyncRewake::Wait,
            setup: None,
            task_tools: false,
            worktree_tools: false,
        }
    }
}

/// What a plugin hook gets in its environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginDirs {
    /// `CLAUDE_PLUGIN_ROOT`.
    pub root: String,
    /// `CLAUDE_PLUGIN_DATA`.
    pub data: String,
}

/// One configured hook and, for plugin hooks, its plugin folders.
#[derive(Clone, Debug)]
pub struct ClaudeHook {
    /// The hook.
    pub hook: ConfiguredHook,
    /// Set for hooks from a plugin's hook file.
    pub plugin: Option<PluginDirs>,
}

/// Hooks loaded from every configured file, and what was wrong with them.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The hooks, in file order then config order.
    pub hooks: Vec<ClaudeHook>,
    /// Every problem found, naming its file and key.
    pub problems: Vec<ConfigProblem>,
}

fn ignores_matcher(event: &str) -> bool {
    matches!(event, "UserPromptSubmit" | "Stop")
}

/// The handler rules of Claude Code hooks, with `default_timeout_s`.
pub fn shape(default_timeout_s: u64) -> HandlerShape {
    HandlerShape {
        syntax: MatcherSyntax::Claude,
        default_timeout_s,
        ignores_matcher,
        handler_keys: &HANDLER_KEYS,
    }
}

/// What one Claude Code settings or hooks file holds that dsh uses.
#[derive(Debug, Default)]
pub struct SettingsFile {
    /// Its hooks, in file order.
    pub hooks: Vec<ClaudeHook>,
    /// `disableAllHooks`, when set.
    pub disable_all_hooks: Option<bool>,
    /// `allowManagedHooksOnly`, when set (honoured in managed settings).
    pub allow_managed_hooks_only: Option<bool>,
    /// `enabledPlugins` (`"name@marketplace": true|false`), in file order.
    pub enabled_plugins: Vec<(String, bool)>,
    /// The `permissions` block, when there is one.
    pub permissions: Option<crate::permissions::PermissionRules>,
    /// `env`: variables Claude Code sets for its hooks (recorded S191), in
    /// file order; numbers and booleans as their JSON text.
    pub env: Vec<(String, String)>,
}

/// The `env` object of a settings file; a value that is not a string,
/// number or boolean is left out with a warning naming it.
fn parse_env(
    map: &serde_json::Map<String, Value>,
    source: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Vec<(String, String)> {
    let Some(env) = map.get("env") else {
        return Vec::new();
    };
    let Some(env) = env.as_object() else {
        problems.push(ConfigProblem::warning(
            source,
            "env",
            "`env` is not an object; ignored",
        ));
        return Vec::new();
    };
    env.iter()
        .filter_map(|(name, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(_) | Value::Bool(_) => value.to_string(),
                _ => {
                    problems.push(ConfigProblem::warning(
                        source,
                        format!("env.{name}"),
                        "not a string, number or boolean; ignored",
                    ));
                    return None;
                }
            };
            if name.is_empty() || name.contains(['=', '\0']) || text.contains('\0') {
                problems.push(ConfigProblem::warning(
                    source,
                    format!("env.{name}"),
                    "a name or value no environment can hold; ignored",
                ));
                return None;
            }
            Some((name.clone(), text))
        })
        .collect()
}

/// Parses one settings file, plugin `hooks/hooks.json` or bare event map
/// from its bytes. `plugin`: the folders its hooks get when it is a plugin
/// file. Problems inside the file are in the result; a file that cannot be
/// used at all is the error.
pub fn parse_settings(
    path: &Path,
    bytes: &[u8],
    default_timeout_s: u64,
    plugin: Option<&PluginDirs>,
) -> Result<Parsed<SettingsFile>, ConfigError> {
    let map = shared::parse_json_object(path, bytes)?;
    let source = path.display().to_string();
    let mut problems = Vec::new();
    let mut file = SettingsFile {
        disable_all_hooks: map.get("disableAllHooks").and_then(Value::as_bool),
        allow_managed_hooks_only: map.get("allowManagedHooksOnly").and_then(Value::as_bool),
        enabled_plugins: map
            .get("enabledPlugins")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_bool().map(|b| (k.clone(), b)))
                    .collect()
            })
            .unwrap_or_default(),
        permissions: crate::permissions::parse(&map, &source, &mut problems),
        hooks: Vec::new(),
        env: Vec::new(),
    };
    file.env = parse_env(&map, &source, &mut problems);
    let events = match map.get("hooks") {
        Some(Value::Object(events)) => Some((events, "hooks")),
        Some(_) => {
            return Err(ConfigError::Shape {
                path: path.to_path_buf(),
                message: "key `hooks`: `hooks` is not an object".into(),
            });
        }
        None if map.values().all(Value::is_array) => Some((&map, "")),
        None => None,
    };
    if let Some((events, prefix)) = events {
        let supported = split_events(events, &source, prefix, &mut problems);
        let shape = shape(default_timeout_s);
        for hook in shared::parse_event_map(&supported, &shape, &source, prefix, &mut problems) {
            file.hooks.push(ClaudeHook {
                hook,
                plugin: plugin.cloned(),
            });
        }
    }
    Ok(Parsed {
        value: file,
        problems,
    })
}

/// The hooks `config` gives a session in its `project_dir` (else this
/// process's folder) and every problem with them, exactly as the bridge
/// resolves them at start ([`crate::discover::Discovery::check`]).
pub fn load(config: &Config) -> Loaded {
    let here = config
        .project_dir
        .clone()
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
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

/// The events dsh fires; a problem for each other one: a warning for an
/// event dsh does not fire, an error for a name Claude Code does not know.
fn split_events(
    events: &Map<String, Value>,
    source: &str,
    prefix: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Map<String, Value> {
    let mut supported = Map::new();
    let mut not_fired = Vec::new();
    for (event, groups) in events {
        if SUPPORTED_EVENTS.contains(&event.as_str()) {
            supported.insert(event.clone(), groups.clone());
        } else if KNOWN_EVENTS.contains(&event.as_str()) {
            not_fired.push(event.clone());
        } else {
            problems.push(shared::unknown_event(
                source,
                prefix,
                event,
                "Claude Code",
                &KNOWN_EVENTS,
            ));
        }
    }
    if !not_fired.is_empty() {
        problems.push(ConfigProblem::warning(
            source,
            prefix,
            format!(
                "dsh does not fire these Claude Code events, their hooks never run: {}",
                not_fired.join(", ")
            ),
        ));
    }
    supported
}

/// `CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA` of a plugin folder.
///
/// Claude Code keeps a plugin loaded from a folder (`--plugin-dir`) under
/// `~/.claude/plugins/data/<name>-inline`, `<name>` being the `name` in
/// `.claude-plugin/plugin.json` (vector `S12-plugin-root`); without one the
/// folder name stands in.
pub fn plugin_dirs(root: &str) -> PluginDirs {
    let manifest = Path::new(root).join(".claude-plugin").join("plugin.json");
    let name = shared::read_json_object(&manifest)
        .ok()
        .and_then(|m| m.get("name").and_then(Value::as_str).map(String::from))
        .or_else(|| {
            Path::new(root)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "plugin".into());
    let home = std::env::var("HOME").unwrap_or_default();
    PluginDirs {
        root: root.to_string(),
        data: format!("{home}/.claude/plugins/data/{name}-inline"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, name: &str, v: &Value) -> String {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, v.to_string()).unwrap();
        p.display().to_string()
    }

    fn hook(cmd: &str) -> Value {
        json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": cmd}]}])
    }

    #[test]
    fn editors_background_rewake_hooks_unless_the_manifest_says_otherwise() {
        let read = |v: Value| serde_json::from_value::<Config>(v).unwrap().async_rewake;
        use crate::rewake::AsyncRewake::{Background, Wait};
        assert_eq!(read(json!({})), Wait);
        for (given, want) in [
            (Value::Null, Background),
            (json!({"effort": null}), Background),
            (json!({"async_rewake": "wait"}), Wait),
        ] {
            let mut config = given;
            editor_sessions(&mut config);
            assert_eq!(read(config), want);
        }
        assert!(serde_json::from_value::<Config>(json!({"async_rewake": "later"})).is_err());
    }

    #[test]
    fn settings_file_bare_map_and_plugin_file() {
        let dir = tempfile::tempdir().unwrap();
        let settings = write(
            dir.path(),
            "proj/.claude/settings.json",
            &json!({"permissions": {}, "hooks": {"PreToolUse": hook("a")}}),
        );
        let bare = write(dir.path(), "bare.json", &json!({"PostToolUse": hook("b")}));
        let root = dir.path().join("plug");
        write(
            &root,
            ".claude-plugin/plugin.json",
            &json!({"name": "capplug"}),
        );
        let plugin_file = write(
            &root,
            "hooks/hooks.json",
            &json!({"hooks": {"Stop": hook("c")}}),
        );
        let config = Config {
            config_path: ConfigPaths::Many(vec![settings, bare, plugin_file]),
            plugin_root: Some(root.display().to_string()),
            ..Config::default()
        };
        let loaded = load(&config);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let got: Vec<(&str, &str, bool)> = loaded
            .hooks
            .iter()
            .map(|h| {
                (
                    h.hook.event.as_str(),
                    h.hook.command.as_str(),
                    h.plugin.is_some(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("PreToolUse", "a", false),
                ("PostToolUse", "b", false),
                ("Stop", "c", true)
            ]
        );
        let dirs = loaded.hooks[2].plugin.clone().unwrap();
        assert!(
            dirs.data.ends_with("/.claude/plugins/data/capplug-inline"),
            "{}",
            dirs.data
        );
    }

    #[test]
    fn a_single_path_and_the_default_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "s.json",
            &json!({"hooks": {"PreToolUse": hook("a")}}),
        );
        let config = Config {
            config_path: ConfigPaths::One(p),
            default_timeout_s: 7,
            ..Config::default()
        };
        assert_eq!(load(&config).hooks[0].hook.timeout_s, 7);
    }

    #[test]
    fn settings_env_takes_scalars_as_text_and_warns_about_the_rest() {
        let text =
            json!({"env": {"A": "x", "N": 7, "B": true, "O": {"k": 1}, "Z": null, "E=Q": "v"}});
        let parsed =
            parse_settings(Path::new("s.json"), text.to_string().as_bytes(), 600, None).unwrap();
        let env: Vec<(&str, &str)> = parsed
            .value
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(env, [("A", "x"), ("N", "7"), ("B", "true")]);
        let lines: Vec<String> = parsed.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("env.O") && l.contains("ignored")),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.contains("env.Z")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("env.E=Q")), "{lines:?}");
        let not_object =
            parse_settings(Path::new("s.json"), br#"{"env": [1]}"#, 600, None).unwrap();
        assert!(not_object.value.env.is_empty());
        assert!(
            not_object.problems[0]
                .to_string()
                .contains("`env` is not an object")
        );
    }

    #[test]
    fn bad_files_warn_and_load_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, "{").unwrap();
        let wrong = write(dir.path(), "wrong.json", &json!({"hooks": []}));
        let config = Config {
            config_path: ConfigPaths::Many(vec![
                dir.path().join("missing.json").display().to_string(),
                broken.display().to_string(),
                wrong,
            ]),
            ..Config::default()
        };
        let loaded = load(&config);
        assert!(loaded.hooks.is_empty());
        let lines: Vec<String> = loaded.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].contains("missing.json: cannot read"), "{lines:?}");
        assert!(lines[1].contains("broken.json: not valid"), "{lines:?}");
        assert!(lines[2].contains("wrong.json: key `hooks`: `hooks` is not an object"));
        assert!(
            loaded
                .problems
                .iter()
                .all(|p| p.severity == ProblemSeverity::Error)
        );
    }

    #[test]
    fn misspelled_events_are_errors_and_unfired_ones_warnings() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "s.json",
            &json!({"hooks": {"PreTooluse": hook("a"), "TeammateIdle": hook("n"), "Stop": hook("s")}}),
        );
        let loaded = load(&Config {
            config_path: ConfigPaths::One(p.clone()),
            ..Config::default()
        });
        assert_eq!(loaded.hooks.len(), 1);
        let lines: Vec<(ProblemSeverity, String)> = loaded
            .problems
            .iter()
            .map(|p| (p.severity, p.to_string()))
            .collect();
        assert_eq!(
            lines,
            [
                (
                    ProblemSeverity::Error,
                    format!(
                        "{p}: key `hooks.PreTooluse`: unknown Claude Code hook event `PreTooluse` \
                         (did you mean `PreToolUse`?); its hooks never run"
                    )
                ),
                (
                    ProblemSeverity::Warning,
                    format!(
                        "{p}: key `hooks`: dsh does not fire these Claude Code events, their hooks \
                         never run: TeammateIdle"
                    )
                ),
            ]
        );
    }

    #[test]
    fn no_hook_at_all_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "s.json", &json!({"permissions": {}}));
        let loaded = load(&Config {
            config_path: ConfigPaths::One(p.clone()),
            ..Config::default()
        });
        assert_eq!(
            loaded
                .problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            [format!(
                "key `config_path`: no usable hook in {p}; the bridge runs no hooks"
            )]
        );
        let none = load(&Config::default());
        assert_eq!(none.problems[0].severity, ProblemSeverity::Error);
        assert!(
            none.problems[0]
                .to_string()
                .contains("no hooks file is configured")
        );
    }

    #[test]
    fn unsupported_events_and_handler_types_warn() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "s.json",
            &json!({"hooks": {
                "TeammateIdle": hook("n"),
                "PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "?"}]}]
            }}),
        );
        let loaded = load(&Config {
            config_path: ConfigPaths::One(p),
            ..Config::default()
        });
        assert!(loaded.hooks.is_empty());
        let lines: Vec<String> = loaded.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            lines.iter().any(|w| w.contains("TeammateIdle")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|w| w.contains("`prompt`") && w.contains("PreToolUse")),
            "{lines:?}"
        );
    }

    #[test]
    fn config_accepts_one_path_or_a_list() {
        let c: Config = serde_json::from_value(json!({"config_path": "/a.json"})).unwrap();
        assert_eq!(c.config_path.paths(), [std::path::PathBuf::from("/a.json")]);
        let c: Config =
            serde_json::from_value(json!({"config_path": ["/a", "/b"], "effort": null})).unwrap();
        assert_eq!(c.config_path.paths().len(), 2);
        assert_eq!(c.effort, None);
        assert_eq!(c.default_timeout_s, 600);
        assert!(serde_json::from_value::<Config>(json!({"nope": 1})).is_err());
    }
}
