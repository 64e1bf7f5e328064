//! Hooks that do not spawn: Claude Code's `http` handlers and dsh's own
//! `socket` hook servers, and the wire contract of the host service that
//! runs them (`hook-transport`).
//!
//! A bridge does no I/O of its own (ARCHITECTURE.md §8), so these handlers
//! run where processes run: in a host service. The bridge builds exactly
//! the [`RunRequest`] a command hook would get (stdin, cwd, env, timeout)
//! and sends it with the [`Handler`] to [`SERVICE`]; the answer is the
//! command contract's own [`RunAnswer`] (exit code, stdout, stderr), so the
//! exit-code codec, the merge rules and the `hook/*` records apply
//! unchanged.
//!
//! How an answer maps onto that contract:
//!
//! - **http** (recorded from Claude Code 2.1.197, vectors `S70`/`S71`): the
//!   payload JSON (no trailing newline) is POSTed. A 2xx whose body is a JSON
//!   object is the hook's stdout (exit 0); an empty 2xx body is exit 0 with
//!   nothing to say; any other 2xx body, a non-2xx status (its body
//!   ignored), a refused or dropped connection are non-blocking errors (exit
//!   1, the reason on stderr, stdout empty); a timeout is a timed-out hook.
//!   All fail open, as in Claude Code.
//! - **socket**: one JSON-RPC 2.0 request per line ([`SocketRequest`]) on a
//!   long-lived Unix-socket connection; the result ([`SocketResult`]) *is*
//!   the exit code, stdout and stderr. A server that cannot be reached is a
//!   hook that could not start; one that dies or drops the connection with
//!   the request in flight is a crashed hook (both fail open, as a command
//!   hook that crashes); an answer over [`crate::MAX_OUTPUT_BYTES`] is an
//!   output over the limit (a blocking error, as for a command hook).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::runner::{RunAnswer, RunRequest};

/// Name of the host service that runs `http` and `socket` hooks.
pub const SERVICE: &str = "hook-transport";
/// Its one method: run one hook ([`TransportRequest`] → [`RunAnswer`]).
pub const METHOD_CALL: &str = "call";
/// The JSON-RPC method of a socket hook request.
pub const SOCKET_METHOD: &str = "hook";
/// Environment variable naming the socket a dsh-started server listens on.
pub const SOCKET_ENV: &str = "DSH_HOOK_SOCKET";

/// A hook handler that is not a process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Handler {
    /// Claude Code's `type: "http"`.
    Http(HttpHandler),
    /// dsh's `type: "socket"`.
    Socket(SocketHandler),
}

impl Handler {
    /// What records and logs call the hook (its `command`): the URL, the
    /// socket path, or the server command.
    pub fn label(&self) -> String {
        match self {
            Handler::Http(h) => h.url.clone(),
            Handler::Socket(s) => match (&s.path, &s.command) {
                (Some(path), _) => path.clone(),
                (None, Some(command)) => command.clone(),
                (None, None) => String::new(),
            },
        }
    }
}

/// `{"type": "http", "url", "headers", "allowedEnvVars"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpHandler {
    /// Where the payload is POSTed.
    pub url: String,
    /// Headers in file order; `$VAR` and `${VAR}` in a value are filled
    /// from dsh's environment for names in `allowed_env_vars`, and with
    /// nothing for every other name (recorded: `S70-deny`).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// Variables a header may name.
    #[serde(default)]
    pub allowed_env_vars: Vec<String>,
}

/// `{"type": "socket", "path"}` (a server the user runs) or
/// `{"type": "socket", "command"}` (a server dsh starts and supervises; it
/// listens on the socket named by `$DSH_HOOK_SOCKET`, or on `path` when
/// both are given).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SocketHandler {
    /// The Unix socket to connect to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The server to start (with `/bin/sh -c`), restarted when it dies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// One call of [`SERVICE`]: the handler and exactly the request a command
/// hook would have been run with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransportRequest {
    /// Where the hook runs.
    pub handler: Handler,
    /// The hook's stdin, cwd, added variables and timeout.
    pub run: RunRequest,
}

/// The `params` of a socket hook request. Borrowed from the [`RunRequest`]
/// when written (a request is built for every call), owned when read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SocketParams<'a> {
    /// Exactly the stdin a command hook would read.
    pub stdin: Cow<'a, str>,
    /// The session's working directory (a command hook's cwd).
    pub cwd: Cow<'a, str>,
    /// The variables the bridge adds to a command hook's environment
    /// (`CLAUDE_PROJECT_DIR`, ...); not the whole environment.
    pub env: Cow<'a, BTreeMap<String, String>>,
    /// The hook's timeout: the server's answer is not waited for longer.
    pub timeout_ms: Option<u64>,
}

/// One socket hook request line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SocketRequest<'a> {
    /// Always `"2.0"`.
    pub jsonrpc: Cow<'a, str>,
    /// Unique per connection; the response carries it back.
    pub id: u64,
    /// Always [`SOCKET_METHOD`].
    pub method: Cow<'a, str>,
    /// The hook's input.
    pub params: SocketParams<'a>,
}

impl<'a> SocketRequest<'a> {
    /// The request for one hook run.
    pub fn new(id: u64, run: &'a RunRequest) -> SocketRequest<'a> {
        SocketRequest {
            jsonrpc: Cow::Borrowed("2.0"),
            id,
            method: Cow::Borrowed(SOCKET_METHOD),
            params: SocketParams {
                stdin: Cow::Borrowed(&run.stdin),
                cwd: run.cwd.to_string_lossy(),
                env: Cow::Borrowed(&run.env),
                timeout_ms: run.timeout_ms,
            },
        }
    }
}

/// The `result` of a socket hook response: what the command hook would
/// have produced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketResult {
    /// The exit code (0 output, 2 block, else a non-blocking error).
    pub exit_code: i32,
    /// The hook's stdout.
    #[serde(default)]
    pub stdout: String,
    /// The hook's stderr.
    #[serde(default)]
    pub stderr: String,
}

impl SocketResult {
    /// The answer as the command contract has it.
    pub fn into_answer(self) -> RunAnswer {
        RunAnswer {
            exit_code: Some(self.exit_code),
            stdout: self.stdout,
            stderr: self.stderr,
            ..RunAnswer::default()
        }
    }
}

/// A non-blocking error answer (exit 1, `message` on stderr, no stdout):
/// how an http hook's error status, bad body or lost connection is read.
pub fn error_answer(message: impl Into<String>) -> RunAnswer {
    RunAnswer {
        exit_code: Some(1),
        stderr: message.into(),
        ..RunAnswer::default()
    }
}

/// A hook that could not be started or reached (a non-blocking error).
pub fn unreachable_answer(message: impl Into<String>) -> RunAnswer {
    RunAnswer::spawn_failure(message)
}

/// A hook that died with its request in flight: read as a command hook
/// killed by a signal (a non-blocking error), the reason on stderr.
pub fn crashed_answer(message: impl Into<String>) -> RunAnswer {
    RunAnswer {
        exit_code: None,
        signal: None,
        stderr: message.into(),
        ..RunAnswer::default()
    }
}

/// A hook that did not answer within its timeout.
pub fn timed_out_answer() -> RunAnswer {
    RunAnswer {
        timed_out: true,
        ..RunAnswer::default()
    }
}

/// An answer larger than [`crate::MAX_OUTPUT_BYTES`]: unreadable, and so
/// a blocking error, never a cut answer read as whole.
pub fn too_large_answer() -> RunAnswer {
    RunAnswer {
        exit_code: None,
        stdout_truncated: true,
        output_limit_exceeded: true,
        ..RunAnswer::default()
    }
}

/// How a finished http response reads as a command hook's answer
/// (recorded, vectors `S70`, `S71`).
pub fn http_answer(url: &str, status: u16, body: &str) -> RunAnswer {
    if !(200..300).contains(&status) {
        return error_answer(format!("HTTP {status} from {url}"));
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return RunAnswer {
            exit_code: Some(0),
            ..RunAnswer::default()
        };
    }
    match serde_json::from_str::<serde_json::Value>(trimmed) {
        Ok(serde_json::Value::Object(_)) => RunAnswer {
            exit_code: Some(0),
            stdout: body.to_string(),
            ..RunAnswer::default()
        },
        Err(e) if trimmed.starts_with('{') => error_answer(format!(
            "HTTP hook must return valid JSON, but parsing failed: {e}"
        )),
        _ => error_answer(format!(
            "HTTP hook must return JSON, but got non-JSON response body: {body}"
        )),
    }
}

/// `value` with `$NAME` and `${NAME}` filled from `lookup` for names in
/// `allowed`, and with nothing for every other name (Claude Code: "env var
/// $X not in allowedEnvVars, skipping interpolation" and an empty string in
/// the header, recorded in `S70-deny`). Names are `[A-Za-z_][A-Za-z0-9_]*`;
/// a `$` not followed by one stays as it is.
pub fn interpolate(
    value: &str,
    allowed: &[String],
    lookup: impl Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) if is_name(&inner[..end]) => (&inner[..end], end + 2),
                _ => ("", 0),
            }
        } else {
            let end = after
                .char_indices()
                .find(|(i, c)| {
                    !(c.is_ascii_alphanumeric() || *c == '_') || (*i == 0 && c.is_ascii_digit())
                })
                .map_or(after.len(), |(i, _)| i);
            (&after[..end], end)
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        if allowed.iter().any(|a| a == name) {
            out.push_str(&lookup(name).unwrap_or_default());
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `host` (a URL's host) may be called under `allowed`: an entry
/// matches the host exactly (case-insensitively), `*.example.com` matches
/// its subdomains, `*` matches all. The default list, `loopback`, matches
/// `localhost`, `127.0.0.0/8` and `::1`.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = host.to_ascii_lowercase();
    allowed.iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        match entry.as_str() {
            "*" => true,
            "loopback" => is_loopback(&host),
            e if e.starts_with("*.") => host.ends_with(&e[1..]),
            e => e.trim_start_matches('[').trim_end_matches(']') == host,
        }
    })
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The default `hooks.http.allowed_hosts`: loopback only.
pub fn default_allowed_hosts() -> Vec<String> {
    vec!["loopback".to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("tok".into()),
            "OTHER" => Some("secret".into()),
            _ => None,
        }
    }

    #[test]
    fn headers_fill_only_allowed_variables_as_recorded() {
        let allowed = vec!["TOKEN".to_string()];
        // Values and results recorded in S70-deny.
        let cases = [
            ("Bearer $TOKEN", "Bearer tok"),
            ("${TOKEN}-x", "tok-x"),
            ("v=$OTHER;w=${OTHER}", "v=;w="),
            ("plain", "plain"),
            ("[$UNSET_VAR]", "[]"),
            ("cost $5 and $", "cost $5 and $"),
            ("${TOKEN", "${TOKEN"),
        ];
        for (value, want) in cases {
            assert_eq!(interpolate(value, &allowed, env), want, "{value}");
        }
    }

    #[test]
    fn http_answers_read_as_recorded() {
        let u = "http://127.0.0.1:1/h";
        let deny = r#"{"decision":"block","reason":"r"}"#;
        assert_eq!(http_answer(u, 200, deny).stdout, deny);
        assert_eq!(http_answer(u, 200, deny).exit_code, Some(0));
        let empty = http_answer(u, 200, "  ");
        assert_eq!((empty.exit_code, empty.stdout.as_str()), (Some(0), ""));
        let e500 = http_answer(u, 500, deny);
        assert_eq!(e500.exit_code, Some(1));
        assert_eq!(e500.stdout, "", "a non-2xx body is never read");
        assert_eq!(e500.stderr, "HTTP 500 from http://127.0.0.1:1/h");
        let plain = http_answer(u, 200, "hello");
        assert_eq!(plain.exit_code, Some(1));
        assert_eq!(
            plain.stderr,
            "HTTP hook must return JSON, but got non-JSON response body: hello"
        );
        let bad = http_answer(u, 200, "{not json");
        assert_eq!(bad.exit_code, Some(1));
        assert!(
            bad.stderr
                .starts_with("HTTP hook must return valid JSON, but parsing failed")
        );
    }

    #[test]
    fn allowed_hosts_default_to_loopback() {
        let d = default_allowed_hosts();
        for h in ["127.0.0.1", "localhost", "[::1]", "127.3.4.5", "LOCALHOST"] {
            assert!(host_allowed(h, &d), "{h}");
        }
        for h in ["example.com", "10.0.0.1", "localhost.evil.com", "0.0.0.0"] {
            assert!(!host_allowed(h, &d), "{h}");
        }
        let list = vec!["hooks.example.com".to_string(), "*.corp.test".to_string()];
        assert!(host_allowed("hooks.example.com", &list));
        assert!(host_allowed("a.corp.test", &list));
        assert!(!host_allowed("corp.test", &list));
        assert!(!host_allowed("127.0.0.1", &list));
    }

    #[test]
    fn the_service_request_round_trips() {
        let req = TransportRequest {
            handler: Handler::Http(HttpHandler {
                url: "http://localhost/x".into(),
                headers: vec![("A".into(), "$B".into())],
                allowed_env_vars: vec!["B".into()],
            }),
            run: RunRequest::new(vec![], "/"),
        };
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(v["handler"]["type"], "http");
        assert_eq!(v["handler"]["allowedEnvVars"][0], "B");
        let back: TransportRequest = serde_json::from_value(v).unwrap();
        assert_eq!(back, req);
    }
}
