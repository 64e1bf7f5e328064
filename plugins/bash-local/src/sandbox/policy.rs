//! What a sandbox mode lets a command write: Codex's writable roots and
//! the subpaths that stay read-only under them.
//!
//! As Codex 0.171 computes them (`SandboxPolicy::get_writable_roots_with_cwd`
//! in codex-rs): `read-only` has none; `workspace-write` has the configured
//! `writable_roots`, then the policy's cwd (the session's), then `/tmp`
//! (when it is a folder, unless `exclude_slash_tmp`), then `$TMPDIR`
//! (unless `exclude_tmpdir_env_var`). Under each root, `.git` (a folder,
//! or a `gitdir:` pointer file together with the folder it points to),
//! `.agents`, `.aws` and `.codex` (folders) stay read-only, so a command
//! cannot plant a git hook, rewrite the agent's own configuration or its
//! cloud credentials (C110a: `.git` refused). Where one of the four is
//! missing, Codex 0.171 shows an empty read-only folder in its place
//! (C110d, C140: a tmpfs, mode 555), so a command cannot create it either:
//! [`missing_protected`] names those places. Pure code over the file
//! system's current state; the mounts are `mount.rs`'s, the folders made
//! on disk for them `masks.rs`'s.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Codex's sandbox modes (`sandbox_mode`, `codex exec -s`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// The whole file system is read-only; no network.
    ReadOnly,
    /// The cwd, `/tmp`, `$TMPDIR` and `writable_roots` are writable, the rest
    /// read-only; network only with `network_access`.
    WorkspaceWrite,
    /// No sandbox: what dsh does without one (the default).
    #[default]
    DangerFullAccess,
}

impl SandboxMode {
    /// The mode's name as Codex spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }

    /// Parses Codex's spelling.
    pub fn parse(text: &str) -> Option<SandboxMode> {
        match text {
            "read-only" => Some(SandboxMode::ReadOnly),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "danger-full-access" => Some(SandboxMode::DangerFullAccess),
            _ => None,
        }
    }
}

/// Codex's `[sandbox_workspace_write]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceWrite {
    /// More folders the command may write, beyond the cwd and the temp
    /// folders (absolute paths; each must exist).
    pub writable_roots: Vec<PathBuf>,
    /// Let the command reach the network (off by default, as in Codex).
    pub network_access: bool,
    /// Leave `$TMPDIR` read-only.
    pub exclude_tmpdir_env_var: bool,
    /// Leave `/tmp` read-only.
    pub exclude_slash_tmp: bool,
}

/// One writable folder and what stays read-only under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableRoot {
    /// The folder.
    pub root: PathBuf,
    /// Paths under it that stay read-only (existing ones only).
    pub read_only_subpaths: Vec<PathBuf>,
}

/// The writable roots of `workspace-write` for a session in `cwd`, in
/// Codex's order. `tmpdir` is the command's `$TMPDIR`.
pub fn writable_roots(
    settings: &WorkspaceWrite,
    cwd: &Path,
    tmpdir: Option<&Path>,
) -> Vec<WritableRoot> {
    let mut roots: Vec<PathBuf> = settings.writable_roots.clone();
    roots.push(cwd.to_path_buf());
    let slash_tmp = Path::new("/tmp");
    if !settings.exclude_slash_tmp && slash_tmp.is_dir() {
        roots.push(slash_tmp.to_path_buf());
    }
    if !settings.exclude_tmpdir_env_var
        && let Some(tmpdir) = tmpdir.filter(|t| !t.as_os_str().is_empty())
    {
        roots.push(tmpdir.to_path_buf());
    }
    let mut seen = std::collections::BTreeSet::new();
    roots
        .into_iter()
        .filter(|r| seen.insert(r.clone()))
        .map(|root| WritableRoot {
            read_only_subpaths: read_only_subpaths(&root),
            root,
        })
        .collect()
}

/// `.git` (and the folder a `gitdir:` pointer names), `.agents`, `.aws`,
/// `.codex` under `root`, those that exist.
pub fn read_only_subpaths(root: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let git = root.join(".git");
    if git.is_file() {
        if let Some(gitdir) = gitdir_of(&git) {
            paths.push(gitdir);
        }
        paths.push(git);
    } else if git.is_dir() {
        paths.push(git);
    }
    for name in [".agents", ".aws", ".codex"] {
        let dir = root.join(name);
        if dir.is_dir() {
            paths.push(dir);
        }
    }
    paths
}

/// The protected names in the order Codex mounts its masks (C140a's
/// `/proc/self/mountinfo`).
pub const PROTECTED_NAMES: [&str; 4] = [".git", ".agents", ".codex", ".aws"];

/// Where `workspace-write` shows an empty read-only folder (a mask): each
/// of [`PROTECTED_NAMES`] under each writable root (that exists) where
/// nothing of that name exists, of any type (a `.git` file is protected
/// as itself, C140b). In roots' order, then Codex's order of names.
pub fn missing_protected(roots: &[WritableRoot]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter(|r| r.root.is_dir())
        .flat_map(|r| PROTECTED_NAMES.iter().map(|name| r.root.join(name)))
        .filter(|path| {
            matches!(
                std::fs::symlink_metadata(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound
            )
        })
        .collect()
}

/// The folder a `.git` file's `gitdir: <path>` line points to (relative
/// to the file's folder), when it exists.
fn gitdir_of(dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let (_, raw) = text.trim().split_once(':')?;
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    let path = dot_git.parent()?.join(raw);
    path.exists().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_write_roots_are_codexs_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("proj");
        let extra = dir.path().join("extra");
        let real_git = dir.path().join("wt-git");
        for d in [&project, &extra, &real_git, &project.join(".codex")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(project.join(".git"), "gitdir: ../wt-git\n").expect("write");
        // A `.agents` file, not a folder: not protected.
        std::fs::write(project.join(".agents"), "").expect("write");
        let settings = WorkspaceWrite {
            writable_roots: vec![extra.clone()],
            ..WorkspaceWrite::default()
        };
        let tmpdir = dir.path().join("tmpdir");
        let roots = writable_roots(&settings, &project, Some(&tmpdir));
        let names: Vec<&Path> = roots.iter().map(|r| r.root.as_path()).collect();
        assert_eq!(
            names,
            vec![
                extra.as_path(),
                project.as_path(),
                Path::new("/tmp"),
                tmpdir.as_path()
            ]
        );
        assert_eq!(
            roots[1].read_only_subpaths,
            vec![
                project.join("../wt-git"),
                project.join(".git"),
                project.join(".codex")
            ]
        );
        let excluded = WorkspaceWrite {
            exclude_slash_tmp: true,
            exclude_tmpdir_env_var: true,
            ..WorkspaceWrite::default()
        };
        let roots = writable_roots(&excluded, &project, Some(&tmpdir));
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0].root, project);
    }

    #[test]
    fn only_missing_names_under_existing_roots_are_masked() {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(project.join(".aws")).expect("mkdir");
        // A `.git` pointer file and a dangling `.agents` link exist: not
        // masked.
        std::fs::write(project.join(".git"), "gitdir: ../nowhere\n").expect("write");
        std::os::unix::fs::symlink("missing", project.join(".agents")).expect("symlink");
        let roots = [
            WritableRoot {
                root: project.clone(),
                read_only_subpaths: Vec::new(),
            },
            WritableRoot {
                root: dir.path().join("absent"),
                read_only_subpaths: Vec::new(),
            },
        ];
        assert_eq!(missing_protected(&roots), vec![project.join(".codex")]);
        std::fs::remove_file(project.join(".git")).expect("rm");
        assert_eq!(
            missing_protected(&roots),
            vec![project.join(".git"), project.join(".codex")]
        );
    }

    #[test]
    fn modes_parse_as_codex_spells_them() {
        for mode in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::DangerFullAccess,
        ] {
            assert_eq!(SandboxMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(SandboxMode::parse("readonly"), None);
    }
}
