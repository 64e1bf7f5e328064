//! Claude Code's project slash commands through the real `dsh prompt`
//! (recorded S185): `/hello world` with the project's
//! `.claude/commands/hello.md` fires the project's UserPromptExpansion hook
//! (a real shell) with the command's name and arguments, UserPromptSubmit
//! with the unexpanded prompt, and the model reads Claude Code's
//! `<command-message>` block and the expanded text instead of the prompt.

use serde_json::Value;

use dsh_tests::{run_dsh, temp_dir};

/// Runs `dsh prompt <prompt>` in a project with `hello.md` and hooks that
/// append their stdin to `upe.log` / `ups.log`, trusted when `trusted`;
/// returns the first request's messages and the two logs' payloads.
fn run(prompt: &str, trusted: bool) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let site = temp_dir();
    let path = |rel: &str| site.path().join(rel);
    let write = |rel: &str, text: &str| {
        let p = path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("script.yml", "- text: ok 0\n- text: ok 1\n");
    let prefixes = if trusted { "[proj]" } else { "[]" };
    write(
        "cordis.yml",
        &format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {{script: script.yml, record: requests.jsonl}}\n  - name: hooks-claude\n    config: {{discover: true, memory: false, home: home, managed_settings: etc/managed.json, trusted_prefixes: {prefixes}}}\n"
        ),
    );
    write(
        "proj/.claude/commands/hello.md",
        "Say MARK_CMD $ARGUMENTS\n",
    );
    let hook = |log: &str| {
        serde_json::json!([{"hooks": [
            {"type": "command", "command": format!("cat >> '{}'; echo >> '{}'", path(log).display(), path(log).display())}]}])
    };
    let settings = serde_json::json!({"hooks": {
        "UserPromptExpansion": hook("upe.log"),
        "UserPromptSubmit": hook("ups.log"),
    }});
    write("proj/.claude/settings.json", &settings.to_string());
    let proj = path("proj");
    let manifest = path("cordis.yml");
    let out = run_dsh(
        vec![
            "prompt",
            "--cwd",
            proj.to_str().unwrap(),
            prompt,
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
    let payloads = |log: &str| -> Vec<Value> {
        std::fs::read_to_string(path(log))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    (messages, payloads("upe.log"), payloads("ups.log"))
}

/// The user's own messages (no plugin's source).
fn users(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["role"] == "user" && m.get("source").is_none())
        .map(|m| m["content"].clone())
        .collect()
}

#[test]
fn a_project_command_prompt_reaches_the_model_expanded_and_fires_user_prompt_expansion() {
    let (messages, upe, ups) = run("/hello world", true);
    assert_eq!(upe.len(), 1, "{upe:?}");
    let p = &upe[0];
    for (k, v) in [
        ("hook_event_name", "UserPromptExpansion"),
        ("expansion_type", "slash_command"),
        ("command_name", "hello"),
        ("command_args", "world"),
        ("command_source", "projectSettings"),
        ("prompt", "/hello world"),
    ] {
        assert_eq!(p[k], v, "{k} in {p}");
    }
    assert_eq!(ups.len(), 1, "{ups:?}");
    assert_eq!(ups[0]["prompt"], "/hello world");
    assert_eq!(
        users(&messages),
        [Value::from(
            "<command-message>hello</command-message>\n<command-name>/hello</command-name>\n<command-args>world</command-args>\n\nSay MARK_CMD world\n"
        )],
        "{messages:#?}"
    );
}

#[test]
fn an_untrusted_project_command_is_sent_as_typed() {
    let (messages, upe, _) = run("/hello world", false);
    assert!(upe.is_empty(), "{upe:?}");
    assert_eq!(
        users(&messages),
        [Value::from("/hello world")],
        "{messages:#?}"
    );
}
