//! ACP (Agent Client Protocol, JSON-RPC 2.0, one message per line): dsh as
//! the agent side, for editors, over any byte stream.
//!
//! [`AcpServer`] owns what all connections share: the [`Agent`], and the
//! session → connection routes the `approval` service it mounts uses to put
//! a pre-tool `ask` to the right client as `session/request_permission`.
//! [`AcpServer::serve`] runs one connection on the official SDK
//! (`agent-client-protocol`, protocol v1) over a size-limited line
//! transport ([`frames`]): `initialize`, `session/new`, `session/load`
//! (replay, then session-start `resume`), `session/prompt` (streamed as
//! `session/update`) and `session/cancel`. Connections are independent: a
//! slow, broken or oversized one only ends itself. Errors become JSON-RPC
//! errors in one place, [`AcpError::to_rpc`].
//!
//! Besides `approval`, it mounts `editor-fs` and `editor-terminal`: the
//! file tools and `Bash` go through the editor's files and terminals when
//! the session's client offers them.
//!
//! A session belongs to the connection that created or loaded it. When a
//! connection ends, its running turns are cancelled (the editor that would
//! show them and answer their approvals is gone) and its sessions closed;
//! they stay on disk for a later `session/load`.
//!
//! It may call: the agent (sessions and turns), the service registry (to
//! mount `approval`). It prints nothing: stdout belongs to the transport.

mod approval;
mod connection;
mod editor_fs;
mod editor_terminal;
mod elicitation;
mod error;
mod frames;
mod handlers;
mod history;
mod mcp_servers;
mod modes;
mod tool_view;
mod turn;
mod updates;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agent_client_protocol::Lines;
use futures::{SinkExt as _, StreamExt as _};
use tokio_util::codec::{FramedRead, FramedWrite};
use tracing::Instrument as _;

pub use error::AcpError;

use crate::agent::{APPROVAL_SERVICE, Agent};
use approval::{ApprovalService, Routes};
use connection::Connection;
use frames::FrameCodec;

/// The longest line (one JSON-RPC message) a connection may send; a longer
/// one closes that connection.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// The owner id of the services this module mounts.
const OWNER: &str = "acp";

/// ACP for one agent: any number of concurrent connections.
pub struct AcpServer {
    agent: Arc<Agent>,
    routes: Arc<Routes>,
    next_connection: AtomicU64,
    max_frame_bytes: usize,
    /// Whether our `approval` service is the mounted one (to unmount it).
    mounted: bool,
}

impl AcpServer {
    /// Mounts the `approval` service (owner id "acp") on the agent's core.
    pub fn new(agent: Arc<Agent>) -> Arc<AcpServer> {
        let routes = Arc::new(Routes::default());
        let service = ApprovalService::boxed(routes.clone(), Arc::downgrade(&agent));
        let mut mounted = match agent.core().mount_service(OWNER, APPROVAL_SERVICE, service) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("ACP permission requests are off: {e}");
                false
            }
        };
        let files = editor_fs::EditorFsService::boxed(routes.clone());
        match agent
            .core()
            .mount_service(OWNER, dsh_plugin_api::services::editor_fs::SERVICE, files)
        {
            Ok(()) => mounted = true,
            Err(e) => tracing::warn!("editors' file systems are off: {e}"),
        }
        let terminals =
            editor_terminal::EditorTerminalService::boxed(routes.clone(), Arc::downgrade(&agent));
        match agent.core().mount_service(
            OWNER,
            dsh_plugin_api::services::editor_terminal::SERVICE,
            terminals,
        ) {
            Ok(()) => mounted = true,
            Err(e) => tracing::warn!("editors' terminals are off: {e}"),
        }
        let elicit = elicitation::ElicitationService::boxed(routes.clone());
        match agent.core().mount_service(
            OWNER,
            dsh_plugin_api::services::elicitation::SERVICE,
            elicit,
        ) {
            Ok(()) => mounted = true,
            Err(e) => tracing::warn!("editors' elicitation is off: {e}"),
        }
        Arc::new(AcpServer {
            agent,
            routes,
            next_connection: AtomicU64::new(1),
            max_frame_bytes: MAX_FRAME_BYTES,
            mounted,
        })
    }

    /// Serves one ACP connection until the peer closes it (or it breaks). Never panics.
    pub async fn serve<R, W>(self: &Arc<Self>, reader: R, writer: W) -> Result<(), AcpError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let id = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let span = tracing::info_span!("acp", connection = id);
        let conn = Arc::new(Connection::new(id, self.agent.clone(), self.routes.clone()));
        let oversized = Arc::new(AtomicBool::new(false));
        let codec = FrameCodec::new(self.max_frame_bytes, oversized.clone());
        // The moment the peer's side ends, stop its turns (see
        // `Connection::shutdown`), ahead of the SDK's own EOF handling.
        let on_error = conn.clone();
        let on_eof = conn.clone();
        let hung_up = Arc::new(AtomicBool::new(false));
        let (read_hung_up, write_hung_up) = (hung_up.clone(), hung_up.clone());
        let incoming = FramedRead::new(reader, codec.clone())
            .inspect(move |frame| {
                if let Err(e) = frame {
                    read_hung_up.fetch_or(peer_gone(e), Ordering::SeqCst);
                    on_error.shutdown();
                }
            })
            .chain(futures::stream::poll_fn(move |_| {
                on_eof.shutdown();
                std::task::Poll::Ready(None)
            }));
        let outgoing = FramedWrite::new(writer, codec).sink_map_err(move |e: std::io::Error| {
            write_hung_up.fetch_or(peer_gone(&e), Ordering::SeqCst);
            e
        });
        let transport = Lines::new(outgoing, incoming);
        span.in_scope(|| tracing::info!("ACP connection opened"));
        let result = handlers::run(conn.clone(), transport)
            .instrument(span.clone())
            .await;
        conn.close().instrument(span.clone()).await;
        let _entered = span.enter();
        if oversized.load(Ordering::SeqCst) {
            let e = AcpError::FrameTooLarge {
                limit: self.max_frame_bytes,
            };
            tracing::error!("{e}");
            return Err(e);
        }
        match result {
            // A peer that hangs up while we write has closed, not failed.
            Err(e) if !hung_up.load(Ordering::SeqCst) => {
                let e = AcpError::Connection(match &e.data {
                    Some(data) => format!("{}: {data}", e.message),
                    None => e.message,
                });
                tracing::warn!("{e}");
                Err(e)
            }
            _ => {
                tracing::info!("ACP connection closed");
                Ok(())
            }
        }
    }
}

/// Whether an I/O error means the peer went away (rather than a fault).
fn peer_gone(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::BrokenPipe
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
    )
}

impl Drop for AcpServer {
    fn drop(&mut self) {
        if self.mounted {
            self.agent.core().dispose(OWNER);
        }
    }
}
