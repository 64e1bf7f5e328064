//! `dsh check` and `dsh plugins` over the real binary: the default
//! manifest, one line per refusal, JSON output, manifest errors.

use std::path::{Path, PathBuf};

use dsh_tests::artifacts::workspace;
use dsh_tests::{copy_with_mode, example, fixture, run_dsh, temp_dir, workspace_root};
use serde_json::json;

/// Lines with runs of spaces collapsed, so column widths do not matter.
fn tokens(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The repository's `cordis.yml`, pointed at this run's build and a
/// throwaway state directory, written into `dir`.
fn default_manifest(dir: &Path) -> PathBuf {
    let root = workspace_root();
    let original = std::fs::read_to_string(root.join("cordis.yml")).expect("read cordis.yml");
    let text = original
        .replace(
            "target/debug/",
            &format!("{}/", workspace().examples.display()),
        )
        .replace("config/", &format!("{}/config/", root.display()))
        .replace(
            "state_dir: .dsh",
            &format!("state_dir: {}", dir.join("state").display()),
        );
    for rewritten in ["target/debug/", "state_dir: .dsh", " config/"] {
        assert!(
            original.contains(rewritten),
            "cordis.yml no longer has `{rewritten}`"
        );
    }
    let path = dir.join("cordis.yml");
    std::fs::write(&path, text).expect("write the manifest");
    path
}

#[test]
fn check_applies_every_plugin_of_the_default_manifest() {
    let dir = temp_dir();
    let manifest = default_manifest(dir.path());
    let out = run_dsh(
        ["check", "--config", &manifest.display().to_string()],
        dir.path(),
    );
    assert_eq!(
        out.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let examples = workspace().examples.display().to_string();
    assert_eq!(
        tokens(&out.stdout.replace(&examples, "$EXAMPLES")),
        vec![
            "ID SOURCE VERSION STATUS SEAMS / TOOLS / SERVICES",
            "bash-local builtin 0.1.0 applied agent/session-end, agent/model-request, tool:Bash, \
             tool:TaskOutput, tool:TaskStop, service:background-tasks, service:input-check/Bash, \
             service:input-check/TaskOutput, service:input-check/TaskStop, service:process-runner",
            "tools-fs builtin 0.1.0 applied tool:Read, tool:Write, tool:Edit, tool:Glob, tool:Grep, \
             tool:NotebookEdit, service:input-check/Edit, service:input-check/Glob, \
             service:input-check/Grep, service:input-check/NotebookEdit, service:input-check/Read, \
             service:input-check/Write",
            "model builtin 0.1.0 applied service:model",
            "policy-gate $EXAMPLES/libdsh_example_policy_gate.so 0.1.0 applied tools/pre-execute",
            "timeout $EXAMPLES/libdsh_example_timeout.so 0.1.0 applied tools/execute",
            "audit $EXAMPLES/libdsh_example_audit.so 0.1.0 applied tools/result",
        ]
    );
}

/// A manifest with one good plugin and one of every kind of bad one.
fn troubled_manifest(dir: &Path) -> (PathBuf, Vec<(&'static str, PathBuf)>) {
    let text_file = dir.join("x.so");
    std::fs::write(&text_file, "not a library\n").expect("write x.so");
    let bad = vec![
        ("text", text_file),
        ("no-root", fixture("no-root")),
        (
            "writable",
            copy_with_mode(&fixture("delegate"), dir, "libwritable.so", 0o666),
        ),
        ("abi-changed", fixture("abi-changed")),
        ("api-major-2", fixture("api-major-2")),
    ];
    let mut yaml = format!(
        "state_dir: state\nplugins:\n  - {{id: gate, path: {}}}\n",
        example("policy-gate").display()
    );
    for (id, path) in &bad {
        yaml.push_str(&format!("  - {{id: {id}, path: {}}}\n", path.display()));
    }
    let manifest = dir.join("cordis.yml");
    std::fs::write(&manifest, yaml).expect("write the manifest");
    (manifest, bad)
}

/// Checks that `problems` has exactly one line per bad file, naming the
/// plugin, the file and the refusal.
fn assert_one_line_each(problems: &[&str], bad: &[(&str, PathBuf)]) {
    assert_eq!(problems.len(), bad.len(), "{problems:#?}");
    for (id, path) in bad {
        let prefix = format!("plugin `{id}`: {}: refused: ", path.display());
        let matching = problems
            .iter()
            .filter(|p| p.trim_start().starts_with(&prefix))
            .count();
        assert_eq!(matching, 1, "one line for `{id}` in {problems:#?}");
    }
}

#[test]
fn check_prints_one_line_per_refused_file_and_exits_1() {
    let dir = temp_dir();
    let (manifest, bad) = troubled_manifest(dir.path());
    let out = run_dsh(
        ["check", "--config", &manifest.display().to_string()],
        dir.path(),
    );
    assert_eq!(
        out.code,
        Some(1),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let rows = tokens(&out.stdout);
    let gate = format!(
        "gate {} 0.1.0 applied tools/pre-execute",
        example("policy-gate").display()
    );
    assert_eq!(rows[1], gate);
    let lines = out.stdout_lines();
    let header = format!("{} problem(s):", bad.len());
    let at = lines
        .iter()
        .position(|l| *l == header)
        .expect("a problems header");
    assert_one_line_each(&lines[at + 1..], &bad);
}

#[test]
fn plugins_prints_the_table_on_stdout_and_problems_on_stderr() {
    let dir = temp_dir();
    let (manifest, bad) = troubled_manifest(dir.path());
    let out = run_dsh(
        ["plugins", "--config", &manifest.display().to_string()],
        dir.path(),
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stdout_lines().len(),
        1 + 1 + bad.len(),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("refused"), "{}", out.stdout);
    let problems: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("  plugin `"))
        .collect();
    assert_one_line_each(&problems, &bad);
}

#[test]
fn plugins_json_describes_every_plugin() {
    let dir = temp_dir();
    let (manifest, bad) = troubled_manifest(dir.path());
    let out = run_dsh(
        [
            "plugins",
            "--json",
            "--config",
            &manifest.display().to_string(),
        ],
        dir.path(),
    );
    assert_eq!(out.code, Some(1));
    let value: serde_json::Value = serde_json::from_str(&out.stdout).expect("stdout is JSON");
    assert_eq!(value["manifest"], json!(manifest));
    assert_eq!(
        value["plugins"][0],
        json!({
            "id": "gate",
            "source": {"kind": "library", "at": example("policy-gate")},
            "name": "policy-gate",
            "version": "0.1.0",
            "description": "Denies tool calls whose command matches a configured pattern",
            "status": "applied",
            "seams": ["tools/pre-execute"],
            "tools": [],
            "services": [],
        })
    );
    let api2 = &value["plugins"][5];
    assert_eq!(api2["id"], "api-major-2");
    assert_eq!(api2["status"], "failed");
    let reason = format!(
        "{}: refused: built against plugin API 2.0.0, this host speaks {}",
        fixture("api-major-2").display(),
        dsh_plugin_api::API_VERSION
    );
    assert_eq!(api2["reason"], json!(reason));
    assert_eq!(value["problems"].as_array().map(Vec::len), Some(bad.len()));
}

#[test]
fn a_manifest_that_cannot_be_read_or_parsed_is_one_line_and_exit_1() {
    let dir = temp_dir();
    let missing = dir.path().join("nope.yml");
    let out = run_dsh(
        ["check", "--config", &missing.display().to_string()],
        dir.path(),
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        format!(
            "{}: cannot read manifest: No such file or directory (os error 2)\n",
            missing.display()
        )
    );

    let bad = dir.path().join("bad.yml");
    std::fs::write(
        &bad,
        "plugins:\n  - name: model-scripted\n    colour: red\n",
    )
    .expect("write");
    let out = run_dsh(
        ["check", "--config", &bad.display().to_string()],
        dir.path(),
    );
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(&format!("{}: ", bad.display())) && out.stderr.contains("colour")
    );
}
