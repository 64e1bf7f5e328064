//! Permissions through the real loop: a subagent works under its parent's
//! mode and rules, as in Claude Code.

use dsh_host::agent::Prompt;
use dsh_host::permissions::{PermissionMode, PermissionState, RuleLayer, RuleSet, RuleSource};
use dsh_host::session::read_log;
use dsh_test_support::agent::AgentHost;
use dsh_test_support::events::{Outcome, bash, of_kind, text};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_inherits_its_parents_mode_and_rules() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = json!({"tool_calls": [{"name": "Task", "arguments": {
        "description": "Make files", "prompt": "make them", "subagent_type": "maker"}}]});
    let mut layer = RuleLayer::new(RuleSource::Manifest);
    layer.allow = vec!["Bash(touch allowed.txt)".into()];
    let permissions = PermissionState {
        mode: PermissionMode::Default,
        rules: RuleSet::from_layers(&[layer]).unwrap(),
        managed: true,
    };
    let h = AgentHost::scripted_with_permissions(
        dir.path(),
        vec![],
        json!([
            spawn,
            bash("touch allowed.txt"),
            bash("touch refused.txt"),
            text("child done"),
            text("parent done")
        ]),
        permissions,
    );
    let session = h.session().await;
    // The parent moves on from the configured mode; the child follows it.
    session.set_permission_mode(PermissionMode::DontAsk, "test");
    let out: Outcome = session.prompt(Prompt::user("delegate")).await.into();
    // The Task itself runs (the subagent tool asks nothing): the child's
    // answer, then Claude Code's agentId/usage note.
    let content = of_kind(&out.events, "tool/result")[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(content.starts_with("child done\nagentId: "), "{content}");
    assert!(
        h.project.join("allowed.txt").exists(),
        "the parent's allow rule applies"
    );
    assert!(
        !h.project.join("refused.txt").exists(),
        "the parent's dontAsk applies"
    );
    let child = of_kind(&out.events, "tool/result")[0]["structured"]["agentId"]
        .as_str()
        .map(String::from);
    let logs = std::fs::read_dir(h.state.join("sessions")).unwrap();
    let child_log = logs
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_stem().unwrap() != session.id.as_str()
                && p.extension().is_some_and(|e| e == "jsonl")
        })
        .unwrap_or_else(|| panic!("no child log (agentId {child:?})"));
    let events = dsh_host::session::events::wire(&read_log(&child_log).unwrap().events);
    let results = of_kind(&events, "tool/result");
    assert_eq!(results.len(), 2, "{events:#?}");
    assert_eq!(results[0]["is_error"], false);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("Permission to use Bash has been denied because Claude Code is running in don't ask mode."),
        "{:#?}",
        results[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_layer_added_to_a_session_is_merged_by_precedence() {
    let dir = tempfile::tempdir().unwrap();
    // The CLI allows every Bash call; the project's settings deny `rm`.
    let mut cli = RuleLayer::new(RuleSource::Cli);
    cli.allow = vec!["Bash".into()];
    let permissions = PermissionState {
        mode: PermissionMode::Default,
        rules: RuleSet::from_layers(&[cli]).unwrap(),
        managed: true,
    };
    let h = AgentHost::scripted_with_permissions(
        dir.path(),
        vec![],
        json!([
            bash("touch kept.txt && rm -f kept.txt"),
            bash("touch made.txt"),
            text("done")
        ]),
        permissions,
    );
    let session = h.session().await;
    let mut project = RuleLayer::new(RuleSource::Project);
    project.deny = vec!["Bash(rm:*)".into()];
    session.add_rule_layer(&project).unwrap();
    let mut bad = RuleLayer::new(RuleSource::Local);
    bad.ask = vec!["Bash(".into()];
    let e = session.add_rule_layer(&bad).unwrap_err().to_string();
    assert_eq!(
        e,
        "permission rule `Bash(` (local ask[0]): a specifier must end with `)`"
    );
    let out: Outcome = session.prompt(Prompt::user("go")).await.into();
    let denied = of_kind(&out.events, "tool/denied");
    assert_eq!(denied.len(), 1, "{:#?}", out.events);
    assert_eq!(denied[0]["by"], "permissions (rule project: Bash(rm:*))");
    assert_eq!(
        denied[0]["reason"],
        "Permission to use Bash with command touch kept.txt && rm -f kept.txt has been denied."
    );
    assert!(!h.project.join("kept.txt").exists());
    assert!(h.project.join("made.txt").exists());
}
