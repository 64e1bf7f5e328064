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
fn registers_the_file_tools_with_object_schemas() {
    let (host, result) = applied(json!({}));
    result.expect("applied");
    assert_eq!(
        host.tool_names(),
        ["Read", "Write", "Edit", "Glob", "Grep", "NotebookEdit"]
    );
    for spec in host.specs() {
        let schema: Value = serde_json::from_str(&spec.input_schema).expect("json");
        assert_eq!(schema["type"], "object", "{}", spec.name);
        let required = match spec.name.as_str() {
            "Glob" | "Grep" => "pattern",
            "NotebookEdit" => "notebook_path",
            _ => "file_path",
        };
        assert!(
            schema["required"]
                .as_array()
                .expect("required")
                .contains(&json!(required)),
            "{}",
            spec.name
        );
    }
}

#[test]
fn config_defaults_and_unknown_keys() {
    let descriptor = (plugin_module::<ToolsFs>().describe())();
    assert_eq!(descriptor.name.as_str(), "tools-fs");
    let defaults: Value = serde_json::from_str(&descriptor.default_config).expect("json");
    assert_eq!(
        defaults,
        json!({"max_read_bytes": 262144, "max_read_tokens": 25000})
    );
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

#[tokio::test(flavor = "multi_thread")]
async fn an_unchanged_file_read_again_with_the_same_window_is_not_sent_twice() {
    let (host, result) = applied(json!({}));
    result.expect("applied");
    let (_d, dir) = temp_dir();
    let path = dir.join("r.txt");
    std::fs::write(&path, "one\nnext\n").expect("write");
    let read = |args: Value| {
        let host = &host;
        let dir = dir.clone();
        async move { host.call("Read", &args.to_string(), &dir).await }
    };
    let first = read(json!({"file_path": "r.txt"})).await;
    assert_eq!(first.text_content(), "1\tone\n2\tnext\n3\t");
    // Recorded S84-reread: the same window again (an absent offset is 1).
    let again = read(json!({"file_path": "r.txt", "offset": 1})).await;
    assert!(!again.is_error);
    assert_eq!(
        again.text_content(),
        "Wasted call \u{2014} file unchanged since your last Read. Refer to that earlier tool_result instead."
    );
    assert_eq!(
        structured(&again),
        json!({"type": "file_unchanged", "file": {"filePath": path}})
    );
    // Another window reads.
    let other = read(json!({"file_path": "r.txt", "offset": 2})).await;
    assert_eq!(other.text_content(), "2\tnext\n3\t");
    // Claude Code keeps one read per file: the whole file again reads.
    let whole = read(json!({"file_path": "r.txt"})).await;
    assert_eq!(whole.text_content(), "1\tone\n2\tnext\n3\t");
    // Read just now with this window: a new modification time reads again.
    let file = std::fs::File::options()
        .write(true)
        .open(&path)
        .expect("open");
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .expect("set mtime");
    drop(file);
    assert_eq!(
        read(json!({"file_path": "r.txt"})).await.text_content(),
        "1\tone\n2\tnext\n3\t"
    );
    // After an Edit (whatever the file's time) the next Read reads again.
    let edited = host
        .call(
            "Edit",
            r#"{"file_path":"r.txt","old_string":"one","new_string":"two"}"#,
            &dir,
        )
        .await;
    assert!(!edited.is_error, "{}", edited.text_content());
    let file = std::fs::File::options()
        .write(true)
        .open(&path)
        .expect("open");
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .expect("set mtime");
    drop(file);
    assert_eq!(
        read(json!({"file_path": "r.txt"})).await.text_content(),
        "1\ttwo\n2\tnext\n3\t"
    );
}
