//! Sessions across connections: load and replay, cancel, and what a
//! closing connection does to its turns.

use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{CancelNotification, StopReason};
use serde_json::json;

use crate::support::{Answer, Model, TestHost, bash, of_kind, text, until, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_replays_the_conversation_then_fires_session_start_resume() {
    let host = TestHost::new(
        Model::Scripted(json!([
            {"text": "Looking.", "tool_calls": [{"name": "Bash", "arguments": {"command": "echo hi"}}]},
            text("Done."),
            text("Again."),
        ])),
        &[json!({})],
    );
    let (first, serving) = host.connect(Answer::Fail).await;
    let session = first.open(&host.project).await;
    assert_eq!(
        first.prompt(&session, "hello").await.unwrap(),
        StopReason::EndTurn
    );
    first.close().await;
    within("the first connection to end", serving)
        .await
        .unwrap()
        .unwrap();

    let (mut second, _serving) = host.connect(Answer::Fail).await;
    second.initialize().await;
    second.load(&session, &host.project).await.unwrap();
    let mut replayed = second.take_updates();
    replayed[3]["rawOutput"]
        .as_object_mut()
        .unwrap()
        .remove("structured");
    assert_eq!(
        replayed,
        [
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hello"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Looking."}}),
            json!({
                "sessionUpdate": "tool_call", "toolCallId": "call_1_1", "title": "Bash: echo hi",
                "kind": "execute", "status": "in_progress", "rawInput": {"command": "echo hi"}
            }),
            json!({
                "sessionUpdate": "tool_call_update", "toolCallId": "call_1_1", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "hi"}}],
                "rawOutput": {"content": "hi", "is_error": false}
            }),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}}),
        ]
    );
    let starts: Vec<_> = host
        .seen()
        .into_iter()
        .filter(|s| s["seam"] == "session-start")
        .map(|s| s["source"].clone())
        .collect();
    assert_eq!(starts, ["startup", "resume"]);
    // The loaded session goes on with its history.
    assert_eq!(
        second.prompt(&session, "more").await.unwrap(),
        StopReason::EndTurn
    );
    let third = host.requests()[2]["messages"].to_string();
    assert!(
        third.contains("hello") && third.contains("Done."),
        "{third}"
    );
    second.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_an_unknown_session_or_one_held_elsewhere_is_refused() {
    let host = TestHost::new(Model::Scripted(json!([])), &[]);
    let (owner, _a) = host.connect(Answer::Fail).await;
    let session = owner.open(&host.project).await;
    let (other, _b) = host.connect(Answer::Fail).await;
    other.initialize().await;
    let error = other.load("ses_missing", &host.project).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    let error = other.load(&session, &host.project).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("another connection"), "{error:?}");
    // Nor may it prompt a session it does not hold.
    let error = other.prompt(&session, "hi").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    owner.close().await;
    other.close().await;
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_the_running_bash_and_answers_cancelled() {
    let host = TestHost::new(
        Model::Scripted(json!([bash("echo $$ > bash.pid; exec sleep 30")])),
        &[],
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    let prompt = {
        let cx = client.cx.clone();
        let session = session.clone();
        tokio::spawn(async move {
            let request = agent_client_protocol::v1::schema::PromptRequest::new(
                session,
                vec!["sleep".into()],
            );
            cx.send_request(request).block_task().await
        })
    };
    assert_eq!(client.next_update().await["sessionUpdate"], "tool_call");
    let pid_file = host.project.join("bash.pid");
    until("the command to write its pid", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    })
    .await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    client
        .cx
        .send_notification(CancelNotification::new(session.clone()))
        .unwrap();
    let answer = within("the cancelled prompt", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer.stop_reason, StopReason::Cancelled);
    until("the sleep process to be gone", || !alive(pid)).await;
    let log = host.log(&session);
    assert_eq!(
        of_kind(&log, "turn/end").last().unwrap()["reason"],
        "aborted"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closing_mid_turn_cancels_the_turn_and_its_pending_approval() {
    let host = TestHost::new(
        Model::Scripted(json!([bash("touch approved.txt"), text("never")])),
        &[json!({"pre": "ask"})],
    );
    let (mut client, serving) = host.connect(Answer::Hold).await;
    let session = client.open(&host.project).await;
    let prompt = {
        let cx = client.cx.clone();
        let session = session.clone();
        tokio::spawn(async move {
            let request = agent_client_protocol::v1::schema::PromptRequest::new(
                session,
                vec!["touch it".into()],
            );
            cx.send_request(request).block_task().await
        })
    };
    within("the permission request", client.permissions.recv())
        .await
        .unwrap();
    client.close().await;
    assert!(within("the prompt to fail", prompt).await.unwrap().is_err());
    within("the server side to end", serving)
        .await
        .unwrap()
        .unwrap();
    // The turn was cancelled with the connection, its approval with it.
    assert!(
        !host.project.join("approved.txt").exists(),
        "the tool must not run"
    );
    let log = host.log(&session);
    assert_eq!(of_kind(&log, "tool/denied").len(), 1, "{log:#?}");
    assert_eq!(
        of_kind(&log, "turn/end").last().unwrap()["reason"],
        "aborted"
    );
    assert!(host.agent.get(&session).is_none(), "the session was closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_sent_right_behind_its_prompt_still_stops_the_turn() {
    let host = TestHost::new(Model::Scripted(json!([bash("sleep 60")])), &[]);
    let (client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    // No waiting in between: the cancel may reach the session before its
    // turn has started; it must not be lost.
    let request =
        agent_client_protocol::v1::schema::PromptRequest::new(session.clone(), vec!["go".into()]);
    let answer = client.cx.send_request(request);
    client
        .cx
        .send_notification(CancelNotification::new(session.clone()))
        .unwrap();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(20), answer.block_task())
        .await
        .expect("the turn ignored the cancel")
        .unwrap();
    assert_eq!(answer.stop_reason, StopReason::Cancelled);
    let log = host.log(&session);
    assert_eq!(
        of_kind(&log, "turn/end").last().unwrap()["reason"],
        "aborted"
    );
    client.close().await;
}
