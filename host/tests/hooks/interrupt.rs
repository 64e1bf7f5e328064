//! Codex's Interrupt: a turn cancelled while its tool runs runs the
//! Interrupt hooks with the turn head Codex 0.171.0 sends, and no
//! PostToolUse or Stop hook (recorded: `codex exec` given SIGINT mid-tool, C173 in
//! `tools/recorder-scenarios/FINDINGS-sub2.md`).

use std::time::Duration;

use dsh_host::agent::Prompt;
use dsh_host::session::TurnEndReason;
use serde_json::{Value, json};

use crate::bridge::{Case, bash, text};
use crate::support::{Outcome, of_kind, wait_for, within};

/// A generous bound against hangs; never a measurement.
const LIMIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_codex_turn_runs_interrupt_hooks_and_no_stop() {
    let c = Case::new(
        "hooks-codex",
        &[],
        json!([bash("touch started; sleep 30"), text("never read")]),
        |cap| {
            let save = |name: &str| {
                let cmd = cap.hook(
                    &format!("{name}.sh"),
                    &format!("cat > $CAP/{name}.tmp && mv $CAP/{name}.tmp $CAP/{name}.json"),
                );
                json!([{"hooks": [{"type": "command", "command": cmd}]}])
            };
            json!({
                "Interrupt": save("interrupt"),
                "PostToolUse": save("post"),
                "Stop": save("stop")
            })
        },
    );
    let session = c.session().await;
    let turn = tokio::spawn({
        let session = session.clone();
        async move { session.prompt(Prompt::user("run the sleeper")).await }
    });
    wait_for("the tool to start", LIMIT, || {
        c.project.join("started").exists()
    })
    .await;
    assert!(
        !c.cap.0.join("interrupt.json").exists(),
        "Interrupt fired before the cancel"
    );
    session.cancel();
    let out: Outcome = within("the cancelled turn", LIMIT, turn)
        .await
        .unwrap()
        .into();
    assert_eq!(out.reason, TurnEndReason::Aborted, "{:?}", out.events);
    wait_for("the Interrupt hook's payload", LIMIT, || {
        c.cap.0.join("interrupt.json").exists()
    })
    .await;
    let raw = c.cap.read("interrupt.json");
    let got: Value = serde_json::from_str(&raw).unwrap();
    let keys: Vec<&str> = got
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "turn_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "model",
            "permission_mode"
        ],
        "{raw}"
    );
    let turn_id = of_kind(&out.events, "turn/start")[0]["turn_id"].clone();
    let r = session.session_ref();
    assert_eq!(got["session_id"], r.session_id.as_str(), "{raw}");
    assert_eq!(got["turn_id"], turn_id, "{raw}");
    assert_eq!(got["transcript_path"], r.log_path.as_str(), "{raw}");
    assert_eq!(got["cwd"], c.project.display().to_string(), "{raw}");
    assert_eq!(got["hook_event_name"], "Interrupt", "{raw}");
    assert_eq!(got["model"], "mock-model", "{raw}");
    assert!(
        !raw.ends_with('\n'),
        "Codex's stdin has no trailing newline"
    );
    assert!(
        !c.cap.0.join("stop.json").exists(),
        "Stop fired for a cancelled turn: {}",
        c.cap.read("stop.json")
    );
    assert_eq!(
        c.host.requests().len(),
        1,
        "the model was asked after the cancel"
    );
}
