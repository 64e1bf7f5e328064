//! The plugin applied on a fake host and called across the ABI.

use dsh_plugin_api::plugin_module;
use dsh_tools_fs::ToolsFs;
use serde_json::{Value, json};

use super::support::*;

fn applied(config: Value) -> (FakeHost, Result<(), String>) {
    let host = FakeHost::default();
    let result = (plugin_module::<ToolsFs>().apply())(host.boxed(), config.to_string().into());
    (host, result.into_result().map_err(String::from))
}

#[test]
fn registers_read_write_edit_with_object_schemas() {
    let (host, result) = applied(json!({}));
    result.expect("applied");
    assert_eq!(host.tool_names(), ["Read", "Write", "Edit"]);
    for spec in host.specs() {
        let schema: Value = serde_json::from_str(&spec.input_schema).expect("json");
        assert_eq!(schema["type"], "object", "{}", spec.name);
        assert!(
            schema["required"]
                .as_array()
                .expect("required")
                .contains(&json!("file_path"))
        );
    }
}

#[test]
fn config_defaults_and_unknown_keys() {
    let descriptor = (plugin_module::<ToolsFs>().describe())();
    assert_eq!(descriptor.name.as_str(), "tools-fs");
    let defaults: Value = serde_json::from_str(&descriptor.default_config).expect("json");
    assert_eq!(defaults, json!({"max_read_bytes": 262144}));
    let (_host, result) = applied(json!({"max_read": 1}));
    assert!(result.expect_err("refused").contains("max_read"));
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_run_in_the_session_cwd_through_the_abi() {
    let (host, result) = applied(json!({}));
    result.expect("applied");
    let (_d, dir) = temp_dir();
    let wrote = host
        .call(
            "Write",
            r#"{"file_path":"w.txt","content":"one\ntwo\n"}"#,
            &dir,
        )
        .await;
    assert!(!wrote.is_error, "{}", wrote.text_content());
    let edited = host
        .call(
            "Edit",
            r#"{"file_path":"w.txt","old_string":"two","new_string":"2"}"#,
            &dir,
        )
        .await;
    assert!(!edited.is_error, "{}", edited.text_content());
    let read = host.call("Read", r#"{"file_path":"w.txt"}"#, &dir).await;
    assert_eq!(read.text_content(), "1\tone\n2\t2\n3\t");
    let broken = host.call("Read", "{oops", &dir).await;
    assert_error(&broken, "not JSON");
}
