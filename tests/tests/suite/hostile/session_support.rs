//! What the session tests share: a throwaway project (a manifest with
//! `bash-local` and a scripted model, state under `state/`), the real
//! `dsh` run in it, and a byte-for-byte picture of a folder tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dsh_tests::{Outcome, dsh_command, run, temp_dir};
use serde_json::Value;

/// The longest any one `dsh` command may take here.
pub(super) const DSH_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a process may take to do what the test waits for.
pub(super) const WAIT: Duration = Duration::from_secs(30);

/// A project folder holding `cordis.yml`, `script.yml` and `state/`.
pub(super) struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// `bash-local` and `model-scripted` on `script` (YAML replies).
    pub(super) fn new(script: &str) -> Project {
        Project::with_plugins(script, "")
    }

    /// As [`Project::new`], plus `hooks-claude` running the Claude Code
    /// hooks file `hooks.json` (JSON, written by `hooks`).
    pub(super) fn with_claude_hooks(script: &str, hooks: impl Fn(&Project) -> Value) -> Project {
        let project = Project::with_plugins(
            script,
            "  - name: hooks-claude\n    config: { config_path: hooks.json }\n",
        );
        std::fs::write(project.path("hooks.json"), hooks(&project).to_string())
            .expect("write hooks.json");
        project
    }

    fn with_plugins(script: &str, extra: &str) -> Project {
        let project = Project { dir: temp_dir() };
        project.script(script);
        std::fs::write(
            project.path("cordis.yml"),
            format!(
                "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n{extra}"
            ),
        )
        .expect("write cordis.yml");
        project
    }

    /// Replaces the model's script (each `dsh` process reads it afresh).
    pub(super) fn script(&self, script: &str) {
        std::fs::write(self.path("script.yml"), script).expect("write script.yml");
    }

    /// The project folder.
    pub(super) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `relative` inside the project.
    pub(super) fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// The log of session `id` (an id of dsh's form).
    pub(super) fn log(&self, id: &str) -> PathBuf {
        self.path(&format!("state/sessions/{id}.jsonl"))
    }

    /// `dsh ARGS` run in the project (so `--config` is its `cordis.yml`).
    pub(super) fn command(&self, args: &[&str]) -> Command {
        dsh_command(args, self.root())
    }

    /// Runs `dsh ARGS` in the project to completion.
    pub(super) fn dsh(&self, args: &[&str]) -> Outcome {
        run(self.command(args), DSH_TIMEOUT)
    }

    /// Runs `dsh prompt --session ID TEXT` in the project.
    pub(super) fn prompt(&self, id: &str, text: &str) -> Outcome {
        self.dsh(&["prompt", "--session", id, text])
    }

    /// Session `id`'s log lines as JSON.
    pub(super) fn events(&self, id: &str) -> Vec<Value> {
        std::fs::read_to_string(self.log(id))
            .expect("read the log")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }
}

/// Every file (with its bytes) and folder under `root`, symlinks as such.
pub(super) fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut found = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a folder") {
            let path = entry.expect("a folder entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("stat");
            if meta.is_dir() {
                found.insert(path.clone(), None);
                todo.push(path);
            } else {
                found.insert(path.clone(), Some(std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    found
}

/// `outcome` in full, for assertion messages.
pub(super) fn shown(outcome: &Outcome) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        outcome.code, outcome.stdout, outcome.stderr
    )
}

/// The `type` of each event.
pub(super) fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect()
}
