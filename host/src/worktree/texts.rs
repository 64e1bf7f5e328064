//! What the model reads from the worktree tools: Claude Code 2.1.197's
//! texts, byte for byte (vectors `S230-*` to `S235-*`). Refusals made while
//! the input is checked (before any hook) are wrapped in
//! `<tool_use_error>`; failures of the call itself are plain.

use std::path::Path;

/// `n` things, Claude Code's way: `1 commit`, `2 commits`.
fn count(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn d(p: &Path) -> std::borrow::Cow<'_, str> {
    p.to_string_lossy()
}

const NOW_IN: &str = "The session is now working in the worktree. Use ExitWorktree to leave \
    mid-session, or exit the session to be prompted.";

/// `EnterWorktree` made a worktree (`branch`: git made it).
pub fn created(path: &Path, branch: Option<&str>) -> String {
    match branch {
        Some(b) => format!("Created worktree at {} on branch {b}. {NOW_IN}", d(path)),
        None => format!("Created worktree at {}. {NOW_IN}", d(path)),
    }
}

/// `EnterWorktree` with `path` entered a worktree that was there.
pub fn entered(path: &Path, branch: &str) -> String {
    format!(
        "Entered worktree at {} on branch {branch}. {NOW_IN}",
        d(path)
    )
}

/// `ExitWorktree keep`.
pub fn kept(path: &Path, branch: Option<&str>, original: &Path) -> String {
    let on = branch
        .map(|b| format!(" on branch {b}"))
        .unwrap_or_default();
    format!(
        "Exited worktree. Your work is preserved at {}{on}. Session is now back in {}.",
        d(path),
        d(original)
    )
}

/// `ExitWorktree remove` that removed it, with what it discarded.
pub fn removed(path: &Path, files: u64, commits: u64, original: &Path) -> String {
    let discarded = match (commits, files) {
        (0, 0) => String::new(),
        (0, f) => format!(" Discarded {}.", count(f, "uncommitted file")),
        (c, 0) => format!(" Discarded {}.", count(c, "commit")),
        (c, f) => format!(
            " Discarded {} and {}.",
            count(c, "commit"),
            count(f, "uncommitted file")
        ),
    };
    format!(
        "Exited and removed worktree at {}.{discarded} Session is now back in {}.",
        d(path),
        d(original)
    )
}

/// `ExitWorktree remove` whose removal failed (a WorktreeRemove hook
/// that failed, `S231-remove-exit1`).
pub fn not_removed(path: &Path, original: &Path) -> String {
    format!(
        "Exited worktree but could not remove it \u{2014} kept at {}. Session is now back in {}.",
        d(path),
        d(original)
    )
}

const CONFIRM: &str = "Removing will discard this work permanently. Confirm with the user, then \
    re-invoke with discard_changes: true \u{2014} or use action: \"keep\" to preserve the worktree.";

/// Refused: changes the removal would lose.
pub fn has_changes(files: u64, commits: u64, branch: &str) -> String {
    let what = match (files, commits) {
        (f, 0) => count(f, "uncommitted file"),
        (0, c) => format!("{} on {branch}", count(c, "commit")),
        (f, c) => format!(
            "{} and {} on {branch}",
            count(f, "uncommitted file"),
            count(c, "commit")
        ),
    };
    format!("<tool_use_error>Worktree has {what}. {CONFIRM}</tool_use_error>")
}

/// Refused: the worktree's state cannot be read (not a git folder).
pub fn unverifiable(path: &Path) -> String {
    format!(
        "<tool_use_error>Could not verify worktree state at {}. Refusing to remove without \
         explicit confirmation. Re-invoke with discard_changes: true to proceed \u{2014} or use \
         action: \"keep\" to preserve the worktree.</tool_use_error>",
        d(path)
    )
}

/// Refused: `remove` of a worktree entered with `path`.
pub fn not_ours(path: &Path, original: &Path) -> String {
    format!(
        "<tool_use_error>This session entered an existing worktree ({}); it was not created by \
         EnterWorktree, so this tool will not remove it. Use action: \"keep\" to return to {}, \
         then remove the worktree manually with `git worktree remove` if desired.</tool_use_error>",
        d(path),
        d(original)
    )
}

/// Refused: `ExitWorktree` with no worktree entered.
pub const NOTHING_TO_EXIT: &str = "<tool_use_error>No-op: there is no active EnterWorktree \
    session to exit. This tool only operates on worktrees created by EnterWorktree in the current \
    session \u{2014} it will not touch worktrees created manually or in a previous session. No \
    filesystem changes were made.</tool_use_error>";

/// Refused: a new worktree while in one.
pub const ALREADY_IN: &str = "<tool_use_error>Already in a worktree session. Pass `path` to \
    switch into another existing worktree, or use ExitWorktree to leave this one before creating \
    a new worktree.</tool_use_error>";

/// Failed: no git and no WorktreeCreate hook.
pub const NOT_GIT: &str = "Cannot create a worktree: not in a git repository and no \
    WorktreeCreate hooks are configured. Configure WorktreeCreate/WorktreeRemove hooks in \
    settings.json to use worktree isolation with other VCS systems.";

/// Failed: git could not make the worktree (its folder is there).
pub fn cannot_reuse(name: &str, path: &Path, git_said: &str) -> String {
    let p = d(path);
    format!(
        "worktree \"{name}\" already exists at {p} but cannot be reused ({git_said}). Remove that \
         directory (`git worktree remove {p}` if it's a registered worktree, or `rm -rf {p}` if \
         it's a stray directory) or pass a different --worktree name."
    )
}

/// Failed: git refused to make the worktree (a name it takes for no
/// branch name, `S236-name-git-refuses`).
pub fn create_failed(git_said: &str) -> String {
    format!("Failed to create worktree: {git_said}")
}

/// Failed: `path` is the main working tree.
pub fn main_tree(given: &str) -> String {
    format!("Cannot enter worktree: {given} is the main working tree, not a linked worktree.")
}

/// Failed: `path` is no worktree of the repository.
pub fn unregistered(given: &str, root: &Path) -> String {
    let r = d(root);
    format!(
        "Cannot enter worktree: {given} is not a registered worktree of {r}. Run 'git -C {r} \
         worktree list' to see registered worktrees."
    )
}

/// Failed: `path` does not exist.
pub fn missing_path(given: &str, resolved: &Path) -> String {
    format!(
        "Cannot enter worktree: {given}: ENOENT: no such file or directory, lstat '{}'",
        d(resolved)
    )
}

/// Failed: the WorktreeCreate hooks named a folder that is not there
/// (`S231-create-missing`, `-two-lines`, `-json`).
pub fn hook_path_missing(cwd: &Path, path: &str) -> String {
    format!(
        "ENOENT: no such file or directory, chdir '{}' -> '{path}'",
        d(cwd)
    )
}

/// Failed: the hooks named a regular file (`S231-create-file`).
pub fn hook_path_not_dir(cwd: &Path, path: &str) -> String {
    format!("ENOTDIR: not a directory, chdir '{}' -> '{path}'", d(cwd))
}

/// Failed: the folder the hooks named, resolved a second time from itself,
/// is not there (a relative one, `S231-create-relative`).
pub fn hook_path_relative(resolved: &Path) -> String {
    format!("Path \"{}\" does not exist", d(resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_recorded() {
        let p = Path::new("/w");
        let o = Path::new("/o");
        assert_eq!(
            removed(p, 1, 2, o),
            "Exited and removed worktree at /w. Discarded 2 commits and 1 uncommitted file. Session is now back in /o."
        );
        assert_eq!(
            removed(p, 0, 0, o),
            "Exited and removed worktree at /w. Session is now back in /o."
        );
        assert!(has_changes(1, 2, "worktree-x").starts_with(
            "<tool_use_error>Worktree has 1 uncommitted file and 2 commits on worktree-x. Removing"
        ));
        assert!(has_changes(0, 1, "b").contains("Worktree has 1 commit on b."));
        assert!(has_changes(2, 0, "b").contains("Worktree has 2 uncommitted files."));
    }
}
