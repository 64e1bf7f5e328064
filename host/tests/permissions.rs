//! Permission modes and rules through the real `dsh prompt`: the flags and
//! the manifest's `permissions:` decide without a terminal (answering as
//! `claude -p` does), hooks read the mode, and on a terminal (a real
//! pseudo-terminal) dsh asks, and "allow always" is kept by the session.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::io::{Read as _, Write as _};
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

const DSH: &str = env!("CARGO_BIN_EXE_dsh");
const PY: &str = "python3 -c 'print(41+1)'";

/// A manifest with Bash, the file tools, the Claude bridge (a PreToolUse
/// hook appending each payload to `pre.jsonl`) and a scripted model.
fn manifest(dir: &Path, script: &str, permissions: &str) -> PathBuf {
    std::fs::write(dir.join("script.yml"), script).unwrap();
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
        "command": format!("cat >> {0}/pre.jsonl; echo >> {0}/pre.jsonl; echo \"$CLAUDE_CODE_ENTRYPOINT\" >> {0}/entrypoint.txt", dir.display())}]}]}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let path = dir.join("cordis.yml");
    std::fs::write(
        &path,
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: tools-fs\n  - name: hooks-claude\n    config:\n      config_path: [settings.json]\n  - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n{permissions}"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("proj")).unwrap();
    path
}

fn bash_then_text(command: &str) -> String {
    format!("- tool_calls: [{{name: Bash, arguments: {{command: \"{command}\"}}}}]\n- text: done\n")
}

/// `dsh prompt --json` with `flags`, without a terminal; the turn's events.
fn prompt(dir: &Path, config: &Path, flags: &[&str]) -> Vec<Value> {
    let mut args = vec![
        "prompt",
        "--json",
        "--config",
        config.to_str().unwrap(),
        "--cwd",
    ];
    let proj = dir.join("proj");
    args.push(proj.to_str().unwrap());
    args.extend_from_slice(flags);
    args.push("go");
    let out = Command::new(DSH)
        .args(&args)
        .env_remove("DSH_STATE_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn first<'a>(events: &'a [Value], kind: &str) -> Option<&'a Value> {
    events.iter().find(|e| e["type"] == kind)
}

fn result(events: &[Value]) -> String {
    first(events, "tool/result").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The `CLAUDE_CODE_ENTRYPOINT` each PreToolUse hook saw, and the record
/// emptied.
fn entrypoints_seen(dir: &Path) -> Vec<String> {
    let path = dir.join("entrypoint.txt");
    let seen = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    seen.lines().map(String::from).collect()
}

fn modes_seen(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("pre.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["permission_mode"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn allowed_and_disallowed_tools_decide_without_a_terminal_as_claude_p_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = manifest(d, &bash_then_text(PY), "");
    // Recorded (S30 default): not allowed, not read-only: refused with
    // Claude Code's headless text.
    let events = prompt(d, &config, &["--allowedTools", "Read"]);
    assert_eq!(result(&events), "This command requires approval");
    assert_eq!(first(&events, "tool/denied").unwrap()["by"], "approval");
    // S31 allowed-prefix / allowed-space-star: the rule lets it run.
    for allowed in ["Bash(python3:*)", "Bash(python3 *)", "Read,Bash(python3:*)"] {
        let events = prompt(d, &config, &["--allowedTools", allowed]);
        assert_eq!(result(&events), "42", "{allowed}");
    }
    // S31 allowed-other-prefix.
    let events = prompt(d, &config, &["--allowedTools", "Bash(git diff:*)"]);
    assert_eq!(result(&events), "This command requires approval");
    // S31 disallowed-flag: deny beats allow.
    let events = prompt(
        d,
        &config,
        &[
            "--allowedTools",
            "Bash",
            "--disallowedTools",
            "Bash(python3:*)",
        ],
    );
    assert_eq!(
        result(&events),
        format!("Permission to use Bash with command {PY} has been denied.")
    );
    assert_eq!(
        first(&events, "tool/denied").unwrap()["by"],
        "permissions (rule cli: Bash(python3:*))"
    );
    // Without any permission setting, nothing changed: the call runs.
    let events = prompt(d, &config, &[]);
    assert_eq!(result(&events), "42");
    assert_eq!(modes_seen(d), ["default"; 7]);
    // A rule that does not parse is refused before anything runs.
    let out = Command::new(DSH)
        .args([
            "prompt",
            "--config",
            config.to_str().unwrap(),
            "--allowedTools",
            "Bash(git",
            "go",
        ])
        .env_remove("DSH_STATE_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("permission rule `Bash(git` (cli allow[0]): a specifier must end with `)`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_manifest_mode_applies_the_flag_overrides_it_and_hooks_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let target = d.join("proj/written.txt");
    let script = format!(
        "- tool_calls: [{{name: Write, arguments: {{file_path: \"{}\", content: \"x\"}}}}]\n- text: done\n",
        target.display()
    );
    let config = manifest(d, &script, "permissions:\n  mode: plan\n  allow: [Read]\n");
    let events = prompt(d, &config, &[]);
    assert_eq!(
        result(&events),
        format!("Cannot write to {} while in plan mode.", target.display())
    );
    assert!(!target.exists());
    let events = prompt(d, &config, &["--permission-mode", "acceptEdits"]);
    assert!(
        !first(&events, "tool/result").unwrap()["is_error"]
            .as_bool()
            .unwrap()
    );
    assert!(target.exists());
    std::fs::remove_file(&target).unwrap();
    let events = prompt(d, &config, &["--permission-mode", "dontAsk"]);
    assert!(result(&events).starts_with(
        "Permission to use Write has been denied because Claude Code is running in don't ask mode."
    ));
    let events = prompt(d, &config, &["--permission-mode", "bypassPermissions"]);
    assert!(
        !first(&events, "tool/result").unwrap()["is_error"]
            .as_bool()
            .unwrap()
    );
    assert_eq!(
        modes_seen(d),
        ["plan", "acceptEdits", "dontAsk", "bypassPermissions"]
    );
    // A mode dsh does not know is refused by the argument parser.
    let out = Command::new(DSH)
        .args([
            "prompt",
            "--config",
            config.to_str().unwrap(),
            "--permission-mode",
            "yolo",
            "go",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown permission mode `yolo`"));
}

/// A pseudo-terminal: the master's output collected by a thread.
struct Pty {
    master: std::fs::File,
    slave: OwnedFd,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    fn open() -> Pty {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two fresh descriptors into the two ints;
        // the name, termios and winsize arguments may be null.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned by nobody else.
        let (master, slave) = unsafe {
            (
                std::fs::File::from_raw_fd(master),
                OwnedFd::from_raw_fd(slave),
            )
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once every slave end is closed.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            master,
            slave,
            seen,
        }
    }

    fn stdio(&self) -> Stdio {
        Stdio::from(self.slave.try_clone().unwrap())
    }

    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let text = String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned();
            if text.contains(needle) {
                return text;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no {needle:?} on the terminal:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `dsh prompt` on a terminal answering `answer`; the turn's events.
fn prompt_on_a_terminal(
    dir: &Path,
    config: &Path,
    session: &str,
    answer: &str,
) -> (String, Vec<Value>) {
    let pty = Pty::open();
    let proj = dir.join("proj");
    let mut child = Command::new(DSH)
        .args([
            "prompt",
            "--json",
            "--config",
            config.to_str().unwrap(),
            "--cwd",
        ])
        .arg(&proj)
        .args(["--session", session, "go"])
        .env_remove("DSH_STATE_DIR")
        .stdin(pty.stdio())
        .stdout(Stdio::piped())
        .stderr(pty.stdio())
        .spawn()
        .unwrap();
    let screen = pty.wait_for("allow? [y] once, [a] always for this session, [n] deny: ");
    (&pty.master)
        .write_all(format!("{answer}\n").as_bytes())
        .unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let events = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (screen, events)
}

#[test]
fn a_terminal_asks_and_allow_always_is_kept_by_the_resumed_session() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = manifest(
        d,
        &bash_then_text("touch made.txt"),
        "permissions: {mode: default}\n",
    );
    let made = d.join("proj/made.txt");
    // `n`: refused, and the model reads Claude Code's refusal.
    let (screen, events) = prompt_on_a_terminal(d, &config, "tty1", "n");
    assert!(screen.contains("dsh: permission needed: Bash"), "{screen}");
    assert!(
        screen.contains("\"command\": \"touch made.txt\""),
        "{screen}"
    );
    assert!(
        screen.contains(&format!(
            "reason: touch in '{}' was blocked.",
            made.display()
        )),
        "{screen}"
    );
    assert!(!made.exists());
    // Recorded (S34-user-rejects): Claude Code's refusal text, and the
    // turn stops for the user: no second model request.
    assert_eq!(
        result(&events),
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
    );
    assert_eq!(
        events.iter().filter(|e| e["type"] == "step/start").count(),
        1
    );
    // After the step's results, Claude Code's interrupted-by-user text
    // block, which the model reads with the next prompt (S34).
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .skip_while(|k| *k != "tool/result")
        .collect();
    assert_eq!(
        kinds[..3],
        ["tool/result", "context/message", "step/end"],
        "{events:#?}"
    );
    assert_eq!(
        first(&events, "context/message").unwrap()["content"],
        "[Request interrupted by user for tool use]\n"
    );
    assert_eq!(
        first(&events, "turn/end").unwrap()["message"],
        "halted by plugin `approval`: the user rejected a tool call"
    );
    // Asked on a terminal, hooks hear what the interactive CLI tells them
    // (recorded, S33): `cli`.
    assert_eq!(entrypoints_seen(d), ["cli"]);
    // `y`: runs once; nothing is remembered.
    let (_, events) = prompt_on_a_terminal(d, &config, "tty2", "y");
    assert!(made.exists());
    assert!(first(&events, "permission/rule").is_none());
    std::fs::remove_file(&made).unwrap();
    // `a`: runs, and the session keeps a rule for the command...
    let (_, events) = prompt_on_a_terminal(d, &config, "tty3", "a");
    assert!(made.exists());
    let rule = first(&events, "permission/rule").unwrap();
    assert_eq!(
        (&rule["behavior"], &rule["rule"]),
        (&"allow".into(), &"Bash(touch made.txt)".into())
    );
    std::fs::remove_file(&made).unwrap();
    // ... shown by `dsh sessions show` ...
    let out = Command::new(DSH)
        .args([
            "sessions",
            "--config",
            config.to_str().unwrap(),
            "show",
            "tty3",
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown
            .lines()
            .any(|l| l.contains("\"type\":\"permission/rule\"")
                && l.contains("Bash(touch made.txt)")),
        "{shown}"
    );
    // ... and a resumed run without a terminal needs no one to ask; its
    // hooks hear `claude -p`'s `sdk-cli`.
    entrypoints_seen(d);
    let events = prompt(d, &config, &["--session", "tty3"]);
    assert!(first(&events, "tool/denied").is_none(), "{events:#?}");
    assert!(made.exists());
    assert_eq!(entrypoints_seen(d), ["sdk-cli"]);
    // Another session never had the rule: refused headless.
    std::fs::remove_file(&made).unwrap();
    let events = prompt(d, &config, &["--session", "other"]);
    assert!(result(&events).starts_with("touch in '"), "{events:#?}");
    assert!(!made.exists());
}

#[test]
fn claude_settings_files_rules_apply_by_trust_as_claude_code_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = manifest(d, &bash_then_text(PY), "");
    // The bridge discovers the session folder's settings (home and managed
    // settings kept inside the test's folder).
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "      config_path: [settings.json]\n",
        &format!(
            "      config_path: [settings.json]\n      discover: true\n      home: {0}/home\n      managed_settings: {0}/managed.json\n",
            d.display()
        ),
    );
    std::fs::write(&config, text).unwrap();
    let claude = d.join("proj/.claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{"permissions": {"allow": ["Bash(python3:*)"]}}"#,
    )
    .unwrap();
    // Untrusted: its allow is ignored (recorded, S31), yet the session's
    // permissions are managed: the command asks, and headless that refuses.
    let events = prompt(d, &config, &[]);
    assert_eq!(result(&events), "This command requires approval");
    // Trusted, the project's allow lets it run.
    let out = Command::new(DSH)
        .args(["trust", "--config", config.to_str().unwrap()])
        .arg(d.join("proj"))
        .env_remove("DSH_STATE_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = prompt(d, &config, &[]);
    assert_eq!(result(&events), "42");
    // A new, untrusted local file's deny still applies, and beats the allow.
    std::fs::write(
        claude.join("settings.local.json"),
        r#"{"permissions": {"deny": ["Bash(python3:*)"]}}"#,
    )
    .unwrap();
    let events = prompt(d, &config, &[]);
    assert_eq!(
        result(&events),
        format!("Permission to use Bash with command {PY} has been denied.")
    );
    assert_eq!(
        first(&events, "tool/denied").unwrap()["by"],
        "permissions (rule local: Bash(python3:*))"
    );
}
