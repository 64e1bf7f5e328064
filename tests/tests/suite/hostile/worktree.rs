//! Hostile input for the worktree tools (`tools-worktree`), through the
//! real `dsh prompt`, a real git repository and real hooks. What Claude
//! Code records for a WorktreeCreate hook printing a missing path, a file,
//! a relative path, JSON or two lines is in the vectors `S231-create-*`;
//! these two were recorded for this suite (`S236`, `FINDINGS-worktree.md`):
//!
//! - a name Claude Code's check lets through but git refuses as a branch
//!   (`x.lock`): the call fails with git's complaint, the session stays
//!   where it was, and no worktree, folder or branch is left behind;
//! - the worktree deleted under the session (`rm -rf` of the folder it
//!   works in): `ExitWorktree remove` with `discard_changes` still exits,
//!   prunes the registration and deletes the branch, and the session is
//!   back in the project;
//! - WorktreeCreate hooks printing a missing path, a file, a relative one
//!   (the recorded texts, through `dsh prompt`): the call fails, git makes
//!   nothing, the session stays in the project.

use crate::suite::worktree::{git, payloads, prompt, results, site};

#[test]
fn a_name_git_refuses_fails_the_call_and_leaves_nothing_behind() {
    let script = "- tool_calls: [{name: EnterWorktree, arguments: {name: x.lock}}]\n\
                  - tool_calls: [{name: Bash, arguments: {command: pwd}}]\n\
                  - text: done\n";
    let (site, proj, manifest) = site(script, true);
    let requests = prompt(site.path(), &proj, &manifest);
    let results = results(&requests);
    let wt = proj.join(".claude/worktrees/x.lock");
    // Claude Code's text with git's own words (recorded:
    // `S236-name-git-refuses`).
    assert!(
        results[0].starts_with("Failed to create worktree: ")
            && results[0].contains("'worktree-x.lock' is not a valid branch name"),
        "{results:?}"
    );
    assert_eq!(results[1], proj.display().to_string());
    assert!(!wt.exists());
    assert_eq!(
        git(&proj, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    assert!(!git(&proj, &["branch", "--list"]).contains("worktree-"));
    // A failed call: no PostToolUse for it.
    let post = payloads(site.path(), "post.log");
    assert!(
        post.iter().all(|p| p["tool_name"] != "EnterWorktree"),
        "{post:?}"
    );
}

#[test]
fn a_worktree_deleted_under_the_session_is_still_exited_and_pruned() {
    let script = "- tool_calls: [{name: EnterWorktree, arguments: {name: gone}}]\n\
                  - tool_calls: [{name: Bash, arguments: {command: 'rm -rf \"$PWD\" && echo deleted'}}]\n\
                  - tool_calls: [{name: ExitWorktree, arguments: {action: remove, discard_changes: true}}]\n\
                  - tool_calls: [{name: Bash, arguments: {command: pwd}}]\n\
                  - text: done\n";
    let (site, proj, manifest) = site(script, true);
    let requests = prompt(site.path(), &proj, &manifest);
    let results = results(&requests);
    let wt = proj.join(".claude/worktrees/gone");
    assert_eq!(
        results[2],
        format!(
            "Exited and removed worktree at {}. Session is now back in {}.",
            wt.display(),
            proj.display()
        ),
        "{results:?}"
    );
    assert_eq!(results[3], proj.display().to_string());
    assert_eq!(
        git(&proj, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    assert!(!git(&proj, &["branch", "--list"]).contains("worktree-gone"));
    // The project's own files are untouched.
    assert_eq!(
        std::fs::read_to_string(proj.join("tracked.txt")).unwrap(),
        "v1\n"
    );
}

/// Runs `EnterWorktree` (then `Bash pwd`) with a WorktreeCreate hook that
/// prints `printed` (a shell word); the tool results.
fn with_hook_printing(printed: &str) -> (Vec<String>, std::path::PathBuf) {
    let script = "- tool_calls: [{name: EnterWorktree, arguments: {name: h}}]\n\
                  - tool_calls: [{name: Bash, arguments: {command: pwd}}]\n\
                  - text: done\n";
    let (site, proj, manifest) = site(script, true);
    let settings = serde_json::json!({"hooks": {"WorktreeCreate": [{"hooks": [
        {"type": "command", "command": format!("echo {printed}")}]}]}});
    std::fs::write(proj.join(".claude/settings.json"), settings.to_string()).unwrap();
    let requests = prompt(site.path(), &proj, &manifest);
    let results = results(&requests);
    // Whatever the hook said, git made nothing and the session stayed.
    assert_eq!(results[1], proj.display().to_string(), "{results:?}");
    assert!(!proj.join(".claude/worktrees").exists());
    assert_eq!(
        git(&proj, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    (results, proj)
}

#[test]
fn a_hook_printing_a_missing_path_a_file_or_a_relative_path_fails_the_call_as_claude_code() {
    // Recorded texts: `S231-create-missing`, `-file`, `-relative`.
    let (r, proj) = with_hook_printing("/nonexistent/wt");
    assert_eq!(
        r[0],
        format!(
            "ENOENT: no such file or directory, chdir '{}' -> '/nonexistent/wt'",
            proj.display()
        )
    );
    let (r, proj) = with_hook_printing("\"$PWD/tracked.txt\"");
    let file = proj.join("tracked.txt");
    assert_eq!(
        r[0],
        format!(
            "ENOTDIR: not a directory, chdir '{}' -> '{}'",
            proj.display(),
            file.display()
        )
    );
    let (r, _) = with_hook_printing("tracked.txt");
    assert!(r[0].starts_with("ENOTDIR: not a directory"), "{r:?}");
    let (r, proj) = with_hook_printing(".git");
    assert_eq!(
        r[0],
        format!("Path \"{}/.git/.git\" does not exist", proj.display())
    );
}
