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
//! Trust: Codex loads a project's `.codex/` only in a trusted project
//! (recorded: `C1-project-hooks-json` needed `--trust`; without it Codex
//! warns "Untrusted project-local configuration is disabled"), and keeps a
//! hash per hook so a changed hook is untrusted again. dsh records the
//! approval per project in its state folder with a hash per file
//! ([`dsh_hook_protocol::trust`], `dsh trust`). Codex also wants user
//! hooks approved (vector `C1-no-trust-bypass`); dsh runs the user and
//! explicit layers as the manifest's author configured them, as Codex does
//! with `--dangerously-bypass-hook-trust` (which every recorded run used).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_hook_protocol::discovery::{FileCache, project_root};
use dsh_hook_protocol::trust::{Skipped, Trust, TrustStore};
use dsh_plugin_api::ConfigProblem;

use crate::config::{CodexHook, Config, FileHooks, parse_file};

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
    files: FileCache<FileHooks>,
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
            files: FileCache::default(),
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
                let trust = store.status(&path, hash, &self.trusted_prefixes);
                if trust != Trust::Trusted {
                    if file.handlers > 0 {
                        resolution.skipped.push(Skipped { file: path, trust });
                    }
                    continue;
                }
            }
            append(&mut resolution.hooks, file, &mut offset);
        }
        if let Some(inline) = &self.inline {
            append(&mut resolution.hooks, inline, &mut offset);
        }
        resolution
    }
}

fn append(hooks: &mut Vec<CodexHook>, file: &Arc<FileHooks>, offset: &mut usize) {
    for hook in &file.hooks {
        let mut hook = hook.clone();
        hook.display_order += *offset;
        hooks.push(hook);
    }
    *offset += file.handlers;
}
