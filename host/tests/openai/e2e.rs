//! `model-openai` inside the host: the real agent loop with `bash-local`
//! against the mock server, a turn without a key, and `dsh check` offline.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dsh_host::agent::{Agent, AgentOptions, Prompt, Session, TurnOutcome};
use dsh_host::plugins::{HostCore, PluginHost, builtin};
use dsh_host::session::TurnEndReason;
use serde_json::{Value, json};
use tokio::time::timeout;

use super::{DONE, KEY, call, finish, text};
use dsh_test_support::openai_mock::{OpenAiMock, Reply};

/// The variable the end-to-end test reads its key from. Only a child copy
/// of this binary has it (see [`in_child_with_key`]).
pub(crate) const KEY_VAR: &str = "DSH_TEST_OPENAI_KEY_E2E";

/// Setting a variable in a running multi-threaded test binary is unsound,
/// so the test re-runs itself in a child process started with `KEY_VAR`
/// set. Returns true in that child, where the test body runs.
pub(crate) fn in_child_with_key(test: &str) -> bool {
    if std::env::var(KEY_VAR).as_deref() == Ok(KEY) {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(KEY_VAR, KEY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child run of {test} failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
    false
}

pub(crate) struct Host {
    pub(crate) dir: tempfile::TempDir,
    _host: PluginHost,
    agent: Arc<Agent>,
}

impl Host {
    /// bash-local plus model-openai at `base_url`, keyed by `key_var`.
    fn new(base_url: &str, key_var: &str) -> Host {
        Host::with(base_url, key_var, json!({}), |_, _| {})
    }

    /// bash-local and tools-fs, then what `load` loads (given the host and
    /// the test's folder), then model-openai at `base_url`, keyed by
    /// `key_var`, with `model` added to its config.
    pub(crate) fn with(
        base_url: &str,
        key_var: &str,
        model: Value,
        load: impl FnOnce(&mut PluginHost, &Path),
    ) -> Host {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let state = dir.path().join("state");
        let core = HostCore::new(state.clone(), tokio::runtime::Handle::current());
        let agent = Agent::new(core.clone(), &state, AgentOptions::default());
        let mut host = PluginHost::new(core, dir.path().join("cordis.yml"));
        host.load_module(
            "bash-local",
            builtin::lookup("bash-local").unwrap(),
            json!({}),
        );
        host.load_module("tools-fs", builtin::lookup("tools-fs").unwrap(), json!({}));
        load(&mut host, dir.path());
        let mut config = json!({"base_url": base_url, "model": "mock-model", "api_key_env": key_var,
            "max_retries": 1, "retry_base_ms": 1});
        for (k, v) in model.as_object().into_iter().flatten() {
            config[k] = v.clone();
        }
        host.load_module("model", builtin::lookup("model-openai").unwrap(), config);
        assert!(host.problems().is_empty(), "{:?}", host.problems());
        Host {
            dir,
            _host: host,
            agent,
        }
    }

    pub(crate) async fn session(&self) -> Arc<Session> {
        let project = self.dir.path().join("project");
        self.agent.create_session(&project, None).await.unwrap()
    }
}

pub(crate) async fn prompt(session: &Arc<Session>, text: &str) -> TurnOutcome {
    timeout(Duration::from_secs(60), session.prompt(Prompt::user(text)))
        .await
        .expect("the turn hung")
}

/// Every file under `dir`, as text.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            found.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_round_trip_through_the_agent_loop() {
    if !in_child_with_key("e2e::bash_round_trip_through_the_agent_loop") {
        return;
    }
    // The command also tries to print the key: Bash children must not see it.
    let command = format!("echo hi ${{{KEY_VAR}:-}}");
    let args = json!({"command": command}).to_string();
    let (head, tail) = args.split_at(10);
    let server = OpenAiMock::start(vec![
        Reply::sse(vec![
            text("Running "),
            text("it."),
            call(0, Some("call_1"), Some("Bash"), head),
            call(0, None, None, tail),
            finish("tool_calls"),
            DONE.into(),
        ]),
        Reply::sse(vec![
            text("It printed "),
            text("hi."),
            finish("stop"),
            DONE.into(),
        ]),
    ]);
    let host = Host::new(&server.base_url, KEY_VAR);
    let session = host.session().await;
    let mut live = session.subscribe();
    let outcome = prompt(&session, "say hi").await;
    assert_eq!(
        outcome.reason,
        TurnEndReason::Completed,
        "{:?}",
        outcome.message
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"Bash"), "{tools:?}");
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages[0], json!({"role": "user", "content": "say hi"}));
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["arguments"],
        json!(args)
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], "call_1");
    assert_eq!(messages[2]["content"].as_str().unwrap().trim(), "hi");

    let mut streamed = Vec::new();
    while let Some(event) = live.try_recv() {
        let event = event.to_value();
        if event["type"] == "stream/text" {
            streamed.push(event["text"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(streamed, ["Running ", "it.", "It printed ", "hi."]);
    let events = dsh_host::session::events::wire(&outcome.events);
    let replies: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "assistant/message")
        .collect();
    assert_eq!(replies[1]["content"], "It printed hi.");
    for (path, content) in files(host.dir.path()) {
        assert!(!content.contains(KEY), "the key was written to {path}");
    }
}

/// A 1x1 PNG.
const DOT_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_image_reaches_the_model_as_an_image_part() {
    if !in_child_with_key("e2e::a_read_image_reaches_the_model_as_an_image_part") {
        return;
    }
    use base64::Engine as _;
    let server = OpenAiMock::start(vec![
        Reply::sse(vec![
            call(
                0,
                Some("call_1"),
                Some("Read"),
                r#"{"file_path":"dot.png"}"#,
            ),
            finish("tool_calls"),
            DONE.into(),
        ]),
        Reply::sse(vec![text("A red dot."), finish("stop"), DONE.into()]),
    ]);
    let host = Host::new(&server.base_url, KEY_VAR);
    let png = base64::engine::general_purpose::STANDARD
        .decode(DOT_PNG)
        .unwrap();
    std::fs::write(host.dir.path().join("project/dot.png"), png).unwrap();
    let session = host.session().await;
    let outcome = prompt(&session, "what is in dot.png?").await;
    assert_eq!(
        outcome.reason,
        TurnEndReason::Completed,
        "{:?}",
        outcome.message
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    // The tool message answers the call; the image follows the step's tool
    // messages as a user message, byte for byte.
    assert_eq!(
        messages[2..],
        [
            json!({"role": "tool", "tool_call_id": "call_1", "content": "(the image follows)"}),
            json!({"role": "user", "content": [
                {"type": "text", "text": "Images from tool call call_1:"},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{DOT_PNG}")}}]}),
        ],
        "{messages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_turn_closes_the_model_stream() {
    if !in_child_with_key("e2e::cancelling_the_turn_closes_the_model_stream") {
        return;
    }
    let server = OpenAiMock::start(vec![Reply::Hold {
        pieces: vec![text("Let me think")],
    }]);
    let host = Host::new(&server.base_url, KEY_VAR);
    let session = host.session().await;
    let mut live = session.subscribe();
    let turn = tokio::spawn({
        let session = session.clone();
        async move { prompt(&session, "think hard").await }
    });
    let first_delta = async {
        loop {
            let event = live.recv().await.unwrap().to_value();
            if event["type"] == "stream/text" {
                return event;
            }
        }
    };
    let event = timeout(Duration::from_secs(20), first_delta).await.unwrap();
    assert_eq!(event["text"], "Let me think");
    session.cancel();
    server.wait_closed().await;
    let outcome = timeout(Duration::from_secs(20), turn)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.reason, TurnEndReason::Aborted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_fails_the_turn_naming_the_variable() {
    let server = OpenAiMock::start(vec![]);
    let host = Host::new(&server.base_url, "DSH_TEST_OPENAI_KEY_ABSENT");
    let session = host.session().await;
    let outcome = prompt(&session, "hello").await;
    assert_eq!(outcome.reason, TurnEndReason::Error);
    let message = outcome.message.unwrap();
    assert!(
        message.contains("`DSH_TEST_OPENAI_KEY_ABSENT` is not set"),
        "{message}"
    );
    assert!(server.requests().is_empty());
}

/// The provider's failure crosses the `model` service as the contract's
/// typed `ModelError`; the turn words it by its kind (a refusal names the
/// status), and neither the JSON nor the key leaks into the message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_request_fails_the_turn_with_the_typed_error() {
    if !in_child_with_key("e2e::a_refused_request_fails_the_turn_with_the_typed_error") {
        return;
    }
    let server = OpenAiMock::start(vec![Reply::status(
        401,
        &format!("{{\"error\": \"bad key {KEY}\"}}"),
    )]);
    let host = Host::new(&server.base_url, KEY_VAR);
    let session = host.session().await;
    let outcome = prompt(&session, "hello").await;
    assert_eq!(outcome.reason, TurnEndReason::Error);
    assert_eq!(
        outcome.message.as_deref(),
        Some(r#"model request refused: HTTP 401: {"error": "bad key <redacted>"}"#)
    );
}

#[test]
fn dsh_check_applies_model_openai_without_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("cordis.yml");
    std::fs::write(
        &manifest,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-openai\n    config:\n      api_key_env: DSH_TEST_OPENAI_KEY_ABSENT\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        .args(["check", "--config", manifest.to_str().unwrap()])
        .env_remove("DSH_STATE_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let model = stdout.lines().find(|l| l.starts_with("model ")).unwrap();
    assert!(
        model.contains("applied") && model.contains("service:model"),
        "{stdout}"
    );
}
