//! Approval over ACP: which connection owns which session ([`Routes`]), and
//! the `approval` service that turns a pre-tool `ask` into a
//! `session/request_permission` round trip with that session's client.
//!
//! The service speaks the `approval` contract
//! ([`dsh_plugin_api::services::approval`]): `allow_once` runs the tool;
//! `allow_always` runs it and adds a session rule for calls like it;
//! `reject`, `cancelled` and `unavailable` deny
//! it with distinct reasons. No attached client, a client that answers with
//! an error (for instance one that does not implement the method) and a
//! connection that closes mid-request are all `unavailable`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    FileSystemCapabilities, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::approval::{ApprovalAnswer, ApprovalRequest, METHOD_REQUEST};

use super::error::AcpError;
use super::updates::{tool_kind, tool_title};

/// The connection to the client.
pub(crate) type ClientConnection = ConnectionTo<Client>;

/// The option ids offered with every permission request.
pub(crate) const ALLOW_ONCE: &str = "allow_once";
/// Allow, and add a session rule for calls like it (`permission/rule`).
pub(crate) const ALLOW_ALWAYS: &str = "allow_always";
pub(crate) const REJECT_ONCE: &str = "reject_once";

#[derive(Clone)]
struct Route {
    connection: u64,
    client: ClientConnection,
    offers: ClientOffers,
}

/// What a client offered at `initialize` that dsh's services use.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClientOffers {
    /// Its file system (`fs/read_text_file`, `fs/write_text_file`).
    pub(crate) fs: FileSystemCapabilities,
    /// Its terminals (`terminal/*`).
    pub(crate) terminal: bool,
    /// Whether it answers form elicitations (`elicitation.form`).
    pub(crate) elicitation_form: bool,
}

/// Session id → the connection that created or loaded it.
#[derive(Default)]
pub(crate) struct Routes {
    inner: Mutex<HashMap<String, Route>>,
}

impl Routes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Route>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Attaches `session` to `connection`; a session another connection
    /// holds is refused.
    pub(crate) fn claim(
        &self,
        session: &str,
        connection: u64,
        client: &ClientConnection,
        offers: ClientOffers,
    ) -> Result<(), AcpError> {
        let mut map = self.lock();
        if let Some(held) = map.get(session)
            && held.connection != connection
        {
            return Err(AcpError::SessionAttached {
                session_id: session.to_string(),
            });
        }
        map.insert(
            session.to_string(),
            Route {
                connection,
                client: client.clone(),
                offers,
            },
        );
        Ok(())
    }

    /// Detaches `session` if `connection` holds it.
    pub(crate) fn release(&self, session: &str, connection: u64) {
        let mut map = self.lock();
        if map.get(session).is_some_and(|r| r.connection == connection) {
            map.remove(session);
        }
    }

    /// Detaches every session of `connection`.
    pub(crate) fn release_connection(&self, connection: u64) {
        self.lock().retain(|_, r| r.connection != connection);
    }

    fn client_of(&self, session: &str) -> Option<ClientConnection> {
        self.lock().get(session).map(|r| r.client.clone())
    }

    /// The client holding `session`, and the file system it offered.
    pub(crate) fn client_with_fs(
        &self,
        session: &str,
    ) -> Option<(ClientConnection, FileSystemCapabilities)> {
        self.lock()
            .get(session)
            .map(|r| (r.client.clone(), r.offers.fs.clone()))
    }

    /// The client holding `session`, if it offered form elicitation.
    pub(crate) fn client_with_elicitation(&self, session: &str) -> Option<ClientConnection> {
        self.lock()
            .get(session)
            .filter(|r| r.offers.elicitation_form)
            .map(|r| r.client.clone())
    }

    /// The client holding `session`, if it offered terminals.
    pub(crate) fn client_with_terminal(&self, session: &str) -> Option<ClientConnection> {
        self.lock()
            .get(session)
            .filter(|r| r.offers.terminal)
            .map(|r| r.client.clone())
    }
}

/// The `approval` service, backed by whichever client owns the session.
#[derive(Clone)]
pub(crate) struct ApprovalService {
    routes: Arc<Routes>,
    /// For a session's cwd (the agent owns this service: weak, no cycle).
    agent: std::sync::Weak<crate::agent::Agent>,
}

impl ApprovalService {
    pub(crate) fn boxed(
        routes: Arc<Routes>,
        agent: std::sync::Weak<crate::agent::Agent>,
    ) -> ServiceBox {
        let service = ApprovalService { routes, agent };
        Service_TO::from_ptr(RArc::new(service), TD_Opaque)
    }
}

/// The permission request for one `approval.request` call: an `Edit` or
/// `Write` shows its diff (paths against `cwd`), then the reason it is
/// asked, if any.
fn permission_request(args: &ApprovalRequest, cwd: &std::path::Path) -> RequestPermissionRequest {
    let mut fields = ToolCallUpdateFields::new()
        .title(tool_title(&args.name, &args.arguments))
        .kind(tool_kind(&args.name))
        .status(ToolCallStatus::Pending)
        .raw_input(args.arguments.clone());
    let mut content = super::tool_view::diff_content(&args.name, &args.arguments, cwd);
    if let Some(reason) = &args.reason {
        content.push(agent_client_protocol::v1::schema::ToolCallContent::from(
            reason.clone(),
        ));
    }
    if !content.is_empty() {
        fields = fields.content(content);
    }
    RequestPermissionRequest::new(
        args.session_id.clone(),
        ToolCallUpdate::new(args.call_id.clone(), fields),
        vec![
            PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                ALLOW_ALWAYS,
                "Allow always (this session)",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
        ],
    )
}

impl ApprovalService {
    async fn request(&self, args: ApprovalRequest) -> ApprovalAnswer {
        let session = &args.session_id;
        let Some(client) = self.routes.client_of(session) else {
            return ApprovalAnswer::unavailable(format!(
                "no ACP client is attached to session `{session}`"
            ));
        };
        let cwd = self
            .agent
            .upgrade()
            .and_then(|agent| agent.get(session))
            .map(|s| s.current_cwd())
            .unwrap_or_default();
        let request = permission_request(&args, &cwd);
        tracing::debug!(session = %session, call = %args.call_id, "asking the client for permission");
        match client.send_request(request).block_task().await {
            Ok(answer) => match answer.outcome {
                RequestPermissionOutcome::Selected(chosen) => match &*chosen.option_id.0 {
                    ALLOW_ONCE => ApprovalAnswer::AllowOnce,
                    ALLOW_ALWAYS => ApprovalAnswer::AllowAlways,
                    // As a "No" in Claude Code's dialog: refused with its
                    // text, and the turn stops for the user (S34).
                    REJECT_ONCE => ApprovalAnswer::Reject {
                        interrupt: true,
                        reason: Some(crate::permissions::USER_REJECTED.into()),
                    },
                    other => ApprovalAnswer::Reject {
                        interrupt: false,
                        reason: Some(format!(
                            "the client chose an option dsh did not offer (`{other}`)"
                        )),
                    },
                },
                RequestPermissionOutcome::Cancelled => ApprovalAnswer::Cancelled,
                _ => ApprovalAnswer::unavailable(
                    "the client answered with an outcome dsh does not know",
                ),
            },
            Err(e) => ApprovalAnswer::unavailable(format!(
                "the ACP client did not answer the permission request: {}",
                e.message
            )),
        }
    }
}

impl Service for ApprovalService {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let this = self.clone();
        async move {
            if method.as_str() != METHOD_REQUEST {
                return RResult::RErr(format!("approval has no method `{method}`").into());
            }
            let answer = match serde_json::from_str::<ApprovalRequest>(&args) {
                Ok(args) => this.request(args).await,
                Err(e) => {
                    ApprovalAnswer::unavailable(format!("the approval request is malformed: {e}"))
                }
            };
            match serde_json::to_string(&answer) {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => RResult::RErr(format!("cannot encode the approval answer: {e}").into()),
            }
        }
        .into_ffi()
    }
}
