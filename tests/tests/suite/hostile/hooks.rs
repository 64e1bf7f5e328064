//! Hooks and tools under hostile input, over the real `dsh` binary, real
//! shell hooks and the real `Bash` tool (only the model is scripted):
//!
//! - a hook's decision is read whole up to the 16 MiB limit, and an output
//!   past it is a block, never a cut output that lets the tool run;
//! - hook text that reaches the model is cut the way each CLI cuts it;
//! - `dsh check` shows what is wrong with a hooks file;
//! - the `Bash` tool cannot read dsh's secrets.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::{Outcome, run, temp_dir};
use serde_json::{Value, json};

/// Which hook bridge a project runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bridge {
    Claude,
    Codex,
}

impl Bridge {
    const BOTH: [Bridge; 2] = [Bridge::Claude, Bridge::Codex];

    fn plugin(self) -> &'static str {
        match self {
            Bridge::Claude => "hooks-claude",
            Bridge::Codex => "hooks-codex",
        }
    }
}

/// A folder with a manifest (bash-local, one bridge, a scripted model that
/// records its requests), a hooks file and a project folder to run in.
struct Project {
    dir: tempfile::TempDir,
    bridge: Bridge,
}

/// One `dsh prompt --json` run.
struct Turn {
    outcome: Outcome,
    events: Vec<Value>,
}

impl Turn {
    fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    fn context(&self) -> String {
        format!(
            "exit {:?}\nstderr:\n{}\nevents:\n{}",
            self.outcome.code,
            self.outcome.stderr,
            self.events
                .iter()
                .map(|e| {
                    let s = e.to_string();
                    if s.len() > 600 {
                        format!("{}…[{} bytes]", &s[..600], s.len())
                    } else {
                        s
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
        )
    }
}

impl Project {
    /// `hooks` is the event map (`{"PreToolUse": [...]}`); `script` the
    /// model's replies.
    fn new(bridge: Bridge, hooks: Value, script: Value) -> Project {
        let dir = temp_dir();
        let root = dir.path();
        for sub in ["proj", "home"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let project = Project { dir, bridge };
        project.write_hooks(&json!({ "hooks": hooks }).to_string());
        let manifest = format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: {}\n    config: {}\n  \
             - id: model\n    name: model-scripted\n    config: {}\n",
            bridge.plugin(),
            project.bridge_config(),
            json!({"script": script, "record": "requests.jsonl"}),
        );
        std::fs::write(project.manifest(), manifest).unwrap();
        project
    }

    fn bridge_config(&self) -> Value {
        match self.bridge {
            Bridge::Claude => json!({"config_path": "hooks.json"}),
            Bridge::Codex => json!({"config_path": "hooks.json", "model": "m"}),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn proj(&self) -> PathBuf {
        self.root().join("proj")
    }

    fn manifest(&self) -> PathBuf {
        self.root().join("cordis.yml")
    }

    fn hooks_file(&self) -> PathBuf {
        self.root().join("hooks.json")
    }

    fn write_hooks(&self, text: &str) {
        std::fs::write(self.hooks_file(), text).unwrap();
    }

    /// Writes `bytes` to `name` in the project's root; returns its path.
    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// `dsh <args>` with a clean environment for hooks: an empty `HOME`
    /// and `SHELL=/bin/sh` (Codex hooks run `$SHELL -lc`), plus `env`.
    fn dsh(&self, args: &[&str], env: &[(&str, &str)]) -> Outcome {
        let mut command = Command::new(&workspace().dsh);
        command.args(args).current_dir(self.root());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DSH_") {
                command.env_remove(key);
            }
        }
        command
            .env("HOME", self.root().join("home"))
            .env("SHELL", "/bin/sh");
        for (k, v) in env {
            command.env(k, v);
        }
        run(command, Duration::from_secs(120))
    }

    fn prompt_with_env(&self, text: &str, env: &[(&str, &str)]) -> Turn {
        let manifest = self.manifest().display().to_string();
        let proj = self.proj().display().to_string();
        let outcome = self.dsh(
            &[
                "prompt", "--config", &manifest, "--cwd", &proj, "--json", text,
            ],
            env,
        );
        let events = outcome
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        Turn { outcome, events }
    }

    fn prompt(&self, text: &str) -> Turn {
        self.prompt_with_env(text, &[])
    }

    /// Every request the model received.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// One hook on `event` (matcher `Bash` for tool events) running `command`.
fn hook(event: &str, command: &str) -> Value {
    let group = if event.contains("ToolUse") {
        json!({"matcher": "Bash", "hooks": [{"type": "command", "command": command}]})
    } else {
        json!({"hooks": [{"type": "command", "command": command}]})
    };
    json!({ event: [group] })
}

/// The model calls `Bash` with `command`, then says `done`.
fn bash_then_done(command: &str) -> Value {
    json!([
        {"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]},
        {"text": "done"}
    ])
}

// ---------------------------------------------------------------------------
// A hook's decision is read whole.

/// A PreToolUse deny whose reason is padded to `size` bytes.
fn padded_deny(size: usize) -> Vec<u8> {
    let head = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"DENIED-BIG "#;
    let tail = r#""}}"#;
    let mut out = head.as_bytes().to_vec();
    out.resize(size - tail.len(), b'x');
    out.extend_from_slice(tail.as_bytes());
    out
}

#[test]
fn a_large_pre_tool_use_deny_is_honoured_by_both_bridges() {
    for bridge in Bridge::BOTH {
        let deny = padded_deny(1_100_000 + 150);
        let project = Project::new(bridge, json!({}), bash_then_done("touch ran"));
        let deny_file = project.write("deny.json", &deny);
        let cmd = format!("cat '{}'", deny_file.display());
        project.write_hooks(&json!({"hooks": hook("PreToolUse", &cmd)}).to_string());

        let turn = project.prompt("go");
        let ctx = || format!("{bridge:?}\n{}", turn.context());
        assert!(
            !project.proj().join("ran").exists(),
            "the tool ran: {}",
            ctx()
        );
        let denied = turn.of_type("tool/denied");
        assert_eq!(denied.len(), 1, "{}", ctx());
        let reason = denied[0]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("DENIED-BIG xxxx"), "{}", ctx());
        // The decision was read whole. Claude hands the reason over
        // verbatim (S22-deny-1mb); Codex puts it in its `Command blocked by
        // PreToolUse hook:` line and cuts that as it cuts any tool output,
        // keeping both ends (C21-deny-1mb).
        match bridge {
            Bridge::Claude => {
                assert!(reason.len() >= 1_100_000 - 150, "{} bytes", reason.len())
            }
            Bridge::Codex => {
                assert!(
                    reason.starts_with("Command blocked by PreToolUse hook: DENIED-BIG xxx"),
                    "{reason:.200}"
                );
                assert!(reason.contains(" tokens truncated…"), "{reason:.200}");
                assert!(reason.ends_with("xxx. Command: touch ran"), "{reason:.200}");
                assert!(reason.len() < 12_100, "{} bytes", reason.len());
            }
        }
        let results = turn.of_type("hook/result");
        assert_eq!(results[0]["outcome"], "blocked", "{}", ctx());
        assert_eq!(turn.outcome.code, Some(0), "{}", ctx());
    }
}

#[test]
fn an_output_past_the_limit_is_a_block_with_the_error_recorded() {
    for bridge in Bridge::BOTH {
        // A valid allow, 17 MiB long: were it cut and then read (or read
        // as plain text), the tool would run.
        let head = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":""#;
        let mut allow = head.as_bytes().to_vec();
        allow.resize(17 * 1024 * 1024, b'y');
        allow.extend_from_slice(br#""}}"#);
        let project = Project::new(bridge, json!({}), bash_then_done("touch ran"));
        let file = project.write("allow.json", &allow);
        let cmd = format!("cat '{}'", file.display());
        project.write_hooks(&json!({"hooks": hook("PreToolUse", &cmd)}).to_string());

        let turn = project.prompt("go");
        let ctx = || format!("{bridge:?}\n{}", turn.context());
        assert!(
            !project.proj().join("ran").exists(),
            "the tool ran: {}",
            ctx()
        );
        let denied = turn.of_type("tool/denied");
        assert_eq!(denied.len(), 1, "{}", ctx());
        let reason = denied[0]["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("exceeded the 16 MiB output limit"),
            "{}",
            ctx()
        );
        let results = turn.of_type("hook/result");
        assert_eq!(results.len(), 1, "{}", ctx());
        assert_eq!(results[0]["outcome"], "blocked", "{}", ctx());
        assert_eq!(results[0]["stdout_truncated"], true, "{}", ctx());
        assert!(
            results[0]["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("16 MiB"),
            "{}",
            ctx()
        );
        // dsh itself warns on stderr, naming the hook.
        assert!(turn.outcome.stderr.contains("16 MiB"), "{}", ctx());
    }
}

// ---------------------------------------------------------------------------
// Injected context is capped as the CLIs cap it.

/// The hook-sourced message of the first request starting with `lead`.
fn hook_message(project: &Project, lead: &str) -> (String, usize) {
    let requests = project.requests();
    assert!(!requests.is_empty(), "no model request was made");
    let size = requests[0].to_string().len();
    let text = requests[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.starts_with(lead))
        .unwrap_or_else(|| panic!("no message starting {lead:?} in {:.2000}", requests[0]))
        .to_string();
    (text, size)
}

#[test]
fn a_five_megabyte_prompt_hook_output_is_saved_and_replaced_as_each_cli_does() {
    const SIZE: usize = 5_000_000;
    for bridge in Bridge::BOTH {
        let project = Project::new(bridge, json!({}), json!([{"text": "done"}]));
        let cmd = format!("head -c {SIZE} /dev/zero | tr '\\0' w");
        project.write_hooks(&json!({"hooks": hook("UserPromptSubmit", &cmd)}).to_string());
        let tmp = project.root().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let turn = project.prompt_with_env("go", &[("TMPDIR", &tmp.display().to_string())]);
        assert_eq!(turn.outcome.code, Some(0), "{bridge:?}\n{}", turn.context());
        let whole = "w".repeat(SIZE);
        let (shown, request_bytes) = match bridge {
            Bridge::Claude => {
                let (text, size) = hook_message(&project, "UserPromptSubmit hook success: ");
                let body = text
                    .strip_prefix("UserPromptSubmit hook success: <persisted-output>\nOutput too large (4.8MB). Full output saved to: ")
                    .unwrap_or_else(|| panic!("not Claude's wrapper: {text:.300}"));
                let (path, rest) = body.split_once("\n\nPreview (first 2KB):\n").unwrap();
                assert_eq!(
                    rest,
                    format!("{}\n...\n</persisted-output>", &whole[..2000])
                );
                // Beside the session log (as Claude Code puts them beside
                // its transcript), named after the hook run.
                let state = project.root().join("state").join("sessions");
                assert!(Path::new(path).starts_with(&state), "{path}");
                assert!(path.ends_with("-stdout.txt"), "{path}");
                (std::fs::read_to_string(path).unwrap(), size)
            }
            Bridge::Codex => {
                let (text, size) = hook_message(&project, "Warning: truncated output");
                assert!(text.starts_with(
                    "Warning: truncated output (original token count: 1250000)\nTotal output lines: 1\n\nwww"
                ), "{text:.300}");
                let (_, path) = text.rsplit_once("\n\nFull hook output saved to: ").unwrap();
                // The footer's tokens come off the 2,500-token budget; the
                // rest of 1,250,000 tokens is cut.
                let footer = format!("\n\nFull hook output saved to: {path}").len();
                let budget = 2500 - footer.div_ceil(4);
                let marker = format!("…{} tokens truncated…", 1_250_000 - budget);
                assert!(text.contains(&marker), "{marker} in {text:.300}");
                // Codex's place: $TMPDIR/hook_outputs/<session id>/<uuid>.txt.
                assert!(
                    Path::new(path).starts_with(tmp.join("hook_outputs")),
                    "{path}"
                );
                // About 10 KB: the warning lines and the marker are not budgeted.
                assert!(text.len() <= 10_200, "{} bytes", text.len());
                (std::fs::read_to_string(path).unwrap(), size)
            }
        };
        assert!(
            shown == whole,
            "{bridge:?}: the saved file does not hold the whole output"
        );
        // The request stays small: the output is in a file, not in it.
        assert!(
            request_bytes < 32 * 1024,
            "{bridge:?}: request of {request_bytes} bytes"
        );
    }
}

#[test]
fn a_long_post_tool_use_context_is_replaced_inside_claudes_reminder() {
    let project = Project::new(Bridge::Claude, json!({}), bash_then_done("true"));
    let context = format!("CTX {}", "word ".repeat(10_000)); // 50,004 characters
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": context}});
    let file = project.write("answer.json", answer.to_string().as_bytes());
    let cmd = format!("cat '{}'", file.display());
    project.write_hooks(&json!({"hooks": hook("PostToolUse", &cmd)}).to_string());
    let turn = project.prompt("go");
    assert_eq!(turn.outcome.code, Some(0), "{}", turn.context());
    let requests = project.requests();
    assert_eq!(requests.len(), 2, "{}", turn.context());
    let text = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.contains("PostToolUse:Bash hook additional context"))
        .unwrap_or_else(|| panic!("no context in {:.3000}", requests[1]))
        .to_string();
    let path_start = "<system-reminder>\nPostToolUse:Bash hook additional context: <persisted-output>\nOutput too large (48.8KB). Full output saved to: ";
    let body = text
        .strip_prefix(path_start)
        .unwrap_or_else(|| panic!("{text:.400}"));
    let (path, rest) = body.split_once("\n\nPreview (first 2KB):\n").unwrap();
    assert!(
        path.ends_with("-1-additionalContext.txt") && path.contains("/hook-"),
        "{path}"
    );
    assert_eq!(
        rest,
        format!(
            "{}\n...\n</persisted-output>\n</system-reminder>",
            &context[..2000]
        )
    );
    assert_eq!(std::fs::read_to_string(path).unwrap(), context);
}

// ---------------------------------------------------------------------------
// `dsh check` shows hook-file problems.

/// `dsh check` (or another command) on the project's manifest.
fn check(project: &Project, command: &str) -> Outcome {
    let manifest = project.manifest().display().to_string();
    project.dsh(&[command, "--config", &manifest], &[])
}

/// A PreToolUse gate as the user meant to write it, with `edit` applied
/// to its JSON text.
fn gate_with(edit: (&str, &str)) -> String {
    let good = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "exit 2"}
    ]}]}})
    .to_string();
    assert!(good.contains(edit.0), "{good} has no {:?}", edit.0);
    good.replacen(edit.0, edit.1, 1)
}

#[test]
fn check_names_the_file_and_key_of_every_hook_file_problem_and_fails_without_a_usable_file() {
    // (what is wrong, the hooks file's text or None for no file, whether
    // `dsh check` fails, what its problem line must hold after the file)
    let cases: Vec<(&str, Option<String>, bool, &str)> = vec![
        (
            "missing",
            None,
            true,
            ": cannot read the hooks file: No such file",
        ),
        (
            "malformed",
            Some("{\"hooks\": {\"PreToolUse\": [}}".into()),
            true,
            ": not valid: expected value at line 1 column 27; no hooks loaded from it",
        ),
        (
            "misspelled event",
            Some(gate_with(("\"PreToolUse\"", "\"PreTooluse\""))),
            true,
            ": key `hooks.PreTooluse`: unknown {cli} hook event `PreTooluse` (did you mean `PreToolUse`?); its hooks never run",
        ),
        (
            "misspelled hooks",
            Some(gate_with(("\"hooks\":[", "\"hook\":["))),
            true,
            ": key `hooks.PreToolUse[0]`: no `hooks` list (found `hook`); the group's hooks never run",
        ),
        (
            "misspelled command",
            Some(gate_with(("\"command\":\"exit", "\"comand\":\"exit"))),
            true,
            // What follows is the CLI's: Claude Code skips the hook, Codex
            // rejects the whole file (recorded, C206f_handler_without_command).
            ": key `hooks.PreToolUse[0].hooks[0]`: command hook with no `command` (found `comand`);",
        ),
        (
            "misspelled matcher",
            Some(gate_with(("\"matcher\"", "\"matchr\""))),
            false,
            ": key `hooks.PreToolUse[0].matchr`: unknown key `matchr` is ignored (did you mean `matcher`?)",
        ),
    ];
    let examples = dsh_tests::workspace_root().join("config/hooks");
    for bridge in Bridge::BOTH {
        let cli = match bridge {
            Bridge::Claude => "Claude Code",
            Bridge::Codex => "Codex",
        };
        // What the CLI accepts still loads: the shipped example file (shapes
        // from the recorded vectors) checks clean, without a warning.
        let project = Project::new(bridge, json!({}), json!([]));
        let example = match bridge {
            Bridge::Claude => "claude-settings.json",
            Bridge::Codex => "codex-hooks.json",
        };
        std::fs::copy(examples.join(example), project.hooks_file()).unwrap();
        let out = check(&project, "check");
        assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
        assert!(!out.stdout.contains("problem"), "{}", out.stdout);
        for (what, text, fails, want) in &cases {
            let project = Project::new(bridge, json!({}), json!([]));
            match text {
                Some(text) => project.write_hooks(text),
                None => std::fs::remove_file(project.hooks_file()).unwrap(),
            }
            let out = check(&project, "check");
            let ctx = format!("{bridge:?} {what}:\n{}\n{}", out.stdout, out.stderr);
            assert_eq!(out.code, Some(if *fails { 1 } else { 0 }), "{ctx}");
            let want = format!(
                "plugin `{}`: {}{}{}",
                bridge.plugin(),
                if *fails { "" } else { "warning: " },
                project.hooks_file().display(),
                want.replace("{cli}", cli)
            );
            assert!(
                out.stdout
                    .lines()
                    .any(|l| l.trim() == want || l.trim().starts_with(&want)),
                "want {want:?}\n{ctx}"
            );
            // `dsh plugins` lists the same problem, on stderr.
            let plugins = check(&project, "plugins");
            assert!(
                plugins.stderr.contains(&want),
                "plugins:\n{}",
                plugins.stderr
            );
        }
    }
}

#[test]
fn an_unreadable_hooks_file_fails_check_and_prompt_logs_it() {
    for bridge in Bridge::BOTH {
        let project = Project::new(bridge, json!({}), json!([{"text": "done"}]));
        // A folder where the file should be: unreadable even for root.
        std::fs::remove_file(project.hooks_file()).unwrap();
        std::fs::create_dir(project.hooks_file()).unwrap();
        let out = check(&project, "check");
        let want = format!(
            "plugin `{}`: {}: cannot read the hooks file: Is a directory",
            bridge.plugin(),
            project.hooks_file().display()
        );
        assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains(&want), "{want}\n{}", out.stdout);
        // `dsh prompt` still runs the turn, and logs the problem as a warning.
        let turn = project.prompt("go");
        assert_eq!(turn.outcome.code, Some(0), "{}", turn.context());
        let logged = turn
            .outcome
            .stderr
            .lines()
            .find(|l| l.contains("cannot read the hooks file"))
            .unwrap_or_else(|| panic!("not logged:\n{}", turn.outcome.stderr));
        assert!(
            logged.contains("WARN") && logged.contains(bridge.plugin()),
            "{logged}"
        );
    }
}

// ---------------------------------------------------------------------------
// Secrets do not leak to tools.

/// A project with no hooks at all: bash-local and the scripted model.
fn tools_only(script: Value) -> Project {
    let project = Project::new(Bridge::Claude, json!({}), script);
    let manifest = format!(
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {}\n",
        json!({"script": project.requests_script(), "record": "requests.jsonl"})
    );
    std::fs::write(project.manifest(), manifest).unwrap();
    project
}

impl Project {
    /// The model script of the manifest as written by [`Project::new`].
    fn requests_script(&self) -> Value {
        let text = std::fs::read_to_string(self.manifest()).unwrap();
        let line = text
            .lines()
            .rev()
            .find(|l| l.contains("\"script\""))
            .unwrap()
            .trim()
            .trim_start_matches("config: ");
        serde_json::from_str::<Value>(line).unwrap()["script"].clone()
    }
}

/// The text of every `tool/result` of a turn.
fn tool_results(turn: &Turn) -> String {
    turn.of_type("tool/result")
        .iter()
        .map(|e| e["content"].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_bash_tool_cannot_read_dsh_s_environment_through_proc() {
    // The tool's shell is a child of dsh: its parent is the dsh process.
    // `comm` proves it; `environ`, `mem` and where its fds lead must stay
    // shut (the run may be root's: the capabilities that would open them
    // are gone from the tool).
    let probe = "echo \"parent=$(cat /proc/$PPID/comm)\"; \
                 cat /proc/$PPID/environ; \
                 readlink /proc/$PPID/fd/2 && echo fd_link_read; \
                 head -c 1 /proc/$PPID/mem >/dev/null && echo mem_read; true";
    let project = tools_only(bash_then_done(probe));
    let secret = "hunter2-dsh-9f3c";
    let turn = project.prompt_with_env(
        "go",
        &[
            ("DSH_PROBE_API_TOKEN", secret),
            ("DSH_PROBE_PLAIN", secret),
            (
                "DSH_PROBE_DB_URL",
                &format!("postgres://app:{secret}@db/app"),
            ),
        ],
    );
    let out = tool_results(&turn);
    assert!(
        out.contains("parent=dsh"),
        "not dsh's child: {out}\n{}",
        turn.context()
    );
    assert!(!out.contains(secret), "the secret leaked: {out}");
    assert!(out.contains("/environ: Permission denied"), "{out}");
    assert!(
        !out.contains("fd_link_read") && !out.contains("mem_read"),
        "{out}"
    );
    // Not the environment variable itself either: a plain name is
    // inherited (it is no credential), the token and the URL are not.
    let project = tools_only(bash_then_done(
        "echo \"token=[$DSH_PROBE_API_TOKEN] url=[$DSH_PROBE_DB_URL] plain=[$DSH_PROBE_PLAIN]\"",
    ));
    let turn = project.prompt_with_env(
        "go",
        &[
            ("DSH_PROBE_API_TOKEN", secret),
            ("DSH_PROBE_PLAIN", "visible"),
            (
                "DSH_PROBE_DB_URL",
                &format!("postgres://app:{secret}@db/app"),
            ),
        ],
    );
    assert_eq!(
        tool_results(&turn),
        "token=[] url=[] plain=[visible]",
        "{}",
        turn.context()
    );
}

#[test]
fn hooks_still_get_the_credentials_the_tools_lose() {
    // Both CLIs hand hooks their whole environment; the scrub is the
    // tools' (and hooks that rely on `GH_TOKEN` or `DATABASE_URL` work).
    for bridge in Bridge::BOTH {
        let project = Project::new(
            bridge,
            json!({}),
            bash_then_done("echo \"tool=[$DSH_PROBE_DB_URL]\""),
        );
        let seen = project.root().join("seen.txt");
        let cmd = format!(
            "echo \"$DSH_PROBE_DB_URL $DSH_PROBE_API_TOKEN\" > '{}'",
            seen.display()
        );
        project.write_hooks(&json!({"hooks": hook("UserPromptSubmit", &cmd)}).to_string());
        let url = "postgres://app:pw-4471@db/app";
        let turn = project.prompt_with_env(
            "go",
            &[
                ("DSH_PROBE_DB_URL", url),
                ("DSH_PROBE_API_TOKEN", "tok-4471"),
            ],
        );
        assert_eq!(
            tool_results(&turn),
            "tool=[]",
            "{bridge:?}\n{}",
            turn.context()
        );
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            format!("{url} tok-4471\n"),
            "{bridge:?}"
        );
    }
}
