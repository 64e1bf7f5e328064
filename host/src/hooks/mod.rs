//! The `hook-transport` service: runs the hooks that are not processes
//! (Claude Code's `http` hooks, dsh's `socket` hook servers) for the hook
//! bridges, which do no I/O of their own (ARCHITECTURE.md §8).
//!
//! The host mounts it (owner `dsh`) when it loads a manifest, and keeps one
//! [`HookTransport`] for its whole life, so a reload keeps the HTTP
//! connection pool and the running hook servers; only the manifest's
//! `hooks:` settings ([`HookSettings`]) are replaced. A call is the
//! `dsh_hook_protocol::transport` contract: the handler plus exactly the
//! request a command hook would have been run with, answered as a command
//! hook answers (exit code, stdout, stderr). The service never fails a
//! call: every problem is in the answer.
//!
//! - [`http`]: one pooled `reqwest` client, hosts limited to
//!   `hooks.http.allowed_hosts` (loopback only by default).
//! - [`socket`]: one long-lived connection per socket, many requests in
//!   flight, matched by id. A socket call's stdin goes from the bridge's
//!   JSON to the socket as the text it came in (`socket_call`).
//! - [`server`]: hook servers dsh starts, restarted with backoff when they
//!   die.

pub mod http;
pub mod server;
pub mod socket;
mod socket_call;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

pub use crate::config::{HookSettings, HttpSettings};
use crate::plugins::HostCore;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_hook_protocol::transport::{self, Handler, SocketHandler, TransportRequest};
use dsh_hook_protocol::{RunAnswer, RunRequest};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};

/// The owner id of the service in the registry.
pub const OWNER: &str = "dsh";

/// The service's state, shared by every clone.
struct Inner {
    settings: Arc<RwLock<HookSettings>>,
    http: http::HttpHooks,
    sockets: Mutex<HashMap<SocketHandler, Arc<socket::SocketPeer>>>,
    /// Where dsh-started servers get their sockets.
    servers_dir: PathBuf,
}

/// The `hook-transport` service.
#[derive(Clone)]
pub struct HookTransport(Arc<Inner>);

impl HookTransport {
    /// A transport whose started servers listen under
    /// `<state_dir>/hook-servers/`.
    pub fn new(state_dir: &std::path::Path) -> HookTransport {
        let settings = Arc::new(RwLock::new(HookSettings::default()));
        HookTransport(Arc::new(Inner {
            http: http::HttpHooks::new(settings.clone()),
            settings,
            sockets: Mutex::new(HashMap::new()),
            servers_dir: state_dir.join("hook-servers"),
        }))
    }

    /// Replaces the manifest settings (at load and at every reload).
    pub fn configure(&self, settings: &HookSettings) {
        *self.0.settings.write().unwrap_or_else(|p| p.into_inner()) = settings.clone();
    }

    /// Runs one hook. Never fails: problems are in the answer.
    pub async fn call(&self, request: TransportRequest) -> RunAnswer {
        let started = std::time::Instant::now();
        let mut answer = match request.handler {
            Handler::Http(h) => self.0.http.call(&h, &request.run).await,
            Handler::Socket(s) => match socket_call::SocketCall::from_run(&request.run) {
                Ok(call) => self.peer(&s).call(&call).await,
                Err(e) => transport::unreachable_answer(format!("cannot encode request: {e}")),
            },
        };
        answer.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        answer
    }

    /// Runs one hook from the JSON text of a `hook-transport` call. A
    /// socket hook's call is read in one pass, only as far as the socket
    /// needs it, its stdin kept as the text it came in ([`socket_call`]);
    /// any other call (or one that does not read so) is read whole.
    async fn call_text(&self, args: &str) -> RunAnswer {
        let malformed = |e: &dyn std::fmt::Display| {
            transport::unreachable_answer(format!(
                "the {} request is malformed: {e}",
                transport::SERVICE
            ))
        };
        if let Some(read) = socket_call::SocketCall::from_call_text(args) {
            let started = std::time::Instant::now();
            let mut answer = match read {
                Ok((handler, call)) => self.peer(&handler).call(&call).await,
                Err(e) => return malformed(&e),
            };
            answer.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            return answer;
        }
        match serde_json::from_str::<TransportRequest>(args) {
            Ok(request) => self.call(request).await,
            Err(e) => malformed(&e),
        }
    }

    /// The one peer of a socket handler (one connection, one server).
    fn peer(&self, handler: &SocketHandler) -> Arc<socket::SocketPeer> {
        let mut peers = self.0.sockets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(peer) = peers.get(handler) {
            return peer.clone();
        }
        peers
            .entry(handler.clone())
            .or_insert_with(|| {
                Arc::new(socket::SocketPeer::new(
                    handler.clone(),
                    &self.0.servers_dir,
                ))
            })
            .clone()
    }

    /// The service as the registry holds it.
    pub fn boxed(&self) -> ServiceBox {
        Service_TO::from_ptr(RArc::new(self.clone()), TD_Opaque)
    }
}

impl Service for HookTransport {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let this = self.clone();
        async move {
            if method.as_str() != transport::METHOD_CALL {
                return RResult::RErr(
                    format!("{} has no method `{method}`", transport::SERVICE).into(),
                );
            }
            let answer = this.call_text(&args).await;
            // Written into one buffer with room for the answer's texts.
            let size = answer.stdout.len() + answer.stderr.len() + 384;
            let mut text = Vec::with_capacity(size);
            match serde_json::to_writer(&mut text, &answer)
                .map_err(|e| e.to_string())
                .and_then(|()| String::from_utf8(text).map_err(|e| e.to_string()))
            {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => RResult::RErr(format!("cannot encode the hook answer: {e}").into()),
            }
        }
        .into_ffi()
    }
}

/// Mounts the host's [`HookTransport`] (once) and gives it `settings`.
pub fn install(core: &HostCore, settings: &HookSettings) {
    let transport = core.hook_transport();
    transport.configure(settings);
    if core.view().services.get(transport::SERVICE).is_none()
        && let Err(e) = core.mount_service(OWNER, transport::SERVICE, transport.boxed())
    {
        tracing::warn!("http and socket hooks are off: {e}");
    }
}

/// A request's stdin as an http body: Claude Code posts the payload JSON
/// without the newline its command hooks get (vector `S70-deny`).
pub(crate) fn http_body(run: &RunRequest) -> &str {
    run.stdin.strip_suffix('\n').unwrap_or(&run.stdin)
}
