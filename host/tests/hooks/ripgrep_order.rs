//! ripgrep's file order, which the vectors cannot pin down.
//!
//! Claude Code's `Grep` prints what ripgrep prints. ripgrep searches files
//! on several threads and prints each file's lines together, in the order
//! the files finish: two runs of the CLI on one project can list the same
//! files in different orders (dsh searches them in path order). A `Grep`
//! in `content` or `count` mode is therefore compared file by file: each
//! file's run of lines must be the same, in the same order, and the runs
//! are compared sorted. Everything else about the text is compared as it
//! is (the pagination and count lines after the blank line stay last).

use serde_json::Value;

/// Whether a call's text is ripgrep's per-file output (`content`/`count`).
pub fn applies(name: &str, input: &Value) -> bool {
    name == "Grep" && matches!(input["output_mode"].as_str(), Some("content" | "count"))
}

/// The file a line of ripgrep's output belongs to: up to `:N:`/`-N-` (a
/// line number), else up to the first `:`.
fn file_of(line: &str) -> &str {
    let bytes = line.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if (*b == b':' || *b == b'-') && i > 0 {
            let rest = &line[i + 1..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && rest.as_bytes().get(digits) == Some(b) {
                return &line[..i];
            }
        }
    }
    line.split(':').next().unwrap_or(line)
}

/// `text` with its files' runs of lines in sorted order.
pub fn normalized(text: &str) -> String {
    let (body, tail) = text.find("\n\n").map_or((text, ""), |i| text.split_at(i));
    let mut runs: Vec<Vec<&str>> = Vec::new();
    let mut last = None;
    for line in body.split('\n') {
        let file = file_of(line);
        if last != Some(file) {
            runs.push(Vec::new());
            last = Some(file);
        }
        runs.last_mut().expect("a run").push(line);
    }
    runs.sort();
    let lines: Vec<&str> = runs.concat();
    format!("{}{tail}", lines.join("\n"))
}

#[test]
fn runs_of_lines_compare_sorted_and_keep_their_inner_order() {
    let a = "b.txt:2:x\nb.txt:3:y\na.txt:1:z\n\nFound 3";
    let b = "a.txt:1:z\nb.txt:2:x\nb.txt:3:y\n\nFound 3";
    assert_eq!(normalized(a), normalized(b));
    let swapped = "a.txt:1:z\nb.txt:3:y\nb.txt:2:x\n\nFound 3";
    assert_ne!(normalized(a), normalized(swapped));
    assert_eq!(file_of("/p/a-b.txt-3-text: more"), "/p/a-b.txt");
    assert!(applies(
        "Grep",
        &serde_json::json!({"output_mode": "count"})
    ));
    assert!(!applies("Grep", &serde_json::json!({})));
}
