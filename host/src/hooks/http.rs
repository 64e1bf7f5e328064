//! `http` hooks, as Claude Code 2.1.197 runs them (vectors `S70`, `S71`).
//!
//! One `reqwest` client for the host's life, so connections to a hook
//! endpoint are kept alive and reused across calls. The request is a POST
//! of the payload JSON with `Content-Type: application/json`, `Accept:
//! application/json, text/plain, */*` and the handler's headers, each value
//! with `$VAR`/`${VAR}` filled for the names in `allowedEnvVars` only
//! (empty for any other). The answer maps onto the command contract as
//! [`transport::http_answer`] says; a timeout is a timed-out hook.
//!
//! A URL whose host is not in the manifest's `hooks.http.allowed_hosts`
//! (loopback only by default) is never called, nor is a redirect to one: a
//! project's hook file cannot make the daemon call arbitrary hosts. Such a
//! hook does not start (a non-blocking error naming the host and the key).

use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use dsh_hook_protocol::transport::{self, HttpHandler};
use dsh_hook_protocol::{MAX_OUTPUT_BYTES, RunAnswer, RunRequest};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};

use super::HookSettings;

/// What Claude Code 2.1.197's http client (axios) sends as `User-Agent`
/// (recorded, S70): a hook server that looks at it cannot tell dsh apart.
const USER_AGENT: &str = "axios/1.15.2";

/// What Claude Code 2.1.197 sends as `Accept-Encoding` (recorded, S70).
/// dsh's client decodes gzip, deflate and br answers; `compress` (LZW) is
/// announced as Claude Code does, and no server is known to answer with it.
const ACCEPT_ENCODING_VALUE: &str = "gzip, compress, deflate, br";

/// What Claude Code sends as `Accept` (recorded).
const ACCEPT_VALUE: &str = "application/json, text/plain, */*";
/// Redirects followed at most (each checked against the allowed hosts).
const MAX_REDIRECTS: usize = 5;

/// The pooled client: redirects checked against the allowed hosts in
/// `settings` at every hop, Claude Code's headers.
fn build_client(settings: &Arc<RwLock<HookSettings>>) -> Result<reqwest::Client, String> {
    let for_redirects = settings.clone();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        let host = attempt.url().host_str().unwrap_or_default().to_string();
        if allowed(&for_redirects, &host) {
            attempt.follow()
        } else {
            let why = refusal(&host, attempt.url().as_str());
            attempt.error(why)
        }
    });
    // Claude Code's own headers (S70): set here, reqwest neither adds its
    // `Accept-Encoding` nor leaves out `Connection`.
    let mut defaults = reqwest::header::HeaderMap::new();
    defaults.insert(
        reqwest::header::ACCEPT_ENCODING,
        HeaderValue::from_static(ACCEPT_ENCODING_VALUE),
    );
    defaults.insert(
        reqwest::header::CONNECTION,
        HeaderValue::from_static("keep-alive"),
    );
    reqwest::Client::builder()
        .redirect(policy)
        .user_agent(USER_AGENT)
        .default_headers(defaults)
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
        .map_err(|e| format!("cannot build the http hook client: {e}"))
}

/// The pooled client and the settings that bound it.
pub struct HttpHooks {
    /// Built at the first http hook: a daemon without one never pays for
    /// the TLS roots and the pool (issue 15, idle memory).
    client: OnceLock<Result<reqwest::Client, String>>,
    settings: Arc<RwLock<HookSettings>>,
}

impl HttpHooks {
    /// A client reading the allowed hosts from `settings` at every call
    /// and every redirect.
    pub fn new(settings: Arc<RwLock<HookSettings>>) -> HttpHooks {
        HttpHooks {
            client: OnceLock::new(),
            settings,
        }
    }

    fn client(&self) -> &Result<reqwest::Client, String> {
        self.client.get_or_init(|| build_client(&self.settings))
    }

    /// Runs one http hook.
    pub async fn call(&self, handler: &HttpHandler, run: &RunRequest) -> RunAnswer {
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => return transport::unreachable_answer(e.clone()),
        };
        let url = match reqwest::Url::parse(&handler.url) {
            Ok(u) => u,
            Err(e) => {
                return transport::unreachable_answer(format!(
                    "http hook URL `{}` is not valid: {e}",
                    handler.url
                ));
            }
        };
        let host = url.host_str().unwrap_or_default().to_string();
        if !allowed(&self.settings, &host) {
            let message = refusal(&host, &handler.url);
            tracing::warn!("{message}");
            return transport::unreachable_answer(message);
        }
        let mut request = client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_VALUE)
            .body(super::http_body(run).to_string());
        for (name, value) in &handler.headers {
            let value =
                transport::interpolate(value, &handler.allowed_env_vars, |n| std::env::var(n).ok());
            let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(&value),
            ) else {
                return transport::unreachable_answer(format!(
                    "http hook {}: header `{name}` is not a valid HTTP header",
                    handler.url
                ));
            };
            request = request.header(name, value);
        }
        let exchange = async {
            let mut response = match request.send().await {
                Ok(r) => r,
                Err(e) => return transport::error_answer(error_chain(&e)),
            };
            let status = response.status().as_u16();
            let mut body: Vec<u8> = Vec::new();
            loop {
                match response.chunk().await {
                    Ok(Some(chunk)) => {
                        if (body.len() + chunk.len()) as u64 > MAX_OUTPUT_BYTES {
                            return transport::too_large_answer();
                        }
                        body.extend_from_slice(&chunk);
                    }
                    Ok(None) => break,
                    Err(e) => return transport::error_answer(error_chain(&e)),
                }
            }
            transport::http_answer(&handler.url, status, &String::from_utf8_lossy(&body))
        };
        match run.timeout_ms {
            Some(ms) => tokio::time::timeout(Duration::from_millis(ms), exchange)
                .await
                .unwrap_or_else(|_| transport::timed_out_answer()),
            None => exchange.await,
        }
    }
}

fn allowed(settings: &RwLock<HookSettings>, host: &str) -> bool {
    let settings = settings.read().unwrap_or_else(|p| p.into_inner());
    transport::host_allowed(host, &settings.http.allowed_hosts)
}

/// Why a URL is not called.
fn refusal(host: &str, url: &str) -> String {
    format!(
        "http hook {url} not called: host `{host}` is not in the manifest's \
         `hooks.http.allowed_hosts` (default: loopback only)"
    )
}

/// An error and its causes on one line.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
