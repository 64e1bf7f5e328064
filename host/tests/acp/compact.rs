//! `/compact` from an editor: the command is announced in
//! `available_commands_update`, sent back as the prompt's text, and compacts
//! the session through the real `model-openai` provider against a local
//! mock: one summary request offering no tools, the user told `Compacted`,
//! and the next prompt's request starting from the summary, the command's
//! texts joined to the prompt as in the process that compacted.

use agent_client_protocol::v1::schema::StopReason;
use dsh_test_support::agent::Load;
use dsh_test_support::openai_mock::{OpenAiMock, Reply};
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestHost};

fn texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_compact_from_the_editor_compacts_the_session() {
    let mock = OpenAiMock::start(vec![
        Reply::text("MARK_FIRST_ANSWER"),
        Reply::text("MARK_SECOND_ANSWER"),
        Reply::text("<analysis>thinking</analysis>\n<summary>MARK_SUMMARY</summary>"),
        Reply::text("Bye."),
    ]);
    let model = Load::builtin(
        "model",
        "model-openai",
        json!({"base_url": mock.base_url, "model": "mock-model", "api_key_env": "CARGO_PKG_NAME",
               "max_retries": 0}),
    );
    let host = TestHost::new(Model::Plugin(model), &[]);
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    // Sent after `session/new`'s answer: wait for it (bounded).
    let announced =
        tokio::time::timeout(std::time::Duration::from_secs(30), client.commands.recv())
            .await
            .expect("available_commands_update within 30 s")
            .unwrap();
    assert_eq!(
        announced["update"]["availableCommands"][0]["name"],
        "compact"
    );

    assert_eq!(
        client.prompt(&session, "MARK_PROMPT hello").await.unwrap(),
        StopReason::EndTurn
    );
    // Claude Code keeps the last answer and summarizes what came before
    // it, so a compaction needs two (recorded `S110-*`).
    assert_eq!(
        client.prompt(&session, "MARK_PROMPT again").await.unwrap(),
        StopReason::EndTurn
    );
    client.take_updates();
    assert_eq!(
        client
            .prompt(&session, "/compact keep MARK_KEEP")
            .await
            .unwrap(),
        StopReason::EndTurn
    );
    let shown = client.take_updates();
    assert!(
        shown.contains(&json!({"sessionUpdate": "agent_message_chunk",
                               "content": {"type": "text", "text": "Compacted"}})),
        "{shown:?}"
    );
    assert_eq!(
        client.prompt(&session, "again").await.unwrap(),
        StopReason::EndTurn
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    // The summary request: the history so far plus the summary prompt with
    // the instructions, no tools; `/compact` itself is not a prompt.
    let summary = &requests[2].body;
    assert!(
        summary["tools"].as_array().is_none_or(|t| t.is_empty()),
        "{summary}"
    );
    let asked = texts(summary).join("\n");
    assert!(asked.contains("MARK_PROMPT") && asked.contains("MARK_FIRST_ANSWER"));
    // The last answer is not summarized: it stays.
    assert!(!asked.contains("MARK_SECOND_ANSWER"), "{asked}");
    assert!(asked.contains("Additional Instructions:") && asked.contains("keep MARK_KEEP"));
    assert!(!asked.contains("/compact"), "{asked}");
    // The next request starts from the summary, not from the old history.
    let next = texts(&requests[3].body).join("\n");
    assert!(next.contains("MARK_SUMMARY"), "{next}");
    assert!(!next.contains("MARK_FIRST_ANSWER"), "{next}");
    assert!(next.contains("MARK_SECOND_ANSWER"), "{next}");
    assert!(next.contains("again"), "{next}");
    // The editor's session went on in the process that compacted: as in
    // Claude Code's one-process run (recorded `S131-same-process`), the
    // command's texts and the next prompt are one message after the kept
    // answer, with no `Continue from where you left off.` and no synthetic
    // answer.
    let msgs = requests[3].body["messages"].as_array().unwrap();
    let last = msgs.last().unwrap().to_string();
    assert!(
        last.contains("<command-name>/compact</command-name>")
            && last.contains("<command-args>keep MARK_KEEP</command-args>")
            && last.contains("<local-command-stdout>Compacted ")
            && last.contains("again"),
        "{last}"
    );
    assert_eq!(msgs[msgs.len() - 2]["role"], "assistant", "{next}");
    assert!(
        msgs[msgs.len() - 2]
            .to_string()
            .contains("MARK_SECOND_ANSWER"),
        "{next}"
    );
    assert!(
        !next.contains("Continue from where you left off."),
        "{next}"
    );
    assert!(!next.contains("No response requested."), "{next}");
    client.close().await;
}

/// `/compact` on a session with nothing to summarize: the turn ends well, as
/// Claude Code's run does (`subtype: success`, `S110-one-exchange`), and the
/// editor reads why nothing happened; no model is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_compact_with_nothing_to_summarize_says_so_and_ends_the_turn() {
    let mock = OpenAiMock::start(vec![Reply::text("never asked")]);
    let model = Load::builtin(
        "model",
        "model-openai",
        json!({"base_url": mock.base_url, "model": "mock-model", "api_key_env": "CARGO_PKG_NAME",
               "max_retries": 0}),
    );
    let host = TestHost::new(Model::Plugin(model), &[]);
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    client.take_updates();
    assert_eq!(
        client.prompt(&session, "/compact").await.unwrap(),
        StopReason::EndTurn
    );
    let shown = client.take_updates();
    assert!(
        shown.contains(&json!({"sessionUpdate": "agent_message_chunk",
                               "content": {"type": "text", "text": "Not enough messages to compact."}})),
        "{shown:?}"
    );
    assert!(mock.requests().is_empty());
    client.close().await;
}
