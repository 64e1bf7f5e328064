//! What the worktree vectors (`S230-*` to `S235-*`) need besides the
//! common setup: the recorded git repository made again (`git_repo`: the
//! recorder's recipe, fixed identity and dates, so the commit ids Bash
//! prints match), files the recording made in the run folder outside the
//! project (`run_files`: a folder a WorktreeCreate hook names, a regular
//! file), and the `tools-worktree` built-in when the model calls its tools.

use dsh_hook_protocol::vectors::{Sandbox, Vector};
use serde_json::json;

use crate::support::Load;

/// Makes the vector's git repository and run files.
pub fn setup(v: &Vector, sb: &Sandbox) {
    if let Some(files) = v.json["run_files"].as_object() {
        for (rel, text) in files {
            let path = sb.run().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, sb.subst(text.as_str().unwrap_or_default())).unwrap();
        }
    }
    let recipe = &v.json["git_repo"];
    if recipe.is_null() {
        return;
    }
    let project = sb.run().join("proj");
    let steps = std::iter::once(&recipe["init"]).chain(recipe["then"].as_array().unwrap());
    for step in steps {
        let argv: Vec<&str> = step
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let mut cmd = std::process::Command::new(argv[0]);
        cmd.args(&argv[1..]).current_dir(&project);
        // Only the recipe's identity and dates: no user or system config.
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        for (k, x) in recipe["env"].as_object().unwrap() {
            cmd.env(k, x.as_str().unwrap());
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}: {argv:?}: {}",
            v.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `tools-worktree` when the model calls `EnterWorktree` or `ExitWorktree`.
pub fn tools(v: &Vector) -> Option<Load> {
    let uses = v.json["model_script"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| {
            matches!(
                r["tool_use"]["name"].as_str(),
                Some("EnterWorktree" | "ExitWorktree")
            )
        });
    uses.then(|| Load::builtin("tools-worktree", "tools-worktree", json!({})))
}
