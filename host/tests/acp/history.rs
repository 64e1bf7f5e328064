//! `session/list` (cwd filter, titles, newest first) and the command list
//! every new or loaded session announces.

use agent_client_protocol::v1::schema::{ListSessionsRequest, StopReason};
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestHost, text, within};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_list_names_stored_sessions_by_their_first_prompt_and_filters_by_cwd() {
    let host = TestHost::new(
        Model::Scripted(json!([text("a"), text("b"), text("c")])),
        &[],
    );
    let other = host.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let init = client.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["list"],
        json!({})
    );
    let first = client.new_session(&host.project).await;
    client
        .prompt(&first, "fix the build\nplease")
        .await
        .unwrap();
    let second = client.new_session(&other).await;
    client.prompt(&second, "write docs").await.unwrap();
    let third = client.new_session(&host.project).await;
    assert_eq!(
        client.prompt(&third, &"x".repeat(100)).await.unwrap(),
        StopReason::EndTurn
    );
    let list = |cwd: Option<std::path::PathBuf>| {
        let cx = client.cx.clone();
        async move {
            let response = within(
                "session/list",
                cx.send_request(ListSessionsRequest::new().cwd(cwd))
                    .block_task(),
            )
            .await
            .unwrap();
            serde_json::to_value(response).unwrap()
        }
    };
    let all = list(None).await;
    let ids: Vec<&str> = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{all:#}");
    for id in [&first, &second, &third] {
        assert!(ids.contains(&id.as_str()), "{all:#}");
    }
    let here = list(Some(host.project.clone())).await;
    let sessions: Vec<Value> = here["sessions"].as_array().unwrap().clone();
    let titles: Vec<(&str, &str)> = sessions
        .iter()
        .map(|s| {
            (
                s["sessionId"].as_str().unwrap(),
                s["title"].as_str().unwrap(),
            )
        })
        .collect();
    let long = format!("{}…", "x".repeat(80));
    assert!(
        titles.contains(&(first.as_str(), "fix the build")),
        "{titles:?}"
    );
    assert!(
        titles.contains(&(third.as_str(), long.as_str())),
        "{titles:?}"
    );
    assert_eq!(titles.len(), 2, "{titles:?}");
    for s in &sessions {
        assert_eq!(s["cwd"], json!(host.project));
        assert!(s["updatedAt"].as_str().unwrap().ends_with('Z'), "{s}");
    }
    // Every new session announced its command list: `/compact`.
    let mut announced = Vec::new();
    while let Ok(note) = client.commands.try_recv() {
        assert_eq!(
            note["update"]["availableCommands"],
            json!([{
                "name": "compact",
                "description": "Summarize the conversation so far and continue from the summary",
                "input": {"hint": "what the summary should keep (optional)"},
            }])
        );
        announced.push(note["sessionId"].as_str().unwrap().to_string());
    }
    assert_eq!(announced, [first, second, third]);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_resume_attaches_without_replaying_and_the_conversation_goes_on() {
    let host = TestHost::new(
        Model::Scripted(json!([text("first answer"), text("second answer")])),
        &[],
    );
    let (client, serving) = host.connect(Answer::Fail).await;
    let init = client.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["resume"],
        json!({})
    );
    let session = client.new_session(&host.project).await;
    client.prompt(&session, "remember 7").await.unwrap();
    client.close().await;
    // The first connection has let go of the session (its log's lock too)
    // before another resumes it.
    within("the first connection to end", serving)
        .await
        .unwrap()
        .unwrap();

    let (mut again, _b) = host.connect(Answer::Fail).await;
    again.initialize().await;
    let request = agent_client_protocol::v1::schema::ResumeSessionRequest::new(
        session.clone(),
        &host.project,
    );
    within(
        "session/resume",
        again.cx.send_request(request).block_task(),
    )
    .await
    .unwrap();
    assert_eq!(
        again.prompt(&session, "what was it?").await.unwrap(),
        StopReason::EndTurn
    );
    // No replay: only the new turn's text arrived.
    assert_eq!(
        again.take_updates(),
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "second answer"}})
        ]
    );
    // The model saw the earlier turn.
    let second = host.requests()[1].to_string();
    assert!(
        second.contains("remember 7") && second.contains("first answer"),
        "{second}"
    );
    again.close().await;
}
