//! [`OpenAiClient`]: one chat-completions call over HTTP, with retries.
//!
//! Plain async code that needs no plugin host, so tests drive it against a
//! local mock server. The retry policy: 429, 5xx and failures to get any
//! response (connect, reset, timeout) are retried up to `max_retries`
//! times, waiting `retry_base_ms × 2^n` (capped at [`MAX_BACKOFF`]) or the
//! server's `Retry-After` seconds (capped at [`MAX_RETRY_AFTER`]); any
//! other non-2xx status fails at once. Once a 2xx body has started, nothing
//! is retried: text deltas have already gone out and would be repeated.
//!
//! Dropping the future returned by [`OpenAiClient::complete`] drops the
//! response body, which makes the HTTP client close the connection: a
//! cancelled turn stops the server's generation instead of leaking it.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use serde_json::Value;

use super::OpenAiConfig;
use super::convert;
use super::error::{ApiKey, OpenAiError, excerpt};
use super::stream::{Live, StreamReply, reply_from_json};
use crate::model::request_text::ToolText;
use crate::model::{ModelReply, ModelRequest};

/// The longest exponential backoff between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest `Retry-After` honoured; a server asking for more gets this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// How much of an error body makes it into the error message.
const EXCERPT_CHARS: usize = 300;
/// How much of an error body is read at most.
const EXCERPT_READ_BYTES: usize = 16 * 1024;

/// A configured endpoint, with its connection pool.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    config: OpenAiConfig,
    endpoint: reqwest::Url,
}

/// A failed attempt that may be retried.
struct Retryable {
    what: String,
    retry_after: Option<Duration>,
}

impl OpenAiClient {
    /// A client for `config`; fails only on a config that cannot work
    /// (never on the network, so applying the plugin works offline).
    pub fn new(config: OpenAiConfig) -> Result<Self, OpenAiError> {
        let endpoint = endpoint(&config.base_url)?;
        let timeout = Duration::from_secs(config.request_timeout_s.max(1));
        let http = reqwest::Client::builder()
            .connect_timeout(timeout.min(Duration::from_secs(30)))
            // A read timeout, not a total one: a long answer may stream
            // for minutes, but a silent server should not hang the turn.
            .read_timeout(timeout)
            .build()
            .map_err(|e| OpenAiError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(OpenAiClient {
            http,
            config,
            endpoint,
        })
    }

    /// The config this client was built from.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    /// Reads the key from the environment variable named by `api_key_env`.
    /// Read per call, so a key set or rotated after start-up is picked up.
    pub fn api_key(&self) -> Result<ApiKey, OpenAiError> {
        match std::env::var(&self.config.api_key_env) {
            Ok(key) if !key.trim().is_empty() => Ok(ApiKey::new(key.trim())),
            _ => Err(OpenAiError::MissingKey {
                var: self.config.api_key_env.clone(),
            }),
        }
    }

    /// Sends `request` and reads the streamed answer, handing each text
    /// delta to `on_delta` as it arrives.
    pub async fn complete(
        &self,
        key: &ApiKey,
        request: &ModelRequest,
        on_delta: impl FnMut(Live<'_>),
    ) -> Result<ModelReply, OpenAiError> {
        self.complete_with(key, request, &[], on_delta).await
    }

    /// [`OpenAiClient::complete`] offering `tools` too (each schema already
    /// text: the `model` service's way).
    pub async fn complete_with(
        &self,
        key: &ApiKey,
        request: &ModelRequest,
        tools: &[ToolText],
        mut on_delta: impl FnMut(Live<'_>),
    ) -> Result<ModelReply, OpenAiError> {
        // Serialized once, straight from the request; a retry resends the
        // same bytes.
        let body = serde_json::to_vec(&convert::request_body_with(&self.config, request, tools))
            .map_err(|e| OpenAiError::Encode(e.to_string()))?;
        let response = self.send(key, &body).await?;
        read_reply(response, key, &mut on_delta).await
    }

    /// POSTs `body` until a 2xx response starts or the retries run out.
    async fn send(&self, key: &ApiKey, body: &[u8]) -> Result<reqwest::Response, OpenAiError> {
        let attempts = self.config.max_retries.saturating_add(1);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let failure = match self.attempt(key, body).await? {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if attempt >= attempts {
                return Err(OpenAiError::Exhausted {
                    attempts,
                    last: failure.what,
                });
            }
            let delay = failure
                .retry_after
                .map(|d| d.min(MAX_RETRY_AFTER))
                .unwrap_or_else(|| backoff(self.config.retry_base_ms, attempt - 1));
            tracing::warn!(
                attempt,
                attempts,
                delay_ms = delay.as_millis() as u64,
                "model request failed, retrying: {}",
                failure.what
            );
            tokio::time::sleep(delay).await;
        }
    }

    /// One request: a started 2xx response, a retryable failure, or a
    /// final error.
    async fn attempt(
        &self,
        key: &ApiKey,
        body: &[u8],
    ) -> Result<Result<reqwest::Response, Retryable>, OpenAiError> {
        let sent = self
            .http
            .post(self.endpoint.clone())
            .bearer_auth(key.expose())
            .header(ACCEPT, "text/event-stream, application/json")
            // What `.json(body)` sent: the same header, the same bytes.
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_vec())
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                return Ok(Err(Retryable {
                    what: format!("connection error: {}", key.redact(&chain(&e))),
                    retry_after: None,
                }));
            }
        };
        let status = response.status();
        if status.is_success() {
            return Ok(Ok(response));
        }
        let retry_after = retry_after(response.headers());
        let excerpt = error_excerpt(response, key).await;
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            Ok(Err(Retryable {
                what: format!("HTTP {}: {excerpt}", status.as_u16()),
                retry_after,
            }))
        } else {
            Err(OpenAiError::Refused {
                status: status.as_u16(),
                excerpt,
            })
        }
    }
}

/// `{base_url}/chat/completions`, keeping whatever path (`/v1`, ...) the
/// base already has; a base that already names the endpoint is kept as is.
fn endpoint(base_url: &str) -> Result<reqwest::Url, OpenAiError> {
    let base = base_url.trim().trim_end_matches('/');
    let url = if base.ends_with("/chat/completions") {
        base.to_string()
    } else {
        format!("{base}/chat/completions")
    };
    let parsed = reqwest::Url::parse(&url)
        .map_err(|e| OpenAiError::Config(format!("key `base_url`: `{base_url}`: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(OpenAiError::Config(format!(
            "key `base_url`: `{base_url}` is not an http(s) URL"
        )));
    }
    Ok(parsed)
}

/// The wait before retry number `n` (0-based).
fn backoff(base_ms: u64, n: u32) -> Duration {
    let factor = 1u64.checked_shl(n.min(32)).unwrap_or(u64::MAX);
    Duration::from_millis(base_ms.saturating_mul(factor)).min(MAX_BACKOFF)
}

/// `Retry-After` in seconds (the HTTP-date form is rare from APIs and
/// falls back to the exponential backoff).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// The start of an error body, one line, key redacted.
async fn error_excerpt(mut response: reqwest::Response, key: &ApiKey) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < EXCERPT_READ_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = excerpt(&key.redact(&text), EXCERPT_CHARS);
    if text.is_empty() {
        "(empty body)".into()
    } else {
        text
    }
}

/// Reads a 2xx body: SSE normally, a whole JSON reply from servers that
/// ignore `stream: true`.
async fn read_reply(
    mut response: reqwest::Response,
    key: &ApiKey,
    on_delta: &mut impl FnMut(Live<'_>),
) -> Result<ModelReply, OpenAiError> {
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        let bytes = response
            .bytes()
            .await
            .map_err(|e| OpenAiError::StreamBroken(key.redact(&chain(&e))))?;
        let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
            OpenAiError::MalformedResponse(format!(
                "the JSON body does not parse ({e}): {}",
                excerpt(&key.redact(&String::from_utf8_lossy(&bytes)), 120)
            ))
        })?;
        let reply = reply_from_json(&body)?;
        if !reply.text.is_empty() {
            on_delta(Live::Text(&reply.text));
        }
        return Ok(reply);
    }
    let mut stream = StreamReply::default();
    while !stream.is_done() {
        match response.chunk().await {
            Ok(Some(chunk)) => stream.push(&chunk, on_delta)?,
            Ok(None) => break,
            Err(e) => return Err(OpenAiError::StreamBroken(key.redact(&chain(&e)))),
        }
    }
    stream.finish(on_delta)
}

/// An error and its causes on one line (reqwest's own message alone says
/// little more than "error sending request").
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_appends_chat_completions_and_keeps_v1() {
        let cases = [
            (
                "https://api.deepseek.com",
                "https://api.deepseek.com/chat/completions",
            ),
            (
                "https://api.deepseek.com/",
                "https://api.deepseek.com/chat/completions",
            ),
            (
                "https://api.openai.com/v1",
                "https://api.openai.com/v1/chat/completions",
            ),
            (
                "http://127.0.0.1:9/v1/",
                "http://127.0.0.1:9/v1/chat/completions",
            ),
            (
                "http://h/v1/chat/completions",
                "http://h/v1/chat/completions",
            ),
        ];
        for (base, want) in cases {
            assert_eq!(endpoint(base).unwrap().as_str(), want, "{base}");
        }
        assert!(endpoint("not a url").is_err());
        assert!(endpoint("ftp://h").is_err());
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(500, 0), Duration::from_millis(500));
        assert_eq!(backoff(500, 2), Duration::from_millis(2000));
        assert_eq!(backoff(500, 40), MAX_BACKOFF);
        assert_eq!(backoff(u64::MAX, 3), MAX_BACKOFF);
    }

    #[test]
    fn retry_after_reads_seconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(RETRY_AFTER, "0.25".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        headers.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None);
    }
}
