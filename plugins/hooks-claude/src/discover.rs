//! A session's Claude Code hooks, layered from its project as Claude Code
//! layers them (`discover: true`), and re-read when a file changes.
//!
//! | layer (lowest first) | file | trust |
//! |---|---|---|
//! | user | `<home>/.claude/settings.json` | always |
//! | project | `<project>/.claude/settings.json` | `dsh trust` |
//! | local | `<project>/.claude/settings.local.json` | `dsh trust` |
//! | explicit | each `config_path` file (Claude Code's `--settings` layer) | always |
//! | managed | `/etc/claude-code/managed-settings.json` (`managed_settings`) | always |
//! | plugins | `<installPath>/hooks/hooks.json` of each enabled plugin | with the layer enabling it |
//!
//! The project is where the session started (`CLAUDE_PROJECT_DIR`), as
//! Claude Code reads project settings from its starting folder. Hooks of
//! all layers run, in layer order (Claude Code concatenates the `hooks`
//! arrays of its settings sources); `disableAllHooks: true` in managed
//! settings turns every hook off, in any other layer (the highest one that
//! sets it wins) every hook but the managed ones; `allowManagedHooksOnly`
//! in managed settings keeps only managed hooks. Plugins are the ones
//! `enabledPlugins` turns on (later layers override earlier ones), found
//! through `<home>/.claude/plugins/installed_plugins.json`; their hooks get
//! `CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA`.
//!
//! Trust: Claude Code asks interactively before it works in a new folder,
//! and a daemon has nobody to ask, so dsh gates project and local settings
//! as Codex gates project hooks ([`dsh_hook_protocol::trust`]): an
//! untrusted file contributes nothing (no hooks, no `disableAllHooks`, no
//! plugins) and the session is told which files were skipped. Without
//! `discover`, only the explicit layer is read, re-read when it changes
//! like the rest.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_hook_protocol::discovery::{FileCache, Parsed};
use dsh_hook_protocol::trust::{Skipped, Trust, TrustStore};
use dsh_plugin_api::ConfigProblem;
use serde_json::Value;

use crate::config::{ClaudeHook, Config, PluginDirs, SettingsFile, parse_settings, plugin_dirs};
use crate::permissions::{PermissionLayer, PermissionSource};

/// Claude Code's managed settings file on Linux.
pub const MANAGED_SETTINGS: &str = "/etc/claude-code/managed-settings.json";

/// Which layer a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerSource {
    /// `<home>/.claude/settings.json`.
    User,
    /// `<project>/.claude/settings.json`.
    Project,
    /// `<project>/.claude/settings.local.json`.
    Local,
    /// A `config_path` file.
    Explicit,
    /// The managed settings file.
    Managed,
    /// An enabled plugin's `hooks/hooks.json`.
    Plugin,
}

impl LayerSource {
    fn needs_trust(self) -> bool {
        matches!(self, LayerSource::Project | LayerSource::Local)
    }

    fn permission_source(self) -> Option<PermissionSource> {
        match self {
            LayerSource::User => Some(PermissionSource::User),
            LayerSource::Project => Some(PermissionSource::Project),
            LayerSource::Local => Some(PermissionSource::Local),
            LayerSource::Explicit => Some(PermissionSource::Explicit),
            LayerSource::Managed => Some(PermissionSource::Managed),
            LayerSource::Plugin => None,
        }
    }
}

/// One file of a session's layering.
#[derive(Clone, Debug)]
struct Layer {
    source: LayerSource,
    path: PathBuf,
    plugin: Option<PluginDirs>,
    /// The hooks written in the manifest (`hooks`), not a file.
    inline: bool,
}

/// One layer's file as read, and whether dsh trusts it: `(layer, file,
/// trusted)`.
type LayerRead = (Layer, Arc<SettingsFile>, bool);

/// A session's hooks as resolved at one moment.
#[derive(Debug, Default)]
pub struct Resolution {
    /// The hooks that run, in layer order then file order.
    pub hooks: Vec<ClaudeHook>,
    /// The project it was resolved for.
    pub project: PathBuf,
    /// Project files with hooks that did not run for want of trust.
    pub skipped: Vec<Skipped>,
    /// The settings files' `env`, merged in layer order (a later layer's
    /// value wins), trusted files only: every hook gets it (recorded S191).
    pub env: Vec<(String, String)>,
}

impl Resolution {
    /// Whether any hook is configured for `event`.
    pub fn has(&self, event: &str) -> bool {
        self.hooks.iter().any(|h| h.hook.event == event)
    }
}

/// The project-level settings files of `project` that exist, then its
/// command files ([`crate::slash`]): what `dsh trust` approves for Claude
/// Code.
pub fn project_files(project: &Path) -> Vec<PathBuf> {
    let dir = project.join(".claude");
    let mut files: Vec<PathBuf> = ["settings.json", "settings.local.json"]
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    files.extend(crate::slash::command_files(project));
    files.extend(crate::skill::skill_files(project));
    files
}

/// Discovery state of one bridge: where to look, and the cache of every
/// file read.
pub struct Discovery {
    discover: bool,
    home: PathBuf,
    managed: PathBuf,
    explicit: Vec<PathBuf>,
    plugin_root: Option<(String, PluginDirs)>,
    default_timeout_s: u64,
    state_dir: Option<PathBuf>,
    trusted_prefixes: Vec<PathBuf>,
    settings: FileCache<SettingsFile>,
    installed: FileCache<HashMap<String, PathBuf>>,
    /// The hooks written in the manifest, parsed once: a layer right after
    /// the `config_path` files.
    inline: Option<Arc<SettingsFile>>,
    /// What is wrong with them.
    inline_problems: Vec<ConfigProblem>,
}

impl Discovery {
    /// Discovery for `config` (paths already absolute); trust is read from
    /// `state_dir` (none: only trusted prefixes are trusted).
    pub fn new(config: &Config, state_dir: Option<PathBuf>) -> Discovery {
        let mut inline_problems = Vec::new();
        let inline = config.hooks.as_ref().and_then(|events| {
            let text = serde_json::json!({ "hooks": events }).to_string();
            let source = Path::new(dsh_hook_protocol::config::MANIFEST_SOURCE);
            match parse_settings(source, text.as_bytes(), config.default_timeout_s, None) {
                Ok(parsed) => {
                    inline_problems.extend(parsed.problems);
                    Some(Arc::new(parsed.value))
                }
                Err(e) => {
                    inline_problems.push(e.problem());
                    None
                }
            }
        });
        let home = config
            .home
            .clone()
            .or_else(|| std::env::var("HOME").ok())
            .unwrap_or_default();
        Discovery {
            discover: config.discover,
            home: PathBuf::from(home),
            managed: PathBuf::from(
                config
                    .managed_settings
                    .clone()
                    .unwrap_or_else(|| MANAGED_SETTINGS.into()),
            ),
            explicit: config.config_path.paths(),
            plugin_root: config
                .plugin_root
                .as_ref()
                .map(|r| (r.clone(), plugin_dirs(r))),
            default_timeout_s: config.default_timeout_s,
            state_dir,
            trusted_prefixes: config.trusted_prefixes.iter().map(PathBuf::from).collect(),
            settings: FileCache::default(),
            installed: FileCache::default(),
            inline,
            inline_problems,
        }
    }

    /// The hooks of a session in `project`, with every problem `dsh check`
    /// lists for them: a listed file that is missing, the files' own, those
    /// of the hooks written in the manifest, project files skipped for want
    /// of trust, and (without discovery) a bridge left with no hook.
    pub fn check(&self, project: &Path) -> (Resolution, Vec<ConfigProblem>) {
        // In config order: the listed files, then the manifest's hooks.
        let mut problems = dsh_hook_protocol::trust::missing_listed(&self.explicit);
        let resolution = self.resolve(project, &mut |p| problems.push(p));
        problems.extend(self.inline_problems.iter().cloned());
        problems.extend(dsh_hook_protocol::trust::skipped_warnings(
            &resolution.skipped,
            &resolution.project,
        ));
        if !self.discover {
            crate::config::no_hooks_is_an_error(
                &self.explicit,
                resolution.hooks.is_empty(),
                &mut problems,
            );
        }
        (resolution, problems)
    }

    /// Whether project layers are read.
    pub fn discovers(&self) -> bool {
        self.discover
    }

    /// The explicit files.
    pub fn explicit(&self) -> &[PathBuf] {
        &self.explicit
    }

    fn layers(&self, project: &Path) -> Vec<Layer> {
        let layer = |source, path: PathBuf| Layer {
            source,
            path,
            plugin: None,
            inline: false,
        };
        let mut layers = Vec::new();
        if self.discover {
            layers.push(layer(
                LayerSource::User,
                self.home.join(".claude/settings.json"),
            ));
            layers.push(layer(
                LayerSource::Project,
                project.join(".claude/settings.json"),
            ));
            layers.push(layer(
                LayerSource::Local,
                project.join(".claude/settings.local.json"),
            ));
        }
        for path in &self.explicit {
            let plugin = match &self.plugin_root {
                Some((root, dirs)) if path.starts_with(root) => Some(dirs.clone()),
                _ => None,
            };
            layers.push(Layer {
                source: LayerSource::Explicit,
                path: path.clone(),
                plugin,
                inline: false,
            });
        }
        if self.inline.is_some() {
            layers.push(Layer {
                source: LayerSource::Explicit,
                path: PathBuf::from(dsh_hook_protocol::config::MANIFEST_SOURCE),
                plugin: None,
                inline: true,
            });
        }
        if self.discover {
            layers.push(layer(LayerSource::Managed, self.managed.clone()));
        }
        layers
    }

    /// The trust of a project file holding `bytes` (a command file), as
    /// a project settings file's: approved by `dsh trust` for these exact
    /// bytes, or under a trusted prefix; without `discover`, prefixes only.
    pub fn trust_of(
        &self,
        path: &Path,
        bytes: &[u8],
        report: &mut dyn FnMut(ConfigProblem),
    ) -> Trust {
        let store = if self.discover {
            self.trust_store(report)
        } else {
            TrustStore::default()
        };
        let hash = dsh_hook_protocol::discovery::sha256(bytes);
        store.status(path, &hash, &self.trusted_prefixes)
    }

    fn trust_store(&self, report: &mut dyn FnMut(ConfigProblem)) -> TrustStore {
        let Some(dir) = &self.state_dir else {
            return TrustStore::default();
        };
        TrustStore::load(dir).unwrap_or_else(|e| {
            report(ConfigProblem::error(
                "",
                "",
                format!("{e}; every project is treated as untrusted"),
            ));
            TrustStore::default()
        })
    }

    /// Every layer's file as it is now, with its trust: the files in
    /// effect (trusted ones) and the ones skipped.
    fn read_layers(
        &self,
        project: &Path,
        report: &mut dyn FnMut(ConfigProblem),
    ) -> (Vec<LayerRead>, Vec<Skipped>) {
        let store = if self.discover {
            self.trust_store(report)
        } else {
            TrustStore::default()
        };
        let mut read = Vec::new();
        let mut skipped = Vec::new();
        for layer in self.layers(project) {
            if layer.inline {
                if let Some(inline) = &self.inline {
                    read.push((layer, inline.clone(), true));
                }
                continue;
            }
            let confine = layer.source.needs_trust().then_some(project);
            let timeout = self.default_timeout_s;
            let plugin = layer.plugin.clone();
            let state = self.settings.get(
                &layer.path,
                confine,
                |path, bytes| parse_settings(path, bytes, timeout, plugin.as_ref()),
                report,
            );
            let Some((value, hash)) = state.in_effect() else {
                continue;
            };
            let trusted = !layer.source.needs_trust()
                || match store.status(&layer.path, hash, &self.trusted_prefixes) {
                    Trust::Trusted => true,
                    trust => {
                        if !value.hooks.is_empty()
                            || !value.enabled_plugins.is_empty()
                            || !value.env.is_empty()
                        {
                            skipped.push(Skipped {
                                file: layer.path.clone(),
                                trust,
                            });
                        }
                        false
                    }
                };
            read.push((layer, value.clone(), trusted));
        }
        (read, skipped)
    }

    /// The hooks of a session whose project is `project`, as the files are
    /// now; what is wrong with a file that changed goes to `report`.
    pub fn resolve(&self, project: &Path, report: &mut dyn FnMut(ConfigProblem)) -> Resolution {
        let (read, skipped) = self.read_layers(project, report);
        let used: Vec<(LayerSource, Arc<SettingsFile>)> = read
            .into_iter()
            .filter(|(_, _, trusted)| *trusted)
            .map(|(layer, value, _)| (layer.source, value))
            .collect();
        let managed: Vec<&Arc<SettingsFile>> = used
            .iter()
            .filter(|(s, _)| *s == LayerSource::Managed)
            .map(|(_, v)| v)
            .collect();
        let managed_flag =
            |f: fn(&SettingsFile) -> Option<bool>| managed.iter().any(|v| f(v) == Some(true));
        let managed_hooks = || -> Vec<ClaudeHook> {
            managed
                .iter()
                .flat_map(|v| v.hooks.iter().cloned())
                .collect()
        };
        // `env` applies whatever the hooks' switches say.
        let mut env: Vec<(String, String)> = Vec::new();
        for (name, value) in used.iter().flat_map(|(_, v)| v.env.iter()) {
            match env.iter_mut().find(|(k, _)| k == name) {
                Some(entry) => entry.1 = value.clone(),
                None => env.push((name.clone(), value.clone())),
            }
        }
        let resolution = |hooks| Resolution {
            hooks,
            project: project.to_path_buf(),
            skipped: skipped.clone(),
            env: env.clone(),
        };
        if managed_flag(|s| s.disable_all_hooks) {
            return resolution(Vec::new());
        }
        if managed_flag(|s| s.allow_managed_hooks_only) {
            return resolution(managed_hooks());
        }
        // The highest non-managed layer that sets it decides.
        let disabled = used
            .iter()
            .filter(|(s, _)| *s != LayerSource::Managed)
            .rev()
            .find_map(|(_, v)| v.disable_all_hooks)
            == Some(true);
        if disabled {
            return resolution(managed_hooks());
        }
        let mut hooks: Vec<ClaudeHook> = used
            .iter()
            .flat_map(|(_, v)| v.hooks.iter().cloned())
            .collect();
        if self.discover {
            hooks.extend(self.plugin_hooks(&used, report));
        }
        resolution(hooks)
    }

    /// Hooks of every plugin the layers enable.
    fn plugin_hooks(
        &self,
        used: &[(LayerSource, Arc<SettingsFile>)],
        report: &mut dyn FnMut(ConfigProblem),
    ) -> Vec<ClaudeHook> {
        let mut enabled: Vec<(String, bool)> = Vec::new();
        for (_, v) in used {
            for (id, on) in &v.enabled_plugins {
                match enabled.iter_mut().find(|(k, _)| k == id) {
                    Some(entry) => entry.1 = *on,
                    None => enabled.push((id.clone(), *on)),
                }
            }
        }
        if !enabled.iter().any(|(_, on)| *on) {
            return Vec::new();
        }
        let registry = self.home.join(".claude/plugins/installed_plugins.json");
        let installed = self.installed.get(&registry, None, parse_installed, report);
        let Some((installed, _)) = installed.in_effect() else {
            for (id, _) in enabled.iter().filter(|(_, on)| *on) {
                report(ConfigProblem::warning(
                    registry.display().to_string(),
                    "",
                    format!("plugin `{id}` is enabled but not installed; its hooks never run"),
                ));
            }
            return Vec::new();
        };
        let mut hooks = Vec::new();
        for (id, _) in enabled.iter().filter(|(_, on)| *on) {
            let Some(root) = installed.get(id) else {
                report(ConfigProblem::warning(
                    registry.display().to_string(),
                    "",
                    format!("plugin `{id}` is enabled but not installed; its hooks never run"),
                ));
                continue;
            };
            let dirs = PluginDirs {
                root: root.display().to_string(),
                data: self
                    .home
                    .join(".claude/plugins/data")
                    .join(sanitize_plugin_id(id))
                    .display()
                    .to_string(),
            };
            let file = root.join("hooks/hooks.json");
            let timeout = self.default_timeout_s;
            let state = self.settings.get(
                &file,
                None,
                |path, bytes| parse_settings(path, bytes, timeout, Some(&dirs)),
                report,
            );
            if let Some((value, _)) = state.in_effect() {
                hooks.extend(value.hooks.iter().cloned());
            }
        }
        hooks
    }

    /// The `permissions` block of each settings layer for a session whose
    /// project is `project`, lowest precedence first, each with its source
    /// and whether dsh trusts the file.
    pub fn permission_layers(&self, project: &Path) -> Vec<PermissionLayer> {
        let (read, _) = self.read_layers(project, &mut |_| {});
        read.into_iter()
            .filter_map(|(layer, value, trusted)| {
                Some(PermissionLayer {
                    source: layer.source.permission_source()?,
                    file: layer.path,
                    trusted,
                    rules: value.permissions.clone()?,
                })
            })
            .collect()
    }
}

/// The permission layers of a session started in `cwd` under the bridge
/// config `config` (paths absolute), with trust read from `state_dir`: a
/// one-off read for callers outside a bridge.
pub fn permission_layers(
    config: &Config,
    state_dir: Option<PathBuf>,
    cwd: &Path,
) -> Vec<PermissionLayer> {
    Discovery::new(config, state_dir).permission_layers(cwd)
}

/// Claude Code's folder name for a plugin's data: its id with every
/// character outside `[A-Za-z0-9_-]` replaced by `-` (`name@market` →
/// `name-market`).
pub fn sanitize_plugin_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `installed_plugins.json`: plugin id → install folder. Version 2 lists
/// installs per id (`[{installPath, ...}]`, the first is used), version 1
/// one object per id.
fn parse_installed(
    path: &Path,
    bytes: &[u8],
) -> Result<Parsed<HashMap<String, PathBuf>>, dsh_hook_protocol::ConfigError> {
    let map = dsh_hook_protocol::config::parse_json_object(path, bytes)?;
    let mut out = HashMap::new();
    if let Some(Value::Object(plugins)) = map.get("plugins") {
        for (id, entry) in plugins {
            let first = match entry {
                Value::Array(items) => items.first(),
                other => Some(other),
            };
            if let Some(install) = first
                .and_then(|e| e.get("installPath"))
                .and_then(Value::as_str)
            {
                out.insert(id.clone(), PathBuf::from(install));
            }
        }
    }
    Ok(Parsed {
        value: out,
        problems: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(path: &Path, v: &Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    }

    fn stop(cmd: &str) -> Value {
        json!({"Stop": [{"hooks": [{"type": "command", "command": cmd}]}]})
    }

    /// A home with plugin `p@m` installed, a user file enabling it, and a
    /// project file disabling it; `(discovery, project)`.
    fn site(dir: &Path, prefixes: Vec<String>) -> (Discovery, PathBuf) {
        let home = dir.join("home");
        let install = dir.join("cache/p/1.0.0");
        write(
            &home.join(".claude/plugins/installed_plugins.json"),
            &json!({"version": 2, "plugins": {"p@m": [{"scope": "user", "installPath": install}]}}),
        );
        write(
            &install.join("hooks/hooks.json"),
            &json!({"hooks": stop("plugin-stop")}),
        );
        write(
            &home.join(".claude/settings.json"),
            &json!({"enabledPlugins": {"p@m": true}, "hooks": stop("user-stop"),
                    "permissions": {"allow": ["Bash(ls:*)"], "defaultMode": "plan"}}),
        );
        let project = dir.join("proj");
        write(
            &project.join(".claude/settings.json"),
            &json!({"enabledPlugins": {"p@m": false}, "permissions": {"deny": ["Read(./.env)"]}}),
        );
        let config = Config {
            discover: true,
            home: Some(home.display().to_string()),
            managed_settings: Some(dir.join("none.json").display().to_string()),
            trusted_prefixes: prefixes,
            ..Config::default()
        };
        (Discovery::new(&config, None), project)
    }

    fn commands(r: &Resolution) -> Vec<(&str, bool)> {
        r.hooks
            .iter()
            .map(|h| (h.hook.command.as_str(), h.plugin.is_some()))
            .collect()
    }

    #[test]
    fn enabled_plugins_run_with_their_folders_and_an_untrusted_layer_cannot_disable_them() {
        let dir = tempfile::tempdir().unwrap();
        let (discovery, project) = site(dir.path(), Vec::new());
        let mut problems = Vec::new();
        let r = discovery.resolve(&project, &mut |p| problems.push(p.to_string()));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(commands(&r), [("user-stop", false), ("plugin-stop", true)]);
        let dirs = r.hooks[1].plugin.clone().unwrap();
        assert_eq!(
            dirs.root,
            dir.path().join("cache/p/1.0.0").display().to_string()
        );
        assert!(
            dirs.data.ends_with("/home/.claude/plugins/data/p-m"),
            "{}",
            dirs.data
        );
        // The project file has no hooks but does enable plugins: skipped.
        assert_eq!(r.skipped.len(), 1);
        assert_eq!(r.skipped[0].trust, Trust::Untrusted);

        // Trusted, the project's `false` overrides the user's `true`.
        let (discovery, project) = site(
            dir.path(),
            vec![dir.path().join("proj").display().to_string()],
        );
        let r = discovery.resolve(&project, &mut |_| {});
        assert_eq!(commands(&r), [("user-stop", false)]);
        assert!(r.skipped.is_empty());
    }

    #[test]
    fn permission_blocks_come_per_layer_with_source_and_trust() {
        let dir = tempfile::tempdir().unwrap();
        let (discovery, project) = site(dir.path(), Vec::new());
        let layers = discovery.permission_layers(&project);
        let home = dir.path().join("home/.claude/settings.json");
        assert_eq!(
            layers,
            [
                PermissionLayer {
                    source: PermissionSource::User,
                    file: home,
                    trusted: true,
                    rules: crate::permissions::PermissionRules {
                        allow: vec!["Bash(ls:*)".into()],
                        default_mode: Some("plan".into()),
                        ..Default::default()
                    },
                },
                PermissionLayer {
                    source: PermissionSource::Project,
                    file: project.join(".claude/settings.json"),
                    trusted: false,
                    rules: crate::permissions::PermissionRules {
                        deny: vec!["Read(./.env)".into()],
                        ..Default::default()
                    },
                },
            ]
        );
    }
}
