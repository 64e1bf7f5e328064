//! The `elicitation` service over ACP: an MCP server's request for input
//! (`elicitation/create`, through the `mcp/elicitation` seam's default)
//! asked of the session's editor as ACP's own `elicitation/create`, for
//! clients that offered `elicitation.form` at `initialize` (dsh's MCP
//! client takes forms only, as Claude Code does).
//!
//! The request is session-scoped and carries the server's message and
//! schema as they came. A session whose client
//! offers no form elicitation, no client, a schema ACP cannot
//! carry, a client that answers with an error and an action dsh does not
//! know all answer `cancel`, what `claude -p` answers when nobody can be
//! asked. Like a permission request, the editor's user may take as long as
//! they need; the MCP server cancelling its call ends the wait
//! (`mcp/elicit.rs`).

use std::sync::Arc;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use agent_client_protocol::v1::schema::{CreateElicitationRequest, CreateElicitationResponse};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::elicitation::{
    ElicitationAnswer, ElicitationRequest, METHOD_REQUEST,
};
use serde_json::{Value, json};

use super::approval::Routes;

/// The `elicitation` service, backed by whichever client owns the session.
#[derive(Clone)]
pub(crate) struct ElicitationService {
    routes: Arc<Routes>,
}

impl ElicitationService {
    pub(crate) fn boxed(routes: Arc<Routes>) -> ServiceBox {
        Service_TO::from_ptr(RArc::new(ElicitationService { routes }), TD_Opaque)
    }

    async fn request(&self, args: ElicitationRequest) -> ElicitationAnswer {
        let session = &args.session_id;
        let Some(client) = self.routes.client_with_elicitation(session) else {
            tracing::debug!(session = %session, mode = %args.mode, "no client offers this elicitation: cancel");
            return ElicitationAnswer::Cancel;
        };
        let request = match acp_request(&args) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(session = %session, server = %args.server, "an elicitation ACP cannot carry ({e}): cancel");
                return ElicitationAnswer::Cancel;
            }
        };
        match client.send_request(request).block_task().await {
            Ok(answer) => answer_of(&answer),
            Err(e) => {
                tracing::warn!(session = %session, "the ACP client did not answer the elicitation: {}", e.message);
                ElicitationAnswer::Cancel
            }
        }
    }
}

/// ACP's request for `args`: session-scoped, in its mode.
fn acp_request(args: &ElicitationRequest) -> Result<CreateElicitationRequest, String> {
    let wire = match args.mode.as_str() {
        "form" => json!({
            "mode": "form",
            "sessionId": args.session_id,
            "requestedSchema": args.requested_schema.clone().unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            "message": args.message,
        }),
        other => return Err(format!("unknown mode `{other}`")),
    };
    serde_json::from_value(wire).map_err(|e| e.to_string())
}

/// The client's answer in the service's terms; an action dsh does not know
/// is `cancel`.
fn answer_of(answer: &CreateElicitationResponse) -> ElicitationAnswer {
    let wire = serde_json::to_value(answer).unwrap_or(Value::Null);
    match wire.get("action").and_then(Value::as_str) {
        Some("accept") => ElicitationAnswer::Accept {
            content: wire.get("content").filter(|c| c.is_object()).cloned(),
        },
        Some("decline") => ElicitationAnswer::Decline,
        _ => ElicitationAnswer::Cancel,
    }
}

impl Service for ElicitationService {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let this = self.clone();
        async move {
            if method.as_str() != METHOD_REQUEST {
                return RResult::RErr(format!("elicitation has no method `{method}`").into());
            }
            let answer = match serde_json::from_str::<ElicitationRequest>(&args) {
                Ok(args) => this.request(args).await,
                Err(e) => {
                    tracing::warn!("a malformed elicitation request: {e}");
                    ElicitationAnswer::Cancel
                }
            };
            match serde_json::to_string(&answer) {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => {
                    RResult::RErr(format!("cannot encode the elicitation answer: {e}").into())
                }
            }
        }
        .into_ffi()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_form_request_is_acps_and_its_answers_read_back() {
        let args = ElicitationRequest {
            session_id: "s1".into(),
            server: "srv".into(),
            message: "who".into(),
            mode: "form".into(),
            requested_schema: Some(json!({"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]})),
            url: None,
            elicitation_id: None,
        };
        let request = acp_request(&args).unwrap();
        let wire = serde_json::to_value(&request).unwrap();
        assert_eq!(wire["sessionId"], "s1");
        assert_eq!(wire["mode"], "form");
        assert_eq!(wire["message"], "who");
        assert_eq!(wire["requestedSchema"]["required"], json!(["name"]));
        let read = |v: Value| answer_of(&serde_json::from_value(v).unwrap());
        assert_eq!(
            read(json!({"action": "accept", "content": {"name": "x"}})),
            ElicitationAnswer::Accept {
                content: Some(json!({"name": "x"}))
            }
        );
        assert_eq!(
            read(json!({"action": "decline"})),
            ElicitationAnswer::Decline
        );
        assert_eq!(read(json!({"action": "cancel"})), ElicitationAnswer::Cancel);
    }
}
