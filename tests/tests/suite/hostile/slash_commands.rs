//! Hostile project slash commands through the real `dsh prompt`: a command
//! file that is not UTF-8, one that is a folder, and a prompt that tries
//! to name a file outside `.claude/commands` never reach the model as a
//! command, lose nothing (the prompt goes as typed) and the bad file is
//! named.

use serde_json::Value;

use dsh_tests::{run_dsh, temp_dir};

/// Runs `dsh prompt <prompt>` in a trusted project after `setup`; returns
/// the user's messages of the first request and dsh's stderr.
fn run(prompt: &str, setup: impl FnOnce(&std::path::Path)) -> (Vec<Value>, String) {
    let site = temp_dir();
    let path = |rel: &str| site.path().join(rel);
    std::fs::create_dir_all(path("proj/.claude/commands")).unwrap();
    std::fs::write(path("script.yml"), "- text: ok 0\n- text: ok 1\n").unwrap();
    std::fs::write(
        path("cordis.yml"),
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {script: script.yml, record: requests.jsonl}\n  - name: hooks-claude\n    config: {discover: true, memory: false, home: home, managed_settings: etc/managed.json, trusted_prefixes: [proj]}\n",
    )
    .unwrap();
    setup(&path("proj"));
    let proj = path("proj");
    let manifest = path("cordis.yml");
    let out = run_dsh(
        vec![
            "prompt",
            "--cwd",
            proj.to_str().unwrap(),
            prompt,
            "--config",
            manifest.to_str().unwrap(),
        ],
        site.path(),
    );
    assert_eq!(
        out.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let requests = std::fs::read_to_string(path("requests.jsonl")).unwrap();
    let first: Value = serde_json::from_str(requests.lines().next().unwrap()).unwrap();
    let users = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" && m.get("source").is_none())
        .map(|m| m["content"].clone())
        .collect();
    (users, out.stderr)
}

#[test]
fn a_command_file_that_is_not_utf8_is_named_and_the_prompt_goes_as_typed() {
    let (users, stderr) = run("/hello world", |proj| {
        std::fs::write(proj.join(".claude/commands/hello.md"), [0xff, 0xfe, b'x']).unwrap();
    });
    assert_eq!(users, [Value::from("/hello world")]);
    assert!(
        stderr.contains("/proj/.claude/commands/hello.md is not UTF-8"),
        "{stderr}"
    );
}

#[test]
fn a_command_file_that_is_a_folder_is_no_command() {
    let (users, _) = run("/hello world", |proj| {
        std::fs::create_dir_all(proj.join(".claude/commands/hello.md")).unwrap();
    });
    assert_eq!(users, [Value::from("/hello world")]);
}

#[test]
fn a_prompt_naming_a_path_outside_the_commands_folder_is_no_command() {
    let (users, _) = run("/../../secret world", |proj| {
        std::fs::write(proj.join("secret.md"), "MARK_SECRET $ARGUMENTS\n").unwrap();
    });
    assert_eq!(users, [Value::from("/../../secret world")]);
}
