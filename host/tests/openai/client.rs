//! [`OpenAiClient`] on its own against the mock server.

use std::time::Duration;

use dsh_host::model::openai::stream::Live;
use dsh_host::model::openai::{ApiKey, OpenAiClient, OpenAiConfig, OpenAiError};
use dsh_host::model::{
    ChatMessage, ModelReply, ModelRequest, ModelTool, ModelToolCall, StopReason,
};
use serde_json::json;
use tokio::time::timeout;

use super::{DONE, KEY, call, config, data, finish, request, text};
use dsh_test_support::openai_mock::{OpenAiMock, Reply};

const WAIT: Duration = Duration::from_secs(20);

/// Runs one completion; returns the deltas seen and the result.
async fn complete_with(
    config: OpenAiConfig,
    request: &ModelRequest,
) -> (Vec<String>, Result<ModelReply, OpenAiError>) {
    let client = OpenAiClient::new(config).unwrap();
    let mut deltas = Vec::new();
    let result = timeout(
        WAIT,
        client.complete(&ApiKey::new(KEY), request, |d| {
            if let Live::Text(t) = d {
                deltas.push(t.to_string());
            }
        }),
    )
    .await
    .expect("the completion hung");
    (deltas, result)
}

async fn complete(server: &OpenAiMock) -> (Vec<String>, Result<ModelReply, OpenAiError>) {
    complete_with(
        config(&server.base_url),
        &request(vec![ChatMessage::new("user", "hi")]),
    )
    .await
}

/// The error's message, checked never to carry the key.
fn message(result: Result<ModelReply, OpenAiError>) -> String {
    let err = result.expect_err("expected an error");
    let text = format!("{err} {err:?}");
    assert!(!text.contains(KEY), "the key leaked into an error: {text}");
    err.to_string()
}

/// Splits `s` into pieces of at most `n` bytes (all ASCII here).
fn split(s: &str, n: usize) -> Vec<String> {
    s.as_bytes()
        .chunks(n)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect()
}

#[tokio::test]
async fn streamed_text_arrives_as_deltas_and_whole() {
    let body = [
        text("Hel"),
        ": ping\n\n".into(),
        text("lo, "),
        text("world"),
        finish("stop"),
        DONE.into(),
    ]
    .concat();
    // Chunked with pieces cut mid-line, and close-delimited with CRLF ends.
    let crlf = body.replace('\n', "\r\n");
    let server = OpenAiMock::start(vec![
        Reply::sse(split(&body, 9)),
        Reply::Sse {
            pieces: split(&crlf, 13),
            chunked: false,
        },
    ]);
    for _ in 0..2 {
        let (deltas, reply) = complete(&server).await;
        assert_eq!(deltas, ["Hel", "lo, ", "world"]);
        assert_eq!(
            reply.unwrap(),
            ModelReply {
                text: "Hello, world".into(),
                tool_calls: vec![],
                stop_reason: StopReason::EndTurn,
                ..ModelReply::default()
            }
        );
    }
}

#[tokio::test]
async fn streamed_tool_calls_merge_by_index() {
    let body = [
        text("Two calls."),
        call(0, Some("call_a"), Some("Bash"), ""),
        call(1, Some("call_b"), Some("Read"), "{\"pa"),
        call(0, None, None, "{\"command\": "),
        call(1, None, None, "th\": \"src/main.rs\"}"),
        call(0, None, None, "\"echo hi\"}"),
        finish("tool_calls"),
        DONE.into(),
    ]
    .concat();
    let server = OpenAiMock::start(vec![Reply::sse(split(&body, 50))]);
    let (deltas, reply) = complete(&server).await;
    assert_eq!(deltas, ["Two calls."]);
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(
        reply.tool_calls,
        [
            // As the model wrote them: the joined deltas' text.
            ModelToolCall {
                id: "call_a".into(),
                name: "Bash".into(),
                arguments: json!("{\"command\": \"echo hi\"}")
            },
            ModelToolCall {
                id: "call_b".into(),
                name: "Read".into(),
                arguments: json!("{\"path\": \"src/main.rs\"}")
            },
        ]
    );
}

#[tokio::test]
async fn request_carries_history_tools_stream_and_bearer_key() {
    let server = OpenAiMock::start(vec![Reply::sse(vec![
        text("ok"),
        finish("stop"),
        DONE.into(),
    ])]);
    let mut assistant = ChatMessage::new("assistant", "Looking.");
    assistant.tool_calls = vec![ModelToolCall {
        id: "c1".into(),
        name: "Bash".into(),
        arguments: json!({"command": "false"}),
    }];
    let mut result = ChatMessage::new("tool", "exit status 1");
    result.tool_call_id = Some("c1".into());
    result.is_error = true;
    let mut context = ChatMessage::new("user", "branch is main");
    context.source = Some(json!({"kind": "plugin", "plugin": "git-info"}));
    let mut request = request(vec![
        ChatMessage::new("user", "run false"),
        assistant,
        result,
        context,
    ]);
    request.tools = vec![ModelTool {
        name: "Bash".into(),
        description: "Runs a command.".into(),
        input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    }];
    // A base URL with `/v1/` keeps its path and loses the slash.
    let base = format!("{}/v1/", server.base_url);
    let config = OpenAiConfig {
        max_tokens: Some(256),
        ..config(&base)
    };
    let (_, reply) = complete_with(config, &request).await;
    assert_eq!(reply.unwrap().text, "ok");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.body,
        json!({
            "model": "mock-model",
            "messages": [
                {"role": "user", "content": "run false"},
                {"role": "assistant", "content": "Looking.", "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "Bash", "arguments": "{\"command\":\"false\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "Error: exit status 1"},
                {"role": "user", "content": "<context source=\"plugin:git-info\">\nbranch is main\n</context>"},
            ],
            "tools": [{"type": "function", "function": {"name": "Bash", "description": "Runs a command.",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 256,
        })
    );
}

#[tokio::test]
async fn a_429_is_retried_then_succeeds() {
    let server = OpenAiMock::start(vec![
        Reply::Status {
            code: 429,
            body: r#"{"error": {"message": "slow down"}}"#.into(),
            headers: vec![("Retry-After".into(), "0".into())],
        },
        Reply::sse(vec![text("after the wait"), finish("stop"), DONE.into()]),
    ]);
    let (_, reply) = complete(&server).await;
    assert_eq!(reply.unwrap().text, "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn persistent_5xx_fails_after_every_attempt() {
    // The body echoes the key, as a careless proxy might: it must not leak.
    let echo = format!("upstream down (auth Bearer {KEY})");
    let server = OpenAiMock::start((0..3).map(|_| Reply::status(500, &echo)).collect());
    let err = message(complete(&server).await.1);
    assert_eq!(
        err,
        "model request failed after 3 attempts: HTTP 500: upstream down (auth Bearer <redacted>)"
    );
    assert_eq!(server.requests().len(), 3, "max_retries 2 means 3 attempts");
}

#[tokio::test]
async fn a_401_fails_at_once() {
    let body = format!(r#"{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}"#);
    let server = OpenAiMock::start(vec![
        Reply::status(401, &body),
        Reply::status(500, "unused"),
    ]);
    let err = message(complete(&server).await.1);
    assert!(
        err.starts_with("model request refused: HTTP 401: "),
        "{err}"
    );
    assert!(
        err.contains("Incorrect API key provided: <redacted>"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1, "no retry after a 401");
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let (_, result) = complete_with(config(&base), &request(vec![])).await;
    let err = message(result);
    assert!(
        err.starts_with("model request failed after 3 attempts: connection error: "),
        "{err}"
    );
}

#[tokio::test]
async fn a_garbage_data_line_is_a_malformed_stream() {
    let server = OpenAiMock::start(vec![Reply::sse(vec![
        text("fine "),
        "data: {not json\n\n".into(),
        DONE.into(),
    ])]);
    let (deltas, result) = complete(&server).await;
    assert_eq!(deltas, ["fine "]);
    let err = message(result);
    assert!(
        err.starts_with("malformed stream: a data line is not JSON"),
        "{err}"
    );
    assert!(err.contains("{not json"), "{err}");
}

#[tokio::test]
async fn a_stream_cut_before_done_is_malformed() {
    let server = OpenAiMock::start(vec![Reply::Sse {
        pieces: vec![text("half an "), text("answ")],
        chunked: false,
    }]);
    let (deltas, result) = complete(&server).await;
    assert_eq!(deltas, ["half an ", "answ"]);
    let err = message(result);
    assert!(
        err.starts_with("malformed stream: the stream ended before `data: [DONE]`"),
        "{err}"
    );
}

#[tokio::test]
async fn malformed_tool_arguments_name_the_call() {
    let body = vec![
        call(0, Some("call_x"), Some("Bash"), "{\"command\": \"ls"),
        finish("tool_calls"),
        DONE.into(),
    ];
    let server = OpenAiMock::start(vec![Reply::sse(body)]);
    let err = message(complete(&server).await.1);
    assert!(
        err.starts_with("malformed tool call #1 (`Bash`, id `call_x`)"),
        "{err}"
    );
}

#[tokio::test]
async fn finish_reason_length_is_max_tokens() {
    let server = OpenAiMock::start(vec![Reply::sse(vec![
        text("trunc"),
        finish("length"),
        DONE.into(),
    ])]);
    let reply = complete(&server).await.1.unwrap();
    assert_eq!(
        (reply.text.as_str(), reply.stop_reason),
        ("trunc", StopReason::MaxTokens)
    );
}

#[tokio::test]
async fn a_plain_json_body_is_accepted() {
    let body = json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}]});
    let server = OpenAiMock::start(vec![Reply::Json(body)]);
    let (deltas, reply) = complete(&server).await;
    assert_eq!(deltas, ["whole"]);
    assert_eq!(reply.unwrap().text, "whole");
}

#[tokio::test]
async fn an_error_event_in_the_stream_is_reported() {
    let server = OpenAiMock::start(vec![Reply::sse(vec![data(
        json!({"error": {"message": "model overloaded"}}),
    )])]);
    let err = message(complete(&server).await.1);
    assert_eq!(err, "the model server reported an error: model overloaded");
}

#[tokio::test]
async fn dropping_the_future_closes_the_connection() {
    let server = OpenAiMock::start(vec![Reply::Hold {
        pieces: vec![text("thinking")],
    }]);
    let client = OpenAiClient::new(config(&server.base_url)).unwrap();
    let key = ApiKey::new(KEY);
    let request = request(vec![ChatMessage::new("user", "a long one")]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut completion = Box::pin(client.complete(&key, &request, move |d| {
        if let Live::Text(t) = d {
            let _ = tx.send(t.to_string());
        }
    }));
    tokio::select! {
        done = &mut completion => panic!("a held stream cannot finish: {done:?}"),
        delta = timeout(WAIT, rx.recv()) => assert_eq!(delta.unwrap().as_deref(), Some("thinking")),
    }
    // What a cancelled turn does to the service call.
    drop(completion);
    server.wait_closed().await;
}

#[test]
fn the_key_is_read_from_the_named_variable_at_call_time() {
    let client = OpenAiClient::new(OpenAiConfig {
        api_key_env: "DSH_TEST_OPENAI_KEY_NEVER_SET".into(),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let err = client.api_key().unwrap_err().to_string();
    assert!(
        err.contains("`DSH_TEST_OPENAI_KEY_NEVER_SET` is not set"),
        "{err}"
    );
    // The defaults, as documented.
    let defaults = serde_json::to_value(OpenAiConfig::default()).unwrap();
    assert_eq!(
        defaults,
        json!({"base_url": "https://api.deepseek.com", "model": "deepseek-chat",
            "api_key_env": "DEEPSEEK_API_KEY", "max_retries": 3, "retry_base_ms": 500,
            "request_timeout_s": 300, "max_tokens": null, "temperature": null,
            "context_window": null, "developer_role": "system"})
    );
    assert_eq!(
        client.endpoint(),
        "https://api.deepseek.com/chat/completions"
    );
    let unknown: Result<OpenAiConfig, _> = serde_json::from_value(json!({"api_key": "sk-inline"}));
    assert!(unknown.is_err(), "unknown keys (an inline key) are refused");
}

#[tokio::test]
async fn steering_in_parts_goes_out_as_one_user_message_of_text_parts() {
    let server = OpenAiMock::start(vec![Reply::sse(vec![
        text("ok"),
        finish("stop"),
        DONE.into(),
    ])]);
    let mut steering = ChatMessage::new("user", "Stop hook feedback:\nA\n\nStop hook feedback:\nB");
    steering.source =
        Some(json!({"kind": "steering", "from": {"kind": "plugin", "plugin": "hooks-claude"}}));
    steering.parts = vec![
        "Stop hook feedback:\nA\n".into(),
        "Stop hook feedback:\nB".into(),
    ];
    let request = request(vec![
        ChatMessage::new("user", "do it"),
        ChatMessage::new("assistant", "First answer."),
        steering,
    ]);
    let (_, reply) = complete_with(config(&server.base_url), &request).await;
    assert_eq!(reply.unwrap().text, "ok");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let tag = |t: &str| format!("<steering source=\"plugin:hooks-claude\">\n{t}\n</steering>");
    assert_eq!(
        requests[0].body["messages"],
        json!([
            {"role": "user", "content": "do it"},
            {"role": "assistant", "content": "First answer."},
            {"role": "user", "content": [
                {"type": "text", "text": tag("Stop hook feedback:\nA\n")},
                {"type": "text", "text": tag("Stop hook feedback:\nB")},
            ]},
        ])
    );
}
