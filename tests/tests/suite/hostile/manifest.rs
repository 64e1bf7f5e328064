//! Manifests that must not be taken at face value: empty or comment-only
//! files, keys given twice, files over the size limit; by `dsh check` and
//! by a running daemon's SIGHUP reload.

use std::io::Write as _;
use std::path::Path;

use dsh_host::config::MAX_MANIFEST_BYTES;
use dsh_tests::daemon::{RpcClient, ServedDaemon};
use dsh_tests::{example, run_dsh, temp_dir};
use serde_json::Value;

fn check(manifest: &Path, cwd: &Path) -> dsh_tests::Outcome {
    run_dsh(["check", "--config", manifest.to_str().unwrap()], cwd)
}

#[test]
fn check_refuses_an_empty_whitespace_or_comment_only_manifest() {
    for text in [
        "",
        "\n",
        "   \n\n  \n",
        "# just a comment\n",
        "# plugins:\n#   - name: bash-local\n\n   # indented comment\n",
    ] {
        let dir = temp_dir();
        let manifest = dir.path().join("cordis.yml");
        std::fs::write(&manifest, text).unwrap();
        let out = check(&manifest, dir.path());
        assert_eq!(out.code, Some(1), "{text:?}: {out:?}");
        assert_eq!(out.stdout, "", "{text:?}");
        assert_eq!(
            out.stderr,
            format!(
                "{}: the manifest is empty (only whitespace or comments); write at least `plugins: []`\n",
                manifest.display()
            ),
            "{text:?}"
        );
        assert_eq!(std::fs::read_to_string(&manifest).unwrap(), text);
    }
}

#[test]
fn check_refuses_a_key_given_twice_at_any_level_naming_the_file_and_key() {
    // (manifest, the duplicated key, the mapping it is in)
    let cases = [
        (
            "state_dir: state\nlog_level: info\nplugins: []\nlog_level: debug\n",
            "log_level",
            "the top level",
        ),
        (
            "state_dir: state\nplugins: []\nplugins:\n  - name: bash-local\n",
            "plugins",
            "the top level",
        ),
        (
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: tools-fs\n    disabled: true\n    disabled: false\n",
            "disabled",
            "`plugins[1]`",
        ),
        (
            "state_dir: state\nplugins:\n  - name: tools-fs\n    config:\n      max_read_bytes: 1000\n      max_read_bytes: 2000\n",
            "max_read_bytes",
            "`plugins[0].config`",
        ),
        (
            "state_dir: state\nplugins:\n  - {name: bash-local, config: {env_allow: [A], env_allow: []}}\n",
            "env_allow",
            "`plugins[0].config`",
        ),
    ];
    for (text, key, place) in cases {
        let dir = temp_dir();
        let manifest = dir.path().join("cordis.yml");
        std::fs::write(&manifest, text).unwrap();
        let out = check(&manifest, dir.path());
        assert_eq!(out.code, Some(1), "{text}\n{out:?}");
        assert_eq!(
            out.stderr,
            format!(
                "{}: duplicate key `{key}` in {place}: a key may appear only once per mapping\n",
                manifest.display()
            ),
            "{text}"
        );
    }
}

/// A valid manifest padded with a comment to exactly `len` bytes.
fn padded(len: usize) -> String {
    let mut text = "state_dir: state\nplugins: []\n#".to_string();
    text.push_str(&"x".repeat(len - text.len()));
    text
}

#[test]
fn check_refuses_a_manifest_over_one_mebibyte() {
    let limit = MAX_MANIFEST_BYTES as usize;
    assert_eq!(limit, 1024 * 1024, "the README documents 1 MiB");
    let dir = temp_dir();
    let manifest = dir.path().join("cordis.yml");

    std::fs::write(&manifest, padded(limit)).unwrap();
    let out = check(&manifest, dir.path());
    assert_eq!(out.code, Some(0), "exactly the limit is fine: {out:?}");

    std::fs::write(&manifest, padded(limit + 1)).unwrap();
    let out = check(&manifest, dir.path());
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "{}: the manifest is larger than 1048576 bytes (1 MiB); refused unparsed\n",
            manifest.display()
        )
    );
}

#[test]
fn an_endless_manifest_is_refused_after_the_limit_without_reading_on() {
    // A fifo whose writer never closes: a reader that reads to the end
    // waits forever (and would grow without bound); a bounded reader stops
    // one byte past the limit and refuses.
    let dir = temp_dir();
    let fifo = dir.path().join("cordis.yml");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (release, held) = std::sync::mpsc::channel::<()>();
    // A write end is open before dsh starts (read-write: a FIFO opened so
    // does not wait for a reader), so dsh finds a writer there; with none,
    // it reads the FIFO as empty, by design (`input_file.rs`). It is
    // dropped once dsh is done, so a writer dsh left blocked gets EPIPE.
    let keep = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let written = w.write_all(padded(MAX_MANIFEST_BYTES as usize + 1).as_bytes());
            // Keep the write end open (no EOF) until the test is done.
            let _ = held.recv();
            written
        })
    };
    let out = check(&fifo, dir.path());
    drop(keep);
    release.send(()).unwrap();
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.ends_with(
            "cordis.yml: the manifest is larger than 1048576 bytes (1 MiB); refused unparsed\n"
        ),
        "{}",
        out.stderr
    );
    writer.join().unwrap().unwrap();
}

/// The daemon's manifest: Bash, a scripted model, and a policy gate whose
/// `config:` is `gate_config` (the gate left out when `None`).
fn daemon_manifest(gate_config: Option<&str>) -> String {
    let mut text = "state_dir: state\nshutdown_grace_s: 1\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {script: script.yml}\n".to_string();
    if let Some(config) = gate_config {
        text.push_str(&format!(
            "  - id: gate\n    path: {}\n    config:\n{config}",
            example("policy-gate").display()
        ));
    }
    text
}

/// The session's log events of `kind`.
fn events(dir: &Path, session: &str, kind: &str) -> Vec<Value> {
    let path = dir.join(format!("state/sessions/{session}.jsonl"));
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == kind)
        .collect()
}

#[test]
fn sighup_with_an_empty_or_duplicate_key_manifest_keeps_the_running_gate() {
    let dir = temp_dir();
    let d = dir.path();
    // Each prompt asks for `touch ran-N`; the gate denies `touch *`.
    let mut script = String::new();
    for n in 1..=4 {
        script.push_str(&format!(
            "- tool_calls: [{{name: Bash, arguments: {{command: 'touch {}'}}}}]\n- text: done {n}\n",
            d.join(format!("ran-{n}")).display()
        ));
    }
    std::fs::write(d.join("script.yml"), script).unwrap();
    let gate = "      deny: [\"touch *\"]\n";
    let config = d.join("cordis.yml");
    std::fs::write(&config, daemon_manifest(Some(gate))).unwrap();
    let daemon = ServedDaemon::start(&config, d, "info");
    let mut client = RpcClient::connect(&d.join("state/dsh.sock")).unwrap();
    client.initialize();
    let session = client.new_session(d);
    let denied_by_gate = |n: usize| {
        let denied = events(d, &session, "tool/denied");
        assert_eq!(denied.len(), n, "{denied:#?}");
        assert!(
            denied.iter().all(|e| e["reason"]
                .as_str()
                .unwrap()
                .contains("matches denied pattern `touch *`")),
            "{denied:#?}"
        );
    };

    assert_eq!(client.prompt(&session, "one"), "end_turn");
    assert!(!d.join("ran-1").exists());
    denied_by_gate(1);

    // Reloads of manifests that must be refused as a whole; under the old
    // reading, the empty one meant "no plugins" and the duplicate `deny`
    // meant "deny nothing".
    let rejected = [
        (String::new(), "the manifest is empty"),
        (
            daemon_manifest(Some(&format!("{gate}      deny: []\n"))),
            "duplicate key `deny` in `plugins[2].config`",
        ),
    ];
    for (n, (text, error)) in rejected.iter().enumerate() {
        std::fs::write(&config, text).unwrap();
        daemon.signal(libc::SIGHUP);
        daemon.expect_notify("RELOADING=1");
        let ready = daemon.expect_notify("READY=1");
        assert!(
            ready.contains("; reload failed, previous manifest kept: ") && ready.contains(error),
            "STATUS= says the reload failed: {ready}"
        );
        let stderr = daemon.expect_stderr(error);
        assert!(
            stderr.contains(&format!(
                "reload rejected, the running manifest stays: {}: ",
                config.display()
            )),
            "{stderr}"
        );
        let prompt_n = n + 2;
        assert_eq!(client.prompt(&session, "again"), "end_turn");
        assert!(
            !d.join(format!("ran-{prompt_n}")).exists(),
            "the gate still denies after reload {}",
            n + 1
        );
        denied_by_gate(prompt_n);
    }

    // A good manifest without the gate is applied: the same prompt runs.
    std::fs::write(&config, daemon_manifest(None)).unwrap();
    daemon.signal(libc::SIGHUP);
    daemon.expect_notify("RELOADING=1");
    let ready = daemon.expect_notify("READY=1");
    assert!(!ready.contains("reload failed"), "{ready}");
    assert_eq!(client.prompt(&session, "last"), "end_turn");
    assert!(d.join("ran-4").exists(), "without the gate, the tool runs");
    denied_by_gate(3);
    drop(client);
    assert!(daemon.stop().success());
}
