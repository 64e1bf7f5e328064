//! The `editor-terminal` service over ACP: a tool's command run in a
//! terminal of the session's editor, for clients that offer `terminal: true`
//! at `initialize`. `bash-local`'s `Bash` tool asks it first; for a session
//! whose client offers no terminals (or no client) the answer is `local`
//! and the tool runs the command itself. Hooks are not involved: they run
//! locally around the tool either way.
//!
//! One run is `terminal/create` → (the call's content becomes the terminal,
//! through a live `stream/terminal` event, so the editor streams it in
//! place) → `terminal/wait_for_exit` → `terminal/output` →
//! `terminal/release`. A `kill` for the call, the request's timeout, or
//! the caller dropping the call sends `terminal/kill` first: the run lives
//! on a task of its own, so the terminal is released on every path. Every
//! request to the client is bounded ([`CLIENT_WAIT`]) except the wait for
//! the command itself, which the timeout and `kill` end.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use agent_client_protocol::JsonRpcRequest;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest,
    TerminalExitStatus, TerminalOutputRequest, WaitForTerminalExitRequest,
};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::editor_terminal::{
    KillRequest, METHOD_KILL, METHOD_OFFERS, METHOD_RUN, OffersAnswer, OffersRequest, RunRequest,
    TerminalAnswer,
};
use tokio_util::sync::CancellationToken;

use super::approval::{ClientConnection, Routes};
use crate::agent::Agent;
use crate::session::{LoggedEvent, SessionEvent};

/// The longest dsh waits for the client to answer one terminal request
/// (other than the wait for the command's exit).
const CLIENT_WAIT: Duration = Duration::from_secs(30);

/// Runs in flight, by (session, call): what `kill` fires.
type Running = Mutex<HashMap<(String, String), CancellationToken>>;

/// The service, backed by whichever client owns the session.
#[derive(Clone)]
pub(crate) struct EditorTerminalService {
    routes: Arc<Routes>,
    /// For the session's live feed (the agent owns this service: weak).
    agent: Weak<Agent>,
    running: Arc<Running>,
}

/// Why a run did not finish as the command's own exit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Exited,
    Killed,
    TimedOut,
}

/// Stops the run's task (kill, then release) if the caller goes away
/// first: a dropped tool call (a cancelled turn) still ends its terminal.
struct StopOnDrop(CancellationToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// One request to the client, bounded by [`CLIENT_WAIT`].
async fn ask<R>(client: &ClientConnection, request: R) -> Result<R::Response, String>
where
    R: JsonRpcRequest,
{
    let method = request.method().to_string();
    match tokio::time::timeout(CLIENT_WAIT, client.send_request(request).block_task()).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(format!("{method}: {}", e.message)),
        Err(_) => Err(format!(
            "{method}: the client did not answer within {CLIENT_WAIT:?}"
        )),
    }
}

impl EditorTerminalService {
    pub(crate) fn boxed(routes: Arc<Routes>, agent: Weak<Agent>) -> ServiceBox {
        let service = EditorTerminalService {
            routes,
            agent,
            running: Arc::default(),
        };
        Service_TO::from_ptr(RArc::new(service), TD_Opaque)
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), CancellationToken>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Shows terminal `terminal` in the call, in the session's live feed
    /// (so it follows the call's own `tool_call`).
    fn show(&self, session: &str, call: &str, terminal: &str) {
        let Some(session) = self.agent.upgrade().and_then(|agent| agent.get(session)) else {
            return;
        };
        session
            .feed
            .publish(LoggedEvent::live(SessionEvent::StreamTerminal {
                call_id: call.to_string(),
                terminal_id: terminal.to_string(),
            }));
    }

    async fn run(&self, args: RunRequest) -> TerminalAnswer {
        let Some(client) = self.routes.client_with_terminal(&args.session_id) else {
            return TerminalAnswer::Local;
        };
        let key = (args.session_id.clone(), args.call_id.clone());
        let token = CancellationToken::new();
        self.running().insert(key.clone(), token.clone());
        // The terminal's whole life runs on a task of its own, so that
        // dropping this call (a cancelled turn drops its tool) never leaves
        // a terminal created and unreleased: the drop stops the task, which
        // kills and releases what it created.
        let this = self.clone();
        let stop = StopOnDrop(token.clone());
        let task = tokio::spawn(async move {
            let answer = this.run_in(&client, &args, &token).await;
            this.running().remove(&key);
            answer
        });
        let answer = match task.await {
            Ok(answer) => answer,
            Err(e) => TerminalAnswer::Failed {
                message: format!("the terminal run ended abnormally: {e}"),
            },
        };
        drop(stop);
        answer
    }

    async fn run_in(
        &self,
        client: &ClientConnection,
        args: &RunRequest,
        token: &CancellationToken,
    ) -> TerminalAnswer {
        let session = args.session_id.as_str();
        let env = args
            .env
            .iter()
            .map(|(name, value)| EnvVariable::new(name.clone(), value.clone()))
            .collect();
        let create = CreateTerminalRequest::new(session.to_string(), args.command.clone())
            .args(args.args.clone())
            .env(env)
            .cwd(PathBuf::from(&args.cwd))
            .output_byte_limit(args.output_byte_limit);
        let terminal = match ask(client, create).await {
            Ok(created) => created.terminal_id.0.to_string(),
            Err(message) => return TerminalAnswer::Failed { message },
        };
        tracing::debug!(session, call = %args.call_id, terminal = %terminal, "command runs in the editor's terminal");
        self.show(session, &args.call_id, &terminal);
        let answer = self.finish(client, args, &terminal, token).await;
        if let Err(e) = ask(
            client,
            ReleaseTerminalRequest::new(session.to_string(), terminal),
        )
        .await
        {
            tracing::warn!(session, "the editor's terminal was not released: {e}");
        }
        answer
    }

    /// Waits for the command (killing it on `kill` or the timeout), then
    /// reads its output.
    async fn finish(
        &self,
        client: &ClientConnection,
        args: &RunRequest,
        terminal: &str,
        token: &CancellationToken,
    ) -> TerminalAnswer {
        let session = args.session_id.clone();
        let wait = client
            .send_request(WaitForTerminalExitRequest::new(
                session.clone(),
                terminal.to_string(),
            ))
            .block_task();
        tokio::pin!(wait);
        let deadline = async {
            match args.timeout_ms {
                Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                None => std::future::pending().await,
            }
        };
        let (stop, waited) = tokio::select! {
            exit = &mut wait => (Stop::Exited, Some(exit)),
            () = token.cancelled() => (Stop::Killed, None),
            () = deadline => (Stop::TimedOut, None),
        };
        let exited = match waited {
            Some(exit) => exit.map_err(|e| e.message),
            None => {
                let kill = KillTerminalRequest::new(session.clone(), terminal.to_string());
                if let Err(e) = ask(client, kill).await {
                    tracing::warn!(session = %session, "terminal/kill failed: {e}");
                }
                match tokio::time::timeout(CLIENT_WAIT, &mut wait).await {
                    Ok(exit) => exit.map_err(|e| e.message),
                    Err(_) => Err(format!(
                        "the command did not end within {CLIENT_WAIT:?} of terminal/kill"
                    )),
                }
            }
        };
        let output = ask(
            client,
            TerminalOutputRequest::new(session.clone(), terminal.to_string()),
        )
        .await;
        let (output, truncated, status) = match (output, exited) {
            (Ok(out), Ok(exit)) => (out.output, out.truncated, Some(exit.exit_status)),
            (Ok(out), Err(e)) => {
                tracing::warn!(session = %session, "terminal/wait_for_exit failed: {e}");
                (out.output, out.truncated, out.exit_status)
            }
            (Err(message), _) => return TerminalAnswer::Failed { message },
        };
        let status = status.unwrap_or_else(TerminalExitStatus::new);
        TerminalAnswer::Done {
            output,
            truncated,
            exit_code: status.exit_code,
            signal: status.signal,
            timed_out: stop == Stop::TimedOut,
            interrupted: stop == Stop::Killed,
        }
    }

    fn kill(&self, args: &KillRequest) {
        let key = (args.session_id.clone(), args.call_id.clone());
        if let Some(token) = self.running().get(&key) {
            token.cancel();
        }
    }
}

impl Service for EditorTerminalService {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let this = self.clone();
        async move {
            let answer = match method.as_str() {
                METHOD_RUN => match serde_json::from_str::<RunRequest>(&args) {
                    Ok(args) => serde_json::to_string(&this.run(args).await),
                    Err(e) => return RResult::RErr(format!("editor-terminal run: {e}").into()),
                },
                METHOD_OFFERS => match serde_json::from_str::<OffersRequest>(&args) {
                    Ok(args) => serde_json::to_string(&OffersAnswer {
                        offers: this.routes.client_with_terminal(&args.session_id).is_some(),
                    }),
                    Err(e) => return RResult::RErr(format!("editor-terminal offers: {e}").into()),
                },
                METHOD_KILL => match serde_json::from_str::<KillRequest>(&args) {
                    Ok(args) => {
                        this.kill(&args);
                        Ok("{}".to_string())
                    }
                    Err(e) => return RResult::RErr(format!("editor-terminal kill: {e}").into()),
                },
                other => {
                    return RResult::RErr(
                        format!("editor-terminal has no method `{other}`").into(),
                    );
                }
            };
            match answer {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => {
                    RResult::RErr(format!("cannot encode the editor-terminal answer: {e}").into())
                }
            }
        }
        .into_ffi()
    }
}
