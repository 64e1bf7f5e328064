//! `session/prompt`: run one turn and stream it to the client.
//!
//! Two tasks per prompt, split by what may be dropped:
//! - the turn itself runs on a tokio task, because a running turn is never
//!   dropped (that would orphan its tool and hook processes): it ends
//!   through `Session::cancel` and then finishes `aborted`;
//! - the forwarder runs on the connection (`cx.spawn`), outside the dispatch
//!   loop: it turns the session's live events into `session/update`
//!   notifications and answers the request. It dies with the connection,
//!   which is fine: nobody is left to read what it would send.

use std::sync::Arc;

use agent_client_protocol::Error as RpcError;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    PromptRequest, PromptResponse, SessionId, SessionNotification,
};
use dsh_plugin_api::MessageSource;
use tokio::sync::oneshot;
use tracing::Instrument as _;

use super::approval::ClientConnection;
use super::connection::{Connection, RunningTurn};
use super::error::AcpError;
use super::updates::{Mode, Translator, prompt_content, stop_reason};
use crate::agent::{EventStream, Prompt, Session, TurnOutcome};
use crate::session::SessionEvent;

/// Starts the prompt, or answers it with an error at once.
pub(crate) fn start(
    conn: &Arc<Connection>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    cx: &ClientConnection,
) -> Result<(), RpcError> {
    let id = request.session_id.0.to_string();
    let prepared = prompt_content(&request.prompt).and_then(|content| {
        let (session, running) = conn.begin_prompt(&id)?;
        Ok((session, running, content))
    });
    let (session, running, content) = match prepared {
        Ok(p) => p,
        Err(e) => {
            tracing::info!(session = %id, "session/prompt refused: {e}");
            return responder.respond_with_error(e.to_rpc());
        }
    };
    // Subscribe before the turn exists, so no event is missed.
    let events = session.subscribe();
    // `/compact` is a command over ACP, whatever the compaction style.
    session.enqueue(Prompt {
        content,
        source: MessageSource::User,
        commands: true,
        submit: true,
    });
    let (done_tx, done_rx) = oneshot::channel();
    tokio::spawn(drive(session.clone(), running.clone(), done_tx).in_current_span());
    let forwarder = Forwarder {
        conn: conn.clone(),
        id,
        running,
        cx: cx.clone(),
        cwd: session.current_cwd(),
    };
    cx.spawn(forwarder.run(events, done_rx, responder).in_current_span())
}

/// Runs the turn to its end. A `session/cancel` that arrives before the
/// turn opens is kept by the session for this turn ([`Session::cancel`]).
async fn drive(
    session: Arc<Session>,
    running: Arc<RunningTurn>,
    done: oneshot::Sender<TurnOutcome>,
) {
    let outcome = session.run_turn().await;
    tracing::info!(session = %session.id, reason = outcome.reason.as_str(), "prompt turn ended");
    // The forwarder may be gone with its connection; the turn ended anyway.
    let _ = done.send(outcome);
    running.finished.cancel();
}

struct Forwarder {
    conn: Arc<Connection>,
    id: String,
    running: Arc<RunningTurn>,
    cx: ClientConnection,
    /// The session's working directory when the prompt started.
    cwd: std::path::PathBuf,
}

impl Forwarder {
    fn send(&self, translator: &mut Translator, event: &SessionEvent) {
        for update in translator.updates(event) {
            let note = SessionNotification::new(SessionId::new(self.id.as_str()), update);
            if let Err(e) = self.cx.send_notification(note) {
                tracing::debug!(session = %self.id, "session/update not sent: {}", e.message);
            }
        }
    }

    /// Streams the turn, then answers the prompt. Never fails: an error
    /// here would shut the whole connection down.
    async fn run(
        self,
        mut events: EventStream,
        mut done: oneshot::Receiver<TurnOutcome>,
        responder: Responder<PromptResponse>,
    ) -> Result<(), RpcError> {
        let mut translator = Translator::new(Mode::Live)
            .in_cwd(self.cwd.clone())
            .with_notices(self.conn.shows_notices());
        let outcome = loop {
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    Some(event) => self.send(&mut translator, &event.event),
                    None => break (&mut done).await,
                },
                outcome = &mut done => break outcome,
            }
        };
        // Everything the turn appended was published before it returned;
        // the feed skips nothing, so this is all of it.
        while let Some(event) = events.try_recv() {
            self.send(&mut translator, &event.event);
        }
        drop(events);
        self.conn.end_prompt(&self.id, &self.running);
        let answer = match &outcome {
            Ok(outcome) => stop_reason(outcome, self.running.cancel_requested()),
            Err(_) => Err(AcpError::TurnLost {
                session_id: self.id.clone(),
            }),
        };
        let sent = match answer {
            Ok(reason) => responder.respond(PromptResponse::new(reason)),
            Err(e) => {
                tracing::warn!(session = %self.id, "prompt failed: {e}");
                responder.respond_with_error(e.to_rpc())
            }
        };
        if let Err(e) = sent {
            tracing::debug!(session = %self.id, "session/prompt answer not sent: {}", e.message);
        }
        Ok(())
    }
}
