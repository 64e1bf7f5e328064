//! [`AcpError`]: everything that can go wrong at the ACP boundary, and the
//! one place ([`AcpError::to_rpc`]) where it becomes a JSON-RPC error.

use agent_client_protocol::{Error as RpcError, ErrorCode};
use serde_json::json;

use crate::session::{InvalidSessionId, LogError};

/// A failure at the ACP boundary: a request the agent cannot serve, or a
/// connection that ended badly.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// The session is not known to this connection (or not at all).
    #[error("unknown session `{session_id}`: create it with session/new or load it first")]
    UnknownSession {
        /// The id the client sent.
        session_id: String,
    },
    /// The session id is not of dsh's form; nothing was looked up.
    #[error("{error}")]
    InvalidSessionId {
        /// The id the client sent.
        session_id: String,
        /// What is wrong with it.
        error: InvalidSessionId,
    },
    /// Another process (a `dsh prompt`, another daemon) has the session
    /// open: it holds the log's lock.
    #[error("session `{session_id}` is in use by another dsh process")]
    SessionInUse {
        /// The session.
        session_id: String,
    },
    /// The session belongs to another open connection.
    #[error("session `{session_id}` is attached to another connection")]
    SessionAttached {
        /// The session.
        session_id: String,
    },
    /// A prompt is already running in the session (or it is loading).
    #[error("session `{session_id}` is busy with a prompt or a load")]
    SessionBusy {
        /// The session.
        session_id: String,
    },
    /// `session/set_mode` named a mode dsh does not have.
    #[error(
        "unknown mode `{mode_id}` (one of: default, acceptEdits, plan, bypassPermissions, dontAsk)"
    )]
    UnknownMode {
        /// The mode id the client sent.
        mode_id: String,
    },
    /// `cwd` is not an absolute path to a directory.
    #[error("cwd `{path}` {reason}")]
    InvalidCwd {
        /// The path the client sent.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A prompt content block dsh cannot turn into text.
    #[error("unsupported prompt content: {kind} blocks are not supported")]
    UnsupportedContent {
        /// The block's kind (`image`, `audio`, `blob resource`).
        kind: &'static str,
    },
    /// The session log could not be created or read.
    #[error("session log: {0}")]
    SessionLog(#[from] LogError),
    /// The turn ended with an error.
    #[error("{message}")]
    TurnFailed {
        /// The turn's end message.
        message: String,
    },
    /// The task running a turn ended without reporting how the turn ended.
    #[error("the turn of session `{session_id}` ended without an outcome")]
    TurnLost {
        /// The session.
        session_id: String,
    },
    /// A line longer than the frame limit; the connection was closed.
    #[error("a frame exceeded the {limit}-byte limit; the connection was closed")]
    FrameTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The connection broke (transport or protocol failure).
    #[error("ACP connection failed: {0}")]
    Connection(String),
}

impl AcpError {
    /// Checks a client-sent session id before it is used.
    pub fn check_id(session_id: &str) -> Result<(), AcpError> {
        crate::session::check_session_id(session_id).map_err(|error| AcpError::InvalidSessionId {
            session_id: session_id.to_string(),
            error,
        })
    }

    /// A log error met while loading session `session_id`.
    pub fn loading(session_id: &str, error: LogError) -> AcpError {
        match error {
            LogError::Locked { .. } => AcpError::SessionInUse {
                session_id: session_id.to_string(),
            },
            LogError::InvalidId(error) => AcpError::InvalidSessionId {
                session_id: session_id.to_string(),
                error,
            },
            other => AcpError::SessionLog(other),
        }
    }

    /// The JSON-RPC error a request answering with `self` gets. A session
    /// the connection does not know is `-32002` (resource not found, as the
    /// ACP schema says); other client mistakes are invalid params (with the
    /// offending id as data); agent failures are internal errors carrying
    /// their message.
    pub fn to_rpc(&self) -> RpcError {
        let message = self.to_string();
        match self {
            AcpError::UnknownSession { session_id } => {
                RpcError::new(ErrorCode::RESOURCE_NOT_FOUND, message)
                    .data(json!({ "sessionId": session_id }))
            }
            AcpError::InvalidSessionId { session_id, .. }
            | AcpError::SessionInUse { session_id }
            | AcpError::SessionAttached { session_id }
            | AcpError::SessionBusy { session_id } => {
                RpcError::new(ErrorCode::INVALID_PARAMS, message)
                    .data(json!({ "sessionId": session_id }))
            }
            AcpError::UnknownMode { mode_id } => {
                RpcError::new(ErrorCode::INVALID_PARAMS, message).data(json!({ "modeId": mode_id }))
            }
            AcpError::InvalidCwd { path, .. } => {
                RpcError::new(ErrorCode::INVALID_PARAMS, message).data(json!({ "cwd": path }))
            }
            AcpError::UnsupportedContent { kind } => {
                RpcError::new(ErrorCode::INVALID_PARAMS, message).data(json!({ "kind": kind }))
            }
            AcpError::SessionLog(_)
            | AcpError::TurnFailed { .. }
            | AcpError::TurnLost { .. }
            | AcpError::FrameTooLarge { .. }
            | AcpError::Connection(_) => RpcError::new(ErrorCode::INTERNAL_ERROR, message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_or_held_session_id_is_invalid_params_naming_it() {
        let bad = AcpError::check_id("../../x").unwrap_err();
        let rpc = bad.to_rpc();
        assert_eq!(rpc.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(rpc.data, Some(json!({"sessionId": "../../x"})));
        assert!(
            rpc.message.starts_with("invalid session id"),
            "{}",
            rpc.message
        );
        let held = AcpError::loading(
            "s1",
            LogError::Locked {
                path: "/state/sessions/s1.jsonl".into(),
            },
        )
        .to_rpc();
        assert_eq!(held.code, ErrorCode::INVALID_PARAMS);
        assert!(held.message.contains("in use by another dsh process"));
    }

    #[test]
    fn unknown_sessions_are_not_found_other_mistakes_invalid_params_and_failures_internal() {
        let unknown = AcpError::UnknownSession {
            session_id: "ses_x".into(),
        }
        .to_rpc();
        assert_eq!(unknown.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(i32::from(unknown.code), -32002);
        assert_eq!(unknown.data, Some(json!({"sessionId": "ses_x"})));
        let failed = AcpError::TurnFailed {
            message: "model request failed: boom".into(),
        }
        .to_rpc();
        assert_eq!(failed.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(failed.message, "model request failed: boom");
    }
}
