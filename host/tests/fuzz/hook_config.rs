//! Hook files as both bridges load them: any bytes, and near-valid files.
//!
//! Loading never panics: a bad file is warnings and fewer hooks. A well-formed
//! file round-trips: every command handler on a known event is loaded, in
//! file order, with its command.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::answers::json_value;

const KNOWN: &[&str] = &["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"];

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

type Commands = Vec<(String, String)>;

fn load_claude(path: String) -> (usize, Commands) {
    let loaded = dsh_hooks_claude::config::load(&dsh_hooks_claude::Config {
        config_path: dsh_hooks_claude::ConfigPaths::One(path),
        ..Default::default()
    });
    let commands = loaded
        .hooks
        .iter()
        .map(|h| (h.hook.event.clone(), h.hook.command.clone()))
        .collect();
    (loaded.problems.len(), commands)
}

fn load_codex(path: String) -> (usize, Commands) {
    let loaded = dsh_hooks_codex::config::load(&dsh_hooks_codex::Config {
        config_path: dsh_hooks_codex::ConfigPaths::One(path),
        model: "m".into(),
        ..Default::default()
    });
    let commands = loaded
        .hooks
        .iter()
        .map(|h| (h.hook.event.clone(), h.hook.command.clone()))
        .collect();
    (loaded.problems.len(), commands)
}

/// A file shaped like a hooks file, with any value anywhere.
fn near_valid() -> impl Strategy<Value = Value> {
    let handler = prop_oneof![
        ".{0,12}".prop_map(|c| json!({"type": "command", "command": c})),
        (".{0,12}", json_value())
            .prop_map(|(c, t)| json!({"type": "command", "command": c, "timeout": t})),
        json_value(),
    ];
    let group = (
        prop::option::of(json_value()),
        prop::collection::vec(handler, 0..3),
    )
        .prop_map(|(m, hooks)| {
            let mut g = json!({ "hooks": hooks });
            if let Some(m) = m {
                g["matcher"] = m;
            }
            g
        });
    let groups = prop_oneof![
        4 => prop::collection::vec(group, 0..3).prop_map(Value::from),
        1 => json_value(),
    ];
    let event = prop_oneof![
        prop::sample::select(KNOWN.to_vec()).prop_map(String::from),
        ".{0,10}"
    ];
    prop::collection::btree_map(event, groups, 0..4)
        .prop_map(|m| json!({ "hooks": Value::Object(m.into_iter().collect()) }))
}

/// A valid file and the `(event, command)`s it holds, in order.
fn valid() -> impl Strategy<Value = (Value, Commands)> {
    let group = prop::collection::vec("[a-z][a-z ]{0,10}", 1..3);
    prop::collection::btree_map(
        prop::sample::select(KNOWN.to_vec()),
        prop::collection::vec(group, 1..3),
        1..4,
    )
    .prop_map(|events| {
        let mut expected = Vec::new();
        let mut out = serde_json::Map::new();
        for (event, groups) in events {
            let groups: Vec<Value> = groups
                .into_iter()
                .map(|commands| {
                    // Unique, so no CLI's de-duplication applies.
                    let mut unique = Vec::new();
                    for c in commands {
                        let c = format!("{c} #{}", expected.len());
                        expected.push((event.to_string(), c.clone()));
                        unique.push(c);
                    }
                    let commands = unique;
                    let hooks: Vec<Value> = commands
                        .iter()
                        .map(|c| json!({"type": "command", "command": c}))
                        .collect();
                    json!({"matcher": "", "hooks": hooks})
                })
                .collect();
            out.insert(event.to_string(), Value::from(groups));
        }
        (json!({ "hooks": out }), expected)
    })
}

#[test]
fn any_bytes_load_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    proptest!(|(bytes in prop::collection::vec(any::<u8>(), 0..512))| {
        let _ = load_claude(write(dir.path(), "settings.json", &bytes));
        let _ = load_codex(write(dir.path(), "hooks.json", &bytes));
        let _ = load_codex(write(dir.path(), "config.toml", &bytes));
    });
}

#[test]
fn near_valid_files_load_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    proptest!(|(file in near_valid())| {
        let text = file.to_string();
        let _ = load_claude(write(dir.path(), "settings.json", text.as_bytes()));
        let _ = load_codex(write(dir.path(), "hooks.json", text.as_bytes()));
    });
}

#[test]
fn valid_files_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    proptest!(|((file, expected) in valid())| {
        let text = file.to_string();
        let (problems, commands) = load_claude(write(dir.path(), "settings.json", text.as_bytes()));
        prop_assert_eq!(problems, 0);
        prop_assert_eq!(&commands, &expected);
        // Codex runs events in its own order; within one event, file order.
        let (problems, commands) = load_codex(write(dir.path(), "hooks.json", text.as_bytes()));
        prop_assert_eq!(problems, 0);
        for event in KNOWN {
            let of = |c: &Commands| c.iter().filter(|(e, _)| e == event).cloned().collect::<Vec<_>>();
            prop_assert_eq!(of(&commands), of(&expected));
        }
        prop_assert_eq!(commands.len(), expected.len());
    });
}
