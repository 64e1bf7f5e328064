//! The bridge's config and the Claude Code hook files it points at.
//!
//! `config_path` names one file or several, read once at load. Each may be
//! a settings file (`.claude/settings.json`: its `hooks` key), a plugin's
//! `hooks/hooks.json` (same `hooks` key; a file under `plugin_root` makes
//! its hooks plugin hooks, which get `CLAUDE_PLUGIN_ROOT` and
//! `CLAUDE_PLUGIN_DATA`), or a bare event map. An unreadable or invalid file
//! is a warning and contributes no hooks; so is every skipped group or
//! handler. Hooks for events dsh does not fire are ignored with one warning
//! per file.

use std::path::Path;

pub use dsh_hook_protocol::ConfigPaths;

use dsh_hook_protocol::config::{self as shared, HandlerShape};
use dsh_hook_protocol::{ConfiguredHook, MatcherSyntax};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every Claude Code event the bridge runs hooks for.
pub const SUPPORTED_EVENTS: [&str; 9] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
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
    /// Where hook texts too long for the model are saved whole (default
    /// `<state_dir>/hook-outputs`); see [`crate::persist`].
    pub hook_outputs_dir: Option<String>,
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
    /// Every problem found, one line each.
    pub warnings: Vec<String>,
}

fn ignores_matcher(event: &str) -> bool {
    matches!(event, "UserPromptSubmit" | "Stop")
}

/// Loads every file of `config`.
pub fn load(config: &Config) -> Loaded {
    let shape = HandlerShape {
        syntax: MatcherSyntax::Claude,
        default_timeout_s: config.default_timeout_s,
        ignores_matcher,
    };
    let plugin = config.plugin_root.as_deref().map(plugin_dirs);
    let mut loaded = Loaded::default();
    for path in config.config_path.paths() {
        let map = match shared::read_json_object(&path) {
            Ok(map) => map,
            Err(e) => {
                loaded
                    .warnings
                    .push(format!("{e}; no hooks loaded from it"));
                continue;
            }
        };
        let Some(events) = event_map(&map, &path, &mut loaded.warnings) else {
            continue;
        };
        let source = path.display().to_string();
        let (supported, ignored): (Map<String, Value>, Vec<String>) = split_events(events);
        if !ignored.is_empty() {
            loaded.warnings.push(format!(
                "{source}: dsh does not fire these Claude Code events, their hooks are ignored: {}",
                ignored.join(", ")
            ));
        }
        let from_plugin = match (&plugin, &config.plugin_root) {
            (Some(dirs), Some(root)) if path.starts_with(root) => Some(dirs.clone()),
            _ => None,
        };
        for hook in shared::parse_event_map(&supported, &shape, &source, &mut loaded.warnings) {
            loaded.hooks.push(ClaudeHook {
                hook,
                plugin: from_plugin.clone(),
            });
        }
    }
    loaded
}

/// The event map of a file: its `hooks` object, or the file itself when
/// every value is a list (a bare map). A settings file without hooks has
/// none, silently.
fn event_map<'a>(
    map: &'a Map<String, Value>,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Option<&'a Map<String, Value>> {
    match map.get("hooks") {
        Some(Value::Object(events)) => Some(events),
        Some(_) => {
            warnings.push(format!(
                "invalid hooks config {}: `hooks` is not an object; no hooks loaded from it",
                path.display()
            ));
            None
        }
        None if map.values().all(Value::is_array) => Some(map),
        None => None,
    }
}

fn split_events(events: &Map<String, Value>) -> (Map<String, Value>, Vec<String>) {
    let mut supported = Map::new();
    let mut ignored = Vec::new();
    for (event, groups) in events {
        if SUPPORTED_EVENTS.contains(&event.as_str()) {
            supported.insert(event.clone(), groups.clone());
        } else {
            ignored.push(event.clone());
        }
    }
    (supported, ignored)
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
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
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
        assert_eq!(loaded.warnings.len(), 3, "{:?}", loaded.warnings);
        assert!(loaded.warnings[0].contains("missing.json"));
        assert!(loaded.warnings[1].contains("broken.json"));
    }

    #[test]
    fn unsupported_events_and_handler_types_warn() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "s.json",
            &json!({"hooks": {
                "Notification": hook("n"),
                "PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "?"}]}]
            }}),
        );
        let loaded = load(&Config {
            config_path: ConfigPaths::One(p),
            ..Config::default()
        });
        assert!(loaded.hooks.is_empty());
        assert!(loaded.warnings.iter().any(|w| w.contains("Notification")));
        assert!(
            loaded
                .warnings
                .iter()
                .any(|w| w.contains("`prompt`") && w.contains("PreToolUse"))
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
