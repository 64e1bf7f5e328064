//! `cordis.yml` text: any bytes, YAML-shaped noise, and valid manifests.
//!
//! Parsing never panics; bad text is an error naming the file. A valid
//! manifest round-trips: what was written is what is read.

use std::path::Path;

use dsh_host::config::{Manifest, PluginRef};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::answers::json_value;

fn parse(text: &str) -> Result<Manifest, String> {
    Manifest::from_yaml(Path::new("/srv/cordis.yml"), text).map_err(|e| e.to_string())
}

/// Noise built from YAML's own punctuation and the manifest's keys.
fn yamlish() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "state_dir:",
        "socket:",
        "plugins:",
        "- ",
        "id:",
        "name:",
        "path:",
        "config:",
        "disabled:",
        "log_level:",
        "plugin_dirs:",
        "shutdown_grace_s:",
        "\n",
        "  ",
        "{",
        "}",
        "[",
        "]",
        ",",
        "&a",
        "*a",
        "!!str",
        "---",
        "...",
        "# c",
        "\"",
        "'",
        "|",
        ">",
        "?",
        "~",
        "true",
        "1e9",
        "-1",
        "bash-local",
        "hooks-claude",
        "x.so",
        "\t",
        ":",
    ]);
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

/// A valid manifest as a JSON value (JSON is YAML) and its plugins' ids.
fn valid() -> impl Strategy<Value = (Value, Vec<(String, bool)>)> {
    let entry = (
        "[a-z][a-z0-9-]{0,8}",
        prop::sample::select(vec![
            "bash-local",
            "tools-fs",
            "hooks-claude",
            "model-scripted",
        ]),
        any::<bool>(),
        prop::option::of(prop::collection::btree_map(
            "[a-z_]{1,8}",
            json_value(),
            0..4,
        )),
        any::<bool>(),
    );
    (
        prop::collection::vec(entry, 0..5),
        "[a-z/]{1,12}",
        0u64..1000,
    )
        .prop_map(|(entries, state, grace)| {
            let mut ids = Vec::new();
            let plugins: Vec<Value> = entries
                .into_iter()
                .enumerate()
                .map(|(i, (id, name, as_library, config, disabled))| {
                    let id = format!("{id}-{i}");
                    ids.push((id.clone(), as_library));
                    let mut e = if as_library {
                        json!({"id": id, "path": format!("lib/{id}.so"), "disabled": true})
                    } else {
                        json!({"id": id, "name": name, "disabled": disabled})
                    };
                    // Only disabled entries carry free-form config: an
                    // enabled one is checked against its plugin's schema.
                    if let (Some(c), true) = (config, as_library || disabled) {
                        e["config"] = Value::Object(c.into_iter().collect());
                    }
                    e
                })
                .collect();
            let m = json!({
                "state_dir": state,
                "shutdown_grace_s": grace,
                "plugins": plugins,
            });
            (m, ids)
        })
}

#[test]
fn any_text_parses_or_is_an_error_naming_the_file() {
    proptest!(|(text in prop_oneof![any::<String>(), yamlish()])| {
        if let Err(e) = parse(&text) {
            prop_assert!(e.contains("/srv/cordis.yml"), "{e}");
        }
    });
}

#[test]
fn valid_manifests_round_trip() {
    proptest!(|((manifest, ids) in valid())| {
        let text = serde_yaml::to_string(&manifest).unwrap();
        let m = parse(&text).map_err(TestCaseError::fail)?;
        prop_assert_eq!(m.shutdown_grace.as_secs(), manifest["shutdown_grace_s"].as_u64().unwrap());
        prop_assert_eq!(
            m.state_dir,
            Path::new("/srv").join(manifest["state_dir"].as_str().unwrap())
        );
        prop_assert_eq!(m.plugins.len(), ids.len());
        for ((entry, (id, as_library)), raw) in m.plugins.iter().zip(&ids).zip(manifest["plugins"].as_array().unwrap()) {
            prop_assert_eq!(&entry.id, id);
            prop_assert_eq!(matches!(entry.plugin, PluginRef::Library(_)), *as_library);
            if let Some(c) = raw.get("config") {
                prop_assert_eq!(&entry.config, c);
            }
        }
    });
}
