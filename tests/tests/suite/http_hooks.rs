//! Claude Code's `http` hooks (issue 14), over the real `dsh` binary and a
//! real local HTTP endpoint (a socket on 127.0.0.1 served by a thread of
//! the test); only the model is scripted: the request Claude Code sends
//! (recorded, vector `S70-deny`), deny, allow with `updatedInput`, a
//! timeout, a 500, a host the manifest does not allow, one kept-alive
//! connection for several calls. [`HttpEndpoint`] is shared with
//! `hostile::hook_servers`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::hook_servers::{Bridge, Project, bash_calls, pre_tool_use};

/// One request an [`HttpEndpoint`] received.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub(crate) request_line: String,
    /// Header names lower-cased, values as sent, in order.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
    /// Which accepted connection it came on (0, 1, ...).
    pub(crate) connection: usize,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How the endpoint answers one request.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// Status and body.
    Send(u16, String),
    /// Sleep, then answer.
    Late(Duration, u16, String),
    /// Close the connection without answering.
    Hangup,
    /// Status and body, gzip-encoded (`Content-Encoding: gzip`).
    Gzip(u16, String),
}

/// A local HTTP/1.1 endpoint on 127.0.0.1 (a real socket, in a thread of
/// the test) answering each request with the next of its replies (the last
/// one repeats), keeping connections alive.
pub(crate) struct HttpEndpoint {
    pub(crate) url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl HttpEndpoint {
    pub(crate) fn start(replies: Vec<Reply>) -> HttpEndpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook/pre", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(replies));
        let seen = received.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { return };
                let (seen, replies) = (seen.clone(), replies.clone());
                std::thread::spawn(move || serve(stream, n, &seen, &replies));
            }
        });
        HttpEndpoint { url, received }
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    connection: usize,
    seen: &Mutex<Vec<Received>>,
    replies: &Mutex<Vec<Reply>>,
) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        seen.lock().unwrap().push(Received {
            request_line: request_line.trim_end().to_string(),
            headers,
            body: String::from_utf8(body).unwrap(),
            connection,
        });
        let reply = {
            let mut r = replies.lock().unwrap();
            if r.len() > 1 {
                r.remove(0)
            } else {
                r[0].clone()
            }
        };
        let (status, text, encoding) = match reply {
            Reply::Send(s, t) => (s, t.into_bytes(), ""),
            Reply::Late(after, s, t) => {
                std::thread::sleep(after);
                (s, t.into_bytes(), "")
            }
            Reply::Hangup => return,
            Reply::Gzip(s, t) => {
                let mut gz =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                gz.write_all(t.as_bytes()).unwrap();
                (s, gz.finish().unwrap(), "Content-Encoding: gzip\r\n")
            }
        };
        let head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{encoding}Content-Length: {}\r\n\r\n",
            text.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(&text))
            .is_err()
        {
            return;
        }
    }
}

pub(crate) fn pre_decision(decision: &str, extra: Value) -> String {
    let mut specific = json!({"hookEventName": "PreToolUse", "permissionDecision": decision});
    for (k, v) in extra.as_object().unwrap() {
        specific[k] = v.clone();
    }
    json!({ "hookSpecificOutput": specific }).to_string()
}

#[test]
fn an_http_hook_gets_the_command_hooks_payload_and_its_deny_is_honoured() {
    // Answered gzip-encoded: dsh asks for it, as Claude Code does.
    let endpoint = HttpEndpoint::start(vec![Reply::Gzip(
        200,
        pre_decision(
            "deny",
            json!({"permissionDecisionReason": "MARK_HTTP_DENY"}),
        ),
    )]);
    let project = Project::new(Bridge::Claude, json!({}), bash_calls(&["touch ran"]), "");
    let stdin_copy = project.root().join("stdin.json");
    project.write_hooks(&pre_tool_use(vec![
        json!({"type": "http", "url": endpoint.url,
               "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Braced": "${HOOK_TOKEN}-x",
                           "X-Unlisted": "v=$NOT_LISTED;w=${NOT_LISTED}", "X-Missing": "[$UNSET_VAR]"},
               "allowedEnvVars": ["HOOK_TOKEN"]}),
        json!({"type": "command", "command": format!("cat > {}", stdin_copy.display())}),
    ]));
    let turn =
        project.prompt_with_env("go", &[("HOOK_TOKEN", "tok_S70"), ("NOT_LISTED", "secret")]);
    let ctx = turn.context();
    assert!(!project.proj().join("ran").exists(), "{ctx}");
    let denied = turn.of_type("tool/denied");
    assert_eq!(denied.len(), 1, "{ctx}");
    assert_eq!(denied[0]["reason"], "MARK_HTTP_DENY", "{ctx}");
    let received = endpoint.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let r = &received[0];
    assert_eq!(r.request_line, "POST /hook/pre HTTP/1.1");
    // As recorded in S70-deny.
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("accept"),
        Some("application/json, text/plain, */*")
    );
    assert_eq!(r.header("user-agent"), Some("axios/1.15.2"));
    assert_eq!(
        r.header("accept-encoding"),
        Some("gzip, compress, deflate, br")
    );
    assert_eq!(r.header("connection"), Some("keep-alive"));
    assert_eq!(r.header("authorization"), Some("Bearer tok_S70"));
    assert_eq!(r.header("x-braced"), Some("tok_S70-x"));
    assert_eq!(r.header("x-unlisted"), Some("v=;w="));
    assert_eq!(r.header("x-missing"), Some("[]"));
    // The body is exactly what the command hook read, less its newline.
    let stdin = std::fs::read_to_string(&stdin_copy).unwrap();
    assert_eq!(format!("{}\n", r.body), stdin);
    let hooks = turn.of_type("hook/invoked");
    assert_eq!(hooks[0]["command"], endpoint.url.as_str(), "{ctx}");
}

#[test]
fn an_http_hook_allow_with_updated_input_rewrites_the_call_and_reuses_its_connection() {
    let endpoint = HttpEndpoint::start(vec![Reply::Send(
        200,
        pre_decision(
            "allow",
            json!({"updatedInput": {"command": "echo MARK_UPDATED", "description": "changed"}}),
        ),
    )]);
    let project = Project::new(
        Bridge::Claude,
        pre_tool_use(vec![json!({"type": "http", "url": endpoint.url})]),
        bash_calls(&["touch ran", "touch ran2"]),
        "",
    );
    let turn = project.prompt("go");
    let ctx = turn.context();
    assert!(!project.proj().join("ran").exists(), "{ctx}");
    let results = turn.of_type("tool/result");
    assert_eq!(results.len(), 2, "{ctx}");
    for r in results {
        assert!(r["content"].to_string().contains("MARK_UPDATED"), "{ctx}");
    }
    let received = endpoint.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received.iter().map(|r| r.connection).collect::<Vec<_>>(),
        [0, 0],
        "both calls on one kept-alive connection"
    );
}

#[test]
fn an_http_hook_that_times_out_or_answers_500_fails_open() {
    let cases = [
        (
            Reply::Late(
                Duration::from_secs(8),
                200,
                pre_decision("deny", json!({"permissionDecisionReason": "late"})),
            ),
            "timed_out",
            None,
        ),
        (
            Reply::Send(
                500,
                pre_decision("deny", json!({"permissionDecisionReason": "body of a 500"})),
            ),
            "non_blocking_error",
            Some("HTTP 500 from "),
        ),
    ];
    for (reply, outcome, stderr) in cases {
        let endpoint = HttpEndpoint::start(vec![reply]);
        let project = Project::new(
            Bridge::Claude,
            pre_tool_use(vec![
                json!({"type": "http", "url": endpoint.url, "timeout": 1}),
            ]),
            bash_calls(&["touch ran"]),
            "",
        );
        let turn = project.prompt("go");
        let ctx = format!("{outcome}\n{}", turn.context());
        assert!(
            project.proj().join("ran").exists(),
            "the tool did not run: {ctx}"
        );
        assert!(turn.of_type("tool/denied").is_empty(), "{ctx}");
        let result = turn.of_type("hook/result")[0];
        assert_eq!(result["outcome"], outcome, "{ctx}");
        if let Some(stderr) = stderr {
            assert_eq!(
                result["stderr"],
                format!("{stderr}{}", endpoint.url),
                "{ctx}"
            );
        }
        assert_eq!(endpoint.received().len(), 1, "{ctx}");
    }
}

#[test]
fn an_http_hook_on_a_host_the_manifest_does_not_allow_is_never_called() {
    // A loopback endpoint, but a manifest that allows another host only.
    let endpoint = HttpEndpoint::start(vec![Reply::Send(
        200,
        pre_decision(
            "deny",
            json!({"permissionDecisionReason": "should not be asked"}),
        ),
    )]);
    let project = Project::new(
        Bridge::Claude,
        pre_tool_use(vec![json!({"type": "http", "url": endpoint.url})]),
        bash_calls(&["touch ran"]),
        "hooks:\n  http:\n    allowed_hosts: [hooks.example.invalid]\n",
    );
    let turn = project.prompt("go");
    let ctx = turn.context();
    assert!(
        endpoint.received().is_empty(),
        "the endpoint was called: {ctx}"
    );
    let result = turn.of_type("hook/result")[0];
    assert_eq!(result["outcome"], "not_started", "{ctx}");
    let host = endpoint
        .url
        .trim_start_matches("http://")
        .split(':')
        .next()
        .unwrap();
    assert_eq!(
        result["spawn_error"],
        format!(
            "http hook {} not called: host `{host}` is not in the manifest's \
             `hooks.http.allowed_hosts` (default: loopback only)",
            endpoint.url
        ),
        "{ctx}"
    );
    assert!(
        turn.outcome.stderr.contains("hooks.http.allowed_hosts"),
        "{ctx}"
    );
    // By default only loopback is allowed: a URL elsewhere is refused
    // without any network traffic (the name could not even resolve).
    let elsewhere = "http://hooks.example.invalid/pre";
    project.write_hooks(&pre_tool_use(vec![
        json!({"type": "http", "url": elsewhere}),
    ]));
    std::fs::write(
        project.root().join("cordis.yml"),
        std::fs::read_to_string(project.root().join("cordis.yml"))
            .unwrap()
            .replace(
                "hooks:\n  http:\n    allowed_hosts: [hooks.example.invalid]\n",
                "",
            ),
    )
    .unwrap();
    let turn = project.prompt("go");
    let result = turn.of_type("hook/result")[0];
    assert_eq!(result["outcome"], "not_started", "{}", turn.context());
    assert!(
        result["spawn_error"]
            .as_str()
            .unwrap()
            .contains("host `hooks.example.invalid` is not in the manifest's"),
        "{}",
        turn.context()
    );
}
