//! Permission modes as ACP session modes: every `session/new` and
//! `session/load` answer lists them with the session's current one,
//! `session/set_mode` changes it (recorded in the session log, so a loaded
//! session keeps it) and `current_mode_update` tells the client.
//!
//! Mode ids are Claude Code's spellings (`default`, `acceptEdits`, `plan`,
//! `bypassPermissions`, `dontAsk`), which are also what hooks read as
//! `permission_mode`.

use std::sync::Arc;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CurrentModeUpdate, SessionId, SessionMode, SessionModeState, SessionNotification,
    SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
};

use super::approval::ClientConnection;
use super::connection::Connection;
use super::error::AcpError;
use crate::permissions::PermissionMode;

/// Every mode, with `current` as the current one.
pub(crate) fn mode_state(current: PermissionMode) -> SessionModeState {
    let modes = PermissionMode::ALL
        .iter()
        .map(|m| SessionMode::new(m.as_str(), m.title()).description(m.description().to_string()))
        .collect();
    SessionModeState::new(current.as_str(), modes)
}

/// `session/set_mode`: sets the mode of a session this connection holds,
/// sends `current_mode_update`, then answers.
pub(crate) fn set_mode(
    conn: &Arc<Connection>,
    request: SetSessionModeRequest,
    responder: Responder<SetSessionModeResponse>,
    cx: &ClientConnection,
) -> Result<(), agent_client_protocol::Error> {
    let id = request.session_id.0.to_string();
    let changed = conn.session(&id).and_then(|session| {
        let mode =
            request
                .mode_id
                .0
                .parse::<PermissionMode>()
                .map_err(|_| AcpError::UnknownMode {
                    mode_id: request.mode_id.0.to_string(),
                })?;
        session.set_permission_mode(mode, "acp");
        Ok(mode)
    });
    match changed {
        Ok(mode) => {
            tracing::info!(session = %id, mode = %mode, "permission mode set");
            // The update first: a client reads it before the answer.
            let update = SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.as_str()));
            let note = SessionNotification::new(SessionId::new(id.as_str()), update);
            if let Err(e) = cx.send_notification(note) {
                tracing::debug!(session = %id, "current_mode_update not sent: {}", e.message);
            }
            responder.respond(SetSessionModeResponse::new())
        }
        Err(e) => {
            tracing::info!(session = %id, "session/set_mode refused: {e}");
            responder.respond_with_error(e.to_rpc())
        }
    }
}
