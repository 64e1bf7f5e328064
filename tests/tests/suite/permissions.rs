//! Permissions in the daemon: `dsh serve` starts sessions with the
//! manifest's `permissions:`, and a SIGHUP reload applies a changed block to
//! the sessions opened after it (ACP clients see the mode in `session/new`).

use std::path::Path;

use dsh_tests::daemon::{RpcClient, ServedDaemon};
use dsh_tests::temp_dir;
use serde_json::{Value, json};

fn manifest(permissions: &str) -> String {
    format!(
        "state_dir: state\nshutdown_grace_s: 1\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {{script: script.yml}}\n{permissions}"
    )
}

fn events(dir: &Path, session: &str, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join(format!("state/sessions/{session}.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == kind)
        .collect()
}

fn new_session(client: &mut RpcClient, cwd: &Path) -> (String, Value) {
    let result = client
        .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
        .unwrap();
    (
        result["sessionId"].as_str().unwrap().to_string(),
        result["modes"].clone(),
    )
}

#[test]
fn sighup_applies_a_changed_permissions_block_to_new_sessions() {
    let dir = temp_dir();
    let d = dir.path();
    let mut script = String::new();
    for n in 1..=2 {
        script.push_str(&format!(
            "- tool_calls: [{{name: Bash, arguments: {{command: 'touch ran-{n}'}}}}]\n- text: done {n}\n"
        ));
    }
    std::fs::write(d.join("script.yml"), script).unwrap();
    let config = d.join("cordis.yml");
    std::fs::write(
        &config,
        manifest("permissions: {mode: bypassPermissions}\n"),
    )
    .unwrap();
    let daemon = ServedDaemon::start(&config, d, "info");
    let mut client = RpcClient::connect(&d.join("state/dsh.sock")).unwrap();
    client.initialize();
    let (first, modes) = new_session(&mut client, d);
    assert_eq!(modes["currentModeId"], "bypassPermissions");
    assert_eq!(client.prompt(&first, "one"), "end_turn");
    assert!(d.join("ran-1").exists());

    std::fs::write(&config, manifest("permissions: {mode: dontAsk}\n")).unwrap();
    daemon.signal(libc::SIGHUP);
    daemon.expect_notify("RELOADING=1");
    daemon.expect_notify("READY=1");
    let (second, modes) = new_session(&mut client, d);
    assert_eq!(modes["currentModeId"], "dontAsk");
    assert_eq!(client.prompt(&second, "two"), "end_turn");
    assert!(!d.join("ran-2").exists());
    let denied = events(d, &second, "tool/denied");
    assert_eq!(denied.len(), 1, "{denied:#?}");
    assert!(
        denied[0]["reason"].as_str().unwrap().starts_with(
            "Permission to use Bash has been denied because Claude Code is running in don't ask mode."
        ),
        "{denied:#?}"
    );
    assert_eq!(denied[0]["by"], "permissions (mode dontAsk)");
    daemon.stop();
}
