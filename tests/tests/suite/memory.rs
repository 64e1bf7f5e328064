//! Claude Code's memory files through the real `dsh prompt` (recorded as
//! vectors `S187-*`): with the Claude bridge discovering (and so loading
//! memory by default), `~/.claude/CLAUDE.md` and the project's `CLAUDE.md`
//! reach the model as one `<system-reminder>` right before the first
//! prompt, and the project's InstructionsLoaded hook, a real shell, hears
//! of each file; `memory: false` turns both off.

use serde_json::Value;

use dsh_tests::{run_dsh, temp_dir};

/// A site: `cordis.yml` (a scripted model that records its requests, the
/// Claude bridge discovering with the home `home/`, `extra` added to its
/// config), the user's and the project's `CLAUDE.md`, and a project
/// settings file whose InstructionsLoaded hook appends its stdin to
/// `il.log`. Runs one `dsh prompt` in `proj/` and returns the site, the
/// first model request's messages and the hook's payloads.
fn run(extra: &str) -> (tempfile::TempDir, Vec<Value>, Vec<Value>) {
    let site = temp_dir();
    let path = |rel: &str| site.path().join(rel);
    let write = |rel: &str, text: &str| {
        let p = path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("script.yml", "- text: ok 0\n- text: ok 1\n");
    write(
        "cordis.yml",
        &format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {{script: script.yml, record: requests.jsonl}}\n  - name: hooks-claude\n    config: {{discover: true, home: home, managed_settings: etc/managed.json, trusted_prefixes: [proj]{extra}}}\n"
        ),
    );
    write("home/.claude/CLAUDE.md", "MARK_USER instructions\n");
    write("proj/CLAUDE.md", "MARK_PROJECT instructions\n");
    let log = path("il.log");
    let settings = serde_json::json!({"hooks": {"InstructionsLoaded": [{"hooks": [
        {"type": "command", "command": format!("cat >> '{}'", log.display())}]}]}});
    write("proj/.claude/settings.json", &settings.to_string());
    let proj = path("proj");
    let manifest = path("cordis.yml");
    let out = run_dsh(
        vec![
            "prompt",
            "--cwd",
            proj.to_str().unwrap(),
            "hi",
            "--config",
            manifest.to_str().unwrap(),
        ],
        site.path(),
    );
    assert_eq!(
        out.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let requests = std::fs::read_to_string(path("requests.jsonl")).unwrap();
    let first: Value = serde_json::from_str(requests.lines().next().unwrap()).unwrap();
    let messages = first["messages"].as_array().unwrap().clone();
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (site, messages, calls)
}

#[test]
fn a_discovering_bridge_shows_the_memory_files_before_the_prompt_and_tells_instructions_loaded() {
    let (site, messages, calls) = run("");
    let root = site.path().display().to_string();
    let user = format!("{root}/home/.claude/CLAUDE.md");
    let project = format!("{root}/proj/CLAUDE.md");
    let want = format!(
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\nContents of {user} (user's private global instructions for all projects):\n\nMARK_USER instructions\n\nContents of {project} (project instructions, checked into the codebase):\n\nMARK_PROJECT instructions\n\n      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.\n</system-reminder>\n"
    );
    let at = messages
        .iter()
        .position(|m| m["content"] == want.as_str())
        .unwrap_or_else(|| panic!("no memory message in {messages:#?}"));
    assert_eq!(messages[at]["role"], "user");
    assert_eq!(
        messages[at]["source"],
        serde_json::json!({"kind": "plugin", "plugin": "hooks-claude"})
    );
    let next = &messages[at + 1];
    assert_eq!(
        (&next["role"], &next["content"]),
        (&"user".into(), &"hi".into())
    );
    assert!(next.get("source").is_none(), "{next}");
    let told: Vec<(String, String, String)> = calls
        .iter()
        .map(|c| {
            let f = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (f("file_path"), f("memory_type"), f("load_reason"))
        })
        .collect();
    assert_eq!(
        told,
        [
            (user, "User".into(), "session_start".into()),
            (project, "Project".into(), "session_start".into()),
        ]
    );
    for c in &calls {
        assert_eq!(c["hook_event_name"], "InstructionsLoaded");
        assert!(c.get("prompt_id").is_none(), "{c}");
    }
}

#[test]
fn memory_false_shows_no_memory_file_and_tells_no_hook() {
    let (_site, messages, calls) = run(", memory: false");
    assert!(
        !messages
            .iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains("MARK_"))),
        "{messages:#?}"
    );
    assert!(calls.is_empty(), "{calls:?}");
}
