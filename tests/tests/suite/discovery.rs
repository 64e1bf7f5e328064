//! Per-project hook discovery and trust (issue 11), through the real `dsh`
//! binary with real files in a throwaway home and project, and real shells:
//! each hook is `echo LABEL >> hooks.log`, and the session log's
//! `hook/invoked` records say which ran in which order.
//!
//! - Claude Code's layering: user, project and local settings run in that
//!   order once the project is trusted; `disableAllHooks` (the highest
//!   non-managed layer decides) leaves only managed hooks; managed
//!   `disableAllHooks` and `allowManagedHooksOnly` (recorded as S40 and read
//!   from Claude Code's source).
//! - Codex's layering: `$CODEX_HOME`, then each `.codex/` from the project
//!   root down to the session's folder; untrusted until `dsh trust`, a
//!   changed file untrusted again, `--list` and `--revoke`. Codex's
//!   per-hook review (`trusted_hash` in `$CODEX_HOME/config.toml`): read as
//!   Codex writes it, written by `dsh trust`, a stale one skips the hook,
//!   `bypass_hook_trust` runs unreviewed hooks but not disabled ones.
//! - Changes: an edit reaches the next turn of an open ACP session, a broken
//!   edit keeps the last good version and shows in `dsh check`, the ACP
//!   session of an untrusted project starts with a notice; a running
//!   daemon's SIGHUP re-reads the files.

use std::path::{Path, PathBuf};

use dsh_tests::acp_stdio::AcpStdio;
use dsh_tests::daemon::{RpcClient, ServedDaemon};
use dsh_tests::{Outcome, run_dsh, temp_dir};
use serde_json::{Value, json};

/// A throwaway site: `cordis.yml` (bash-local, a scripted model, both
/// bridges with discovery on), the Claude home `home/`, the Codex home
/// `codex/`, managed settings `etc/managed.json`, a git project `proj/`,
/// and `hooks.log`, where every hook writes its label.
pub(crate) struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    /// Both bridges discovering; `claude` and `codex` are extra keys of
    /// their configs (YAML flow-map entries, e.g. `trusted_prefixes: [proj]`).
    pub(crate) fn new(claude: &str, codex: &str) -> Site {
        let site = Site { dir: temp_dir() };
        let script: String = (0..12).map(|n| format!("- text: ok {n}\n")).collect();
        site.write("script.yml", &script);
        site.write(
            "cordis.yml",
            &format!(
                "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {{script: script.yml}}\n  - name: hooks-claude\n    config: {{discover: true, home: home, managed_settings: etc/managed.json{claude}}}\n  - name: hooks-codex\n    config: {{discover: true, codex_home: codex{codex}}}\n"
            ),
        );
        std::fs::create_dir_all(site.path("proj/.git")).unwrap();
        std::fs::create_dir_all(site.path("home")).unwrap();
        std::fs::create_dir_all(site.path("codex")).unwrap();
        site
    }

    /// The site folder.
    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `rel` inside the site.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `text` to `rel`, making its folders.
    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }

    /// The command of a hook labelled `label`.
    pub(crate) fn hook(&self, label: &str) -> String {
        format!("echo {label} >> '{}'", self.path("hooks.log").display())
    }

    /// A settings / hooks.json text whose UserPromptSubmit hooks are
    /// `labels`, plus the top-level keys of `extra`.
    pub(crate) fn ups(&self, labels: &[&str], extra: Value) -> String {
        let hooks: Vec<Value> = labels
            .iter()
            .map(|l| json!({"type": "command", "command": self.hook(l)}))
            .collect();
        let mut v = json!({"hooks": {"UserPromptSubmit": [{"hooks": hooks}]}});
        if let Value::Object(extra) = extra {
            v.as_object_mut().unwrap().extend(extra);
        }
        v.to_string()
    }

    /// `dsh ARGS --config <site>/cordis.yml`, run in the site.
    pub(crate) fn dsh(&self, args: &[&str]) -> Outcome {
        self.dsh_in("", args)
    }

    /// `dsh ARGS --config <site>/cordis.yml`, run in the site folder `cwd`
    /// (`dsh check` reads the project of the folder it runs in).
    pub(crate) fn dsh_in(&self, cwd: &str, args: &[&str]) -> Outcome {
        let manifest = self.path("cordis.yml");
        let mut all: Vec<&str> = args.to_vec();
        all.push("--config");
        all.push(manifest.to_str().unwrap());
        run_dsh(all, &self.path(cwd))
    }

    /// One turn of session `id` in `cwd` (a site-relative folder).
    pub(crate) fn prompt(&self, cwd: &str, id: &str) -> Outcome {
        let cwd = self.path(cwd);
        let out = self.dsh(&[
            "prompt",
            "--cwd",
            cwd.to_str().unwrap(),
            "--session",
            id,
            "hi",
        ]);
        assert_eq!(out.code, Some(0), "{}", shown(&out));
        out
    }

    /// `(dialect, label)` of each hook the last turn of session `id` ran,
    /// in record (config) order.
    pub(crate) fn ran(&self, id: &str) -> Vec<(String, String)> {
        let log =
            std::fs::read_to_string(self.path(&format!("state/sessions/{id}.jsonl"))).unwrap();
        let events: Vec<Value> = log
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let last = events
            .iter()
            .rposition(|e| e["type"] == "turn/start")
            .expect("a turn");
        events[last..]
            .iter()
            .filter(|e| e["type"] == "hook/invoked")
            .map(|e| {
                let command = e["command"].as_str().unwrap();
                let label = command.split_whitespace().nth(1).unwrap_or_default();
                (
                    e["dialect"].as_str().unwrap().to_string(),
                    label.to_string(),
                )
            })
            .collect()
    }

    /// The labels in `hooks.log`, sorted, and the log emptied.
    pub(crate) fn take_log(&self) -> Vec<String> {
        let path = self.path("hooks.log");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        let mut labels: Vec<String> = text.lines().map(String::from).collect();
        labels.sort();
        labels
    }
}

/// `outcome` in full, for assertion messages.
pub(crate) fn shown(outcome: &Outcome) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        outcome.code, outcome.stdout, outcome.stderr
    )
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(d, l)| (d.to_string(), l.to_string()))
        .collect()
}

#[test]
fn claude_user_project_and_local_settings_run_in_order_once_the_project_is_trusted() {
    let site = Site::new("", "");
    site.write(
        "home/.claude/settings.json",
        &site.ups(&["user"], json!({})),
    );
    site.write(
        "proj/.claude/settings.json",
        &site.ups(&["project"], json!({})),
    );
    site.write(
        "proj/.claude/settings.local.json",
        &site.ups(&["local"], json!({})),
    );

    // Untrusted: only the user's hooks run, and the user is told why.
    let out = site.prompt("proj", "s1");
    assert_eq!(site.ran("s1"), pairs(&[("claude", "user")]));
    let proj = site.path("proj");
    for needle in [
        "Claude Code project hooks in".to_string(),
        format!("{}/.claude/settings.json (not trusted)", proj.display()),
        format!(
            "{}/.claude/settings.local.json (not trusted)",
            proj.display()
        ),
        format!("`dsh trust {}`", proj.display()),
    ] {
        assert!(out.stderr.contains(&needle), "{needle}\n{}", shown(&out));
    }

    let trusted = site.dsh(&["trust", proj.to_str().unwrap()]);
    assert_eq!(trusted.code, Some(0), "{}", shown(&trusted));
    assert!(
        trusted
            .stdout
            .contains(&format!("trusted {} (2 file(s))", proj.display())),
        "{}",
        shown(&trusted)
    );
    let out = site.prompt("proj", "s2");
    assert_eq!(
        site.ran("s2"),
        pairs(&[
            ("claude", "user"),
            ("claude", "project"),
            ("claude", "local")
        ])
    );
    assert!(!out.stderr.contains("not trusted"), "{}", shown(&out));
    assert_eq!(site.take_log(), ["local", "project", "user", "user"]);
}

#[test]
fn claude_disable_all_hooks_leaves_managed_hooks_and_managed_settings_rule() {
    let site = Site::new(", trusted_prefixes: [proj]", "");
    site.write(
        "home/.claude/settings.json",
        &site.ups(&["user"], json!({})),
    );
    site.write(
        "proj/.claude/settings.json",
        &site.ups(&["project"], json!({})),
    );
    site.write("etc/managed.json", &site.ups(&["managed"], json!({})));

    // Every layer runs; managed settings come last (trusted_prefixes
    // trusts the project without `dsh trust`).
    site.prompt("proj", "s1");
    assert_eq!(
        site.ran("s1"),
        pairs(&[
            ("claude", "user"),
            ("claude", "project"),
            ("claude", "managed")
        ])
    );

    // The highest non-managed layer that sets disableAllHooks decides
    // (recorded S40: user true, project false: hooks run) ...
    site.write(
        "home/.claude/settings.json",
        &site.ups(&["user"], json!({"disableAllHooks": true})),
    );
    site.write(
        "proj/.claude/settings.json",
        &site.ups(&["project"], json!({"disableAllHooks": false})),
    );
    site.prompt("proj", "s2");
    assert_eq!(
        site.ran("s2"),
        pairs(&[
            ("claude", "user"),
            ("claude", "project"),
            ("claude", "managed")
        ])
    );
    // ... and a local true turns off all but the managed hooks (recorded
    // S40: without managed hooks, nothing runs).
    site.write(
        "proj/.claude/settings.local.json",
        &json!({"disableAllHooks": true}).to_string(),
    );
    site.prompt("proj", "s3");
    assert_eq!(site.ran("s3"), pairs(&[("claude", "managed")]));

    // Managed allowManagedHooksOnly: only managed hooks, whatever the rest say.
    std::fs::remove_file(site.path("proj/.claude/settings.local.json")).unwrap();
    site.write(
        "etc/managed.json",
        &site.ups(&["managed"], json!({"allowManagedHooksOnly": true})),
    );
    site.prompt("proj", "s4");
    assert_eq!(site.ran("s4"), pairs(&[("claude", "managed")]));

    // Managed disableAllHooks: nothing at all.
    site.write(
        "etc/managed.json",
        &site.ups(&["managed"], json!({"disableAllHooks": true})),
    );
    site.prompt("proj", "s5");
    assert_eq!(site.ran("s5"), pairs(&[]));
}

#[test]
fn codex_project_layers_run_root_first_once_trusted_and_a_changed_file_is_untrusted_again() {
    let site = Site::new("", "");
    site.write("codex/hooks.json", &site.ups(&["user"], json!({})));
    site.write("proj/.codex/hooks.json", &site.ups(&["root"], json!({})));
    let sub_hook = site.hook("sub");
    site.write(
        "proj/sub/.codex/config.toml",
        &format!(
            "model = \"m\"\n[[hooks.UserPromptSubmit]]\n[[hooks.UserPromptSubmit.hooks]]\ntype = \"command\"\ncommand = \"{}\"\n",
            sub_hook.replace('\\', "\\\\").replace('"', "\\\"")
        ),
    );
    let sub = site.path("proj/sub");
    let root_file = site.path("proj/.codex/hooks.json");

    let user_key = format!(
        "{}:user_prompt_submit:0:0",
        site.path("codex/hooks.json").display()
    );
    let root_key = format!("{}:user_prompt_submit:0:0", root_file.display());

    // Nothing reviewed: Codex runs no hook, the user's own included
    // (recorded, C1-no-trust-bypass); the notice names the files and hooks.
    let out = site.prompt("proj/sub", "s1");
    assert_eq!(site.ran("s1"), pairs(&[]));
    assert!(
        out.stderr
            .contains(&format!("{} (not trusted)", root_file.display()))
            && out.stderr.contains(&format!("{user_key} (not trusted)")),
        "{}",
        shown(&out)
    );

    // `dsh trust` approves the project and reviews every hook in Codex's
    // own record, as Codex keys and hashes them.
    let trusted = site.dsh(&["trust", sub.to_str().unwrap()]);
    assert_eq!(trusted.code, Some(0), "{}", shown(&trusted));
    let record = std::fs::read_to_string(site.path("codex/config.toml")).unwrap();
    for key in [&user_key, &root_key] {
        assert!(
            record.contains(&format!(
                "[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:"
            )),
            "{record}"
        );
    }
    site.prompt("proj/sub", "s2");
    assert_eq!(
        site.ran("s2"),
        pairs(&[("codex", "user"), ("codex", "root"), ("codex", "sub")])
    );

    // An edit after the approval: that file and its hook are untrusted
    // again; the rest of the project still runs.
    site.write("proj/.codex/hooks.json", &site.ups(&["root2"], json!({})));
    let out = site.prompt("proj/sub", "s3");
    assert_eq!(
        site.ran("s3"),
        pairs(&[("codex", "user"), ("codex", "sub")])
    );
    assert!(
        out.stderr.contains(&format!(
            "{} (changed since it was trusted)",
            root_file.display()
        )),
        "{}",
        shown(&out)
    );
    let listed = site.dsh(&["trust", "--list"]);
    assert_eq!(listed.code, Some(0), "{}", shown(&listed));
    assert!(
        listed
            .stdout
            .contains(&format!("{} sha256:", root_file.display()))
            && listed.stdout.contains("(changed since trusted: untrusted)")
            && listed.stdout.contains(&format!("  {user_key} sha256:")),
        "{}",
        shown(&listed)
    );

    assert_eq!(site.dsh(&["trust", sub.to_str().unwrap()]).code, Some(0));
    site.prompt("proj/sub", "s4");
    assert_eq!(
        site.ran("s4"),
        pairs(&[("codex", "user"), ("codex", "root2"), ("codex", "sub")])
    );

    // Revoking the project drops its hooks' reviews; the user's stay.
    let revoked = site.dsh(&["trust", "--revoke", sub.to_str().unwrap()]);
    assert_eq!(revoked.code, Some(0), "{}", shown(&revoked));
    assert!(
        revoked
            .stdout
            .contains(&format!("revoked {}", site.path("proj").display()))
            && revoked
                .stdout
                .contains(&format!("revoked Codex hook review {root_key}")),
        "{}",
        shown(&revoked)
    );
    site.prompt("proj/sub", "s5");
    assert_eq!(site.ran("s5"), pairs(&[("codex", "user")]));
}

/// Codex's per-hook review of `echo a >> hooks.log` as a UserPromptSubmit
/// hook, computed by the recorder's `hook_trust.py` (whose hashes Codex
/// 0.171 accepted, C100), independently of dsh's code.
const HASH_A: &str = "sha256:23d61b0de3d7134de4e255300e3ff7b207f559b1d6979d72ebbd1c2a00f5eb92";

#[test]
fn a_hook_codex_reviewed_runs_a_stale_review_does_not_and_the_bypass_keeps_disabled_hooks_off() {
    let site = Site::new("", "");
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo a >> hooks.log"},
        {"type": "command", "command": "echo b >> hooks.log"}]}]}});
    site.write("codex/hooks.json", &hooks.to_string());
    let key = |n: usize| {
        format!(
            "{}:user_prompt_submit:0:{n}",
            site.path("codex/hooks.json").display()
        )
    };
    // As Codex writes its record: a reviewed `a`, and `b` reviewed before
    // an edit.
    site.write(
        "codex/config.toml",
        &format!(
            "model = \"m\"\n\n[hooks.state.\"{}\"]\ntrusted_hash = \"{HASH_A}\"\n\n[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:{}\"\n",
            key(0),
            key(1),
            "0".repeat(64)
        ),
    );
    let out = site.prompt("proj", "s1");
    assert_eq!(site.ran("s1"), pairs(&[("codex", "a")]), "{}", shown(&out));
    assert!(
        out.stderr
            .contains(&format!("{} (changed since it was trusted)", key(1))),
        "{}",
        shown(&out)
    );
    let check = site.dsh_in("proj", &["check"]);
    assert!(
        check.stdout.contains(&format!(
            "Codex hook `{}` changed since it was trusted; it does not run until it is reviewed",
            key(1)
        )),
        "{}",
        shown(&check)
    );

    // The operator's bypass (Codex's --dangerously-bypass-hook-trust):
    // unreviewed hooks run, a hook Codex's record turns off does not.
    let bypass = Site::new("", ", bypass_hook_trust: true");
    bypass.write("codex/hooks.json", &hooks.to_string());
    bypass.write(
        "codex/config.toml",
        &format!(
            "[hooks.state.\"{}:user_prompt_submit:0:0\"]\nenabled = false\n",
            bypass.path("codex/hooks.json").display()
        ),
    );
    let out = bypass.prompt("proj", "s1");
    assert_eq!(
        bypass.ran("s1"),
        pairs(&[("codex", "b")]),
        "{}",
        shown(&out)
    );
    assert!(!out.stderr.contains("not reviewed"), "{}", shown(&out));
}

/// The `agent_message_chunk` texts among `notifications`.
fn agent_texts(notifications: &[Value]) -> Vec<String> {
    notifications
        .iter()
        .filter(|n| n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|n| n["params"]["update"]["content"]["text"].as_str())
        .map(String::from)
        .collect()
}

#[test]
fn an_open_acp_session_sees_trust_and_edits_at_its_next_turn_and_keeps_the_last_good_file() {
    let site = Site::new("", "");
    site.write("home/.claude/settings.json", &site.ups(&["u1"], json!({})));
    site.write(
        "proj/.claude/settings.json",
        &site.ups(&["proj"], json!({})),
    );
    let proj = site.path("proj");
    let mut acp = AcpStdio::start(&site.path("cordis.yml"), site.root());
    let session = acp.new_session(&proj);
    let prompt = |acp: &mut AcpStdio| {
        let answer = acp.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
        );
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    };

    // The untrusted project's session starts with a notice naming the
    // skipped file and the command that trusts it.
    prompt(&mut acp);
    assert_eq!(site.take_log(), ["u1"]);
    let texts = agent_texts(&acp.notifications);
    let notice = texts
        .iter()
        .find(|t| t.contains("were not run because the project is not trusted"))
        .unwrap_or_else(|| panic!("no notice in {texts:?}"));
    assert!(
        notice.contains(&format!(
            "{}/.claude/settings.json (not trusted)",
            proj.display()
        )) && notice.contains(&format!("`dsh trust {}`", proj.display())),
        "{notice}"
    );

    // Trusted from another process: the same session's next turn runs it.
    assert_eq!(site.dsh(&["trust", proj.to_str().unwrap()]).code, Some(0));
    acp.notifications.clear();
    prompt(&mut acp);
    assert_eq!(site.take_log(), ["proj", "u1"]);
    assert!(
        !agent_texts(&acp.notifications)
            .iter()
            .any(|t| t.contains("not trusted")),
        "no second notice"
    );

    // An edit of the user's settings: the next turn runs the new hook.
    site.write("home/.claude/settings.json", &site.ups(&["u2"], json!({})));
    prompt(&mut acp);
    assert_eq!(site.take_log(), ["proj", "u2"]);

    // A broken edit: the last good version stays in effect ...
    site.write(
        "home/.claude/settings.json",
        "{\"hooks\": {\"UserPromptSubmit\": [",
    );
    prompt(&mut acp);
    assert_eq!(site.take_log(), ["proj", "u2"]);
    // ... and `dsh check` names the file and what is wrong.
    let check = site.dsh(&["check"]);
    let user_file = site.path("home/.claude/settings.json");
    assert!(
        check.stdout.contains(&format!(
            "{}: not valid: EOF while parsing",
            user_file.display()
        )),
        "{}",
        shown(&check)
    );
    assert_eq!(acp.close(), Some(0));
}

#[test]
fn sighup_rereads_the_hook_files_of_a_running_daemon() {
    let dir = temp_dir();
    let d = dir.path();
    let script: String = (0..6).map(|n| format!("- text: ok {n}\n")).collect();
    std::fs::write(d.join("script.yml"), script).unwrap();
    let hook = |label: &str| {
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": format!("echo {label} >> '{}'", d.join("hooks.log").display())}
        ]}]}})
        .to_string()
    };
    std::fs::write(d.join("hooks.json"), hook("before")).unwrap();
    let config = d.join("cordis.yml");
    std::fs::write(
        &config,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {script: script.yml}\n  - name: hooks-claude\n    config: {config_path: hooks.json}\n",
    )
    .unwrap();
    let daemon = ServedDaemon::start(&config, d, "info");
    let mut client = RpcClient::connect(&d.join("state/dsh.sock")).unwrap();
    client.initialize();
    let session = client.new_session(d);
    let log = || std::fs::read_to_string(d.join("hooks.log")).unwrap_or_default();
    assert_eq!(client.prompt(&session, "one"), "end_turn");
    assert_eq!(log(), "before\n");

    std::fs::write(d.join("hooks.json"), hook("after")).unwrap();
    daemon.signal(libc::SIGHUP);
    daemon.expect_notify("RELOADING=1");
    let ready = daemon.expect_notify("READY=1");
    assert!(!ready.contains("reload failed"), "{ready}");
    assert_eq!(client.prompt(&session, "two"), "end_turn");
    assert_eq!(log(), "before\nafter\n");
}
