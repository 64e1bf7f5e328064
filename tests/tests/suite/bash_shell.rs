//! Claude's `Bash` over the real `dsh` binary (which spawns with
//! `posix_spawn`, not the in-process fallback the plugin's own tests use):
//! stdout and stderr read as one stream, and the shell kept in the
//! session's root, as recorded from Claude Code (`S237-*`, `S238-*`,
//! `tools/recorder-scenarios/FINDINGS-bash237.md`).

use serde_json::json;

use super::compaction::Project;

fn bash(command: &str) -> serde_json::Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]})
}

#[test]
fn output_is_one_stream_and_a_cd_out_of_the_project_is_undone() {
    let p = Project::new(&[("PostToolUse", ""), ("CwdChanged", "")], "");
    let run = p.prompt(
        "s1",
        "go",
        json!([
            bash("echo MARK_E1 >&2; echo MARK_O1; echo MARK_E2 >&2"),
            bash("cd /tmp && pwd"),
            bash("pwd"),
            bash("cd /tmp; false"),
            bash("pwd"),
            {"text": "done"}
        ]),
    );
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    let proj = std::fs::canonicalize(p.proj()).unwrap();
    let proj = proj.display().to_string();
    let response = |n: usize| p.hook_stdin("PostToolUse", n).0["tool_response"].clone();
    // One pipe: the order the command wrote in, all in stdout.
    assert_eq!(response(0)["stdout"], "MARK_E1\nMARK_O1\nMARK_E2");
    assert_eq!(response(0)["stderr"], "");
    // Out of the project: announced, undone, told.
    assert_eq!(response(1)["stdout"], "/tmp");
    assert_eq!(
        response(1)["stderr"],
        format!("\nShell cwd was reset to {proj}")
    );
    let (changed, _) = p.hook_stdin("CwdChanged", 0);
    assert_eq!(
        (&changed["old_cwd"], &changed["new_cwd"], &changed["cwd"]),
        (&json!(proj), &json!("/tmp"), &json!(proj))
    );
    assert_eq!(response(2)["stdout"], proj);
    // A failed command moves nothing (and is PostToolUseFailure's).
    assert_eq!(response(3)["stdout"], proj);
    let requests = p.requests();
    let sent = requests.last().unwrap().to_string();
    assert!(
        sent.contains(&format!("/tmp\\nShell cwd was reset to {proj}")),
        "{sent}"
    );
}
