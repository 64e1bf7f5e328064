//! The git commands the worktree tools run, each a real `git` process
//! started through the `process-runner` service (`bash-local`), never by
//! the host itself (ARCHITECTURE.md §2).

use std::path::{Path, PathBuf};

use dsh_plugin_api::Host;
use dsh_plugin_api::services::process_runner::{METHOD_RUN, RunAnswer, RunRequest, SERVICE};

/// A git command that did not run or did not succeed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GitError {
    /// The runner could not start it (or is not mounted).
    #[error("git could not be run: {0}")]
    Spawn(String),
    /// It ran and failed; what it printed on stderr, trimmed.
    #[error("{0}")]
    Failed(String),
}

/// How long one git command may take.
const TIMEOUT_MS: u64 = 60_000;

/// Runs `git args...` in `cwd`; its stdout when it exits 0.
pub async fn git(host: &Host, cwd: &Path, args: &[&str]) -> Result<String, GitError> {
    let mut program = vec!["git".to_string()];
    program.extend(args.iter().map(|a| a.to_string()));
    let mut request = RunRequest::new(program, cwd);
    request.timeout_ms = Some(TIMEOUT_MS);
    // Git prints for a person in the user's language otherwise.
    request = request.with_env("LC_ALL", "C");
    let args = serde_json::to_value(&request).map_err(|e| GitError::Spawn(e.to_string()))?;
    let answer = host
        .call_service(SERVICE, METHOD_RUN, &args)
        .await
        .map_err(GitError::Spawn)?;
    let answer: RunAnswer =
        serde_json::from_value(answer).map_err(|e| GitError::Spawn(e.to_string()))?;
    if let Some(e) = answer.spawn_error {
        return Err(GitError::Spawn(e));
    }
    if answer.exit_code != Some(0) {
        return Err(GitError::Failed(answer.stderr.trim().to_string()));
    }
    Ok(answer.stdout)
}

/// One entry of `git worktree list --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its folder.
    pub path: PathBuf,
    /// Its branch, without `refs/heads/` (`None`: detached).
    pub branch: Option<String>,
}

/// The worktrees of the repository `cwd` is in, the main one first.
pub async fn worktrees(host: &Host, cwd: &Path) -> Result<Vec<Listed>, GitError> {
    let out = git(host, cwd, &["worktree", "list", "--porcelain"]).await?;
    let mut list = Vec::new();
    for block in out.split("\n\n") {
        let mut path = None;
        let mut branch = None;
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(b) = line.strip_prefix("branch ") {
                branch = Some(b.strip_prefix("refs/heads/").unwrap_or(b).to_string());
            }
        }
        if let Some(path) = path {
            list.push(Listed { path, branch });
        }
    }
    Ok(list)
}

/// What removing the worktree at `path` would lose: uncommitted files
/// (`git status --porcelain` lines, untracked ones included) and commits
/// since `base` (`None`: not counted). `Err`: git cannot read the folder.
pub async fn changes(host: &Host, path: &Path, base: Option<&str>) -> Result<(u64, u64), GitError> {
    let status = git(host, path, &["status", "--porcelain"]).await?;
    let files = status.lines().filter(|l| !l.trim().is_empty()).count() as u64;
    let commits = match base {
        Some(base) => git(
            host,
            path,
            &["rev-list", "--count", &format!("{base}..HEAD")],
        )
        .await?
        .trim()
        .parse::<u64>()
        .unwrap_or(0),
        None => 0,
    };
    Ok((files, commits))
}
