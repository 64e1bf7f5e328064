//! One ACP connection's sessions and running prompts.
//!
//! A session belongs to the connection that created or loaded it: only that
//! connection may prompt or cancel it, and its approvals go to that client
//! (through [`Routes`]). When the connection ends, [`Connection::close`]
//! cancels its running turns (nobody is left to see them or to answer their
//! approvals), waits briefly for them to end `aborted`, and closes its
//! sessions (`agent/session-end`); they stay on disk for a later
//! `session/load`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::approval::{ClientConnection, ClientOffers, Routes};
use super::error::AcpError;
use crate::agent::{Agent, Session};

/// How long a closing connection waits for each cancelled turn to end.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// The session-end reason for sessions whose connection went away.
const END_REASON: &str = "other";

/// A prompt in flight.
#[derive(Default)]
pub(crate) struct RunningTurn {
    cancel_requested: AtomicBool,
    /// Cancelled once the turn has ended.
    pub(crate) finished: CancellationToken,
}

impl RunningTurn {
    pub(crate) fn request_cancel(&self) {
        self.cancel_requested.store(true, Ordering::SeqCst);
    }

    pub(crate) fn cancel_requested(&self) -> bool {
        self.cancel_requested.load(Ordering::SeqCst)
    }
}

struct Slot {
    session: Arc<Session>,
    running: Option<Arc<RunningTurn>>,
    /// `session/load` is replaying it and firing session-start.
    loading: bool,
}

impl Slot {
    fn busy(&self) -> bool {
        self.loading || self.running.is_some()
    }
}

#[derive(Default)]
struct State {
    closed: bool,
    sessions: HashMap<String, Slot>,
    /// Sessions detached by [`Connection::shutdown`], for `close` to end.
    closing: Vec<(String, Slot)>,
}

/// The state of one connection.
pub(crate) struct Connection {
    pub(crate) id: u64,
    pub(crate) agent: Arc<Agent>,
    routes: Arc<Routes>,
    state: Mutex<State>,
    /// The client said at `initialize` that it shows session notices.
    notices: AtomicBool,
    /// The file system and terminals the client offered at `initialize`.
    offers: Mutex<ClientOffers>,
}

impl Connection {
    pub(crate) fn new(id: u64, agent: Arc<Agent>, routes: Arc<Routes>) -> Self {
        Connection {
            id,
            agent,
            routes,
            state: Mutex::new(State::default()),
            notices: AtomicBool::new(false),
            offers: Mutex::default(),
        }
    }

    /// Records what the client offered at `initialize`.
    pub(crate) fn initialized(
        &self,
        capabilities: &agent_client_protocol::v1::schema::ClientCapabilities,
    ) {
        let notices = capabilities
            .session
            .as_ref()
            .is_some_and(|s| s.notices.is_some());
        self.notices.store(notices, Ordering::SeqCst);
        let form = capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some());
        *self.offers.lock().unwrap_or_else(|p| p.into_inner()) = ClientOffers {
            fs: capabilities.fs.clone(),
            terminal: capabilities.terminal,
            elicitation_form: form,
        };
    }

    fn offers(&self) -> ClientOffers {
        self.offers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether the client shows session notices (`session.notices`).
    pub(crate) fn shows_notices(&self) -> bool {
        self.notices.load(Ordering::SeqCst)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `session` as this connection's; refused once it closed.
    fn adopt(&self, session: &Arc<Session>, loading: bool) -> Result<(), AcpError> {
        let mut state = self.state();
        if state.closed {
            return Err(AcpError::Connection("the connection closed".into()));
        }
        state.sessions.insert(
            session.id.clone(),
            Slot {
                session: session.clone(),
                running: None,
                loading,
            },
        );
        Ok(())
    }

    /// `session/load` of `id` is done: it may take prompts.
    pub(crate) fn loaded(&self, id: &str) {
        if let Some(slot) = self.state().sessions.get_mut(id) {
            slot.loading = false;
        }
    }

    /// Creates a session in `cwd` (firing session-start `startup`).
    pub(crate) async fn create(
        &self,
        cwd: &Path,
        client: &ClientConnection,
    ) -> Result<Arc<Session>, AcpError> {
        let path = cwd.to_string_lossy().into_owned();
        if !cwd.is_absolute() {
            return Err(AcpError::InvalidCwd {
                path,
                reason: "is not an absolute path",
            });
        }
        if !cwd.is_dir() {
            return Err(AcpError::InvalidCwd {
                path,
                reason: "is not a directory",
            });
        }
        let session = self.agent.create_session(cwd, None).await?;
        self.routes
            .claim(&session.id, self.id, client, self.offers())?;
        if let Err(e) = self.adopt(&session, false) {
            self.routes.release(&session.id, self.id);
            self.agent.close_session(&session.id, END_REASON).await;
            return Err(e);
        }
        Ok(session)
    }

    /// Loads a stored session (without firing session-start) and attaches
    /// it here, busy until [`Connection::loaded`]. An id not of dsh's form,
    /// a session another open connection holds, and one another process has
    /// open (its log's lock) are refused.
    pub(crate) async fn load(
        &self,
        id: &str,
        client: &ClientConnection,
    ) -> Result<Arc<Session>, AcpError> {
        AcpError::check_id(id)?;
        if let Some(slot) = self.state().sessions.get_mut(id) {
            if slot.busy() {
                return Err(AcpError::SessionBusy {
                    session_id: id.to_string(),
                });
            }
            slot.loading = true;
            return Ok(slot.session.clone());
        }
        if !self.agent.exists(id) {
            return Err(AcpError::UnknownSession {
                session_id: id.to_string(),
            });
        }
        self.routes.claim(id, self.id, client, self.offers())?;
        let session = match self.agent.load_session(id).await {
            Ok(s) => s,
            Err(e) => {
                self.routes.release(id, self.id);
                return Err(AcpError::loading(id, e));
            }
        };
        if let Err(e) = self.adopt(&session, true) {
            self.routes.release(id, self.id);
            self.agent.close_session(id, END_REASON).await;
            return Err(e);
        }
        Ok(session)
    }

    /// Marks a prompt running in `id`: one at a time per session.
    pub(crate) fn begin_prompt(
        &self,
        id: &str,
    ) -> Result<(Arc<Session>, Arc<RunningTurn>), AcpError> {
        AcpError::check_id(id)?;
        let mut state = self.state();
        let Some(slot) = state.sessions.get_mut(id) else {
            return Err(AcpError::UnknownSession {
                session_id: id.to_string(),
            });
        };
        if slot.busy() {
            return Err(AcpError::SessionBusy {
                session_id: id.to_string(),
            });
        }
        let running = Arc::new(RunningTurn::default());
        slot.running = Some(running.clone());
        Ok((slot.session.clone(), running))
    }

    /// A session this connection holds.
    pub(crate) fn session(&self, id: &str) -> Result<Arc<Session>, AcpError> {
        AcpError::check_id(id)?;
        self.state()
            .sessions
            .get(id)
            .map(|slot| slot.session.clone())
            .ok_or_else(|| AcpError::UnknownSession {
                session_id: id.to_string(),
            })
    }

    /// Clears the running prompt (before its answer goes out, so the
    /// client's next prompt is never refused as busy).
    pub(crate) fn end_prompt(&self, id: &str, running: &Arc<RunningTurn>) {
        if let Some(slot) = self.state().sessions.get_mut(id)
            && slot
                .running
                .as_ref()
                .is_some_and(|r| Arc::ptr_eq(r, running))
        {
            slot.running = None;
        }
    }

    /// `session/cancel`: aborts the running prompt of `id`, if any.
    pub(crate) fn cancel(&self, id: &str) {
        if let Err(e) = AcpError::check_id(id) {
            tracing::info!("session/cancel ignored: {e}");
            return;
        }
        let state = self.state();
        match state.sessions.get(id) {
            Some(Slot {
                session,
                running: Some(running),
                ..
            }) => {
                tracing::info!(session = %id, "cancel requested");
                // The flag first: the turn task repeats the cancel if the
                // turn had not yet installed its token.
                running.request_cancel();
                session.cancel();
            }
            Some(_) => tracing::debug!(session = %id, "cancel with no prompt running"),
            None => {
                tracing::debug!(session = %id, "cancel for a session this connection does not hold")
            }
        }
    }

    /// The peer is gone (EOF or a broken transport): refuse new work,
    /// detach the sessions (their approvals become unavailable) and cancel
    /// running turns. Called from the transport as soon as it sees the end,
    /// before the SDK fails the requests still waiting for the client, so a
    /// pending approval ends with its turn. Idempotent.
    pub(crate) fn shutdown(&self) {
        let mut state = self.state();
        if state.closed {
            return;
        }
        state.closed = true;
        let slots: Vec<(String, Slot)> = state.sessions.drain().collect();
        for (id, slot) in &slots {
            if let Some(running) = &slot.running {
                tracing::info!(session = %id, "connection closed mid-turn: cancelling the turn");
                running.request_cancel();
                slot.session.cancel();
            }
        }
        state.closing = slots;
        drop(state);
        self.routes.release_connection(self.id);
    }

    /// The connection ended: after [`Connection::shutdown`], wait for the
    /// cancelled turns and close the sessions.
    pub(crate) async fn close(&self) {
        self.shutdown();
        let slots = std::mem::take(&mut self.state().closing);
        for (id, slot) in slots {
            if let Some(running) = slot.running {
                let ended = tokio::time::timeout(CLOSE_GRACE, running.finished.cancelled()).await;
                if ended.is_err() {
                    tracing::warn!(session = %id, "turn still running {CLOSE_GRACE:?} after its connection closed; the session closes when it ends");
                    let agent = self.agent.clone();
                    tokio::spawn(async move {
                        running.finished.cancelled().await;
                        agent.close_session(&id, END_REASON).await;
                    });
                    continue;
                }
            }
            self.agent.close_session(&id, END_REASON).await;
        }
    }
}
