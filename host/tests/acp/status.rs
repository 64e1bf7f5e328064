//! Status an editor shows while a turn runs, from the real `model-openai`
//! provider against a local mock: DeepSeek-style `reasoning_content`
//! streams as `agent_thought_chunk` (never sent back to the model), and
//! the provider's usage becomes `usage_update` against `context_window`.

use agent_client_protocol::v1::schema::StopReason;
use dsh_test_support::agent::Load;
use dsh_test_support::openai_mock::{OpenAiMock, Reply};
use serde_json::{Value, json};

use crate::support::{Answer, Model, TestHost};

fn data(chunk: Value) -> String {
    format!("data: {chunk}\n\n")
}

fn delta(delta: Value, finish: Option<&str>) -> String {
    data(json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

fn answer(thought: &str, text: &str, prompt_tokens: u64) -> Reply {
    Reply::sse(vec![
        delta(
            json!({"role": "assistant", "reasoning_content": thought}),
            None,
        ),
        delta(json!({"content": text}), None),
        delta(json!({}), Some("stop")),
        data(json!({"choices": [], "usage": {
            "prompt_tokens": prompt_tokens, "completion_tokens": 30,
            "total_tokens": prompt_tokens + 30}})),
        "data: [DONE]\n\n".to_string(),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_streams_as_thoughts_and_usage_as_usage_updates() {
    let mock = OpenAiMock::start(vec![
        answer("Let me think.", "Hi.", 120),
        answer("Again.", "Bye.", 200),
    ]);
    // Any variable that is set will do as the key for a local mock; cargo
    // sets this one for every test process.
    let model = Load::builtin(
        "model",
        "model-openai",
        json!({"base_url": mock.base_url, "model": "mock-model", "api_key_env": "CARGO_PKG_NAME",
               "max_retries": 0, "context_window": 64000}),
    );
    let host = TestHost::new(Model::Plugin(model), &[]);
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "hello").await.unwrap(),
        StopReason::EndTurn
    );
    assert_eq!(
        client.take_updates(),
        [
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Let me think."}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi."}}),
            json!({"sessionUpdate": "usage_update", "used": 150, "size": 64000}),
        ]
    );
    assert_eq!(
        client.prompt(&session, "again").await.unwrap(),
        StopReason::EndTurn
    );
    let updates = client.take_updates();
    assert_eq!(
        updates[2],
        json!({"sessionUpdate": "usage_update", "used": 230, "size": 64000})
    );
    // The thought was shown, never sent back.
    let second = mock.requests()[1].body.to_string();
    assert!(!second.contains("Let me think."), "{second}");
    assert!(second.contains("Hi."), "{second}");
    client.close().await;
}
