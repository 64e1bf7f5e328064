//! `Edit` over real files.

use dsh_tools_fs::edit_tool;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn replaces_a_unique_string() {
    let (_d, dir) = temp_dir();
    let path = dir.join("lib.rs");
    std::fs::write(&path, "fn a() {}\nfn b() {}\n").expect("write");
    let args = json!({"file_path": "lib.rs", "old_string": "fn b", "new_string": "pub fn b"});
    let result = edit_tool(&args, &dir).await;
    assert!(!result.is_error, "{}", result.text_content());
    assert_eq!(
        result.text_content(),
        format!("The file {} has been updated successfully.", path.display())
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "fn a() {}\npub fn b() {}\n"
    );
    assert_eq!(
        structured(&result),
        json!({"filePath": path, "oldString": "fn b",
        "newString": "pub fn b", "originalFile": "fn a() {}\nfn b() {}\n",
        "structuredPatch": [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
            "lines": [" fn a() {}", "-fn b() {}", "+pub fn b() {}"]}],
        "userModified": false, "replaceAll": false})
    );
}

#[tokio::test]
async fn replace_all_replaces_every_occurrence() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("f"), "x y x y x").expect("write");
    let args = json!({"file_path": "f", "old_string": "x", "new_string": "z", "replace_all": true});
    let result = edit_tool(&args, &dir).await;
    assert!(!result.is_error);
    assert!(
        result.text_content().contains("All 3 occurrences"),
        "{}",
        result.text_content()
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("f")).expect("read"),
        "z y z y z"
    );
    assert_eq!(structured(&result)["replaceAll"], true);
}

#[tokio::test]
async fn refuses_missing_ambiguous_and_no_op_edits_without_touching_the_file() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("f"), "same same").expect("write");
    let edit =
        |old: &str, new: &str| json!({"file_path": "f", "old_string": old, "new_string": new});
    assert_error(
        &edit_tool(&edit("other", "x"), &dir).await,
        "String to replace not found in file.\nString: other",
    );
    assert_error(
        &edit_tool(&edit("same", "x"), &dir).await,
        "Found 2 matches of the string to replace, but replace_all is false",
    );
    assert_error(
        &edit_tool(&edit("same", "same"), &dir).await,
        "No changes to make",
    );
    assert_error(
        &edit_tool(&edit("", "x"), &dir).await,
        "file already exists",
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("f")).expect("read"),
        "same same"
    );
}

#[tokio::test]
async fn an_empty_old_string_creates_a_missing_file() {
    let (_d, dir) = temp_dir();
    let args = json!({"file_path": "made/new.txt", "old_string": "", "new_string": "fresh\n"});
    let result = edit_tool(&args, &dir).await;
    assert!(!result.is_error, "{}", result.text_content());
    assert!(
        result
            .text_content()
            .starts_with("File created successfully at: ")
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("made/new.txt")).expect("read"),
        "fresh\n"
    );
    assert_eq!(structured(&result)["originalFile"], "");
}

#[tokio::test]
async fn failures_are_error_results() {
    let (_d, dir) = temp_dir();
    std::fs::write(dir.join("latin1"), b"caf\xe9").expect("write");
    let args = |path: &str| json!({"file_path": path, "old_string": "a", "new_string": "b"});
    assert_error(
        &edit_tool(&args("missing"), &dir).await,
        "File does not exist",
    );
    assert_error(&edit_tool(&args("."), &dir).await, "is a directory");
    assert_error(&edit_tool(&args("latin1"), &dir).await, "not valid UTF-8");
    assert_error(
        &edit_tool(&json!({"file_path": "x", "old_string": "a"}), &dir).await,
        "missing required parameter `new_string`",
    );
    assert_error(
        &edit_tool(
            &json!({"file_path": "x", "old_string": "a", "new_string": "b", "replace_all": "yes"}),
            &dir,
        )
        .await,
        "`replace_all` must be a boolean",
    );
}
