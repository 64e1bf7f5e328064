//! [`OpenAiError`]: everything that can go wrong between a [`ModelRequest`]
//! and a [`ModelReply`] on an OpenAI-compatible endpoint.
//!
//! Messages are written for the operator reading a failed turn: each says
//! what happened and, where it helps, what to change. None ever carries the
//! API key: [`ApiKey`] redacts itself and response excerpts are scrubbed of
//! it before they get here.
//!
//! [`ModelRequest`]: crate::model::ModelRequest
//! [`ModelReply`]: crate::model::ModelReply

use std::fmt;

use crate::model::{ModelError, ModelErrorKind};

/// The bearer token, kept out of `Debug`, `Display` and serialization.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the `Authorization` header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced, for anything that
    /// came back from the server and may echo it.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.0, "<redacted>")
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Why a completion failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenAiError {
    /// The environment variable named by `api_key_env` is unset or empty.
    #[error(
        "no model API key: the environment variable `{var}` is not set \
         (set it, or point config key `api_key_env` at the variable that holds the key)"
    )]
    MissingKey {
        /// The variable's name.
        var: String,
    },
    /// The config cannot work (bad `base_url`, ...).
    #[error("invalid model-openai config: {0}")]
    Config(String),
    /// The server answered with a status that retrying will not fix.
    #[error("model request refused: HTTP {status}: {excerpt}")]
    Refused {
        /// HTTP status code.
        status: u16,
        /// The start of the response body, key redacted.
        excerpt: String,
    },
    /// Every attempt hit a retryable failure (429, 5xx, connection error).
    #[error("model request failed after {attempts} attempts: {last}")]
    Exhausted {
        /// How many requests were sent.
        attempts: u32,
        /// What went wrong the last time.
        last: String,
    },
    /// The response body broke off (connection reset, read timeout).
    #[error("model stream broke off: {0}")]
    StreamBroken(String),
    /// The stream did not follow the protocol.
    #[error("malformed stream: {0}")]
    MalformedStream(String),
    /// A non-streaming (JSON) response body could not be read.
    #[error("malformed response: {0}")]
    MalformedResponse(String),
    /// The request could not be written as JSON (nothing was sent).
    #[error("cannot encode the model request: {0}")]
    Encode(String),
    /// The server reported an error inside a 200 response.
    #[error("the model server reported an error: {0}")]
    ServerReported(String),
    /// A tool call's accumulated arguments are not a JSON object.
    #[error(
        "malformed tool call #{position} (`{name}`, id `{id}`): its arguments are not valid JSON: {reason}"
    )]
    MalformedToolCall {
        /// 1-based position of the call in the reply.
        position: usize,
        /// Tool name as the model gave it.
        name: String,
        /// Call id as the model gave it.
        id: String,
        /// The parser's complaint.
        reason: String,
    },
}

impl From<OpenAiError> for ModelError {
    /// The service contract's typed error: the kind the loop branches on,
    /// and a message that does not repeat what the kind already says.
    fn from(e: OpenAiError) -> Self {
        let kind = match &e {
            OpenAiError::MissingKey { .. } | OpenAiError::Config(_) => ModelErrorKind::Config,
            OpenAiError::Encode(_) => ModelErrorKind::Request,
            OpenAiError::Refused { status, excerpt } => {
                return ModelError::new(ModelErrorKind::Status { code: *status }, excerpt.clone());
            }
            OpenAiError::Exhausted { attempts, last } => {
                return ModelError::new(
                    ModelErrorKind::Transport,
                    format!("after {attempts} attempts: {last}"),
                );
            }
            OpenAiError::StreamBroken(_) => ModelErrorKind::Transport,
            OpenAiError::ServerReported(message) => {
                return ModelError::new(ModelErrorKind::Provider, message.clone());
            }
            OpenAiError::MalformedStream(_)
            | OpenAiError::MalformedResponse(_)
            | OpenAiError::MalformedToolCall { .. } => ModelErrorKind::Protocol,
        };
        ModelError::new(kind, e.to_string())
    }
}

/// The first `max` characters of `text` with runs of whitespace collapsed,
/// so an HTML error page or a pretty-printed body fits on one line.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max {
        collapsed
    } else {
        let cut: String = collapsed.chars().take(max).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_never_shows_in_debug_and_is_redacted_from_echoes() {
        let key = ApiKey::new("sk-secret");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(
            key.redact("bad key sk-secret given"),
            "bad key <redacted> given"
        );
        assert_eq!(ApiKey::new("").redact("as is"), "as is");
    }

    #[test]
    fn excerpts_collapse_whitespace_and_cut_long_bodies() {
        assert_eq!(excerpt("a\n  b\tc", 10), "a b c");
        assert_eq!(excerpt("abcdefgh", 3), "abc…");
    }

    #[test]
    fn failures_become_typed_model_errors() {
        let refused = ModelError::from(OpenAiError::Refused {
            status: 401,
            excerpt: "bad key".into(),
        });
        assert_eq!(refused.kind, ModelErrorKind::Status { code: 401 });
        assert_eq!(
            refused.to_string(),
            "model request refused: HTTP 401: bad key"
        );
        let exhausted = ModelError::from(OpenAiError::Exhausted {
            attempts: 3,
            last: "HTTP 500: down".into(),
        });
        assert_eq!(exhausted.kind, ModelErrorKind::Transport);
        assert_eq!(
            exhausted.to_string(),
            "model request failed: after 3 attempts: HTTP 500: down"
        );
        let malformed = ModelError::from(OpenAiError::MalformedStream("no [DONE]".into()));
        assert_eq!(malformed.kind, ModelErrorKind::Protocol);
        let missing = ModelError::from(OpenAiError::MissingKey { var: "K".into() });
        assert_eq!(missing.kind, ModelErrorKind::Config);
        assert!(missing.message.contains("`K`"), "{missing}");
        let reported = ModelError::from(OpenAiError::ServerReported("overloaded".into()));
        assert_eq!(
            (reported.kind.clone(), reported.to_string().as_str()),
            (
                ModelErrorKind::Provider,
                "the model server reported an error: overloaded"
            )
        );
    }
}
