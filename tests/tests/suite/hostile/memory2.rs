//! Hostile rules, nested memory and user commands through the real
//! `dsh prompt`: a rules "folder" that is a file, a rules folder that loops
//! back on itself, a rule whose frontmatter is not YAML, one that is not
//! UTF-8, a `Read` outside the project and a user command file that is not
//! UTF-8. The prompt still runs (exit 0, within the runner's timeout),
//! nothing loops, what can be loaded is, and the bad command file is named.

use serde_json::{Value, json};

use dsh_tests::{run_dsh, temp_dir};

/// Runs `dsh prompt <prompt>` in a trusted project after `setup(site)`,
/// the model answering `script`; returns every request's messages and
/// dsh's stderr.
fn run(
    prompt: &str,
    script: impl FnOnce(&std::path::Path) -> Value,
    setup: impl FnOnce(&std::path::Path),
) -> (Vec<Vec<Value>>, String) {
    let site = temp_dir();
    let path = |rel: &str| site.path().join(rel);
    std::fs::create_dir_all(path("proj/.claude")).unwrap();
    std::fs::write(path("script.json"), script(site.path()).to_string()).unwrap();
    std::fs::write(
        path("cordis.yml"),
        "state_dir: state\nplugins:\n  - name: bash-local\n  - name: tools-fs\n  - id: model\n    name: model-scripted\n    config: {script: script.json, record: requests.jsonl}\n  - name: hooks-claude\n    config: {discover: true, home: home, managed_settings: etc/managed.json, trusted_prefixes: [proj]}\n",
    )
    .unwrap();
    setup(site.path());
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
    let requests = std::fs::read_to_string(path("requests.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            r["messages"].as_array().unwrap().clone()
        })
        .collect();
    (requests, out.stderr)
}

fn write(root: &std::path::Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn text(msgs: &[Value]) -> String {
    msgs.iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn broken_rules_folders_and_files_load_what_can_be_loaded_and_never_loop() {
    let (requests, _) = run(
        "hi",
        |_| json!([{"text": "ok"}]),
        |site| {
            // The user's rules "folder" is a file.
            write(site, "home/.claude/rules", b"not a folder");
            let rules = site.join("proj/.claude/rules");
            // Frontmatter that is not YAML: the rule loads, unconditional,
            // without it (as Claude Code's failed parse leaves it).
            write(
                &rules,
                "broken.md",
                b"---\npaths: [unclosed\n---\nMARK_BROKEN body\n",
            );
            // Not UTF-8: loaded with replacement characters.
            write(&rules, "bytes.md", b"MARK_BYTES \xff\xfe end\n");
            // A folder that loops back to the rules folder.
            std::os::unix::fs::symlink(&rules, rules.join("loop")).unwrap();
        },
    );
    let first = text(&requests[0]);
    assert!(first.contains("MARK_BROKEN body"), "{first}");
    assert!(!first.contains("[unclosed"), "{first}");
    assert!(first.contains("MARK_BYTES \u{fffd}\u{fffd} end"), "{first}");
    // Each rule once, the loop not followed twice.
    assert_eq!(first.matches("MARK_BROKEN").count(), 1, "{first}");
}

#[test]
fn a_read_outside_the_project_brings_no_memory() {
    let (requests, _) = run(
        "read it",
        |site| {
            let file = site.join("outside/x.txt");
            json!([
                {"tool_calls": [{"name": "Read", "arguments": {"file_path": file.display().to_string()}}]},
                {"text": "ok"}
            ])
        },
        |site| {
            write(site, "outside/CLAUDE.md", b"MARK_OUTSIDE\n");
            write(site, "outside/x.txt", b"x\n");
            write(
                site,
                "proj/.claude/rules/all.md",
                b"---\npaths: \"**/*.txt\"\n---\nMARK_GLOB\n",
            );
        },
    );
    assert_eq!(requests.len(), 2);
    // The read itself ran.
    let result = requests[1].iter().find(|m| m["role"] == "tool");
    assert!(
        result.is_some_and(
            |m| m["content"].as_str().is_some_and(|c| c.contains("1\tx"))
                && m.get("is_error").is_none_or(|e| e == false)
        ),
        "{:#?}",
        requests[1]
    );
    let second = text(&requests[1]);
    assert!(!second.contains("MARK_OUTSIDE"), "{second}");
    assert!(!second.contains("MARK_GLOB"), "{second}");
}

#[test]
fn a_user_command_file_that_is_not_utf8_is_named_and_the_prompt_goes_as_typed() {
    let (requests, stderr) = run(
        "/hello world",
        |_| json!([{"text": "ok"}]),
        |site| write(site, "home/.claude/commands/hello.md", &[0xff, 0xfe, b'x']),
    );
    let users: Vec<&Value> = requests[0]
        .iter()
        .filter(|m| m["role"] == "user" && m.get("source").is_none())
        .map(|m| &m["content"])
        .collect();
    assert_eq!(users, [&Value::from("/hello world")]);
    assert!(
        stderr.contains("/home/.claude/commands/hello.md is not UTF-8"),
        "{stderr}"
    );
}
