//! `Write` over real files.

use dsh_tools_fs::write_tool;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn creates_a_file_and_its_parent_directories() {
    let (_d, dir) = temp_dir();
    let result = write_tool(
        &json!({"file_path": "new/deep/f.txt", "content": "hello\n"}),
        &dir,
    )
    .await;
    let path = dir.join("new/deep/f.txt");
    assert!(!result.is_error, "{}", result.text_content());
    assert_eq!(
        result.text_content(),
        format!(
            "File created successfully at: {} (file state is current in your context \u{2014} no need to Read it back)",
            path.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "hello\n");
    assert_eq!(
        structured(&result),
        json!({"type": "create", "filePath": path, "content": "hello\n",
        "structuredPatch": [], "originalFile": null, "userModified": false})
    );
}

#[tokio::test]
async fn overwrites_an_existing_file_with_a_patch() {
    let (_d, dir) = temp_dir();
    let path = dir.join("f.txt");
    std::fs::write(&path, "a\nb\n").expect("write");
    let result = write_tool(&json!({"file_path": path, "content": "a\nc\n"}), &dir).await;
    assert_eq!(
        result.text_content(),
        format!("The file {} has been updated successfully.", path.display())
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "a\nc\n");
    assert_eq!(
        structured(&result),
        json!({"type": "update", "filePath": path, "content": "a\nc\n",
        "structuredPatch": [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
            "lines": [" a", "-b", "+c"]}],
        "originalFile": "a\nb\n", "userModified": false})
    );
}

#[tokio::test]
async fn failures_are_error_results() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("file"), "").expect("write");
    assert_error(
        &write_tool(&json!({"file_path": ".", "content": "x"}), &dir).await,
        "is a directory",
    );
    assert_error(
        &write_tool(&json!({"file_path": "f"}), &dir).await,
        "missing required parameter `content`",
    );
    assert_error(
        &write_tool(&json!({"file_path": "", "content": ""}), &dir).await,
        "non-empty path",
    );
    // A parent that is a file cannot become a directory.
    assert_error(
        &write_tool(&json!({"file_path": "file/x", "content": "x"}), &dir).await,
        "Cannot",
    );
}
