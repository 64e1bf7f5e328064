//! MCP elicitation: a server asking the user for input while one of its
//! tools runs (`elicitation/create`).
//!
//! dsh's MCP client declares the `elicitation` capability (`{}`: forms, as
//! Claude Code 2.1.197 declares it, vector `S250-observe`'s server log) and
//! hands every request to the [`Elicitor`] its servers were connected with
//! (the agent's: the `mcp/elicitation` seam of the session that owns the
//! servers). Without one, or when the elicitor cannot be reached, the
//! answer is `cancel`, what `claude -p` answers when no hook does. A
//! request the SDK cannot read (no `message`, a schema that is not an
//! object of primitive fields) never reaches the elicitor: the server gets
//! a JSON-RPC error back and its call goes on. So does a URL-mode request,
//! which the capability does not offer: refused with Claude Code's error,
//! `-32602` `MCP error -32602: Client does not support URL-mode elicitation
//! requests` (vector `S254-observe`), before any hook hears of it.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::ClientHandler;
use rmcp::model::{ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::Value;

/// The error a URL-mode request gets: the capability offers forms only,
/// and Claude Code 2.1.197 answers so (vector `S254-observe`).
pub const URL_MODE_REFUSED: &str =
    "MCP error -32602: Client does not support URL-mode elicitation requests";

/// One elicitation request, as the server sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitRequest {
    /// What the server tells the user.
    pub message: String,
    /// `form` or `url`.
    pub mode: String,
    /// The form's JSON Schema (form mode).
    pub requested_schema: Option<Value>,
    /// Where the user should go (url mode).
    pub url: Option<String>,
    /// The server's id for it (url mode).
    pub elicitation_id: Option<String>,
}

/// The answer the server gets.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// Accepted, with the form's values (a JSON object) if any.
    Accept(Option<Value>),
    /// Declined.
    Decline,
    /// Dismissed.
    Cancel,
}

/// Who answers a session's elicitations.
pub trait Elicitor: Send + Sync {
    /// Answers `request` from the server named `server`.
    fn elicit(&self, server: &str, request: ElicitRequest) -> BoxFuture<'static, ElicitAnswer>;
}

/// The MCP client of one server: dsh's identity and capabilities, and its
/// elicitation handler.
pub(crate) struct Client {
    pub(crate) info: ClientConfig,
    pub(crate) server: String,
    pub(crate) elicitor: Option<Arc<dyn Elicitor>>,
}

impl ElicitRequest {
    /// The SDK's parsed request in dsh's terms; `None` for a kind this
    /// build does not know.
    fn from_params(params: ElicitRequestParams) -> Option<ElicitRequest> {
        match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => Some(ElicitRequest {
                message,
                mode: "form".into(),
                requested_schema: serde_json::to_value(&requested_schema).ok(),
                url: None,
                elicitation_id: None,
            }),
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => Some(ElicitRequest {
                message,
                mode: "url".into(),
                requested_schema: None,
                url: Some(url),
                elicitation_id: (!elicitation_id.is_empty()).then_some(elicitation_id),
            }),
            _ => None,
        }
    }
}

impl From<ElicitAnswer> for ElicitResult {
    fn from(answer: ElicitAnswer) -> ElicitResult {
        match answer {
            ElicitAnswer::Accept(content) => {
                let mut r = ElicitResult::new(ElicitationAction::Accept);
                r.content = content;
                r
            }
            ElicitAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        }
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        if matches!(request, ElicitRequestParams::UrlElicitationParams { .. }) {
            return Err(rmcp::ErrorData::invalid_params(URL_MODE_REFUSED, None));
        }
        let Some(request) = ElicitRequest::from_params(request) else {
            return Ok(ElicitAnswer::Cancel.into());
        };
        tracing::debug!(server = %self.server, mode = %request.mode, "MCP elicitation request");
        let Some(elicitor) = &self.elicitor else {
            return Ok(ElicitAnswer::Cancel.into());
        };
        // The server may give up on its request (its call cancelled): the
        // answer is then cancel, and nobody waits for the elicitor.
        let answer = tokio::select! {
            answer = elicitor.elicit(&self.server, request) => answer,
            () = context.ct.cancelled() => ElicitAnswer::Cancel,
        };
        tracing::debug!(server = %self.server, ?answer, "MCP elicitation answered");
        Ok(answer.into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_form_request_keeps_its_schema_and_an_answer_is_the_wire_result() {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "who",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }))
        .unwrap();
        let r = ElicitRequest::from_params(params).unwrap();
        assert_eq!(r.mode, "form");
        assert_eq!(
            r.requested_schema.unwrap(),
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
        );
        let wire = |a: ElicitAnswer| serde_json::to_value(ElicitResult::from(a)).unwrap();
        assert_eq!(
            wire(ElicitAnswer::Accept(Some(json!({"name": "x"})))),
            json!({"action": "accept", "content": {"name": "x"}})
        );
        assert_eq!(
            wire(ElicitAnswer::Accept(None)),
            json!({"action": "accept"})
        );
        assert_eq!(wire(ElicitAnswer::Decline), json!({"action": "decline"}));
        assert_eq!(wire(ElicitAnswer::Cancel), json!({"action": "cancel"}));
    }
}
