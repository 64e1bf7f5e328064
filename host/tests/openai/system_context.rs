//! A plugin's system-role context (plugin API 1.7,
//! `Host::inject_system_context`) through the real agent loop and
//! `model-openai`: the wire carries it as `{"role": "system", ...}` at its
//! place in `messages`, after the step's tool message, as Claude Code sends
//! a background task's notification (recorded S83).

use std::sync::Arc;

use dsh_host::session::TurnEndReason;
use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::{Host, NoConfig, Plugin, PostExecuteInput, plugin_module};
use dsh_test_support::openai_mock::{OpenAiMock, Reply};
use serde_json::json;

use super::e2e::{Host as TestHost, KEY_VAR, in_child_with_key, prompt};
use super::{DONE, call, finish, text};

/// What the notifier adds after each tool result.
const NOTE: &str = "[SYSTEM NOTIFICATION - NOT USER INPUT]\nthe background task ended";

/// Adds [`NOTE`] as system-role context when a tool result is seen.
struct Notifier {
    host: Host,
}

impl Plugin for Notifier {
    type Config = NoConfig;
    const NAME: &'static str = "notifier";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Notifier { host: host.clone() })
    }

    async fn tool_result(self: Arc<Self>, input: RArc<PostExecuteInput>) -> Result<(), String> {
        self.host
            .inject_system_context(&input.call.session.session_id, NOTE)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_context_goes_out_as_a_system_message_after_the_tool_message() {
    if !in_child_with_key(
        "system_context::system_context_goes_out_as_a_system_message_after_the_tool_message",
    ) {
        return;
    }
    let server = OpenAiMock::start(vec![
        Reply::sse(vec![
            call(0, Some("call_1"), Some("Bash"), r#"{"command":"echo one"}"#),
            finish("tool_calls"),
            DONE.into(),
        ]),
        Reply::sse(vec![text("Done."), finish("stop"), DONE.into()]),
    ]);
    let host = TestHost::with(&server.base_url, KEY_VAR, json!({}), |host, _| {
        host.load_module("notifier", plugin_module::<Notifier>(), json!({}));
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
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(messages[2]["role"], "tool", "{messages:#?}");
    assert_eq!(
        messages[3],
        json!({"role": "system", "content": NOTE}),
        "{messages:#?}"
    );

    // The log keeps the role, so a resumed session's history has it too.
    let events = dsh_host::session::events::wire(&outcome.events);
    let context: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "context/message")
        .collect();
    assert_eq!(context.len(), 1, "{events:#?}");
    assert_eq!(context[0]["role"], "system");
    assert_eq!(
        context[0]["source"],
        json!({"kind": "plugin", "plugin": "notifier"})
    );
}
