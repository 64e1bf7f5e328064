//! MCP elicitation in a session: a server that asks the user for input
//! while its tool runs (`elicitation/create`, [`crate::mcp::Elicitor`]) is
//! answered through the `mcp/elicitation` waterfall (plugin API 1.10; the
//! Claude bridge runs `Elicitation` and `ElicitationResult` hooks there),
//! whose default asks the `elicitation` service (ACP: the session's
//! editor, when it offers elicitation) and without one is `cancel`, what
//! `claude -p` answers when no hook does (vector `S250-observe`). The session is the one that owns the servers (a
//! subagent's tools use its parent's); the plugins are the open turn's.
//! A chain that fails answers `cancel` too, and the failure is recorded.

use std::sync::{Arc, Weak};

use abi_stable::std_types::{RArc, ROption, RResult, RString};
use dsh_plugin_api::services::elicitation::{
    ElicitationAnswer, ElicitationRequest, METHOD_REQUEST, SERVICE,
};
use dsh_plugin_api::{ElicitationDecision, ElicitationInput, SeamInput, SeamOutput};
use futures::FutureExt as _;
use futures::future::BoxFuture;

use super::session::Session;
use crate::mcp::{ElicitAnswer, ElicitRequest, Elicitor};
use crate::seams::{TerminalFn, Traced};

/// The elicitor of one session's MCP servers.
pub(crate) struct SessionElicitor(pub(crate) Weak<Session>);

impl Elicitor for SessionElicitor {
    fn elicit(&self, server: &str, request: ElicitRequest) -> BoxFuture<'static, ElicitAnswer> {
        let session = self.0.clone();
        let server = server.to_string();
        async move {
            match session.upgrade() {
                Some(session) => session.elicitation(&server, request).await,
                None => ElicitAnswer::Cancel,
            }
        }
        .boxed()
    }
}

impl Session {
    /// Asks `mcp/elicitation` for the answer to `request` from `server`.
    pub(crate) async fn elicitation(
        self: &Arc<Self>,
        server: &str,
        request: ElicitRequest,
    ) -> ElicitAnswer {
        let view = self.view();
        let input = ElicitationInput {
            session: self.session_ref(),
            server: RString::from(server),
            message: RString::from(request.message),
            mode: RString::from(request.mode),
            requested_schema: request
                .requested_schema
                .map(|s| RString::from(s.to_string()))
                .into(),
            url: request.url.map(RString::from).into(),
            elicitation_id: request.elicitation_id.map(RString::from).into(),
        };
        let asked = ElicitationRequest {
            session_id: self.id.clone(),
            server: server.to_string(),
            message: input.message.to_string(),
            mode: input.mode.to_string(),
            requested_schema: request_schema(&input),
            url: input.url.as_ref().into_option().map(|u| u.to_string()),
            elicitation_id: input
                .elicitation_id
                .as_ref()
                .into_option()
                .map(|i| i.to_string()),
        };
        let service = view.services.get(SERVICE);
        let terminal = Arc::new(TerminalFn(move |_input| {
            let service = service.clone();
            let asked = asked.clone();
            async move {
                let decision = match service {
                    Some(service) => ask(&service, &asked).await,
                    None => ElicitationDecision::Cancel,
                };
                RResult::ROk(SeamOutput::Elicitation(decision))
            }
            .boxed()
        }));
        let Traced {
            answer, timed_out, ..
        } = view
            .bus
            .waterfall_traced(SeamInput::Elicitation(RArc::new(input)), terminal)
            .await;
        self.note_listener_failures("mcp/elicitation", &timed_out, true);
        match answer.into_result() {
            Ok(SeamOutput::Elicitation(decision)) => answer_of(server, decision),
            Ok(other) => {
                tracing::warn!(session = %self.id, server, "mcp/elicitation answered {other:?}; the server gets cancel");
                ElicitAnswer::Cancel
            }
            Err(e) => {
                tracing::warn!(session = %self.id, server, "mcp/elicitation failed: {e}; the server gets cancel");
                ElicitAnswer::Cancel
            }
        }
    }
}

/// The schema of `input`, as JSON.
fn request_schema(input: &ElicitationInput) -> Option<serde_json::Value> {
    input
        .requested_schema
        .as_ref()
        .into_option()
        .and_then(|s| serde_json::from_str(s).ok())
}

/// The `elicitation` service's answer to `asked`; a failed call or an
/// answer this build cannot read is `cancel`.
async fn ask(
    service: &dsh_plugin_api::ffi::ServiceBox,
    asked: &ElicitationRequest,
) -> ElicitationDecision {
    let args = serde_json::to_string(asked).unwrap_or_default();
    let answer = service
        .call(RString::from(METHOD_REQUEST), RString::from(args))
        .await
        .into_result()
        .map_err(String::from)
        .and_then(|a| {
            serde_json::from_str::<ElicitationAnswer>(&a)
                .map_err(|e| format!("the elicitation service answered badly: {e}"))
        });
    match answer {
        Ok(ElicitationAnswer::Accept { content }) => ElicitationDecision::Accept {
            content: content.map(|c| RString::from(c.to_string())).into(),
        },
        Ok(ElicitationAnswer::Decline) => ElicitationDecision::Decline,
        Ok(ElicitationAnswer::Cancel) => ElicitationDecision::Cancel,
        Err(e) => {
            tracing::warn!(session = %asked.session_id, server = %asked.server, "{e}; the server gets cancel");
            ElicitationDecision::Cancel
        }
    }
}

/// A decision as the server's answer. Content that is not a JSON object
/// is not sent: the answer is then `cancel`.
fn answer_of(server: &str, decision: ElicitationDecision) -> ElicitAnswer {
    match decision {
        ElicitationDecision::Accept {
            content: ROption::RNone,
        } => ElicitAnswer::Accept(None),
        ElicitationDecision::Accept {
            content: ROption::RSome(text),
        } => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(value) if value.is_object() => ElicitAnswer::Accept(Some(value)),
            _ => {
                tracing::warn!(
                    server,
                    "an mcp/elicitation accept's content is not a JSON object: {text}; the server gets cancel"
                );
                ElicitAnswer::Cancel
            }
        },
        ElicitationDecision::Decline => ElicitAnswer::Decline,
        ElicitationDecision::Cancel => ElicitAnswer::Cancel,
    }
}
