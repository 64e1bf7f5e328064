//! Test support: an in-memory host with an [`AcpServer`], a real ACP client
//! (the SDK's `Client.v1()` side) over any transport, a streaming test
//! model, and timed waits.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, LoadSessionRequest, McpServer, NewSessionRequest,
    PermissionOptionKind, PromptRequest, ReadTextFileRequest, ReadTextFileResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::schema::{CreateElicitationRequest, CreateElicitationResponse};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, ConnectTo, Error as RpcError};
use dsh_host::acp::{AcpError, AcpServer};
use dsh_host::agent::Agent as DshAgent;
use dsh_host::plugins::PluginHost;
use dsh_plugin_api::{Host as PluginApiHost, NoConfig, Plugin};
use dsh_test_support::agent::{AgentHost, Load};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use super::probe::Probe;
use crate::schema::Checked;

/// Every wait in these tests ends within this.
pub const WAIT: Duration = Duration::from_secs(30);

/// `fut`, or a panic naming `what` after [`WAIT`].
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(WAIT, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// Polls `check` until it holds (a condition with no event to await).
pub async fn until(what: &str, mut check: impl FnMut() -> bool) {
    within(what, async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

/// Which model the host mounts.
pub enum Model {
    /// `model-scripted` answering this script.
    Scripted(Value),
    /// [`StreamingModel`]: streams `Hel`, `lo`, then answers `Hello`.
    Streaming,
    /// Any model plugin.
    Plugin(Load),
}

/// An in-memory host: bash-local, probes, a model, and an ACP server.
pub struct TestHost {
    pub dir: tempfile::TempDir,
    pub project: PathBuf,
    pub record: PathBuf,
    pub seen: PathBuf,
    /// Keeps the applied plugins alive.
    pub _plugins: PluginHost,
    pub agent: Arc<DshAgent>,
    pub server: Arc<AcpServer>,
    /// What the schema tap of [`TestHost::connect`] saw.
    pub checked: Arc<Mutex<Checked>>,
}

impl Drop for TestHost {
    /// Fails the test on any frame that broke the ACP schema.
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let checked = self.checked.lock().unwrap();
        assert!(
            checked.violations.is_empty(),
            "{} of {} frames dsh sent break the ACP schema:\n{}",
            checked.violations.len(),
            checked.frames,
            checked.violations.join("\n")
        );
    }
}

impl TestHost {
    /// A host whose probes (ids probe1, ...) get `probes`; `seen` is
    /// filled in for the first one.
    pub fn new(model: Model, probes: &[Value]) -> TestHost {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen.jsonl");
        let probes = probes
            .iter()
            .enumerate()
            .map(|(i, config)| {
                let mut config = config.clone();
                if i == 0 {
                    config["seen"] = json!(seen);
                }
                Load::native::<Probe>(&format!("probe{}", i + 1), config)
            })
            .collect();
        let host = match model {
            Model::Scripted(script) => AgentHost::scripted(dir.path(), probes, script),
            Model::Streaming => AgentHost::with_model(
                dir.path(),
                probes,
                Load::native::<StreamingModel>("model", json!({})),
            ),
            Model::Plugin(model) => AgentHost::with_model(dir.path(), probes, model),
        }
        .problem_free();
        let AgentHost {
            project,
            record,
            plugins: host,
            agent,
            ..
        } = host;
        let server = AcpServer::new(agent.clone());
        TestHost {
            dir,
            project,
            record,
            seen,
            _plugins: host,
            agent,
            server,
            checked: Arc::default(),
        }
    }

    /// A host with `loads` (hook bridges, ...) and `model-scripted`
    /// answering `script`.
    pub fn with_loads(script: Value, loads: impl FnOnce(&Path) -> Vec<Load>) -> TestHost {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen.jsonl");
        let loads = loads(dir.path());
        let AgentHost {
            project,
            record,
            plugins,
            agent,
            ..
        } = AgentHost::scripted(dir.path(), loads, script).problem_free();
        let server = AcpServer::new(agent.clone());
        TestHost {
            dir,
            project,
            record,
            seen,
            _plugins: plugins,
            agent,
            server,
            checked: Arc::default(),
        }
    }

    /// A served in-memory connection: our end, and the serve task.
    pub fn raw(&self) -> (tokio::io::DuplexStream, JoinHandle<Result<(), AcpError>>) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(theirs);
        let server = self.server.clone();
        let serving = tokio::spawn(async move { server.serve(read, write).await });
        (ours, serving)
    }

    /// A real client on a new in-memory connection, every frame dsh sends
    /// checked against the ACP schema ([`crate::schema`]).
    pub async fn connect(&self, answer: Answer) -> (TestClient, JoinHandle<Result<(), AcpError>>) {
        let (server_side, serving) = self.raw();
        let ours = crate::schema::tap(server_side, self.checked.clone());
        let (read, write) = tokio::io::split(ours);
        let client = TestClient::start(
            ByteStreams::new(write.compat_write(), read.compat()),
            answer,
        )
        .await;
        (client, serving)
    }

    /// The methods of the requests and notifications dsh sent so far.
    pub fn sent_methods(&self) -> Vec<String> {
        self.checked.lock().unwrap().methods.clone()
    }

    /// Every request the scripted model received.
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.record)
    }

    /// What the first probe saw.
    pub fn seen(&self) -> Vec<Value> {
        read_jsonl(&self.seen)
    }

    /// The stored events of a session (its log file, header skipped).
    pub fn log(&self, session: &str) -> Vec<Value> {
        let path = self
            .dir
            .path()
            .join("state/sessions")
            .join(format!("{session}.jsonl"));
        read_jsonl(&path).into_iter().skip(1).collect()
    }
}

pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// How the client answers `session/request_permission`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The allow-once option.
    Allow,
    /// The allow-always option.
    AllowAlways,
    /// The reject-once option.
    Reject,
    /// The `cancelled` outcome.
    Cancel,
    /// A method-not-found error, like a client without the method.
    Fail,
    /// Never (the request stays pending).
    Hold,
}

/// An editor's buffers by path.
pub type Buffers = Arc<Mutex<std::collections::HashMap<PathBuf, String>>>;

/// A real ACP client driven from the test body.
pub struct TestClient {
    pub cx: ConnectionTo<Agent>,
    updates: mpsc::UnboundedReceiver<SessionNotification>,
    pub permissions: mpsc::UnboundedReceiver<RequestPermissionRequest>,
    /// Every `available_commands_update` notification, whole.
    pub commands: mpsc::UnboundedReceiver<Value>,
    /// Every `elicitation/create` request, whole. The client answers
    /// `accept` with `{"name": "from-editor"}`, or `decline` when the
    /// message mentions `editor-declines`.
    pub elicitations: mpsc::UnboundedReceiver<Value>,
    /// The editor's open buffers (`fs/read_text_file` reads them,
    /// `fs/write_text_file` writes them), by absolute path.
    pub buffers: Buffers,
    close: Option<oneshot::Sender<()>>,
    driver: JoinHandle<Result<(), RpcError>>,
}

fn pick(
    request: &RequestPermissionRequest,
    kind: PermissionOptionKind,
) -> RequestPermissionResponse {
    let option = request.options.iter().find(|o| o.kind == kind).unwrap();
    RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
        SelectedPermissionOutcome::new(option.option_id.clone()),
    ))
}

impl TestClient {
    pub async fn start(transport: impl ConnectTo<Client> + 'static, answer: Answer) -> TestClient {
        let (update_tx, updates) = mpsc::unbounded_channel();
        let (commands_tx, commands) = mpsc::unbounded_channel();
        let buffers: Buffers = Arc::default();
        let (reads, writes) = (buffers.clone(), buffers.clone());
        let (permission_tx, permissions) = mpsc::unbounded_channel();
        let (elicitation_tx, elicitations) = mpsc::unbounded_channel();
        let (cx_tx, cx_rx) = oneshot::channel();
        let (close, close_rx) = oneshot::channel::<()>();
        let held: Arc<Mutex<Vec<Responder<RequestPermissionResponse>>>> = Arc::default();
        let driver = tokio::spawn(
            Client
                .v1()
                .name("dsh-test-client")
                .on_receive_notification(
                    async move |note: SessionNotification, _cx| {
                        // The command list is editor chrome, kept apart
                        // from a prompt's updates.
                        if matches!(note.update, SessionUpdate::AvailableCommandsUpdate(_)) {
                            let _ = commands_tx.send(serde_json::to_value(&note).unwrap());
                        } else {
                            let _ = update_tx.send(note);
                        }
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_request(
                    async move |request: RequestPermissionRequest, responder, _cx| {
                        let _ = permission_tx.send(request.clone());
                        match answer {
                            Answer::Allow => {
                                responder.respond(pick(&request, PermissionOptionKind::AllowOnce))
                            }
                            Answer::AllowAlways => {
                                responder.respond(pick(&request, PermissionOptionKind::AllowAlways))
                            }
                            Answer::Reject => {
                                responder.respond(pick(&request, PermissionOptionKind::RejectOnce))
                            }
                            Answer::Cancel => responder.respond(RequestPermissionResponse::new(
                                RequestPermissionOutcome::Cancelled,
                            )),
                            Answer::Fail => {
                                responder.respond_with_error(RpcError::method_not_found())
                            }
                            Answer::Hold => {
                                held.lock().unwrap().push(responder);
                                Ok(())
                            }
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: ReadTextFileRequest, responder, _cx| {
                        let held = reads.lock().unwrap().get(&request.path).cloned();
                        match held {
                            Some(content) => responder.respond(ReadTextFileResponse::new(content)),
                            None => responder.respond_with_error(RpcError::new(
                                agent_client_protocol::ErrorCode::RESOURCE_NOT_FOUND,
                                format!("no buffer for {}", request.path.display()),
                            )),
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: WriteTextFileRequest, responder, _cx| {
                        writes
                            .lock()
                            .unwrap()
                            .insert(request.path.clone(), request.content.clone());
                        responder.respond(WriteTextFileResponse::new())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: CreateElicitationRequest, responder, _cx| {
                        let wire = serde_json::to_value(&request).unwrap();
                        let _ = elicitation_tx.send(wire);
                        let answer = if request.message.contains("editor-declines") {
                            json!({"action": "decline"})
                        } else {
                            json!({"action": "accept", "content": {"name": "from-editor"}})
                        };
                        responder.respond(
                            serde_json::from_value::<CreateElicitationResponse>(answer).unwrap(),
                        )
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                    let _ = cx_tx.send(cx.clone());
                    tokio::select! {
                        _ = close_rx => {}
                        _ = cx.incoming_closed() => {}
                    }
                    Ok(())
                }),
        );
        let cx = within("the client to connect", cx_rx).await.unwrap();
        TestClient {
            cx,
            updates,
            permissions,
            commands,
            elicitations,
            buffers,
            close: Some(close),
            driver,
        }
    }

    pub async fn initialize(&self) -> Value {
        self.initialize_with(Default::default()).await
    }

    /// `initialize`, offering `capabilities`.
    pub async fn initialize_with(
        &self,
        capabilities: agent_client_protocol::v1::schema::ClientCapabilities,
    ) -> Value {
        let request = InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities);
        let response = within("initialize", self.cx.send_request(request).block_task())
            .await
            .unwrap();
        serde_json::to_value(response).unwrap()
    }

    pub async fn new_session(&self, cwd: &Path) -> String {
        self.new_session_with(cwd, Vec::new()).await
    }

    /// `session/new` in `cwd` naming `servers`.
    pub async fn new_session_with(&self, cwd: &Path, servers: Vec<McpServer>) -> String {
        let response = within(
            "session/new",
            self.cx
                .send_request(NewSessionRequest::new(cwd).mcp_servers(servers))
                .block_task(),
        )
        .await
        .unwrap();
        response.session_id.0.to_string()
    }

    /// `initialize`, then `session/new` in `cwd`.
    pub async fn open(&self, cwd: &Path) -> String {
        self.initialize().await;
        self.new_session(cwd).await
    }

    pub async fn load(&self, session: &str, cwd: &Path) -> Result<(), RpcError> {
        within(
            "session/load",
            self.cx
                .send_request(LoadSessionRequest::new(session.to_string(), cwd))
                .block_task(),
        )
        .await
        .map(drop)
    }

    pub async fn prompt_blocks(
        &self,
        session: &str,
        blocks: Vec<ContentBlock>,
    ) -> Result<StopReason, RpcError> {
        let request = PromptRequest::new(session.to_string(), blocks);
        within("session/prompt", self.cx.send_request(request).block_task())
            .await
            .map(|r| r.stop_reason)
    }

    pub async fn prompt(&self, session: &str, text: &str) -> Result<StopReason, RpcError> {
        self.prompt_blocks(session, vec![ContentBlock::from(text)])
            .await
    }

    /// The next `session/update` payload (the `update` object).
    pub async fn next_update(&mut self) -> Value {
        let note = within("a session/update", self.updates.recv())
            .await
            .unwrap();
        serde_json::to_value(note.update).unwrap()
    }

    /// Every update received so far. A response is dispatched after the
    /// notifications sent before it, so after a prompt or load answer this
    /// holds all of its updates.
    pub fn take_updates(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(note) = self.updates.try_recv() {
            out.push(serde_json::to_value(note.update).unwrap());
        }
        out
    }

    /// Closes the connection and waits for the client side to end.
    pub async fn close(mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
        let _ = within("the client to close", &mut self.driver).await;
    }
}

/// A model that streams its answer: `stream/text` `Hel`, `lo`, then the
/// reply `Hello`, like a streaming provider.
pub struct StreamingModel;

impl Plugin for StreamingModel {
    type Config = NoConfig;
    const NAME: &'static str = "model-streaming";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &PluginApiHost, _config: NoConfig) -> Result<Self, String> {
        let streams = host.clone();
        host.provide_service("model", move |_method, args| {
            let host = streams.clone();
            async move {
                let session = args["session_id"].as_str().unwrap_or_default().to_string();
                for delta in ["Hel", "lo"] {
                    host.stream_event(&session, &json!({"type": "stream/text", "text": delta}))?;
                }
                Ok(json!({"text": "Hello", "tool_calls": [], "stop_reason": "end_turn"}))
            }
        })?;
        Ok(StreamingModel)
    }
}

pub fn text(t: &str) -> Value {
    json!({"text": t})
}

pub fn bash(command: &str) -> Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]})
}
