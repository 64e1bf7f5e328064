//! `Read` over real files.

use dsh_tools_fs::{Config, read_tool};
use serde_json::{Value, json};

use super::support::*;

async fn read(args: Value, cwd: &std::path::Path) -> dsh_plugin_api::ToolResult {
    read_tool(&args, cwd, &Config::default()).await
}

#[tokio::test]
async fn reads_numbered_lines_with_a_claude_shaped_response() {
    let (_d, dir) = temp_dir();
    let path = dir.join("a.txt");
    std::fs::write(&path, "alpha\n\tbeta\r\ngamma").expect("write");
    let result = read(json!({"file_path": path}), &dir).await;
    assert!(!result.is_error);
    assert_eq!(result.text_content(), "1\talpha\n2\t\tbeta\n3\tgamma");
    assert_eq!(
        structured(&result),
        json!({"type": "text", "file": {
        "filePath": path, "content": "alpha\n\tbeta\ngamma", "numLines": 3, "startLine": 1,
        "totalLines": 3}})
    );
}

#[tokio::test]
async fn offset_and_limit_select_lines_and_relative_paths_use_the_cwd() {
    let (_d, dir) = temp_dir();
    std::fs::create_dir(dir.join("sub")).expect("mkdir");
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("sub/n.txt"), text).expect("write");
    let result = read(
        json!({"file_path": "sub/n.txt", "offset": 4, "limit": 2}),
        &dir,
    )
    .await;
    assert_eq!(result.text_content(), "4\tline 4\n5\tline 5");
    let s = structured(&result);
    assert_eq!(
        (
            s["file"]["startLine"].clone(),
            s["file"]["numLines"].clone(),
            s["file"]["totalLines"].clone()
        ),
        (json!(4), json!(2), json!(11))
    );
}

#[tokio::test]
async fn without_a_limit_the_whole_file_is_read_and_a_final_newline_is_a_line() {
    let (_d, dir) = temp_dir();
    let text: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("long.txt"), &text).expect("write");
    let result = read(json!({"file_path": "long.txt"}), &dir).await;
    let s = structured(&result);
    assert_eq!(
        (
            s["file"]["numLines"].clone(),
            s["file"]["totalLines"].clone(),
            s["file"]["content"].clone()
        ),
        (json!(2501), json!(2501), json!(text))
    );
    assert!(result.text_content().ends_with("\n2500\t2500\n2501\t"));
    let long_line = "x".repeat(5000);
    std::fs::write(dir.join("wide.txt"), format!("{long_line}\n")).expect("write");
    let wide = read(json!({"file_path": "wide.txt"}), &dir).await;
    assert_eq!(wide.text_content(), format!("1\t{long_line}\n2\t"));
}

#[tokio::test]
async fn offset_zero_numbers_from_zero_and_a_bom_is_dropped() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("b.txt"), "\u{feff}one\ntwo\n").expect("write");
    let result = read(json!({"file_path": "b.txt", "offset": 0, "limit": 2}), &dir).await;
    assert_eq!(result.text_content(), "0\tone\n1\ttwo");
    assert_eq!(structured(&result)["file"]["startLine"], json!(0));
}

#[tokio::test]
async fn empty_files_and_offsets_past_the_end_warn_instead_of_failing() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("empty"), "").expect("write");
    std::fs::write(dir.join("short"), "1\n2\n").expect("write");
    // An empty file is one empty line, so Claude Code's offset warning.
    let empty = read(json!({"file_path": "empty"}), &dir).await;
    assert!(!empty.is_error);
    assert_eq!(
        empty.text_content(),
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (1). \
         The file has 1 lines.</system-reminder>"
    );
    let short = read(json!({"file_path": "short", "offset": 5}), &dir).await;
    assert!(!short.is_error);
    assert!(
        short
            .text_content()
            .contains("shorter than the provided offset (5). The file has 3 lines.")
    );
}

#[tokio::test]
async fn a_missing_file_names_the_sessions_folder_as_claude_code_does() {
    // Recorded (vectors S172-*): Claude Code's Read of a missing file says
    // where the session is, not which path it tried.
    let (_d, dir) = temp_dir();
    for path in ["missing.txt", "/nonexistent_dir/missing.txt"] {
        let got = read(json!({"file_path": path}), &dir).await;
        assert!(got.is_error);
        assert_eq!(
            got.text_content(),
            format!(
                "File does not exist. Note: your current working directory is {}.",
                dir.display()
            )
        );
    }
}

#[tokio::test]
async fn failures_are_error_results() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("lib.so"), b"\x7fELF\x00\x01").expect("write");
    assert_error(
        &read(json!({"file_path": "missing.txt"}), &dir).await,
        "File does not exist",
    );
    assert_error(
        &read(json!({"file_path": "."}), &dir).await,
        "is a directory",
    );
    assert_error(
        &read(json!({"file_path": "lib.so"}), &dir).await,
        "This tool cannot read binary files. The file appears to be a binary .so file.",
    );
    assert_error(
        &read(json!({}), &dir).await,
        "missing required parameter `file_path`",
    );
    assert_error(
        &read(json!({"file_path": "x", "limit": 0}), &dir).await,
        "`limit` must be a positive integer",
    );
    assert_error(&read(json!(["x"]), &dir).await, "JSON object");
}

#[tokio::test]
async fn whole_file_reads_are_capped_but_ranges_are_not() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("big"), "x\n".repeat(1000)).expect("write");
    let config = Config {
        max_read_bytes: 100,
        ..Config::default()
    };
    let whole = read_tool(&json!({"file_path": "big"}), &dir, &config).await;
    assert_error(&whole, "exceeds maximum allowed size (100 bytes)");
    // Claude Code checks the size whenever `limit` is absent.
    let from = read_tool(&json!({"file_path": "big", "offset": 999}), &dir, &config).await;
    assert_error(&from, "exceeds maximum allowed size (100 bytes)");
    let part = read_tool(
        &json!({"file_path": "big", "offset": 999, "limit": 5}),
        &dir,
        &config,
    )
    .await;
    assert_eq!(part.text_content(), "999\tx\n1000\tx\n1001\t");
}

#[tokio::test]
async fn invalid_utf8_is_decoded_lossily() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("latin1"), b"caf\xe9\n").expect("write");
    let result = read(json!({"file_path": "latin1"}), &dir).await;
    assert_eq!(result.text_content(), "1\tcaf\u{FFFD}\n2\t");
}
