//! `Read` of files that are not what they claim (issue 10): through the real
//! binary, `dsh prompt` with `tools-fs` and a scripted model calling `Read`.
//! An image path holding HTML or nothing, a PNG header claiming 100000
//! pixels, a JPEG whose segment lengths lead nowhere (both refused with
//! Claude Code's `Unable to resize image` texts), a FIFO named like an
//! image or a text file, and a line of emoji over the token cap each end
//! in a clear result naming the problem; none hangs the turn or cuts a
//! character in half.

use std::path::Path;

use dsh_tests::{dsh_command, run, temp_dir};
use serde_json::{Value, json};

/// Runs one turn whose model reads each of `files` (relative to the
/// project), with `tools-fs` configured as `fs`; returns the `tool/result`
/// events in order.
pub(super) fn read_all(dir: &Path, files: &[&str], fs: Value) -> Vec<Value> {
    read_all_in(dir, files, fs, |_| {})
}

/// [`read_all`], with the `dsh` command adjusted by `adjust` first.
pub(super) fn read_all_in(
    dir: &Path,
    files: &[&str],
    fs: Value,
    adjust: impl FnOnce(&mut std::process::Command),
) -> Vec<Value> {
    let mut script: Vec<Value> = files
        .iter()
        .map(|f| json!({"tool_calls": [{"name": "Read", "arguments": {"file_path": f}}]}))
        .collect();
    script.push(json!({"text": "done"}));
    let manifest = format!(
        "state_dir: state\nplugins:\n  - name: tools-fs\n    config: {fs}\n  - id: model\n    \
         name: model-scripted\n    config: {}\n",
        json!({"script": script})
    );
    let config = dir.join("cordis.yml");
    std::fs::write(&config, manifest).unwrap();
    let proj = dir.join("proj");
    let mut command = dsh_command(
        [
            "prompt",
            "--config",
            config.to_str().unwrap(),
            "--cwd",
            proj.to_str().unwrap(),
            "--json",
            "read them",
        ],
        dir,
    );
    adjust(&mut command);
    let out = run(command, std::time::Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{out:?}");
    let results: Vec<Value> = out
        .stdout_lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool/result")
        .collect();
    assert_eq!(results.len(), files.len(), "{}", out.stdout);
    results
}

pub(super) fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = temp_dir();
    let proj = d.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    (d, proj)
}

pub(super) fn error_text(r: &Value) -> &str {
    assert_eq!(r["is_error"], true, "{r}");
    r["content"].as_str().unwrap_or_default()
}

#[test]
fn image_paths_that_hold_no_image_or_too_big_a_one_are_named() {
    let (d, proj) = project();
    std::fs::write(proj.join("fake.png"), "<!DOCTYPE html><html>login</html>").unwrap();
    std::fs::write(proj.join("empty.png"), "").unwrap();
    // A valid signature and IHDR claiming 100000 x 1 pixels, in 33 bytes.
    let mut huge = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    huge.extend(100_000u32.to_be_bytes());
    huge.extend(1u32.to_be_bytes());
    huge.extend([8, 2, 0, 0, 0, 0, 0, 0, 0]);
    std::fs::write(proj.join("huge.png"), &huge).unwrap();
    // A JPEG whose first segment says it is 2 bytes long, over and over,
    // then a length below 2: the header walk must end.
    let mut jpeg = vec![0xff, 0xd8];
    for _ in 0..50 {
        jpeg.extend([0xff, 0xe0, 0x00, 0x02]);
    }
    jpeg.extend([0xff, 0xe1, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]);
    std::fs::write(proj.join("odd.jpg"), &jpeg).unwrap();
    let r = read_all(
        d.path(),
        &["fake.png", "empty.png", "huge.png", "odd.jpg"],
        json!({}),
    );
    assert!(
        error_text(&r[0]).starts_with(
            "File has an image extension but its content is not a valid PNG/JPEG/GIF/WebP. \
             Detected: HTML document (starts with \"<!DOCTYPE html><html>log\")"
        ),
        "{}",
        r[0]
    );
    assert!(
        error_text(&r[1]).contains(&format!(
            "Image file is empty: {}",
            proj.join("empty.png").display()
        )),
        "{}",
        r[1]
    );
    // Too wide to show and not decodable: Claude Code's refusal (S150).
    assert_eq!(
        error_text(&r[2]),
        "Unable to resize image \u{2014} dimensions exceed the 2000x2000px limit and image \
         processing failed. Please resize the image to reduce its pixel dimensions.",
        "{}",
        r[2]
    );
    // The odd JPEG does not decode and its header gives no size: Claude
    // Code's refusal for an image it can neither process nor measure.
    assert_eq!(
        error_text(&r[3]),
        "Unable to resize image \u{2014} image processing is unavailable and dimensions could \
         not be read from the file header. Please convert the image to PNG, JPEG, GIF, or WebP.",
        "{}",
        r[3]
    );
}

#[test]
fn a_fifo_is_refused_by_what_it_is_and_never_waited_on() {
    let (d, proj) = project();
    for name in ["pipe.png", "pipe.txt", "pipe"] {
        let made = std::process::Command::new("mkfifo")
            .arg(proj.join(name))
            .status()
            .unwrap();
        assert!(made.success());
    }
    let r = read_all(d.path(), &["pipe.png", "pipe.txt", "pipe"], json!({}));
    for (name, result) in ["pipe.png", "pipe.txt", "pipe"].iter().zip(&r) {
        assert_eq!(
            error_text(result),
            format!(
                "Cannot read {}: it is a FIFO, not a regular file",
                proj.join(name).display()
            )
        );
    }
}

#[test]
fn a_page_cut_at_the_token_cap_never_splits_a_character() {
    let (d, proj) = project();
    // One line of 400 emoji (800 UTF-16 units, 200 tokens) over a cap of
    // 101: the cut falls at unit 343, inside an emoji, which is left out.
    std::fs::write(proj.join("emoji.txt"), "\u{1F600}".repeat(400)).unwrap();
    let r = read_all(d.path(), &["emoji.txt"], json!({"max_read_tokens": 101}));
    let text = r[0]["content"].as_str().unwrap();
    assert!(
        text.starts_with(
            "<system-reminder>[Truncated: PARTIAL view \u{2014} showing the first 342 of 800 \
             characters (200 tokens, cap 101)"
        ),
        "{text}"
    );
    let page = &r[0]["structured"]["file"];
    assert_eq!(page["content"], "\u{1F600}".repeat(171), "{page}");
    assert_eq!(page["truncatedByTokenCap"], true);
}
