//! Permission modes as ACP session modes: `session/new` and `session/load`
//! list them, `session/set_mode` changes what asks, `current_mode_update`
//! reports it, and the log keeps it for the next load.

use agent_client_protocol::v1::schema::{
    LoadSessionRequest, NewSessionRequest, SetSessionModeRequest, StopReason,
};
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestClient, TestHost, bash, of_kind, text, within};

async fn set_mode(client: &TestClient, session: &str, mode: &str) -> Result<Value, String> {
    within(
        "session/set_mode",
        client
            .cx
            .send_request(SetSessionModeRequest::new(
                session.to_string(),
                mode.to_string(),
            ))
            .block_task(),
    )
    .await
    .map(|r| serde_json::to_value(r).unwrap())
    .map_err(|e| e.message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_mode_changes_what_asks_and_a_load_keeps_it() {
    let host = TestHost::new(
        // A rejected call ends its turn (as Claude Code's "No"): "one" asks
        // the model once.
        Model::Scripted(json!([
            bash("touch a.txt"),
            bash("touch b.txt"),
            text("two"),
            bash("touch c.txt"),
            text("three"),
        ])),
        &[],
    );
    let (mut client, serving) = host.connect(Answer::Reject).await;
    client.initialize().await;
    let created = within(
        "session/new",
        client
            .cx
            .send_request(NewSessionRequest::new(&host.project))
            .block_task(),
    )
    .await
    .unwrap();
    let session = created.session_id.0.to_string();
    let modes = serde_json::to_value(&created.modes).unwrap();
    assert_eq!(modes["currentModeId"], "default");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "default",
            "acceptEdits",
            "plan",
            "bypassPermissions",
            "dontAsk"
        ]
    );

    // `default`: a command that is not read-only asks; the client rejects.
    set_mode(&client, &session, "default").await.unwrap();
    assert_eq!(
        client.prompt(&session, "one").await.unwrap(),
        StopReason::EndTurn
    );
    let asked = within("the permission request", client.permissions.recv())
        .await
        .unwrap();
    assert_eq!(
        asked.tool_call.fields.raw_input,
        Some(json!({"command": "touch a.txt"}))
    );
    assert!(!host.project.join("a.txt").exists());

    // `bypassPermissions`: the same kind of call runs without asking.
    set_mode(&client, &session, "bypassPermissions")
        .await
        .unwrap();
    let updates = client.take_updates();
    assert!(
        updates.contains(
            &json!({"sessionUpdate": "current_mode_update", "currentModeId": "bypassPermissions"})
        ),
        "{updates:#?}"
    );
    assert_eq!(
        client.prompt(&session, "two").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(host.project.join("b.txt").exists());
    assert!(client.permissions.try_recv().is_err(), "nothing was asked");

    // `dontAsk`: refused without asking, with Claude Code's text.
    set_mode(&client, &session, "dontAsk").await.unwrap();
    assert_eq!(
        client.prompt(&session, "three").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(!host.project.join("c.txt").exists());
    assert!(client.permissions.try_recv().is_err(), "nothing was asked");
    let log = host.log(&session);
    let results = of_kind(&log, "tool/result");
    assert!(
        results[2]["content"]
            .as_str()
            .unwrap()
            .starts_with("Permission to use Bash has been denied because Claude Code is running in don't ask mode."),
        "{:#?}",
        results[2]
    );
    let modes: Vec<&Value> = of_kind(&log, "permission/mode")
        .into_iter()
        .map(|e| &e["mode"])
        .collect();
    assert_eq!(
        modes,
        [
            &json!("default"),
            &json!("bypassPermissions"),
            &json!("dontAsk")
        ]
    );

    // Unknown modes are refused, naming the mode.
    let e = set_mode(&client, &session, "yolo").await.unwrap_err();
    assert!(e.contains("unknown mode `yolo`"), "{e}");
    client.close().await;
    // The first connection has let go of the session (its log's lock too)
    // before another loads it.
    let _ = within("the first connection to end", serving).await;

    // A new connection loads the session in the mode it was left in.
    host.agent.close_session(&session, "other").await;
    let (client, _serving) = host.connect(Answer::Reject).await;
    client.initialize().await;
    let loaded = within(
        "session/load",
        client
            .cx
            .send_request(LoadSessionRequest::new(session.clone(), &host.project))
            .block_task(),
    )
    .await
    .unwrap();
    assert_eq!(
        serde_json::to_value(&loaded.modes).unwrap()["currentModeId"],
        "dontAsk"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_adds_a_session_rule_that_stops_the_next_ask() {
    let host = TestHost::new(
        Model::Scripted(json!([
            bash("touch x.txt"),
            text("one"),
            bash("touch x.txt"),
            text("two"),
        ])),
        &[],
    );
    let (mut client, _serving) = host.connect(Answer::AllowAlways).await;
    let session = client.open(&host.project).await;
    set_mode(&client, &session, "default").await.unwrap();
    assert_eq!(
        client.prompt(&session, "one").await.unwrap(),
        StopReason::EndTurn
    );
    within("the first permission request", client.permissions.recv())
        .await
        .unwrap();
    assert!(host.project.join("x.txt").exists());
    std::fs::remove_file(host.project.join("x.txt")).unwrap();
    assert_eq!(
        client.prompt(&session, "two").await.unwrap(),
        StopReason::EndTurn
    );
    assert!(host.project.join("x.txt").exists(), "the second call ran");
    assert!(
        client.permissions.try_recv().is_err(),
        "and was not asked about"
    );
    let log = host.log(&session);
    let rules = of_kind(&log, "permission/rule");
    assert_eq!(rules.len(), 1, "{log:#?}");
    assert_eq!(rules[0]["behavior"], "allow");
    assert_eq!(rules[0]["rule"], "Bash(touch x.txt)");
    client.close().await;
}
