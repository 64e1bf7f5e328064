//! Claude Code's worktree tools through the real `dsh prompt` (recorded
//! S230-S235): with `tools-worktree` in the manifest the model is offered
//! `EnterWorktree` and `ExitWorktree` (Claude Code's schemas), the first
//! makes a real git worktree at `.claude/worktrees/<name>` on branch
//! `worktree-<name>` and moves the session there (the next `Bash` and the
//! hooks run in it, no CwdChanged fires), `ExitWorktree remove` deletes the
//! worktree and its branch and moves the session back. A manifest without
//! `tools-worktree` offers neither tool.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use dsh_tests::{run_dsh, temp_dir};

/// `git args` in `dir`, with a fixed identity and no user config; its
/// stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A site: `proj/` a git repository with one commit, hooks that log
/// PostToolUse and CwdChanged payloads, and a manifest (with
/// `tools-worktree` when `worktree_tools`) whose scripted model answers
/// `script` (YAML). Returns the site, `proj` and the manifest.
pub fn site(script: &str, worktree_tools: bool) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let site = temp_dir();
    let path = |rel: &str| site.path().join(rel);
    let write = |rel: &str, text: &str| {
        let p = path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("script.yml", script);
    let tools = if worktree_tools {
        "  - name: tools-worktree\n"
    } else {
        ""
    };
    write(
        "cordis.yml",
        &format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {{script: script.yml, record: requests.jsonl}}\n  - name: hooks-claude\n    config: {{discover: true, memory: false, home: home, managed_settings: etc/managed.json, trusted_prefixes: [proj]}}\n{tools}"
        ),
    );
    let hook = |log: &str| {
        serde_json::json!([{"hooks": [
            {"type": "command", "command": format!("cat >> '{}'; echo >> '{}'", path(log).display(), path(log).display())}]}])
    };
    let settings = serde_json::json!({"hooks": {
        "PostToolUse": hook("post.log"),
        "CwdChanged": hook("cwd.log"),
    }});
    write("proj/.claude/settings.json", &settings.to_string());
    write("proj/tracked.txt", "v1\n");
    let proj = path("proj");
    git(&proj, &["init", "-q", "-b", "main"]);
    git(&proj, &["add", "tracked.txt"]);
    git(&proj, &["commit", "-q", "-m", "first"]);
    let manifest = path("cordis.yml");
    (site, proj, manifest)
}

/// Runs `dsh prompt go` in `proj`; every request the model got.
pub fn prompt(site: &Path, proj: &Path, manifest: &Path) -> Vec<Value> {
    let out = run_dsh(
        vec![
            "prompt",
            "--cwd",
            proj.to_str().unwrap(),
            "go",
            "--config",
            manifest.to_str().unwrap(),
        ],
        site,
    );
    assert_eq!(
        out.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    std::fs::read_to_string(site.join("requests.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The JSON lines of a hook log (empty when no hook wrote it).
pub fn payloads(site: &Path, log: &str) -> Vec<Value> {
    std::fs::read_to_string(site.join(log))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The tool results (`role: tool`) of the last request, in order.
pub fn results(requests: &[Value]) -> Vec<String> {
    requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn enter_worktree_makes_a_git_worktree_the_session_works_in_and_exit_removes_it() {
    let script = "- tool_calls: [{name: EnterWorktree, arguments: {name: e2e}}]\n\
                  - tool_calls: [{name: Bash, arguments: {command: 'pwd; git rev-parse --abbrev-ref HEAD'}}]\n\
                  - tool_calls: [{name: ExitWorktree, arguments: {action: remove}}]\n\
                  - tool_calls: [{name: Bash, arguments: {command: pwd}}]\n\
                  - text: done\n";
    let (site, proj, manifest) = site(script, true);
    let requests = prompt(site.path(), &proj, &manifest);
    let names = tool_names(&requests[0]);
    assert!(
        names.contains(&"EnterWorktree".to_string()) && names.contains(&"ExitWorktree".to_string()),
        "{names:?}"
    );
    let enter = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "EnterWorktree")
        .unwrap();
    assert_eq!(
        enter["input_schema"]["properties"]["name"]["type"],
        "string"
    );
    let wt = proj.join(".claude/worktrees/e2e");
    let results = results(&requests);
    assert_eq!(
        results,
        [
            format!(
                "Created worktree at {} on branch worktree-e2e. The session is now working in the worktree. Use ExitWorktree to leave mid-session, or exit the session to be prompted.",
                wt.display()
            ),
            format!("{}\nworktree-e2e", wt.display()),
            format!(
                "Exited and removed worktree at {}. Session is now back in {}.",
                wt.display(),
                proj.display()
            ),
            proj.display().to_string(),
        ]
    );
    // Removed for real: folder, registration and branch.
    assert!(!wt.exists());
    assert_eq!(
        git(&proj, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    assert!(!git(&proj, &["branch", "--list"]).contains("worktree-e2e"));
    // The hooks ran where the session was; no CwdChanged for these moves.
    let post = payloads(site.path(), "post.log");
    let cwds: Vec<(&str, &str)> = post
        .iter()
        .map(|p| (p["tool_name"].as_str().unwrap(), p["cwd"].as_str().unwrap()))
        .collect();
    let (w, p) = (wt.to_str().unwrap(), proj.to_str().unwrap());
    assert_eq!(
        cwds,
        [
            ("EnterWorktree", w),
            ("Bash", w),
            ("ExitWorktree", p),
            ("Bash", p)
        ]
    );
    assert_eq!(
        post[0]["tool_response"]["worktreeBranch"], "worktree-e2e",
        "{}",
        post[0]
    );
    assert!(payloads(site.path(), "cwd.log").is_empty());
}

#[test]
fn a_manifest_without_tools_worktree_offers_neither_tool() {
    let (site, proj, manifest) = site("- text: done\n", false);
    let requests = prompt(site.path(), &proj, &manifest);
    let names = tool_names(&requests[0]);
    assert!(names.contains(&"Bash".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("Worktree")), "{names:?}");
}
