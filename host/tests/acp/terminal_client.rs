//! A real ACP client (the SDK's `Client.v1()` side) that offers terminals
//! and runs them for real: `terminal/create` spawns the requested program
//! (in its own process group, in the requested cwd, with the requested
//! variables on top of this "editor's" own environment, which adds
//! [`EDITOR_VARS`]), stdout and stderr into one output; `terminal/output`
//! keeps the end within `outputByteLimit`; `terminal/kill` SIGKILLs the
//! group; `terminal/release` kills what still runs and forgets it. Every
//! terminal request is kept, in order, for the test to read.

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, CreateTerminalRequest, CreateTerminalResponse,
    InitializeRequest, KillTerminalRequest, KillTerminalResponse, NewSessionRequest, PromptRequest,
    ReleaseTerminalRequest, ReleaseTerminalResponse, SessionNotification, StopReason,
    TerminalExitStatus, TerminalOutputRequest, TerminalOutputResponse, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error as RpcError};
use serde_json::{Value, json};
use std::io::Read as _;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use crate::support::{TestHost, within};

/// Variables this editor's own environment holds (one a credential).
pub const EDITOR_VARS: [(&str, &str); 2] = [
    ("DSH_EDITOR_API_KEY", "editor-secret"),
    ("EDITOR_ONLY", "yes"),
];

struct Term {
    output: Arc<Mutex<Vec<u8>>>,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
    pgid: i32,
    limit: Option<u64>,
}

type Terms = Arc<Mutex<HashMap<String, Term>>>;

/// The client, driven from the test body.
pub struct TerminalClient {
    pub cx: ConnectionTo<Agent>,
    updates: mpsc::UnboundedReceiver<SessionNotification>,
    /// Each terminal request as `{method, params}`, in arrival order.
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// The id of each terminal created.
    pub created: mpsc::UnboundedReceiver<String>,
    close: Option<oneshot::Sender<()>>,
    driver: JoinHandle<Result<(), RpcError>>,
}

fn exit_status(status: std::process::ExitStatus) -> TerminalExitStatus {
    match (status.code(), status.signal()) {
        (Some(code), _) => TerminalExitStatus::new().exit_code(code as u32),
        (None, Some(9)) => TerminalExitStatus::new().signal("SIGKILL".to_string()),
        (None, Some(n)) => TerminalExitStatus::new().signal(n.to_string()),
        (None, None) => TerminalExitStatus::new(),
    }
}

/// Spawns `request`'s program; its id.
fn spawn(
    request: &CreateTerminalRequest,
    terms: &Terms,
    next: &Mutex<u64>,
) -> Result<String, String> {
    // One pipe for both streams, as a terminal interleaves them.
    let (mut reader, writer) = std::io::pipe().map_err(|e| e.to_string())?;
    let mut command = tokio::process::Command::new(&request.command);
    command
        .args(&request.args)
        .envs(EDITOR_VARS)
        .envs(
            request
                .env
                .iter()
                .map(|v| (v.name.clone(), v.value.clone())),
        )
        .stdin(Stdio::null())
        .stdout(writer.try_clone().map_err(|e| e.to_string())?)
        .stderr(writer)
        .process_group(0);
    if let Some(cwd) = &request.cwd {
        command.current_dir(cwd);
    }
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    // Our copies of the write end go with the command.
    drop(command);
    let pgid = child.id().unwrap() as i32;
    let output: Arc<Mutex<Vec<u8>>> = Arc::default();
    let (exit_tx, exit) = watch::channel(None);
    let sink = output.clone();
    let pumped = tokio::task::spawn_blocking(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    tokio::spawn(async move {
        let _ = pumped.await;
        let status = child.wait().await.unwrap();
        let _ = exit_tx.send(Some(exit_status(status)));
    });
    let id = {
        let mut n = next.lock().unwrap();
        *n += 1;
        format!("term-{n}")
    };
    terms.lock().unwrap().insert(
        id.clone(),
        Term {
            output,
            exit,
            pgid,
            limit: request.output_byte_limit,
        },
    );
    Ok(id)
}

fn kill_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals that process group only.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

fn log(requests: &Mutex<Vec<Value>>, method: &str, params: impl serde::Serialize) {
    requests
        .lock()
        .unwrap()
        .push(json!({"method": method, "params": serde_json::to_value(params).unwrap()}));
}

fn unknown(id: &str) -> RpcError {
    RpcError::invalid_params().data(json!(format!("no terminal {id}")))
}

impl TerminalClient {
    /// A client on a new tapped connection to `host`, initialized with
    /// `terminal: true`.
    pub async fn connect(host: &TestHost) -> TerminalClient {
        Self::connect_with(host, false).await
    }

    /// [`TerminalClient::connect`]; with `refuse_create`, every
    /// `terminal/create` is answered with an error (an editor that offered
    /// terminals and then cannot start one).
    pub async fn connect_with(host: &TestHost, refuse_create: bool) -> TerminalClient {
        let (server_side, _serving) = host.raw();
        let ours = crate::schema::tap(server_side, host.checked.clone());
        let (read, write) = tokio::io::split(ours);
        let transport = ByteStreams::new(write.compat_write(), read.compat());
        let (update_tx, updates) = mpsc::unbounded_channel();
        let (created_tx, created) = mpsc::unbounded_channel();
        let requests: Arc<Mutex<Vec<Value>>> = Arc::default();
        let terms: Terms = Arc::default();
        let next = Arc::new(Mutex::new(0u64));
        let (r1, r2, r3, r4, r5) = (
            requests.clone(),
            requests.clone(),
            requests.clone(),
            requests.clone(),
            requests.clone(),
        );
        let (t1, t2, t3, t4, t5) = (
            terms.clone(),
            terms.clone(),
            terms.clone(),
            terms.clone(),
            terms.clone(),
        );
        let (cx_tx, cx_rx) = oneshot::channel();
        let (close, close_rx) = oneshot::channel::<()>();
        let driver = tokio::spawn(
            Client
                .v1()
                .name("dsh-terminal-client")
                .on_receive_notification(
                    async move |note: SessionNotification, _cx| {
                        let _ = update_tx.send(note);
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_request(
                    async move |request: CreateTerminalRequest, responder, _cx| {
                        log(&r1, "terminal/create", &request);
                        if refuse_create {
                            return responder.respond_with_error(
                                RpcError::internal_error().data(json!("no pty left")),
                            );
                        }
                        match spawn(&request, &t1, &next) {
                            Ok(id) => {
                                let _ = created_tx.send(id.clone());
                                responder.respond(CreateTerminalResponse::new(id))
                            }
                            Err(e) => responder
                                .respond_with_error(RpcError::internal_error().data(json!(e))),
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: WaitForTerminalExitRequest, responder, _cx| {
                        log(&r2, "terminal/wait_for_exit", &request);
                        let id = request.terminal_id.0.to_string();
                        let exit = t2.lock().unwrap().get(&id).map(|t| t.exit.clone());
                        let Some(mut exit) = exit else {
                            return responder.respond_with_error(unknown(&id));
                        };
                        // Answered when the command ends; the dispatch loop
                        // goes on meanwhile.
                        tokio::spawn(async move {
                            let status = exit.wait_for(Option::is_some).await.unwrap().clone();
                            let _ = responder
                                .respond(WaitForTerminalExitResponse::new(status.unwrap()));
                        });
                        Ok(())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: TerminalOutputRequest, responder, _cx| {
                        log(&r3, "terminal/output", &request);
                        let id = request.terminal_id.0.to_string();
                        let terms = t3.lock().unwrap();
                        let Some(term) = terms.get(&id) else {
                            return responder.respond_with_error(unknown(&id));
                        };
                        let all =
                            String::from_utf8_lossy(&term.output.lock().unwrap()).into_owned();
                        let limit = term.limit.map_or(usize::MAX, |l| l as usize);
                        let mut cut = all.len().saturating_sub(limit);
                        while !all.is_char_boundary(cut) {
                            cut += 1;
                        }
                        let status = term.exit.borrow().clone();
                        responder.respond(
                            TerminalOutputResponse::new(&all[cut..], cut > 0).exit_status(status),
                        )
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: KillTerminalRequest, responder, _cx| {
                        log(&r4, "terminal/kill", &request);
                        let id = request.terminal_id.0.to_string();
                        let pgid = t4.lock().unwrap().get(&id).map(|t| t.pgid);
                        match pgid {
                            Some(pgid) => {
                                kill_group(pgid);
                                responder.respond(KillTerminalResponse::new())
                            }
                            None => responder.respond_with_error(unknown(&id)),
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: ReleaseTerminalRequest, responder, _cx| {
                        log(&r5, "terminal/release", &request);
                        let id = request.terminal_id.0.to_string();
                        match t5.lock().unwrap().remove(&id) {
                            Some(term) => {
                                if term.exit.borrow().is_none() {
                                    kill_group(term.pgid);
                                }
                                responder.respond(ReleaseTerminalResponse::new())
                            }
                            None => responder.respond_with_error(unknown(&id)),
                        }
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
        let client = TerminalClient {
            cx,
            updates,
            requests,
            created,
            close: Some(close),
            driver,
        };
        let init = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(ClientCapabilities::new().terminal(true));
        within("initialize", client.cx.send_request(init).block_task())
            .await
            .unwrap();
        client
    }

    pub async fn new_session(&self, cwd: &Path) -> String {
        let response = within(
            "session/new",
            self.cx
                .send_request(NewSessionRequest::new(cwd))
                .block_task(),
        )
        .await
        .unwrap();
        response.session_id.0.to_string()
    }

    pub async fn prompt(&self, session: &str, text: &str) -> StopReason {
        let request = PromptRequest::new(session.to_string(), vec![ContentBlock::from(text)]);
        within("session/prompt", self.cx.send_request(request).block_task())
            .await
            .unwrap()
            .stop_reason
    }

    /// Every update received so far (all of a prompt's, once it answered).
    pub fn take_updates(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(note) = self.updates.try_recv() {
            out.push(serde_json::to_value(note.update).unwrap());
        }
        out
    }

    /// The methods of the terminal requests so far, in order.
    pub fn methods(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r["method"].as_str().unwrap().to_string())
            .collect()
    }

    /// The params of every request of `method`.
    pub fn params(&self, method: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r["method"] == method)
            .map(|r| r["params"].clone())
            .collect()
    }

    pub async fn close(mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
        let _ = within("the client to close", &mut self.driver).await;
    }
}
