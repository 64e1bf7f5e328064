//! Parsing and validating the manifest.
//!
//! Before figment sees the text it is bounded ([`MAX_MANIFEST_BYTES`], read
//! with a bounded reader so a huge file or an endless stream costs at most
//! that much memory) and walked strictly ([`super::strict`]): an empty
//! document and a key given twice in one mapping are errors, not defaults.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Yaml};
use serde::{Deserialize, Serialize};

use super::strict::{self, Finding};

/// The largest manifest dsh reads (1 MiB); a bigger file is refused
/// before it is parsed.
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// A manifest problem, naming the file and (for entries) the id and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read manifest: {message}")]
    Read {
        /// The manifest.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The file is larger than [`MAX_MANIFEST_BYTES`].
    #[error("{path}: the manifest is larger than {limit} bytes (1 MiB); refused unparsed")]
    TooLarge {
        /// The manifest.
        path: PathBuf,
        /// The limit it broke.
        limit: u64,
    },
    /// The document holds nothing: empty, whitespace, comments or `null`.
    #[error(
        "{path}: the manifest is empty (only whitespace or comments); write at least `plugins: []`"
    )]
    Empty {
        /// The manifest.
        path: PathBuf,
    },
    /// A key appears twice in one mapping (YAML would silently keep one).
    #[error("{path}: duplicate key `{key}` in {}: a key may appear only once per mapping", mapping_name(.at))]
    DuplicateKey {
        /// The manifest.
        path: PathBuf,
        /// The key given twice.
        key: String,
        /// The mapping holding it (`plugins[1].config`; empty for the top level).
        at: String,
    },
    /// The YAML or a setting is malformed.
    #[error("{path}: {message}")]
    Parse {
        /// The manifest.
        path: PathBuf,
        /// figment's description, which names the key.
        message: String,
    },
    /// The `permissions:` block is malformed (a mode or rule that does
    /// not parse).
    #[error("{path}: key `permissions.{key}`: {message}")]
    Permissions {
        /// The manifest.
        path: PathBuf,
        /// The key under `permissions` (`mode`, `allow[2]`).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A plugin entry is malformed.
    #[error("{path}: plugin `{id}` (plugins[{index}]): key `{key}`: {message}")]
    Entry {
        /// The manifest.
        path: PathBuf,
        /// Position in `plugins:`.
        index: usize,
        /// The entry's id (or what stands for it).
        id: String,
        /// The offending key.
        key: String,
        /// What is wrong.
        message: String,
    },
}

fn mapping_name(at: &str) -> String {
    match at {
        "" => "the top level".into(),
        at => format!("`{at}`"),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    state_dir: Option<PathBuf>,
    socket: Option<PathBuf>,
    log_level: String,
    plugin_dirs: Vec<PathBuf>,
    shutdown_grace_s: u64,
    /// How long `dsh prompt` waits after its last turn for background jobs
    /// still running (Claude Code's 5000 ms).
    wind_down_grace_ms: u64,
    plugins: Vec<RawEntry>,
    hooks: super::HookSettings,
    state: Option<super::store::RawState>,
    telemetry: Option<super::telemetry::RawTelemetry>,
    /// `{<name>: {command, args, env} | {type: http, url, headers}}`,
    /// checked by [`crate::mcp::McpServerSpec`].
    #[serde(default)]
    mcp_servers: serde_json::Map<String, serde_json::Value>,
    /// `plain` (default) or `codex`: see [`crate::mcp::McpFraming`].
    #[serde(default)]
    mcp_result_framing: Option<String>,
    /// `claude` (default: the `Agent` tool only) or `codex` (also Codex's
    /// `spawn_agent` and `wait_agent`).
    #[serde(default)]
    subagent_tools: Option<String>,
    #[serde(default)]
    permissions: Option<RawPermissions>,
    #[serde(default)]
    compaction: super::CompactionSettings,
}

/// `permissions:` as written: Claude Code's settings shape.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPermissions {
    mode: Option<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

impl Default for RawManifest {
    fn default() -> Self {
        RawManifest {
            state_dir: None,
            socket: None,
            log_level: "info".into(),
            plugin_dirs: Vec::new(),
            shutdown_grace_s: 20,
            wind_down_grace_ms: 5000,
            plugins: Vec::new(),
            hooks: super::HookSettings::default(),
            state: None,
            telemetry: None,
            permissions: None,
            mcp_servers: serde_json::Map::new(),
            mcp_result_framing: None,
            subagent_tools: None,
            compaction: super::CompactionSettings::default(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    id: Option<String>,
    name: Option<String>,
    path: Option<PathBuf>,
    #[serde(default)]
    config: Option<serde_json::Value>,
    #[serde(default)]
    disabled: bool,
    listener_timeout_s: Option<f64>,
}

/// What a plugin entry loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginRef {
    /// A plugin built into the binary, by name.
    Builtin(String),
    /// A `.so` file (absolute).
    Library(PathBuf),
}

/// One entry of `plugins:`.
#[derive(Debug, Clone)]
pub struct PluginEntry {
    /// Unique id (defaults to the name or the file stem).
    pub id: String,
    /// What to load.
    pub plugin: PluginRef,
    /// The plugin's config (`{}` when absent).
    pub config: serde_json::Value,
    /// Listed but not loaded.
    pub disabled: bool,
    /// Position in `plugins:`.
    pub index: usize,
    /// How long one of its listener calls may take, not counting the time
    /// it waits on `next` (`listener_timeout_s`); `None`: no limit.
    pub listener_timeout: Option<std::time::Duration>,
}

/// The listener time limit of a `.so` plugin whose entry sets none.
pub const DEFAULT_LISTENER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A validated manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file it came from (absolute).
    pub path: PathBuf,
    /// Where sessions and runtime files live.
    pub state_dir: PathBuf,
    /// The daemon's socket.
    pub socket: PathBuf,
    /// `tracing` filter.
    pub log_level: String,
    /// Folders whose every `.so` is loaded (drop-in).
    pub plugin_dirs: Vec<PathBuf>,
    /// How long running turns may finish after SIGTERM before they are aborted.
    pub shutdown_grace: std::time::Duration,
    /// How long `dsh prompt` waits after its last turn for the session's
    /// background jobs before it kills them (`wind_down_grace_ms`; Claude
    /// Code's 5000 ms, [`crate::agent::DEFAULT_GRACE`]).
    pub wind_down_grace: std::time::Duration,
    /// Plugin entries in manifest order.
    pub plugins: Vec<PluginEntry>,
    /// `hooks:`: settings of the `hook-transport` service (`http` and
    /// `socket` hooks).
    pub hooks: super::HookSettings,
    /// Where sessions are kept (`state:`; `DSH_STORE_URL`).
    pub store: super::StoreConfig,
    /// What is exported (`telemetry:`; `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub telemetry: super::TelemetryConfig,
    /// MCP servers every session connects to (`mcp_servers:`), in order.
    pub mcp_servers: Vec<crate::mcp::McpServerSpec>,
    /// How the model is shown MCP results (`mcp_result_framing:`).
    pub mcp_framing: crate::mcp::McpFraming,
    /// `subagent_tools: codex`: sessions are also offered Codex's
    /// `spawn_agent` and `wait_agent` ([`crate::agent::AgentOptions`]).
    pub codex_subagents: bool,
    /// The `permissions:` block, if any: the sessions' default mode and
    /// the manifest's rule layer.
    pub permissions: Option<ManifestPermissions>,
    /// `compaction:`: when sessions compact without being asked.
    pub compaction: super::CompactionSettings,
}

/// The manifest's `permissions:` block, validated.
#[derive(Debug, Clone)]
pub struct ManifestPermissions {
    /// The default mode of every session (`default` when not given).
    pub mode: crate::permissions::PermissionMode,
    /// The rules, as the [`crate::permissions::RuleSource::Manifest`] layer.
    pub layer: crate::permissions::RuleLayer,
    /// The same rules, parsed.
    pub rules: crate::permissions::RuleSet,
}

impl ManifestPermissions {
    /// What sessions start with under this block: its mode and rules,
    /// managed.
    pub fn state(&self) -> crate::permissions::PermissionState {
        crate::permissions::PermissionState {
            mode: self.mode,
            rules: self.rules.clone(),
            managed: true,
        }
    }
}

fn default_state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("STATE_DIRECTORY") {
        // systemd's StateDirectory= may list several; the first is ours.
        let first = dir
            .to_string_lossy()
            .split(':')
            .next()
            .unwrap_or("")
            .to_string();
        if !first.is_empty() {
            return PathBuf::from(first);
        }
    }
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME") {
        return PathBuf::from(dir).join("dsh");
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".local/state/dsh"),
        None => PathBuf::from("/var/lib/dsh"),
    }
}

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

impl Manifest {
    /// Reads and validates the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest, ConfigError> {
        let path = std::path::absolute(path).map_err(|e| ConfigError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let text = read_bounded(&path)?;
        Self::from_yaml(&path, &text)
    }

    /// Parses manifest text as if read from `path`.
    pub fn from_yaml(path: &Path, text: &str) -> Result<Manifest, ConfigError> {
        if text.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(ConfigError::TooLarge {
                path: path.to_path_buf(),
                limit: MAX_MANIFEST_BYTES,
            });
        }
        match strict::check(text) {
            Ok(()) | Err(Finding::Malformed) => {}
            Err(Finding::Empty) => {
                return Err(ConfigError::Empty {
                    path: path.to_path_buf(),
                });
            }
            Err(Finding::Duplicate(d)) => {
                return Err(ConfigError::DuplicateKey {
                    path: path.to_path_buf(),
                    key: d.key,
                    at: d.at,
                });
            }
        }
        let raw: RawManifest = Figment::from(Serialized::defaults(RawManifest::default()))
            .merge(Yaml::string(text))
            .merge(Env::prefixed("DSH_").only(&[
                "state_dir",
                "socket",
                "log_level",
                "plugin_dirs",
                "shutdown_grace_s",
                "wind_down_grace_ms",
            ]))
            .extract()
            .map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        // The filter parser would drop what it cannot read with a line on
        // stderr that names neither the file nor the key.
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&raw.log_level) {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "key `log_level` (or DSH_LOG_LEVEL): `{}` is not a log filter ({e}); write e.g. `info` or `info,dsh_host=debug`",
                    raw.log_level
                ),
            });
        }
        let base = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let state_dir = raw
            .state_dir
            .as_deref()
            .map(|p| absolute(&base, p))
            .unwrap_or_else(default_state_dir);
        let socket = raw
            .socket
            .as_deref()
            .map(|p| absolute(&base, p))
            .unwrap_or_else(|| state_dir.join("dsh.sock"));
        let plugin_dirs = raw.plugin_dirs.iter().map(|d| absolute(&base, d)).collect();
        let store = raw
            .state
            .clone()
            .unwrap_or_default()
            .resolve(std::env::var(super::store::STORE_URL_ENV).ok())
            .map_err(|message| ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            })?;
        let telemetry = raw
            .telemetry
            .clone()
            .unwrap_or_default()
            .resolve(std::env::var(super::telemetry::OTLP_ENDPOINT_ENV).ok())
            .map_err(|message| ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            })?;
        let mut plugins = Vec::new();
        let mut ids = HashSet::new();
        for (index, entry) in raw.plugins.into_iter().enumerate() {
            let entry = Self::entry(path, &base, index, entry)?;
            if !ids.insert(entry.id.clone()) {
                return Err(ConfigError::Entry {
                    path: path.to_path_buf(),
                    index,
                    id: entry.id,
                    key: "id".into(),
                    message: "duplicate id; every entry needs its own".into(),
                });
            }
            plugins.push(entry);
        }
        let permissions = raw
            .permissions
            .map(|p| Self::permissions(path, p))
            .transpose()?;
        let mcp_servers =
            crate::mcp::McpServerSpec::from_manifest_map(&raw.mcp_servers).map_err(|e| {
                ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                }
            })?;
        let codex_subagents = match raw.subagent_tools.as_deref() {
            None | Some("claude") => false,
            Some("codex") => true,
            Some(name) => {
                return Err(ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!(
                        "key `subagent_tools`: unknown value `{name}` (known: claude, codex)"
                    ),
                });
            }
        };
        let mcp_framing = match raw.mcp_result_framing.as_deref() {
            None => crate::mcp::McpFraming::Plain,
            Some(name) => {
                crate::mcp::McpFraming::parse(name).ok_or_else(|| ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!(
                        "key `mcp_result_framing`: unknown framing `{name}` (known: plain, codex)"
                    ),
                })?
            }
        };
        raw.compaction
            .check()
            .map_err(|message| ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            })?;
        // The Codex bridge runs SubagentStart/SubagentStop hooks only when
        // `spawn_agent` is offered: it is told so here.
        if codex_subagents {
            for entry in &mut plugins {
                let codex = matches!(&entry.plugin, PluginRef::Builtin(n) if n == "hooks-codex");
                if let (true, Some(config)) = (codex, entry.config.as_object_mut()) {
                    config
                        .entry("spawn_agent")
                        .or_insert(serde_json::Value::Bool(true));
                }
            }
        }
        // The Claude bridge runs TaskCreated/TaskCompleted hooks from the
        // task tools, WorktreeCreate/WorktreeRemove from the worktree tools:
        // it is told whether the manifest offers them.
        for (tools, key) in [
            ("tools-tasks", "task_tools"),
            ("tools-worktree", "worktree_tools"),
        ] {
            let listed = plugins
                .iter()
                .any(|e| matches!(&e.plugin, PluginRef::Builtin(n) if n == tools));
            if !listed {
                continue;
            }
            for entry in &mut plugins {
                let claude = matches!(&entry.plugin, PluginRef::Builtin(n) if n == "hooks-claude");
                if let (true, Some(config)) = (claude, entry.config.as_object_mut()) {
                    config.entry(key).or_insert(serde_json::Value::Bool(true));
                }
            }
        }
        Ok(Manifest {
            compaction: raw.compaction,
            permissions,
            mcp_servers,
            mcp_framing,
            codex_subagents,
            path: path.to_path_buf(),
            state_dir,
            socket,
            log_level: raw.log_level,
            plugin_dirs,
            shutdown_grace: std::time::Duration::from_secs(raw.shutdown_grace_s),
            wind_down_grace: std::time::Duration::from_millis(raw.wind_down_grace_ms),
            plugins,
            hooks: raw.hooks,
            store,
            telemetry,
        })
    }

    fn permissions(path: &Path, raw: RawPermissions) -> Result<ManifestPermissions, ConfigError> {
        use crate::permissions::{PermissionMode, RuleLayer, RuleSet, RuleSource};
        let err = |key: String, message: String| ConfigError::Permissions {
            path: path.to_path_buf(),
            key,
            message,
        };
        let mode = match raw.mode.as_deref() {
            None => PermissionMode::Default,
            Some(m) => m
                .parse::<PermissionMode>()
                .map_err(|e| err("mode".into(), e))?,
        };
        let layer = RuleLayer {
            source: RuleSource::Manifest,
            allow: raw.allow,
            ask: raw.ask,
            deny: raw.deny,
        };
        let rules = RuleSet::from_layers(std::slice::from_ref(&layer)).map_err(|e| {
            err(
                format!("{}[{}]", e.list, e.index),
                format!("`{}`: {}", e.rule, e.message),
            )
        })?;
        Ok(ManifestPermissions { mode, layer, rules })
    }

    fn entry(
        path: &Path,
        base: &Path,
        index: usize,
        raw: RawEntry,
    ) -> Result<PluginEntry, ConfigError> {
        let shown_id = raw
            .id
            .clone()
            .or_else(|| raw.name.clone())
            .or_else(|| raw.path.as_ref().map(|p| p.display().to_string()))
            .unwrap_or_else(|| format!("#{index}"));
        let err = |key: &str, message: &str| ConfigError::Entry {
            path: path.to_path_buf(),
            index,
            id: shown_id.clone(),
            key: key.into(),
            message: message.into(),
        };
        let plugin = match (&raw.name, &raw.path) {
            (Some(_), Some(_)) => {
                return Err(err(
                    "name",
                    "give either `name` (built-in) or `path` (.so), not both",
                ));
            }
            (None, None) => {
                return Err(err(
                    "name",
                    "missing: give `name` (built-in) or `path` (.so)",
                ));
            }
            (Some(name), None) if name.trim().is_empty() => return Err(err("name", "empty")),
            (Some(name), None) => PluginRef::Builtin(name.clone()),
            (None, Some(p)) => PluginRef::Library(absolute(base, p)),
        };
        let id = match raw.id {
            Some(id) if id.trim().is_empty() => return Err(err("id", "empty")),
            Some(id) => id,
            None => match &plugin {
                PluginRef::Builtin(name) => name.clone(),
                PluginRef::Library(p) => library_id(p),
            },
        };
        let config = match raw.config {
            None | Some(serde_json::Value::Null) => serde_json::json!({}),
            Some(v @ serde_json::Value::Object(_)) => v,
            Some(_) => return Err(err("config", "must be a mapping")),
        };
        // `.so` plugins get a limit by default; built-ins (the hook bridges
        // bound each hook by its own `timeout`) only when the entry sets one.
        let listener_timeout = match raw.listener_timeout_s {
            Some(s) => match std::time::Duration::try_from_secs_f64(s) {
                Ok(limit) if !limit.is_zero() => Some(limit),
                _ => {
                    return Err(err(
                        "listener_timeout_s",
                        &format!("must be a number of seconds above 0, not {s}"),
                    ));
                }
            },
            None => matches!(plugin, PluginRef::Library(_)).then_some(DEFAULT_LISTENER_TIMEOUT),
        };
        Ok(PluginEntry {
            id,
            plugin,
            config,
            disabled: raw.disabled,
            index,
            listener_timeout,
        })
    }
}

/// Reads at most [`MAX_MANIFEST_BYTES`] + 1 bytes of `path`: one byte more
/// than allowed tells a too-large file without reading the rest.
fn read_bounded(path: &Path) -> Result<String, ConfigError> {
    let read_error = |e: std::io::Error| ConfigError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let file = super::open_input(path).map_err(|message| ConfigError::Read {
        path: path.to_path_buf(),
        message,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_MANIFEST_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| ConfigError::Read {
        path: path.to_path_buf(),
        message: format!("not UTF-8: {}", e.utf8_error()),
    })
}

/// The id a drop-in library gets: its file stem without a `lib` prefix.
pub fn library_id(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    stem.strip_prefix("lib").unwrap_or(&stem).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, ConfigError> {
        Manifest::from_yaml(Path::new("/etc/dsh/cordis.yml"), text)
    }

    #[test]
    fn listing_tools_worktree_tells_the_claude_bridge_it_has_worktree_tools() {
        let m = parse("plugins:\n  - name: hooks-claude\n  - name: tools-tasks\n").unwrap();
        assert_eq!(m.plugins[0].config.get("worktree_tools"), None);
        let m = parse("plugins:\n  - name: tools-worktree\n  - name: hooks-claude\n").unwrap();
        assert_eq!(m.plugins[1].config["worktree_tools"], true);
        assert_eq!(m.plugins[1].config.get("task_tools"), None);
    }

    #[test]
    fn listing_tools_tasks_tells_the_claude_bridge_it_has_task_tools() {
        let m = parse("plugins:\n  - name: hooks-claude\n").unwrap();
        assert_eq!(m.plugins[0].config.get("task_tools"), None);
        let m = parse(
            "plugins:\n  - name: hooks-claude\n  - name: tools-tasks\n  - name: hooks-claude\n    \
             id: two\n    config: {task_tools: false}\n  - name: hooks-codex\n",
        )
        .unwrap();
        assert_eq!(m.plugins[0].config["task_tools"], true);
        assert_eq!(m.plugins[2].config["task_tools"], false);
        assert_eq!(m.plugins[3].config.get("task_tools"), None);
    }

    #[test]
    fn subagent_tools_codex_turns_on_spawn_agent_for_the_codex_bridge() {
        let m = parse("plugins:\n  - name: hooks-codex\n").unwrap();
        assert!(!m.codex_subagents);
        assert_eq!(m.plugins[0].config.get("spawn_agent"), None);
        let m = parse(
            "subagent_tools: codex\nplugins:\n  - name: hooks-codex\n  - name: hooks-claude\n  \
             - name: hooks-codex\n    id: two\n    config: {spawn_agent: false}\n",
        )
        .unwrap();
        assert!(m.codex_subagents);
        assert_eq!(m.plugins[0].config["spawn_agent"], true);
        assert_eq!(m.plugins[1].config.get("spawn_agent"), None);
        // An entry that says otherwise keeps its word.
        assert_eq!(m.plugins[2].config["spawn_agent"], false);
        assert!(
            !parse("subagent_tools: claude\nplugins: []\n")
                .unwrap()
                .codex_subagents
        );
        let e = parse("subagent_tools: both\nplugins: []\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`subagent_tools`") && e.contains("both") && e.contains("claude, codex"),
            "{e}"
        );
    }

    #[test]
    fn mcp_result_framing_is_plain_or_codex() {
        let m = parse("plugins: []\n").unwrap();
        assert_eq!(m.mcp_framing, crate::mcp::McpFraming::Plain);
        let m = parse("plugins: []\nmcp_result_framing: codex\n").unwrap();
        assert_eq!(m.mcp_framing, crate::mcp::McpFraming::Codex);
        let e = parse("plugins: []\nmcp_result_framing: claude\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("key `mcp_result_framing`: unknown framing `claude` (known: plain, codex)"),
            "{e}"
        );
    }

    #[test]
    fn compaction_style_is_claude_or_codex() {
        let m = parse("plugins: []\n").unwrap();
        assert_eq!(m.compaction.style, super::super::CompactionStyle::Claude);
        let m = parse("plugins: []\ncompaction:\n  style: codex\n").unwrap();
        assert_eq!(m.compaction.style, super::super::CompactionStyle::Codex);
        let e = parse("plugins: []\ncompaction:\n  style: gemini\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("compaction") && e.contains("gemini"), "{e}");
    }

    #[test]
    fn mcp_servers_take_the_claude_code_shape_and_bad_ones_name_their_key() {
        let m = parse(
            "plugins: []\nmcp_servers:\n  gh:\n    command: npx\n    args: [-y, srv]\n  web:\n    type: http\n    url: http://127.0.0.1:9/mcp\n",
        )
        .unwrap();
        let names: Vec<&str> = m.mcp_servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["gh", "web"]);
        let e = parse("plugins: []\nmcp_servers:\n  gh:\n    args: [x]\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/etc/dsh/cordis.yml: mcp_servers.gh: key `command`: missing: a stdio server needs a command"
        );
    }

    #[test]
    fn resolves_relative_paths_against_the_manifest() {
        let m = parse(
            "state_dir: state\nplugins:\n  - path: plugins/libgate.so\n  - name: bash-local\n",
        )
        .unwrap();
        assert_eq!(m.state_dir, PathBuf::from("/etc/dsh/state"));
        assert_eq!(m.socket, PathBuf::from("/etc/dsh/state/dsh.sock"));
        assert_eq!(m.plugins[0].id, "gate");
        assert_eq!(
            m.plugins[0].plugin,
            PluginRef::Library("/etc/dsh/plugins/libgate.so".into())
        );
        assert_eq!(m.plugins[1].id, "bash-local");
    }

    #[test]
    fn entry_errors_name_file_id_and_key() {
        let e = parse("plugins:\n  - id: x\n    name: a\n    path: b.so\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/etc/dsh/cordis.yml: plugin `x` (plugins[0]): key `name`: give either `name` (built-in) or `path` (.so), not both"
        );
        let e = parse("plugins:\n  - id: x\n    name: a\n    config: 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("plugin `x`") && e.contains("key `config`"),
            "{e}"
        );
        let e = parse("plugins:\n  - name: a\n  - name: a\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("plugins[1]") && e.contains("duplicate id"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_and_bad_yaml_are_errors_naming_the_file() {
        let e = parse("plugins:\n  - name: a\n    colour: red\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/etc/dsh/cordis.yml: ") && e.contains("colour"),
            "{e}"
        );
        let e = parse("plugins: [").unwrap_err().to_string();
        assert!(e.starts_with("/etc/dsh/cordis.yml: "), "{e}");
    }

    #[test]
    fn figment_alone_keeps_the_last_of_two_equal_keys() {
        // Why `strict` exists: without it, the second `deny` wins silently.
        let raw: serde_json::Value = Figment::from(Yaml::string("deny: [x]\ndeny: []\n"))
            .extract()
            .unwrap();
        assert_eq!(raw, serde_json::json!({"deny": []}));
    }

    #[test]
    fn duplicate_keys_empty_documents_and_oversize_text_are_errors_naming_the_file() {
        let e = parse("plugins:\n  - name: g\n    config: {deny: [x], deny: []}\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/etc/dsh/cordis.yml: duplicate key `deny` in `plugins[0].config`: a key may appear only once per mapping"
        );
        let e = parse("log_level: info\nlog_level: debug\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`log_level` in the top level"), "{e}");
        for empty in ["", "  \n", "# nothing\n"] {
            let e = parse(empty).unwrap_err().to_string();
            assert_eq!(
                e,
                "/etc/dsh/cordis.yml: the manifest is empty (only whitespace or comments); write at least `plugins: []`"
            );
        }
        let mut big = "plugins: []\n".to_string();
        big.push_str(&"#".repeat(MAX_MANIFEST_BYTES as usize - big.len()));
        assert!(parse(&big).is_ok());
        big.push('#');
        assert!(matches!(
            parse(&big),
            Err(ConfigError::TooLarge {
                limit: MAX_MANIFEST_BYTES,
                ..
            })
        ));
    }

    #[test]
    fn permissions_block_parses_and_bad_modes_or_rules_name_their_key() {
        use crate::permissions::PermissionMode;
        assert!(parse("plugins: []\n").unwrap().permissions.is_none());
        let m = parse(
            "plugins: []\npermissions:\n  mode: acceptEdits\n  allow: ['Bash(git diff:*)', Read]\n  deny: ['Read(./.env)']\n",
        )
        .unwrap();
        let p = m.permissions.unwrap();
        assert_eq!(p.mode, PermissionMode::AcceptEdits);
        assert_eq!(p.layer.allow, ["Bash(git diff:*)", "Read"]);
        assert_eq!(p.layer.deny, ["Read(./.env)"]);
        let e = parse("plugins: []\npermissions: {mode: yolo}\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "/etc/dsh/cordis.yml: key `permissions.mode`: unknown permission mode `yolo`"
            ),
            "{e}"
        );
        let e = parse("plugins: []\npermissions: {ask: [Read, 'Bash(git']}\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "/etc/dsh/cordis.yml: key `permissions.ask[1]`: `Bash(git`: a specifier must end with `)`"
        );
        let e = parse("plugins: []\npermissions: {allowed: [Read]}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("allowed"), "{e}");
    }

    #[test]
    fn listener_timeouts_default_for_libraries_and_must_be_positive() {
        let m = parse(
            "plugins:\n  - path: a.so\n  - path: b.so\n    listener_timeout_s: 2.5\n  - name: c\n  - name: d\n    listener_timeout_s: 7\n",
        )
        .unwrap();
        let limits: Vec<_> = m.plugins.iter().map(|p| p.listener_timeout).collect();
        use std::time::Duration;
        assert_eq!(
            limits,
            [
                Some(DEFAULT_LISTENER_TIMEOUT),
                Some(Duration::from_millis(2500)),
                None,
                Some(Duration::from_secs(7)),
            ]
        );
        for bad in ["0", "-1", ".nan", ".inf", "1e300", "soon"] {
            let e = parse(&format!(
                "plugins:\n  - id: x\n    path: a.so\n    listener_timeout_s: {bad}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(e.contains("listener_timeout_s"), "{bad}: {e}");
        }
    }
}
