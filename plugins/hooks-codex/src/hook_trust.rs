//! Codex's per-hook trust: which discovered hooks the user reviewed, read
//! from and written to Codex's own record, so a hook trusted in Codex is
//! trusted in dsh and `dsh trust` is seen by Codex.
//!
//! Codex 0.171 runs a hook of the user or a project layer only when
//! `$CODEX_HOME/config.toml` (the user config; no other layer counts)
//! holds, for it,
//!
//! ```toml
//! [hooks.state."/abs/path/hooks.json:pre_tool_use:0:1"]
//! trusted_hash = "sha256:…"
//! ```
//!
//! keyed by the file's absolute path, the event's snake_case label, the
//! group's index within the event and the handler's index within the
//! group, and hashed over the hook's normalized identity: the SHA-256 of
//! the compact JSON, keys sorted, of `{"event_name": <label>, "matcher":
//! <matcher, for events that have one>, "hooks": [{"type": "command",
//! "command": …, "timeout": <seconds, 600 if unset; SessionEnd: 1 if
//! unset, at most 3>, "async": <bool>, "statusMessage": <if set>}]}`.
//! A hook without an entry is untrusted, one whose hash differs was changed
//! since it was reviewed; neither runs, and Codex says nothing about it.
//! `enabled = false` turns a hook off even with
//! `--dangerously-bypass-hook-trust`. (Recorded, `C100-*`: hashes computed
//! this way made every hook run; a stale or missing entry skipped that hook
//! only; entries in a project's own `.codex/config.toml` do not count.)
//! Codex records a project's trust (`codex exec --trust`) in the same file
//! as `[projects."<root>"] trust_level = "trusted"`.

use std::collections::HashMap;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use dsh_hook_protocol::ConfiguredHook;
use dsh_hook_protocol::config::ConfigError;
use dsh_hook_protocol::discovery::Parsed;
use serde_json::{Map, Value, json};
use thiserror::Error;

/// Codex's timeout for a hook that sets none, seconds.
const DEFAULT_TIMEOUT_S: u64 = 600;

/// Codex's default `additionalContextLimit`; a limit equal to it is not
/// part of the identity.
const DEFAULT_CONTEXT_LIMIT: u64 = 2500;

/// Whether one discovered hook may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookTrust {
    /// Reviewed as it is now.
    Trusted,
    /// Reviewed, changed since.
    Modified,
    /// Never reviewed.
    Untrusted,
    /// Turned off (`enabled = false`).
    Disabled,
}

impl HookTrust {
    /// How a notice names the state.
    pub fn describe(self) -> &'static str {
        match self {
            HookTrust::Trusted => "trusted",
            HookTrust::Modified => "changed since it was trusted",
            HookTrust::Untrusted => "not trusted",
            HookTrust::Disabled => "disabled",
        }
    }
}

/// One hook's entry in Codex's record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookState {
    /// `enabled`, if set.
    pub enabled: Option<bool>,
    /// `trusted_hash`, if set.
    pub trusted_hash: Option<String>,
}

/// What Codex's user config says about hooks and projects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodexRecord {
    /// `[hooks.state."<key>"]` entries.
    pub states: HashMap<String, HookState>,
    /// `[projects."<root>"] trust_level` values.
    pub projects: HashMap<String, String>,
}

impl CodexRecord {
    /// Parses a `config.toml`'s bytes; entries that are not tables are
    /// ignored, as Codex ignores them.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Parsed<CodexRecord>, ConfigError> {
        let text = std::str::from_utf8(bytes).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut record = CodexRecord::default();
        if let Some(states) = table
            .get("hooks")
            .and_then(|h| h.get("state"))
            .and_then(toml::Value::as_table)
        {
            for (key, state) in states {
                let key = key.trim();
                if key.is_empty() {
                    continue;
                }
                record.states.insert(
                    key.to_string(),
                    HookState {
                        enabled: state.get("enabled").and_then(toml::Value::as_bool),
                        trusted_hash: state
                            .get("trusted_hash")
                            .and_then(toml::Value::as_str)
                            .map(str::to_string),
                    },
                );
            }
        }
        if let Some(projects) = table.get("projects").and_then(toml::Value::as_table) {
            for (root, project) in projects {
                if let Some(level) = project.get("trust_level").and_then(toml::Value::as_str) {
                    record.projects.insert(root.clone(), level.to_string());
                }
            }
        }
        Ok(Parsed {
            value: record,
            problems: Vec::new(),
        })
    }

    /// Whether Codex trusts the project at `root`.
    pub fn project_trusted(&self, root: &Path) -> bool {
        self.projects
            .get(root.display().to_string().as_str())
            .is_some_and(|level| level == "trusted")
    }

    /// `hook`'s state: disabled, or trusted / modified / untrusted by its
    /// hash.
    pub fn status(&self, hook: &ConfiguredHook) -> HookTrust {
        let state = self.states.get(&hook_key(hook));
        if state.and_then(|s| s.enabled) == Some(false) {
            return HookTrust::Disabled;
        }
        match (
            state.and_then(|s| s.trusted_hash.as_deref()),
            hook_hash(hook),
        ) {
            (Some(trusted), Some(now)) if trusted == now => HookTrust::Trusted,
            (Some(_), _) => HookTrust::Modified,
            (None, _) => HookTrust::Untrusted,
        }
    }
}

/// Codex's snake_case label of an event in trust keys and hashes.
pub fn event_key_label(event: &str) -> String {
    crate::config::lower_cased(event, '_')
}

/// Events whose matcher Codex keeps (the others ignore it, and it is not
/// part of their identity).
fn has_matcher(event: &str) -> bool {
    matches!(
        event,
        "PreToolUse"
            | "PermissionRequest"
            | "PostToolUse"
            | "PreCompact"
            | "PostCompact"
            | "SessionStart"
            | "SubagentStart"
            | "SubagentStop"
    )
}

/// Events whose `additionalContextLimit` is part of the identity.
fn has_context_limit(event: &str) -> bool {
    matches!(
        event,
        "PreToolUse" | "PostToolUse" | "SessionStart" | "UserPromptSubmit" | "SubagentStart"
    )
}

/// The key of `hook`'s entry: `<file>:<event label>:<group>:<handler>`.
pub fn hook_key(hook: &ConfiguredHook) -> String {
    format!(
        "{}:{}:{}:{}",
        hook.source,
        event_key_label(&hook.event),
        hook.group_index,
        hook.handler_index
    )
}

/// The hash Codex records for `hook` as it is written now; `None` when
/// Codex could not read the handler (a `timeout` that is not a whole
/// number of seconds), so nothing can trust it.
pub fn hook_hash(hook: &ConfiguredHook) -> Option<String> {
    let h = &hook.handler;
    let timeout = match h.get("timeout") {
        None | Some(Value::Null) => None,
        Some(t) => Some(t.as_u64()?),
    };
    let timeout = if hook.event == "SessionEnd" {
        timeout.unwrap_or(1).clamp(1, 3)
    } else {
        timeout.unwrap_or(DEFAULT_TIMEOUT_S).max(1)
    };
    let mut handler = Map::new();
    handler.insert("type".into(), json!("command"));
    handler.insert("command".into(), json!(hook.command));
    handler.insert("timeout".into(), json!(timeout));
    handler.insert(
        "async".into(),
        json!(h.get("async").and_then(Value::as_bool).unwrap_or(false)),
    );
    if let Some(Value::String(s)) = h.get("statusMessage") {
        handler.insert("statusMessage".into(), json!(s));
    }
    if let Some(limit) = h.get("additionalContextLimit").and_then(Value::as_u64)
        && has_context_limit(&hook.event)
        && limit != DEFAULT_CONTEXT_LIMIT
    {
        handler.insert("additionalContextLimit".into(), json!(limit));
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(event_key_label(&hook.event)));
    if has_matcher(&hook.event)
        && let Some(m) = &hook.matcher_raw
    {
        identity.insert("matcher".into(), json!(m));
    }
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(handler)]));
    let bytes = serde_json::to_vec(&canonical(Value::Object(identity))).ok()?;
    Some(dsh_hook_protocol::discovery::sha256(&bytes))
}

/// `value` with every object's keys in sorted order, Codex's canonical
/// form (serde_json keeps insertion order when a dependency turns on
/// `preserve_order`, so the order is made explicit).
fn canonical(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: std::collections::BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, canonical(v))).collect();
            Value::Object(sorted.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// Why Codex's record could not be written.
#[derive(Debug, Error)]
pub enum RecordError {
    /// It could not be read (or is not a regular file of a sane size).
    #[error("cannot read Codex's config {path}: {message}; it was not changed")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// It is not valid TOML (it is left as it is).
    #[error("Codex's config {path} is not valid TOML: {message}; it was not changed")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A key on the way is not a table.
    #[error("Codex's config {path}: key `{key}` is not a table; it was not changed")]
    Shape {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// It could not be written.
    #[error("cannot write Codex's config {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Changes `[hooks.state]` of Codex's `config.toml` at `path`: sets
/// `trusted_hash` of each `(key, hash)` in `trust`, and removes the
/// `trusted_hash` of every key in `revoke` (an entry left empty goes).
/// The rest of the file (comments, order, other keys) is kept; the file is
/// replaced whole through a temporary file and a rename, keeping its mode
/// (0600 for a new one). Returns the keys whose entry changed.
pub fn write_states(
    path: &Path,
    trust: &[(String, String)],
    revoke: &[String],
) -> Result<Vec<String>, RecordError> {
    // A symlinked config (dotfiles) is written where it points.
    let path = &std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let text = match dsh_hook_protocol::discovery::read_bounded(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| RecordError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?,
        Err(ConfigError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            String::new()
        }
        Err(e) => {
            let message = match e {
                ConfigError::Read { source, .. } => source.to_string(),
                ConfigError::Parse { message, .. } | ConfigError::Shape { message, .. } => message,
            };
            return Err(RecordError::Read {
                path: path.to_path_buf(),
                message,
            });
        }
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| RecordError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
    let shape = |key: &str| RecordError::Shape {
        path: path.to_path_buf(),
        key: key.to_string(),
    };
    let hooks = doc
        .entry("hooks")
        .or_insert_with(implicit_table)
        .as_table_like_mut()
        .ok_or_else(|| shape("hooks"))?;
    let states = hooks
        .entry("state")
        .or_insert(implicit_table())
        .as_table_like_mut()
        .ok_or_else(|| shape("hooks.state"))?;
    let mut changed = Vec::new();
    for (key, hash) in trust {
        let entry = states
            .entry(key)
            .or_insert(toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_like_mut()
            .ok_or_else(|| shape(&format!("hooks.state.\"{key}\"")))?;
        if entry.get("trusted_hash").and_then(|v| v.as_str()) != Some(hash.as_str()) {
            entry.insert("trusted_hash", toml_edit::value(hash.as_str()));
            changed.push(key.clone());
        }
    }
    for key in revoke {
        let Some(entry) = states.get_mut(key).and_then(|e| e.as_table_like_mut()) else {
            continue;
        };
        if entry.remove("trusted_hash").is_some() {
            changed.push(key.clone());
        }
        if entry.is_empty() {
            states.remove(key);
        }
    }
    if changed.is_empty() {
        return Ok(changed);
    }
    replace(path, doc.to_string().as_bytes())?;
    Ok(changed)
}

fn implicit_table() -> toml_edit::Item {
    let mut t = toml_edit::Table::new();
    t.set_implicit(true);
    toml_edit::Item::Table(t)
}

/// Writes `bytes` to `path` through a temporary file beside it and a
/// rename, with the mode of the file it replaces (0600 for a new one).
fn replace(path: &Path, bytes: &[u8]) -> Result<(), RecordError> {
    let write_err = |source| RecordError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mode = std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o600);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(write_err)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.dsh-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(write_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_hook_protocol::config::parse_event_map;

    fn hooks_of(source: &str, events: Value) -> Vec<ConfiguredHook> {
        let mut problems = Vec::new();
        let hooks = parse_event_map(
            events.as_object().unwrap(),
            &crate::config::shape(600),
            source,
            "hooks",
            &mut problems,
        );
        assert!(problems.is_empty(), "{problems:?}");
        hooks
    }

    /// Hashes and keys Codex 0.171 accepted (recorded, C100a: every hook
    /// ran without the bypass flag, with these entries).
    #[test]
    fn hashes_and_keys_are_the_ones_codex_accepted() {
        let src = "/tmp/codex-hooks-probe/C100a_all_trusted/codex_home/hooks.json";
        let cmd = |label: &str| {
            format!(
                "/work/wt/trust-rec/codex/hook.sh /tmp/codex-hooks-probe/C100a_all_trusted/cap {label}"
            )
        };
        let hooks = hooks_of(
            src,
            json!({
                "UserPromptSubmit": [{"matcher": "ignored-for-this-event",
                    "hooks": [{"type": "command", "command": cmd("obs_UserPromptSubmit")}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": cmd("pre_a"), "timeout": 30,
                     "statusMessage": "checking"},
                    {"type": "command", "command": cmd("pre_b")}]}],
                "SessionEnd": [{"hooks": [{"type": "command", "command": cmd("obs_SessionEnd")}]}],
            }),
        );
        let got: HashMap<String, String> = hooks
            .iter()
            .map(|h| (hook_key(h), hook_hash(h).unwrap()))
            .collect();
        let want = recorded_c100a();
        for (key, hash) in &want {
            assert_eq!(got.get(key), Some(hash), "{key}: {got:?}");
        }
        assert_eq!(got.len(), want.len());
    }

    /// The entries of the recorded C100a config.toml that name the hooks
    /// above (copied from the capture).
    fn recorded_c100a() -> HashMap<String, String> {
        let p = "/tmp/codex-hooks-probe/C100a_all_trusted/codex_home/hooks.json";
        RECORDED_C100A
            .iter()
            .map(|(k, h)| (format!("{p}:{k}"), h.to_string()))
            .collect()
    }

    const RECORDED_C100A: [(&str, &str); 4] = [
        (
            "user_prompt_submit:0:0",
            "sha256:397e41ac61fb169c17ddf737ccfc124951e58ed53e39a1c98cf6218666435de8",
        ),
        (
            "pre_tool_use:0:0",
            "sha256:b846d7eeadb367132b5238dce647ad313c3b2161e9a17325d34d4a19ca33212d",
        ),
        (
            "pre_tool_use:0:1",
            "sha256:d73bc7de48a0aaf6c2e71cf953815ed2f4f54af8166eb20daf51a659ec1a2697",
        ),
        (
            "session_end:0:0",
            "sha256:5439a7617aed025732d57f9c38dfdf15ebb9e2de69fa9d123aa31a3c8ea2fb00",
        ),
    ];

    #[test]
    fn a_changed_or_missing_or_disabled_entry() {
        let src = "/p/hooks.json";
        let hooks = hooks_of(
            src,
            json!({"Stop": [{"hooks": [
                {"type": "command", "command": "a"},
                {"type": "command", "command": "b"},
                {"type": "command", "command": "c"}]}]}),
        );
        let mut record = CodexRecord::default();
        let set = |r: &mut CodexRecord, h: &ConfiguredHook, hash: Option<String>, en| {
            r.states.insert(
                hook_key(h),
                HookState {
                    enabled: en,
                    trusted_hash: hash,
                },
            );
        };
        set(&mut record, &hooks[0], hook_hash(&hooks[0]), None);
        set(&mut record, &hooks[1], hook_hash(&hooks[0]), None);
        assert_eq!(record.status(&hooks[0]), HookTrust::Trusted);
        assert_eq!(record.status(&hooks[1]), HookTrust::Modified);
        assert_eq!(record.status(&hooks[2]), HookTrust::Untrusted);
        set(&mut record, &hooks[0], hook_hash(&hooks[0]), Some(false));
        assert_eq!(record.status(&hooks[0]), HookTrust::Disabled);
    }

    #[test]
    fn writing_keeps_the_rest_of_the_file_and_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# mine\nmodel = \"m\"\n\n[hooks.state.\"/x:stop:0:0\"]\nenabled = false\n";
        std::fs::write(&path, before).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let changed = write_states(
            &path,
            &[
                ("/x:stop:0:0".into(), "sha256:1".into()),
                ("/y:stop:0:0".into(), "sha256:2".into()),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(changed.len(), 2);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\nmodel = \"m\"\n"), "{text}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let record = CodexRecord::parse(&path, text.as_bytes()).unwrap().value;
        assert_eq!(
            record.states["/x:stop:0:0"],
            HookState {
                enabled: Some(false),
                trusted_hash: Some("sha256:1".into())
            }
        );
        assert_eq!(
            record.states["/y:stop:0:0"].trusted_hash.as_deref(),
            Some("sha256:2")
        );
        // Nothing new: not rewritten.
        assert!(
            write_states(&path, &[("/y:stop:0:0".into(), "sha256:2".into())], &[])
                .unwrap()
                .is_empty()
        );
        write_states(&path, &[], &["/y:stop:0:0".into(), "/x:stop:0:0".into()]).unwrap();
        let record = CodexRecord::parse(&path, std::fs::read(&path).unwrap().as_slice())
            .unwrap()
            .value;
        assert!(!record.states.contains_key("/y:stop:0:0"));
        assert_eq!(record.states["/x:stop:0:0"].enabled, Some(false));
    }

    #[test]
    fn a_broken_config_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = \n").unwrap();
        let err = write_states(&path, &[("k".into(), "h".into())], &[]).unwrap_err();
        assert!(err.to_string().contains("config.toml"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "model = \n");
    }
}
