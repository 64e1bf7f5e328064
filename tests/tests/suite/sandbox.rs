//! Codex's sandbox for the shell tools (bash-local `sandbox_mode`), through
//! the real `dsh` binary: real user and mount namespaces built by `dsh
//! sandbox-exec`, real shells, real files; only the model is scripted.
//!
//! - `read-only`: a write fails with the text Codex's sandbox gave (C101:
//!   `Read-only file system`, exit 1) in `Bash` and in `exec_command`,
//!   reads work, and a `cd` still persists (dsh's own side-channel file
//!   stays writable);
//! - `workspace-write`: the cwd and the `writable_roots` are writable, a
//!   folder outside them and the project's `.git` are not;
//! - the network: no socket but `AF_UNIX` in the sandbox (Codex's text,
//!   C110c) unless `network_access`.

use std::net::TcpListener;
use std::path::Path;

use dsh_tests::{Outcome, run_dsh, temp_dir};
use serde_json::Value;

/// A manifest running `bash-local` with `sandbox` (YAML lines under its
/// `config:`) and the model script `script` (YAML). `exec_command`'s login
/// shell gets an empty `HOME`, so no profile of the machine's speaks.
fn setup(dir: &Path, sandbox: &str, script: &str) -> std::path::PathBuf {
    let path = dir.join("cordis.yml");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        &path,
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n    config:\n      \
             codex_exec_command: true\n      codex_exec_env: {{HOME: '{}'}}\n{sandbox}  \
             - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n",
            home.display()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("script.yml"), script).unwrap();
    path
}

/// `dsh prompt --json` in `cwd`.
pub(super) fn prompt(config: &Path, cwd: &Path) -> Outcome {
    let out = run_dsh(
        [
            "prompt",
            "--json",
            "--config",
            config.to_str().unwrap(),
            "--cwd",
            cwd.to_str().unwrap(),
            "go",
        ],
        cwd,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    out
}

/// Every `tool/result` of the run: (content, is_error).
pub(super) fn results(out: &Outcome) -> Vec<(String, bool)> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool/result")
        .map(|e| {
            (
                e["content"].as_str().unwrap_or_default().to_string(),
                e["is_error"] == true,
            )
        })
        .collect()
}

/// `exec_command`'s output after Codex's framing header.
fn exec_output(content: &str) -> (&str, &str) {
    let code = content
        .lines()
        .find_map(|l| l.strip_prefix("Process exited with code "))
        .unwrap_or_default();
    let output = content.split_once("\nOutput:\n").map_or("", |(_, o)| o);
    (code, output)
}

#[test]
fn read_only_refuses_writes_with_codexs_text_and_keeps_reads_and_cd() {
    let dir = temp_dir();
    let d = dir.path().canonicalize().unwrap();
    let project = d.join("proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::write(project.join("notes.txt"), "kept\n").unwrap();
    let config = setup(
        &d,
        "      sandbox_mode: read-only\n",
        "- tool_calls: [{name: Bash, arguments: {command: 'touch made.txt'}}]\n\
         - tool_calls: [{name: exec_command, arguments: {cmd: 'touch made_by_tool'}}]\n\
         - tool_calls: [{name: Bash, arguments: {command: 'cat notes.txt; echo gone > /dev/null; ls /proc/self/fd > /dev/null && echo proc'}}]\n\
         - tool_calls: [{name: Bash, arguments: {command: 'cd sub'}}]\n\
         - tool_calls: [{name: Bash, arguments: {command: 'pwd; echo x > /tmp/dsh-sandbox-probe'}}]\n\
         - text: done\n",
    );
    let out = prompt(&config, &project);
    let got = results(&out);
    assert_eq!(got.len(), 5, "{}", out.stdout);
    assert_eq!(
        got[0],
        (
            "Exit code 1\ntouch: cannot touch 'made.txt': Read-only file system".to_string(),
            true
        )
    );
    // Codex's own shell tool: the recorded output and status (C101).
    assert_eq!(
        exec_output(&got[1].0),
        (
            "1",
            "touch: cannot touch 'made_by_tool': Read-only file system\n"
        ),
        "{}",
        got[1].0
    );
    assert_eq!(got[2], ("kept\nproc".to_string(), false));
    assert!(!got[3].1, "{:?}", got[3]);
    // The `cd` persisted; `/tmp` is read-only too.
    assert_eq!(
        got[4],
        (
            format!(
                "Exit code 1\n{}\n/bin/bash: line 1: /tmp/dsh-sandbox-probe: Read-only file system",
                project.join("sub").display()
            ),
            true
        )
    );
    for gone in ["made.txt", "made_by_tool"] {
        assert!(!project.join(gone).exists(), "{gone} was written");
    }
    assert!(!Path::new("/tmp/dsh-sandbox-probe").exists());
}

#[test]
fn workspace_write_writes_the_cwd_and_roots_but_not_git_or_elsewhere() {
    let dir = temp_dir();
    let d = dir.path().canonicalize().unwrap();
    let project = d.join("proj");
    let outside = d.join("outside");
    let extra = d.join("extra");
    for f in [
        project.join(".git/hooks"),
        project.join(".aws"),
        outside.clone(),
        extra.clone(),
    ] {
        std::fs::create_dir_all(f).unwrap();
    }
    // `/tmp` (where the temp dirs are) is left out so that `outside` is
    // outside every writable root.
    let config = setup(
        &d,
        &format!(
            "      sandbox_mode: workspace-write\n      sandbox_workspace_write:\n        \
             writable_roots: ['{}']\n        exclude_slash_tmp: true\n        \
             exclude_tmpdir_env_var: true\n",
            extra.display()
        ),
        &format!(
            "- tool_calls: [{{name: Bash, arguments: {{command: 'echo made > made.txt && cat made.txt'}}}}]\n\
             - tool_calls: [{{name: Bash, arguments: {{command: 'touch .git/hooks/pre-commit'}}}}]\n\
             - tool_calls: [{{name: Bash, arguments: {{command: 'touch {o}/x'}}}}]\n\
             - tool_calls: [{{name: exec_command, arguments: {{cmd: 'touch {e}/y && echo ok'}}}}]\n\
             - tool_calls: [{{name: Bash, arguments: {{command: 'touch .aws/credentials'}}}}]\n\
             - text: done\n",
            o = outside.display(),
            e = extra.display()
        ),
    );
    let out = prompt(&config, &project);
    let got = results(&out);
    assert_eq!(got.len(), 5, "{}", out.stdout);
    assert_eq!(got[0], ("made".to_string(), false));
    assert_eq!(
        got[1],
        (
            "Exit code 1\ntouch: cannot touch '.git/hooks/pre-commit': Read-only file system"
                .to_string(),
            true
        )
    );
    assert_eq!(
        got[2],
        (
            format!(
                "Exit code 1\ntouch: cannot touch '{}/x': Read-only file system",
                outside.display()
            ),
            true
        )
    );
    assert_eq!(exec_output(&got[3].0), ("0", "ok\n"), "{}", got[3].0);
    assert_eq!(
        got[4],
        (
            "Exit code 1\ntouch: cannot touch '.aws/credentials': Read-only file system"
                .to_string(),
            true
        )
    );
    assert_eq!(
        std::fs::read_to_string(project.join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(extra.join("y").exists());
    assert!(!project.join(".git/hooks/pre-commit").exists());
    assert!(!outside.join("x").exists());
}

#[test]
fn the_network_is_off_in_the_sandbox_unless_network_access() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "- tool_calls: [{{name: exec_command, arguments: {{cmd: 'exec 3<>/dev/tcp/127.0.0.1/{port}; echo rc=$?'}}}}]\n\
         - tool_calls: [{{name: Bash, arguments: {{command: 'python3 -c \"import socket; socket.socketpair(); print(1)\"'}}}}]\n\
         - text: done\n"
    );
    // Codex's text for a refused socket (C110c), and a connection made.
    let refused = format!(
        "/bin/bash: socket: Operation not permitted\n\
         /bin/bash: line 1: /dev/tcp/127.0.0.1/{port}: Operation not permitted\nrc=1\n"
    );
    let cases = [
        ("      sandbox_mode: workspace-write\n", refused.as_str()),
        (
            "      sandbox_mode: workspace-write\n      sandbox_workspace_write: {network_access: true}\n",
            "rc=0\n",
        ),
    ];
    for (sandbox, want) in cases {
        let dir = temp_dir();
        let config = setup(dir.path(), sandbox, &script);
        let got = results(&prompt(&config, dir.path()));
        assert_eq!(got.len(), 2, "{sandbox}");
        assert_eq!(
            exec_output(&got[0].0),
            ("0", want),
            "{sandbox}: {}",
            got[0].0
        );
        // Local sockets work either way.
        assert_eq!(got[1], ("1".to_string(), false), "{sandbox}");
    }
}

mod masks;
