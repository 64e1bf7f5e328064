//! Hostile calls of Claude's search, notebook and skill tools (`Glob`,
//! `Grep`, `NotebookEdit` of `tools-fs`, `Skill` of the Claude bridge):
//! patterns ripgrep rejects or that are huge, globs that climb out of the
//! search folder, a NUL in a path, a notebook that is not JSON, skill
//! names that climb out of `.claude/commands`. Each is a result the model
//! reads; no file outside the skills and commands folders runs as one; the
//! turn completes.

use std::time::Duration;

use dsh_host::agent::Prompt;
use dsh_tests::agent::{AgentHost, Load};
use dsh_tests::temp_dir;
use dsh_tests::wait::within;
use serde_json::{Value, json};

fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": arguments}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_searches_notebooks_and_skill_names_are_results_and_the_turn_completes() {
    let dir = temp_dir();
    let root = dir.path().canonicalize().unwrap();
    // `AgentHost`'s sessions run in `<root>/project`.
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".claude/commands")).unwrap();
    std::fs::write(project.join("a.txt"), "needle\n").unwrap();
    std::fs::write(project.join("bad.ipynb"), "{\"cells\": [").unwrap();
    // The file a climbing name would reach from `.claude/commands`.
    std::fs::write(project.join("secret.md"), "SECRET_TEXT\n").unwrap();
    let hooks = root.join("hooks.json");
    let quiet = json!([{"hooks": [{"type": "command", "command": "true"}]}]);
    std::fs::write(&hooks, json!({"hooks": {"Stop": quiet}}).to_string()).unwrap();
    let script = json!([
        call("Grep", json!({"pattern": "("})),
        call("Grep", json!({"pattern": "x".repeat(200_000)})),
        call("Grep", json!({"pattern": "needle", "path": "a\u{0}b"})),
        call("Glob", json!({"pattern": "../../**/*.md"})),
        call("Read", json!({"file_path": "bad.ipynb"})),
        call("NotebookEdit", json!({"notebook_path": "bad.ipynb", "cell_id": "c1", "new_source": "x"})),
        call("Skill", json!({"skill": "..:..:secret"})),
        call("Skill", json!({"skill": "../../secret"})),
        {"text": "done"}
    ]);
    let host = AgentHost::scripted(
        &root,
        vec![
            Load::builtin("tools-fs", "tools-fs", json!({})),
            Load::builtin(
                "hooks-claude",
                "hooks-claude",
                json!({"config_path": hooks}),
            ),
        ],
        script,
    )
    .problem_free();
    let session = host.session().await;
    let out = within(
        "the turn",
        Duration::from_secs(120),
        session.prompt(Prompt::user("go")),
    )
    .await;
    let events = dsh_host::session::events::wire(&out.events);
    let results: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "tool/result")
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(results.len(), 8, "{events:#?}");
    assert_eq!(results[0], "No files found");
    assert_eq!(results[1], "No files found");
    assert_eq!(
        results[2],
        "<tool_use_error>Grep path cannot contain null bytes (\\0). Remove the null byte and try again.</tool_use_error>"
    );
    assert_eq!(results[3], "No files found");
    assert!(
        results[4].starts_with("Notebook file is not valid JSON"),
        "{}",
        results[4]
    );
    assert_eq!(
        results[5],
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    );
    for (got, name) in results[6..].iter().zip(["..:..:secret", "../../secret"]) {
        assert!(
            got.starts_with(&format!("<tool_use_error>Unknown skill: {name}")),
            "{got}"
        );
    }
    assert!(
        !events.iter().any(|e| e.to_string().contains("SECRET_TEXT")),
        "{events:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("bad.ipynb")).unwrap(),
        "{\"cells\": ["
    );
    assert_eq!(events.last().unwrap()["type"], "turn/end", "{events:#?}");
    assert_eq!(events.last().unwrap()["reason"], "completed");
}
