//! A plugin's developer-role context (plugin API 1.8,
//! `Host::set_context_role`) through the real agent loop, the real Codex
//! bridge running a real hook, and `model-openai`: Codex gives the model
//! a `UserPromptSubmit` hook's `additionalContext` as a developer message
//! after the prompt; `model-openai` sends it in the role its
//! `developer_role` names (`system` by default).

use dsh_host::plugins::builtin;
use dsh_host::session::TurnEndReason;
use dsh_test_support::openai_mock::{OpenAiMock, Reply};
use serde_json::{Value, json};

use super::e2e::{Host, KEY_VAR, in_child_with_key, prompt};
use super::{DONE, finish, text};

/// What the hook adds.
const CONTEXT: &str = "the build is red";

/// The messages of the one request a turn with the hook made, with
/// `model-openai` configured by `extra`; and the turn's log.
async fn first_request(extra: Value) -> (Vec<Value>, Vec<Value>) {
    let server = OpenAiMock::start(vec![Reply::sse(vec![
        text("ok"),
        finish("stop"),
        DONE.into(),
    ])]);
    let host = Host::with(&server.base_url, KEY_VAR, extra, |host, dir| {
        let output = json!({"hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit", "additionalContext": CONTEXT}});
        let hooks = dir.join("hooks.json");
        let hook = json!({"type": "command", "command": format!("printf '%s' '{output}'")});
        std::fs::write(
            &hooks,
            json!({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}).to_string(),
        )
        .unwrap();
        let bridge = json!({"config_path": hooks, "model": "mock-model"});
        host.load_module(
            "hooks-codex",
            builtin::lookup("hooks-codex").unwrap(),
            bridge,
        );
    });
    let session = host.session().await;
    let outcome = prompt(&session, "go").await;
    assert_eq!(
        outcome.reason,
        TurnEndReason::Completed,
        "{:?}",
        outcome.message
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let messages = requests[0].body["messages"].as_array().unwrap().clone();
    (messages, dsh_host::session::events::wire(&outcome.events))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_hook_context_is_developer_role_sent_as_the_provider_takes_it() {
    if !in_child_with_key(
        "developer_context::codex_hook_context_is_developer_role_sent_as_the_provider_takes_it",
    ) {
        return;
    }
    // The log keeps the developer role, attributed to the bridge.
    let (default, events) = first_request(json!({})).await;
    let context: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "context/message")
        .collect();
    assert_eq!(context.len(), 1, "{events:#?}");
    assert_eq!(context[0]["role"], "developer");
    assert_eq!(
        context[0]["source"],
        json!({"kind": "plugin", "plugin": "hooks-codex"})
    );
    // By default it goes out as a system message, right after the prompt.
    assert_eq!(
        default,
        [
            json!({"role": "user", "content": "go"}),
            json!({"role": "system", "content": CONTEXT}),
        ]
    );
    let (developer, _) = first_request(json!({"developer_role": "developer"})).await;
    assert_eq!(
        developer[1],
        json!({"role": "developer", "content": CONTEXT})
    );
    let (user, _) = first_request(json!({"developer_role": "user"})).await;
    assert_eq!(
        user[1],
        json!({"role": "user",
            "content": format!("<context source=\"plugin:hooks-codex\">\n{CONTEXT}\n</context>")})
    );
}
