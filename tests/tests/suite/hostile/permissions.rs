//! Permission settings that must not be taken at face value: a manifest
//! whose `permissions:` block is malformed is refused naming the key, and a
//! session log whose permission records were edited into nonsense resumes
//! without them, keeping the records that still read.

use std::path::Path;

use dsh_tests::{run_dsh, temp_dir};
use serde_json::Value;

const MODEL: &str =
    "  - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n";

fn manifest(dir: &Path, permissions: &str) -> std::path::PathBuf {
    let path = dir.join("cordis.yml");
    std::fs::write(
        &path,
        format!("state_dir: state\nplugins:\n  - name: bash-local\n{MODEL}{permissions}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("script.yml"),
        "- tool_calls: [{name: Bash, arguments: {command: 'touch made.txt'}}]\n- text: done\n",
    )
    .unwrap();
    path
}

#[test]
fn check_refuses_a_malformed_permissions_block_naming_the_key() {
    let cases = [
        (
            "permissions: {mode: yolo}\n",
            "key `permissions.mode`: unknown permission mode `yolo`",
        ),
        (
            "permissions: {mode: Default}\n",
            "key `permissions.mode`: unknown permission mode `Default`",
        ),
        (
            "permissions: {deny: [Read, 'Bash(rm']}\n",
            "key `permissions.deny[1]`: `Bash(rm`: a specifier must end with `)`",
        ),
        (
            "permissions: {allow: ['Bash()']}\n",
            "key `permissions.allow[0]`: `Bash()`: an empty specifier",
        ),
        (
            "permissions: {ask: ['WebFetch(example.com)']}\n",
            "key `permissions.ask[0]`: `WebFetch(example.com)`: a WebFetch rule takes `domain:<host>`",
        ),
        (
            "permissions: {allow: ['../../etc(x)']}\n",
            "key `permissions.allow[0]`: `../../etc(x)`: `../../etc` is not a tool name",
        ),
        ("permissions: {allow: Bash}\n", "permissions.allow"),
        ("permissions: {allowed: [Read]}\n", "allowed"),
        ("permissions: 3\n", "permissions"),
    ];
    for (block, message) in cases {
        let dir = temp_dir();
        let config = manifest(dir.path(), block);
        let out = run_dsh(["check", "--config", config.to_str().unwrap()], dir.path());
        assert_eq!(out.code, Some(1), "{block}: {out:?}");
        assert!(
            out.stderr.contains(&config.display().to_string()) && out.stderr.contains(message),
            "{block}: {}",
            out.stderr
        );
        // Nothing runs under a manifest that does not load.
        let out = run_dsh(
            [
                "prompt",
                "--config",
                config.to_str().unwrap(),
                "--cwd",
                dir.path().to_str().unwrap(),
                "go",
            ],
            dir.path(),
        );
        assert_eq!(out.code, Some(1), "{block}");
        assert!(!dir.path().join("made.txt").exists(), "{block}");
    }
}

#[test]
fn a_log_with_edited_permission_records_resumes_without_the_bad_ones() {
    let dir = temp_dir();
    let d = dir.path();
    let config = manifest(d, "permissions: {mode: default}\n");
    let config = config.to_str().unwrap();
    let cwd = d.to_str().unwrap();
    // A first run creates the session; nothing allows `touch`: refused.
    let out = run_dsh(
        [
            "prompt",
            "--json",
            "--config",
            config,
            "--cwd",
            cwd,
            "--session",
            "s1",
            "go",
        ],
        d,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!d.join("made.txt").exists());
    // Hand-edited records: a mode dsh does not know, a rule that does not
    // parse, a behavior that does not exist, and one good rule.
    let log = d.join("state/sessions/s1.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    for line in [
        r#"{"type":"turn/start","turn_id":"t_edit","kind":"injection","ts":1796129711700}"#,
        r#"{"type":"permission/mode","mode":"yolo","by":"hand","ts":1796129711700}"#,
        r#"{"type":"permission/rule","behavior":"allow","rule":"Bash(","call_id":"x","ts":1796129711700}"#,
        r#"{"type":"permission/rule","behavior":"maybe","rule":"Bash","call_id":"x","ts":1796129711700}"#,
        r#"{"type":"permission/rule","behavior":"allow","rule":"Bash(touch made.txt)","call_id":"x","ts":1796129711700}"#,
        r#"{"type":"turn/end","turn_id":"t_edit","reason":"completed","ts":1796129711700}"#,
    ] {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&log, text).unwrap();
    let out = run_dsh(
        [
            "prompt",
            "--json",
            "--config",
            config,
            "--cwd",
            cwd,
            "--session",
            "s1",
            "go",
        ],
        d,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    // The good rule applies; the mode stayed `default` (the hook-visible
    // mode is the session's, and nothing asked).
    assert!(d.join("made.txt").exists(), "{}", out.stdout);
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events.iter().all(|e| e["type"] != "tool/denied"),
        "{events:#?}"
    );
    assert!(
        out.stderr.contains("unknown permission mode `yolo`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("rule `Bash(`"), "{}", out.stderr);
}
