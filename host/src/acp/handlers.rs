//! The ACP agent's request and notification handlers.
//!
//! Handlers run inside the connection's dispatch loop, so each returns at
//! once: quick answers (`initialize`, refusals) are sent in place; anything
//! that awaits the agent (session-start listeners, a turn) is spawned.
//! Work that changes agent state (creating or loading a session) runs on a
//! tokio task so a closing connection cannot drop it halfway.

use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate,
    CancelNotification, Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionId, SessionListCapabilities,
    SessionNotification, SessionResumeCapabilities, SessionUpdate, SetSessionModeRequest,
    UnstructuredCommandInput,
};
use agent_client_protocol::{Agent, ConnectTo, Error as RpcError};
use dsh_plugin_api::SessionStartSource;
use tracing::Instrument as _;

use super::approval::ClientConnection;
use super::connection::Connection;
use super::error::AcpError;
use super::updates::{Mode, Translator};

/// Serves one connection over `transport` until it closes.
pub(crate) async fn run(
    conn: Arc<Connection>,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), RpcError> {
    let init_conn = conn.clone();
    let (new_conn, load_conn, prompt_conn, mode_conn, cancel_conn, list_conn, resume_conn) = (
        conn.clone(),
        conn.clone(),
        conn.clone(),
        conn.clone(),
        conn.clone(),
        conn.clone(),
        conn,
    );
    Agent
        .v1()
        .name("dsh")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                init_conn.initialized(&request.client_capabilities);
                responder.respond(initialize(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                new_session(new_conn.clone(), request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                load_session(load_conn.clone(), request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                super::turn::start(&prompt_conn, request, responder, &cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, cx| {
                super::modes::set_mode(&mode_conn, request, responder, &cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, cx| {
                resume_session(resume_conn.clone(), request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, _cx| {
                list_sessions(&list_conn, request, responder);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |note: CancelNotification, _cx| {
                cancel_conn.cancel(&note.session_id.0);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

/// Protocol v1, session loading, text and embedded text resources.
fn initialize(request: &InitializeRequest) -> InitializeResponse {
    if let Some(info) = &request.client_info {
        tracing::info!(client = %info.name, version = %info.version, "ACP client initialized");
    }
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                // stdio (which every agent must take) and streamable HTTP.
                .mcp_capabilities(McpCapabilities::new().http(true))
                .session_capabilities(
                    SessionCapabilities::new()
                        .list(SessionListCapabilities::new())
                        .resume(SessionResumeCapabilities::new()),
                ),
        )
        .agent_info(Implementation::new("dsh", env!("CARGO_PKG_VERSION")).title("dsh"))
}

fn answer<T>(method: &str, responder: Responder<T>, result: Result<T, AcpError>)
where
    T: agent_client_protocol::JsonRpcResponse,
{
    let sent = match result {
        Ok(response) => responder.respond(response),
        Err(e) => {
            tracing::info!("{method} failed: {e}");
            responder.respond_with_error(e.to_rpc())
        }
    };
    if let Err(e) = sent {
        tracing::debug!("{method} answer not sent: {}", e.message);
    }
}

/// `session/new`: its `cwd` becomes the session's cwd.
fn new_session(
    conn: Arc<Connection>,
    request: NewSessionRequest,
    responder: Responder<NewSessionResponse>,
    cx: ClientConnection,
) {
    let work = async move {
        let (specs, mut failed) = super::mcp_servers::specs(&request.mcp_servers);
        let created = conn.create(&request.cwd, &cx).await;
        let result = match created {
            Ok(session) => {
                failed.extend(conn.agent.connect_mcp(&session, specs).await);
                tracing::info!(session = %session.id, cwd = %request.cwd.display(), "session created");
                Ok(session)
            }
            Err(e) => Err(e),
        };
        let id = result.as_ref().ok().map(|s| s.id.clone());
        answer(
            "session/new",
            responder,
            result.map(|session| {
                NewSessionResponse::new(session.id.clone())
                    .modes(super::modes::mode_state(session.permission_mode()))
            }),
        );
        // After the answer: the client knows the session by now.
        if let Some(id) = id {
            commands(&cx, &id);
            super::mcp_servers::report(&cx, &id, &failed);
        }
    };
    tokio::spawn(work.in_current_span());
}

/// `session/load`: replay the conversation, then fire session-start
/// `resume`, connect its MCP servers, then answer.
fn load_session(
    conn: Arc<Connection>,
    request: LoadSessionRequest,
    responder: Responder<LoadSessionResponse>,
    cx: ClientConnection,
) {
    let attach = Attach {
        id: request.session_id.0.to_string(),
        cwd: request.cwd,
        mcp_servers: request.mcp_servers,
        replay: true,
    };
    let work = async move {
        let result = attach.run(&conn, &cx).await;
        let id = attach_id(&result);
        let modes = |id: &str| {
            conn.agent
                .get(id)
                .map(|session| super::modes::mode_state(session.permission_mode()))
        };
        answer(
            "session/load",
            responder,
            result.map(|(id, _)| match modes(&id) {
                Some(modes) => LoadSessionResponse::new().modes(modes),
                None => LoadSessionResponse::new(),
            }),
        );
        if let Some((id, failed)) = id {
            commands(&cx, &id);
            super::mcp_servers::report(&cx, &id, &failed);
        }
    };
    tokio::spawn(work.in_current_span());
}

/// `session/resume`: `session/load` without the replay (the client keeps
/// its own copy of the conversation).
fn resume_session(
    conn: Arc<Connection>,
    request: ResumeSessionRequest,
    responder: Responder<ResumeSessionResponse>,
    cx: ClientConnection,
) {
    let attach = Attach {
        id: request.session_id.0.to_string(),
        cwd: request.cwd,
        mcp_servers: request.mcp_servers,
        replay: false,
    };
    let work = async move {
        let result = attach.run(&conn, &cx).await;
        let id = attach_id(&result);
        answer(
            "session/resume",
            responder,
            result.map(|_| ResumeSessionResponse::new()),
        );
        if let Some((id, failed)) = id {
            commands(&cx, &id);
            super::mcp_servers::report(&cx, &id, &failed);
        }
    };
    tokio::spawn(work.in_current_span());
}

fn attach_id(
    result: &Result<(String, Vec<crate::mcp::McpError>), AcpError>,
) -> Option<(String, Vec<crate::mcp::McpError>)> {
    result.as_ref().ok().cloned()
}

/// Attaching a stored session to a connection (`session/load`,
/// `session/resume`).
struct Attach {
    id: String,
    cwd: std::path::PathBuf,
    mcp_servers: Vec<agent_client_protocol::v1::schema::McpServer>,
    /// Replay the conversation as updates first.
    replay: bool,
}

impl Attach {
    /// Loads, replays (if asked), fires session-start `resume` and connects
    /// the MCP servers; the id and the servers that failed.
    async fn run(
        &self,
        conn: &Arc<Connection>,
        cx: &ClientConnection,
    ) -> Result<(String, Vec<crate::mcp::McpError>), AcpError> {
        let id = self.id.clone();
        let request = self;
        let mut failed = Vec::new();
        let result = match conn.load(&id, cx).await {
            Ok(session) => {
                if session.cwd != request.cwd {
                    tracing::debug!(session = %id, "the client's cwd {} differs from the stored {}; the stored one stays", request.cwd.display(), session.cwd.display());
                }
                let mut translator = Translator::new(Mode::Replay)
                    .in_cwd(session.current_cwd())
                    .with_notices(conn.shows_notices());
                let events = if self.replay {
                    session.events()
                } else {
                    Vec::new()
                };
                for event in events {
                    for update in translator.updates(&event.event) {
                        let note = SessionNotification::new(SessionId::new(id.as_str()), update);
                        if let Err(e) = cx.send_notification(note) {
                            tracing::debug!(session = %id, "replay stopped: {}", e.message);
                            break;
                        }
                    }
                }
                conn.agent
                    .fire_session_start(&session, SessionStartSource::Resume)
                    .await;
                let (specs, mut refused) = super::mcp_servers::specs(&request.mcp_servers);
                refused.extend(conn.agent.connect_mcp(&session, specs).await);
                failed = refused;
                conn.loaded(&id);
                tracing::info!(session = %id, replayed = self.replay, "session attached");
                Ok(())
            }
            Err(e) => Err(e),
        };
        result.map(|()| (id, failed))
    }
}

/// `available_commands_update`: the slash commands a prompt may start with.
/// dsh's one is `/compact [instructions]` (`agent/compact.rs`), which the
/// editor sends back as the prompt's text.
fn commands(cx: &ClientConnection, session: &str) {
    let compact = AvailableCommand::new(
        "compact",
        "Summarize the conversation so far and continue from the summary",
    )
    .input(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new("what the summary should keep (optional)"),
    ));
    let update =
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![compact]));
    if let Err(e) = cx.send_notification(SessionNotification::new(SessionId::new(session), update))
    {
        tracing::debug!(session = %session, "available commands not sent: {}", e.message);
    }
}

/// `session/list`, read on the blocking pool.
fn list_sessions(
    conn: &Arc<Connection>,
    request: ListSessionsRequest,
    responder: Responder<ListSessionsResponse>,
) {
    let state_dir = conn.agent.state_dir().to_path_buf();
    let work = async move {
        let listed =
            tokio::task::spawn_blocking(move || super::history::list(&state_dir, &request)).await;
        let result =
            listed.map_err(|e| AcpError::Connection(format!("session/list did not finish: {e}")));
        answer("session/list", responder, result);
    };
    tokio::spawn(work.in_current_span());
}
