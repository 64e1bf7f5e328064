//! A session's Codex hooks, layered from its folder as Codex 0.171 layers
//! them (`discover: true`), and re-read when a file changes.
//!
//! | layer (lowest first) | files | trust |
//! |---|---|---|
//! | user | `$CODEX_HOME/hooks.json`, then `$CODEX_HOME/config.toml` `[hooks]` | always |
//! | project, root first | `<dir>/.codex/hooks.json`, then `<dir>/.codex/config.toml`, for each `<dir>` from the project root down to the session's folder | `dsh trust` |
//! | explicit | each `config_path` file (Codex's session-flags layer) | always |
//!
//! As in Codex's config loader: the project root is the nearest ancestor
//! holding one of `project_root_markers` (default `.git`; none found: the
//! folder itself); every `.codex/` folder between it and the session's
//! folder is a layer, the one nearest the session last; a `.codex/` that
//! is `$CODEX_HOME` itself is not a project layer; within a layer,
//! `hooks.json` comes before `config.toml`. Hooks of every layer run, and
//! Codex numbers handlers across all of them in that order (the number is
//! in Stop's `hook_run_id`).
//!
//! Trust, as Codex 0.171 has it, in two parts. A project's `.codex/` is
//! read only in a trusted project (recorded: `C1-project-hooks-json` needed
//! `--trust`; without it Codex warns "Untrusted project-local configuration
//! is disabled"): here a project is trusted by `dsh trust` (dsh's record of
//! the files approved, [`dsh_hook_protocol::trust`]), by a
//! `trusted_prefixes` folder, or by Codex's own record
//! (`[projects."<root>"] trust_level = "trusted"` in
//! `$CODEX_HOME/config.toml`, what `codex --trust` writes). And every hook
//! of the user and project layers runs only once it is reviewed: Codex's
//! per-hook `trusted_hash` in `$CODEX_HOME/config.toml`
//! ([`crate::hook_trust`]; `dsh trust` writes the same entries), matching
//! the hook as it is now (vectors `C1-no-trust-bypass`, recorded `C100-*`).
//! `bypass_hook_trust: true` runs them without review, as Codex's
//! `--dangerously-bypass-hook-trust` (a project must still be trusted); a
//! hook Codex's record turns off (`enabled = false`) never runs. The files
//! `config_path` lists and the manifest's own `hooks` are the operator's
//! choice and run without review.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_hook_protocol::ConfiguredHook;
use dsh_hook_protocol::config::ConfigError;
use dsh_hook_protocol::discovery::{FileCache, project_root, read_confined};
use dsh_hook_protocol::trust::{Skipped, Trust, TrustStore};
use dsh_plugin_api::ConfigProblem;

use crate::config::{CodexHook, Config, FileHooks, parse_file};
use crate::hook_trust::{CodexRecord, HookTrust, hook_hash, hook_key};

/// Which layer a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerSource {
    /// `$CODEX_HOME`.
    User,
    /// A `.codex/` folder of the project.
    Project,
    /// A `config_path` file.
    Explicit,
}

/// A session's hooks as resolved at one moment.
#[derive(Debug, Default)]
pub struct Resolution {
    /// The hooks that run, in Codex's order, numbered across all files.
    pub hooks: Vec<CodexHook>,
    /// The project root it was resolved for.
    pub project: PathBuf,
    /// Project files with hooks that did not run for want of trust.
    pub skipped: Vec<Skipped>,
    /// Hooks of read files that did not run because Codex's record does
    /// not trust them as they are now.
    pub unreviewed: Vec<Unreviewed>,
}

/// A hook that did not run for want of review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreviewed {
    /// Its file.
    pub file: PathBuf,
    /// Its key in Codex's record (`<file>:<event>:<group>:<handler>`).
    pub key: String,
    /// Untrusted or modified.
    pub trust: HookTrust,
}

/// The `.codex/` folders of the session folder `cwd`, project root first,
/// and that root.
pub fn project_dirs(cwd: &Path, markers: &[String], codex_home: &Path) -> (PathBuf, Vec<PathBuf>) {
    let root = project_root(cwd, markers);
    let home = std::fs::canonicalize(codex_home).ok();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in cwd.ancestors() {
        let dot = dir.join(".codex");
        let is_dir = std::fs::metadata(&dot).is_ok_and(|m| m.is_dir());
        let is_home = home.is_some() && std::fs::canonicalize(&dot).ok() == home;
        if is_dir && !is_home {
            dirs.push(dot);
        }
        if dir == root {
            break;
        }
    }
    dirs.reverse();
    (root, dirs)
}

/// The project-level hook files of the session folder `cwd` that exist,
/// and the project root (what `dsh trust` approves for Codex).
pub fn project_files(cwd: &Path, markers: &[String], codex_home: &Path) -> (PathBuf, Vec<PathBuf>) {
    let (root, dirs) = project_dirs(cwd, markers, codex_home);
    let files = dirs
        .iter()
        .flat_map(|d| [d.join("hooks.json"), d.join("config.toml")])
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    (root, files)
}

/// Every hook Codex reviews for a session in `cwd` (those of
/// `$CODEX_HOME`'s `hooks.json` and `config.toml` and of each project
/// `.codex/` from the project root down), whatever their trust now, with
/// the key and hash Codex records for each ([`crate::hook_trust`]); and the
/// files that could not be read or parsed.
pub fn reviewable(
    cwd: &Path,
    markers: &[String],
    codex_home: &Path,
) -> (Vec<(String, String)>, Vec<ConfigError>) {
    let (root, dirs) = project_dirs(cwd, markers, codex_home);
    let mut files: Vec<(PathBuf, Option<PathBuf>)> = ["hooks.json", "config.toml"]
        .iter()
        .map(|f| (codex_home.join(f), None))
        .collect();
    for dir in dirs {
        for f in ["hooks.json", "config.toml"] {
            files.push((dir.join(f), Some(root.clone())));
        }
    }
    let mut reviewed = Vec::new();
    let mut errors = Vec::new();
    for (path, confine) in files {
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let hooks = read_confined(&path, confine.as_deref())
            .and_then(|bytes| crate::config::all_hooks(&path, &bytes));
        match hooks {
            Ok(hooks) => reviewed.extend(
                hooks
                    .iter()
                    .filter_map(|h| Some((hook_key(h), hook_hash(h)?))),
            ),
            Err(e) => errors.push(e),
        }
    }
    (reviewed, errors)
}

/// `$CODEX_HOME`, else `$HOME/.codex`.
pub fn default_codex_home() -> PathBuf {
    match std::env::var_os("CODEX_HOME") {
        Some(home) if !home.is_empty() => PathBuf::from(home),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".codex"),
    }
}

/// Discovery state of one bridge.
pub struct Discovery {
    discover: bool,
    codex_home: PathBuf,
    markers: Vec<String>,
    explicit: Vec<PathBuf>,
    default_timeout_s: u64,
    state_dir: Option<PathBuf>,
    trusted_prefixes: Vec<PathBuf>,
    bypass_hook_trust: bool,
    files: FileCache<FileHooks>,
    /// Codex's trust record (`$CODEX_HOME/config.toml`).
    record: FileCache<CodexRecord>,
    /// The hooks written in the manifest, parsed once: a layer after the
    /// `config_path` files.
    inline: Option<Arc<FileHooks>>,
    /// What is wrong with them.
    inline_problems: Vec<ConfigProblem>,
}

impl Discovery {
    /// Discovery for `config` (paths already absolute); trust is read from
    /// `state_dir` (none: only trusted prefixes are trusted).
    pub fn new(config: &Config, state_dir: Option<PathBuf>) -> Discovery {
        let (inline, inline_problems) = match crate::config::inline_hooks(config) {
            Some(parsed) => (Some(Arc::new(parsed.value)), parsed.problems),
            None => (None, Vec::new()),
        };
        Discovery {
            inline,
            inline_problems,
            discover: config.discover,
            codex_home: config
                .codex_home
                .as_ref()
                .map(PathBuf::from)
                .unwrap_or_else(default_codex_home),
            markers: config.project_root_markers.clone(),
            explicit: config.config_path.paths(),
            default_timeout_s: config.default_timeout_s,
            state_dir,
            trusted_prefixes: config.trusted_prefixes.iter().map(PathBuf::from).collect(),
            bypass_hook_trust: config.bypass_hook_trust,
            files: FileCache::default(),
            record: FileCache::default(),
        }
    }

    /// Whether user and project layers are read.
    pub fn discovers(&self) -> bool {
        self.discover
    }

    /// The explicit files.
    pub fn explicit(&self) -> &[PathBuf] {
        &self.explicit
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
        problems.extend(unreviewed_warnings(
            &resolution.unreviewed,
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

    /// The hooks of a session in `cwd`, as the files are now; what is wrong
    /// with a file that changed goes to `report`.
    pub fn resolve(&self, cwd: &Path, report: &mut dyn FnMut(ConfigProblem)) -> Resolution {
        let mut layers: Vec<(LayerSource, PathBuf, Option<PathBuf>)> = Vec::new();
        let mut root = cwd.to_path_buf();
        if self.discover {
            for f in ["hooks.json", "config.toml"] {
                layers.push((LayerSource::User, self.codex_home.join(f), None));
            }
            let (project, dirs) = project_dirs(cwd, &self.markers, &self.codex_home);
            for dir in dirs {
                for f in ["hooks.json", "config.toml"] {
                    layers.push((LayerSource::Project, dir.join(f), Some(project.clone())));
                }
            }
            root = project;
        }
        for path in &self.explicit {
            layers.push((LayerSource::Explicit, path.clone(), None));
        }
        let store = match &self.state_dir {
            Some(dir) if self.discover => TrustStore::load(dir).unwrap_or_else(|e| {
                report(ConfigProblem::error(
                    "",
                    "",
                    format!("{e}; every project is treated as untrusted"),
                ));
                TrustStore::default()
            }),
            _ => TrustStore::default(),
        };
        let record = self.codex_record();
        let mut resolution = Resolution {
            project: root,
            ..Resolution::default()
        };
        let mut offset = 0;
        for (source, path, confine) in layers {
            let timeout = self.default_timeout_s;
            let state = self.files.get(
                &path,
                confine.as_deref(),
                |p, bytes| parse_file(p, bytes, timeout),
                report,
            );
            let Some((file, hash)) = state.in_effect() else {
                continue;
            };
            if source == LayerSource::Project {
                let trust = match store.status(&path, hash, &self.trusted_prefixes) {
                    Trust::Trusted => Trust::Trusted,
                    _ if record.project_trusted(&resolution.project) => Trust::Trusted,
                    other => other,
                };
                if trust != Trust::Trusted {
                    if file.handlers > 0 {
                        resolution.skipped.push(Skipped { file: path, trust });
                    }
                    continue;
                }
            }
            let reviewed = source != LayerSource::Explicit;
            let mut unreviewed = Vec::new();
            append(&mut resolution.hooks, file, &mut offset, |hook| {
                if !reviewed {
                    return true;
                }
                match record.status(hook) {
                    HookTrust::Trusted => true,
                    HookTrust::Disabled => false,
                    _ if self.bypass_hook_trust => true,
                    trust => {
                        unreviewed.push(Unreviewed {
                            file: path.clone(),
                            key: hook_key(hook),
                            trust,
                        });
                        false
                    }
                }
            });
            resolution.unreviewed.append(&mut unreviewed);
        }
        if let Some(inline) = &self.inline {
            append(&mut resolution.hooks, inline, &mut offset, |_| true);
        }
        resolution
    }

    /// Codex's trust record as it is now (none without discovery, or when
    /// it never read: nothing is reviewed).
    fn codex_record(&self) -> Arc<CodexRecord> {
        if !self.discover {
            return Arc::default();
        }
        let path = self.codex_home.join("config.toml");
        // Its problems are the user layer's, reported with its hooks.
        let state = self
            .record
            .get(&path, None, CodexRecord::parse, &mut |_| {});
        state
            .in_effect()
            .map(|(record, _)| record.clone())
            .unwrap_or_default()
    }
}

/// A warning for each hook left out for want of review, naming what
/// reviews it.
pub fn unreviewed_warnings(unreviewed: &[Unreviewed], project: &Path) -> Vec<ConfigProblem> {
    unreviewed
        .iter()
        .map(|u| {
            ConfigProblem::warning(
                u.file.display().to_string(),
                "",
                format!(
                    "Codex hook `{}` {}; it does not run until it is reviewed (`dsh trust {}`, \
                     or Codex's own review) or the bridge sets `bypass_hook_trust: true`",
                    u.key,
                    u.trust.describe(),
                    project.display()
                ),
            )
        })
        .collect()
}

/// The notice a session's user gets when hooks were left out for want of
/// review.
pub fn unreviewed_notice(project: &Path, unreviewed: &[Unreviewed]) -> String {
    let mut text = String::from(
        "dsh: Codex hooks that were not reviewed did not run (Codex runs a hook only once its \
         trusted_hash in $CODEX_HOME/config.toml matches it):\n",
    );
    for u in unreviewed {
        text.push_str(&format!("  - {} ({})\n", u.key, u.trust.describe()));
    }
    text.push_str(&format!(
        "Review them, then run `dsh trust {}` to let them run from the next turn on.",
        project.display()
    ));
    text
}

fn append(
    hooks: &mut Vec<CodexHook>,
    file: &Arc<FileHooks>,
    offset: &mut usize,
    mut runs: impl FnMut(&ConfiguredHook) -> bool,
) {
    for hook in &file.hooks {
        if !runs(&hook.hook) {
            continue;
        }
        let mut hook = hook.clone();
        hook.display_order += *offset;
        hooks.push(hook);
    }
    *offset += file.handlers;
}
