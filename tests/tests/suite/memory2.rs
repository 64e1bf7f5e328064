//! The rest of Claude Code's memory, user slash commands and Setup through
//! the real `dsh prompt` (recorded S240–S242,
//! `tools/recorder-scenarios/FINDINGS-memory2.md`): a `Read` in a subfolder
//! brings its `CLAUDE.md` and a rule whose `paths:` match, as a system
//! message after the tool's result, and InstructionsLoaded (a real shell)
//! hears of each; `~/.claude/commands/<name>.md` runs (and beats the
//! project's file of that name); `--init` runs the Setup hooks before
//! SessionStart, their `CLAUDE_ENV_FILE` reaching `Bash`; `--init-only`
//! starts and ends the session with no prompt.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use dsh_tests::{run_dsh, temp_dir};

/// A site with a manifest (bash-local, tools-fs, a scripted model answering
/// `script` and recording its requests, the Claude bridge discovering with
/// home `home/`, the project `proj/` trusted) and the project's settings
/// `settings`.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new(script: &Value, settings: &Value) -> Site {
        let site = Site { dir: temp_dir() };
        site.write("script.json", &script.to_string());
        site.write(
            "cordis.yml",
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: tools-fs\n  - id: model\n    name: model-scripted\n    config: {script: script.json, record: requests.jsonl}\n  - name: hooks-claude\n    config: {discover: true, home: home, managed_settings: etc/managed.json, trusted_prefixes: [proj]}\n",
        );
        site.write("proj/.claude/settings.json", &settings.to_string());
        site
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A hook command appending its stdin (one line) to `log`.
    fn logging(&self, log: &str) -> Value {
        let log = self.path(log);
        json!([{"hooks": [{"type": "command",
            "command": format!("cat >> '{0}'; echo >> '{0}'", log.display())}]}])
    }

    /// `dsh prompt` in `proj/` with `args`; asserts exit 0.
    fn prompt(&self, args: &[&str]) -> dsh_tests::Outcome {
        let proj = self.path("proj");
        let manifest = self.path("cordis.yml");
        let mut argv = vec![
            "prompt",
            "--cwd",
            proj.to_str().unwrap(),
            "--config",
            manifest.to_str().unwrap(),
        ];
        argv.extend_from_slice(args);
        let out = run_dsh(argv, self.dir.path());
        assert_eq!(
            out.code,
            Some(0),
            "stdout:\n{}\nstderr:\n{}",
            out.stdout,
            out.stderr
        );
        out
    }

    /// The JSON lines of `log` (none when it is absent).
    fn lines(&self, log: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(log))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The messages of each model request, in order.
    fn requests(&self) -> Vec<Vec<Value>> {
        self.lines("requests.jsonl")
            .into_iter()
            .map(|r| r["messages"].as_array().unwrap().clone())
            .collect()
    }
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn a_read_in_a_subfolder_brings_its_claude_md_and_a_matching_rule_once() {
    let read =
        |f: &Path| json!({"tool_calls": [{"name": "Read", "arguments": {"file_path": p(f)}}]});
    let s = Site::new(&json!([]), &json!({}));
    // The model reads two files of the site's own.
    let a = s.path("proj/sub/a.txt");
    let b = s.path("proj/sub/b.txt");
    let script = json!([read(&a), read(&b), {"text": "done"}]);
    s.write("script.json", &script.to_string());
    let settings = json!({"hooks": {"InstructionsLoaded": s.logging("il.log")}});
    s.write("proj/.claude/settings.json", &settings.to_string());
    s.write("proj/sub/CLAUDE.md", "MARK_SUB sub\n");
    s.write(
        "proj/.claude/rules/txt.md",
        "---\npaths: \"sub/*.txt\"\n---\nMARK_RULE txt rule\n",
    );
    s.write("proj/sub/a.txt", "a\n");
    s.write("proj/sub/b.txt", "b\n");
    s.prompt(&["read them"]);
    let requests = s.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let sub = p(&s.path("proj/sub/CLAUDE.md"));
    let rule = p(&s.path("proj/.claude/rules/txt.md"));
    let want = format!(
        "Contents of {sub}:\n\nMARK_SUB sub\n\n\nContents of {rule}:\n\nMARK_RULE txt rule\n"
    );
    let second = &requests[1];
    let at = second
        .iter()
        .position(|m| m["content"] == want.as_str())
        .unwrap_or_else(|| panic!("no nested memory message in {second:#?}"));
    assert_eq!(second[at]["role"], "system");
    assert_eq!(
        second[at]["source"],
        json!({"kind": "plugin", "plugin": "hooks-claude"})
    );
    assert_eq!(second[at - 1]["role"], "tool", "{second:#?}");
    // Once per session: the second read brings nothing new.
    let memory_messages = |msgs: &[Value]| {
        msgs.iter()
            .filter(|m| {
                m["content"]
                    .as_str()
                    .is_some_and(|c| c.contains("MARK_SUB"))
            })
            .count()
    };
    assert_eq!(memory_messages(&requests[2]), 1, "{:#?}", requests[2]);
    let told: Vec<(String, String, Value, String)> = s
        .lines("il.log")
        .iter()
        .map(|c| {
            let f = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (
                f("file_path"),
                f("load_reason"),
                c["globs"].clone(),
                f("trigger_file_path"),
            )
        })
        .collect();
    assert_eq!(
        told,
        [
            (sub, "nested_traversal".into(), Value::Null, p(&a)),
            (rule, "path_glob_match".into(), json!(["sub/*.txt"]), p(&a)),
        ]
    );
}

#[test]
fn a_user_command_runs_and_beats_the_projects_of_the_same_name() {
    let s = Site::new(&json!([{"text": "ok"}]), &json!({}));
    let settings = json!({"hooks": {"UserPromptExpansion": s.logging("upe.log")}});
    s.write("proj/.claude/settings.json", &settings.to_string());
    s.write(
        "home/.claude/commands/hello.md",
        "Say MARK_USER $1 then $0\n",
    );
    s.write(
        "proj/.claude/commands/hello.md",
        "Say MARK_PROJECT $ARGUMENTS\n",
    );
    s.prompt(&["/hello \"big world\" x"]);
    let first = &s.requests()[0];
    let expanded = first
        .iter()
        .find_map(|m| {
            m["parts"]
                .as_array()
                .and_then(|parts| {
                    parts
                        .iter()
                        .find_map(|t| t.as_str().filter(|t| t.contains("MARK_")))
                })
                .map(String::from)
        })
        .unwrap_or_else(|| panic!("no command text in {first:#?}"));
    assert_eq!(expanded, "Say MARK_USER x then big world\n");
    let calls = s.lines("upe.log");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["command_source"], "userSettings");
    assert_eq!(calls[0]["command_args"], "\"big world\" x");
}

/// A site whose Setup and SessionStart hooks log their payloads (Setup's
/// also exports `MARK_INIT` through its `CLAUDE_ENV_FILE`), and whose
/// model runs `echo "env=$MARK_INIT"`.
fn setup_site() -> Site {
    let script = json!([
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo \"env=$MARK_INIT\""}}]},
        {"text": "done"}
    ]);
    let s = Site::new(&script, &json!({}));
    let log = s.path("order.log");
    let setup = format!(
        "cat >> '{0}'; echo >> '{0}'; echo 'export MARK_INIT=from_setup' >> \"$CLAUDE_ENV_FILE\"",
        log.display()
    );
    let settings = json!({"hooks": {
        "Setup": [{"hooks": [{"type": "command", "command": setup}]}],
        "SessionStart": s.logging("order.log"),
        "SessionEnd": s.logging("order.log"),
    }});
    s.write("proj/.claude/settings.json", &settings.to_string());
    s
}

#[test]
fn init_runs_setup_before_session_start_and_its_env_file_reaches_bash() {
    let s = setup_site();
    s.prompt(&["--init", "--allowedTools", "Bash", "go"]);
    let calls = s.lines("order.log");
    let events: Vec<&str> = calls
        .iter()
        .map(|c| c["hook_event_name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(events, ["Setup", "SessionStart", "SessionEnd"]);
    let keys: Vec<&String> = calls[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "trigger"
        ]
    );
    assert_eq!(calls[0]["trigger"], "init");
    let second = &s.requests()[1];
    let result = second
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool result in {second:#?}"));
    assert_eq!(result["content"], "env=from_setup");
}

#[test]
fn without_init_no_setup_and_maintenance_says_so() {
    let s = setup_site();
    s.prompt(&["--allowedTools", "Bash", "go"]);
    let events: Vec<String> = s
        .lines("order.log")
        .iter()
        .map(|c| {
            c["hook_event_name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(events, ["SessionStart", "SessionEnd"]);
    let s = setup_site();
    s.prompt(&["--maintenance", "--allowedTools", "Bash", "go"]);
    assert_eq!(s.lines("order.log")[0]["trigger"], "maintenance");
}

#[test]
fn init_only_starts_and_ends_the_session_without_a_prompt() {
    let s = setup_site();
    s.prompt(&["--init-only"]);
    let events: Vec<String> = s
        .lines("order.log")
        .iter()
        .map(|c| {
            c["hook_event_name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(events, ["Setup", "SessionStart", "SessionEnd"]);
    assert!(s.requests().is_empty(), "a model request was made");
}

/// The content of the `tool` message answering each call, in the last
/// request.
fn tool_results(s: &Site) -> Vec<String> {
    let requests = s.requests();
    requests
        .last()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_skills_allowed_tools_hold_for_the_rest_of_its_turn_only() {
    // `touch` is no read-only command: it needs a rule.
    let touch = |f: &str| json!({"tool_calls": [{"name": "Bash", "arguments": {"command": format!("touch {f}")}}]});
    let skill = json!({"tool_calls": [{"name": "Skill", "arguments": {"skill": "greet"}}]});
    let s = Site::new(
        &json!([skill, touch("granted.txt"), {"text": "done"}]),
        &json!({}),
    );
    s.write(
        "proj/.claude/skills/greet/SKILL.md",
        "---\nname: greet\ndescription: Greets\nallowed-tools: Bash(touch:*)\n---\nSay hello.\n",
    );
    s.prompt(&["--allowedTools", "Skill", "greet them"]);
    let results = tool_results(&s);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].starts_with("Launching skill: greet"),
        "{results:?}"
    );
    assert!(s.path("proj/granted.txt").exists(), "{results:?}");

    // The next turn has no such grant: headless, the call is refused.
    s.write(
        "script.json",
        &json!([touch("again.txt"), {"text": "done"}]).to_string(),
    );
    s.prompt(&["--continue", "--allowedTools", "Skill", "again"]);
    let results = tool_results(&s);
    let refused = results.last().expect("a result");
    assert!(refused.contains("was blocked"), "{results:?}");
    assert!(!s.path("proj/again.txt").exists());
}

#[test]
fn a_commands_allowed_tools_hold_for_its_turn_only() {
    let touch = |f: &str| json!({"tool_calls": [{"name": "Bash", "arguments": {"command": format!("touch {f}")}}]});
    let s = Site::new(&json!([touch("granted.txt"), {"text": "done"}]), &json!({}));
    s.write(
        "proj/.claude/commands/mk.md",
        "---\ndescription: Makes a file\nallowed-tools: Bash(touch:*)\n---\nMake a file.\n",
    );
    // Under `--allowedTools Read`, as recorded (S241-frontmatter-model-tools).
    s.prompt(&["--allowedTools", "Read", "/mk"]);
    assert!(
        s.path("proj/granted.txt").exists(),
        "{:?}",
        tool_results(&s)
    );

    s.write(
        "script.json",
        &json!([touch("again.txt"), {"text": "done"}]).to_string(),
    );
    s.prompt(&["--continue", "--allowedTools", "Read", "again"]);
    let results = tool_results(&s);
    assert!(
        results.last().is_some_and(|r| r.contains("was blocked")),
        "{results:?}"
    );
    assert!(!s.path("proj/again.txt").exists());
}
