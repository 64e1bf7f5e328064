//! The sandbox fails closed. A kernel that refuses user namespaces (here:
//! `user.max_user_namespaces = 0` in a user namespace of the test's own,
//! which the kernel applies to everything nested in it) runs no sandboxed
//! command: the call's result says why and nothing is written, and `dsh
//! check` fails naming the key. Sandbox settings that cannot work are
//! refused by name.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use dsh_tests::{Outcome, artifacts, run, run_dsh, temp_dir};
use serde_json::Value;

fn manifest(dir: &Path, bash_config: &str) -> std::path::PathBuf {
    let path = dir.join("cordis.yml");
    std::fs::write(
        &path,
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n    config:\n{bash_config}  \
             - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("script.yml"),
        "- tool_calls: [{name: Bash, arguments: {command: 'touch made.txt'}}]\n- text: done\n",
    )
    .unwrap();
    path
}

/// `dsh args` where the kernel hands out no user namespace: `unshare -Ur`
/// (util-linux) enters one, sets its limit of nested ones to 0, and runs
/// dsh in it.
fn dsh_without_userns(args: &[&str], cwd: &Path) -> Outcome {
    let mut command = Command::new("unshare");
    command
        .args(["-Ur", "/bin/sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" \"$@\"")
        .arg(&artifacts::workspace().dsh)
        .args(args)
        .current_dir(cwd);
    run(command, Duration::from_secs(60))
}

#[test]
fn without_user_namespaces_nothing_runs_and_the_result_and_check_say_why() {
    let dir = temp_dir();
    let d = dir.path();
    let config = manifest(d, "      sandbox_mode: read-only\n");
    let config = config.to_str().unwrap();
    let check = dsh_without_userns(&["check", "--config", config], d);
    assert_eq!(check.code, Some(1), "{check:?}");
    let report = format!("{}{}", check.stdout, check.stderr);
    assert!(
        report.contains("key `sandbox_mode`: the read-only sandbox cannot be built here")
            && report.contains("user.max_user_namespaces"),
        "{report}"
    );
    let out = dsh_without_userns(
        &[
            "prompt",
            "--json",
            "--config",
            config,
            "--cwd",
            d.to_str().unwrap(),
            "go",
        ],
        d,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "tool/result")
        .unwrap_or_else(|| panic!("no tool result: {}", out.stdout));
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(
        result["content"],
        "dsh sandbox-exec: the sandbox needs a user namespace and the kernel refused one \
         (unshare: No space left on device (os error 28); user namespaces are off or used up: \
         sysctl user.max_user_namespaces); the command did not run",
        "{result}"
    );
    assert!(!d.join("made.txt").exists(), "the command ran");
    // The same manifest where user namespaces work: check passes.
    let ok = run_dsh(["check", "--config", config], d);
    assert_eq!(ok.code, Some(0), "{ok:?}");
}

#[test]
fn sandbox_settings_that_cannot_work_are_refused_by_name() {
    let cases = [
        (
            "      sandbox_mode: readonly\n",
            "key `config.sandbox_mode`",
        ),
        (
            "      sandbox_mode: workspace-write\n      sandbox_workspace_write: {writable_roots: [rel/dir]}\n",
            "sandbox_workspace_write.writable_roots: rel/dir is not an absolute path",
        ),
        (
            "      sandbox_mode: workspace-write\n      sandbox_workspace_write: {writable_roots: [/nonexistent/dsh-root]}\n",
            "the sandbox's writable root /nonexistent/dsh-root does not exist",
        ),
        (
            "      sandbox_mode: workspace-write\n      sandbox_workspace_write: {network: true}\n",
            "key `config.sandbox_workspace_write`",
        ),
        (
            "      sandbox_mode: read-only\n      sandbox_helper: /bin/false\n",
            "the sandbox helper /bin/false sandbox-exec failed",
        ),
    ];
    for (block, message) in cases {
        let dir = temp_dir();
        let config = manifest(dir.path(), block);
        let out = run_dsh(["check", "--config", config.to_str().unwrap()], dir.path());
        assert_eq!(out.code, Some(1), "{block}: {out:?}");
        let report = format!("{}{}", out.stdout, out.stderr);
        assert!(report.contains(message), "{block}: {report}");
    }
}

mod masks;
