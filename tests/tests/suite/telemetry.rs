//! Telemetry (issue 13) from a real `dsh serve` running one turn with a
//! real Claude `PreToolUse` hook and the real `Bash` tool:
//!
//! - the spans arrive at an OTLP/HTTP receiver in the test (a small HTTP
//!   server decoding `opentelemetry-proto` protobuf) with their parents:
//!   `session` > `turn` > `step` > `model.request` / `tool.call` > `seam` >
//!   `listener` (plugin id) > `hook` (event, matcher, command hash, exit,
//!   outcome, duration);
//! - the Prometheus endpoint is scraped over HTTP and parsed after the turn.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_tests::daemon::{RpcClient, ServedDaemon, WAIT};
use dsh_tests::temp_dir;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message as _;
use serde_json::json;

const HOOK: &str = "exit 0";

/// A project whose model calls `Bash` once, with a `PreToolUse` hook on
/// `Bash`, and `telemetry` as given.
fn project(dir: &Path, telemetry: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("proj")).unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": HOOK}]}
    ]}});
    std::fs::write(dir.join("hooks.json"), hooks.to_string()).unwrap();
    let script = json!([
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo hi"}}]},
        {"text": "done"}
    ]);
    let config = dir.join("cordis.yml");
    std::fs::write(
        &config,
        format!(
            "state_dir: state\nsocket: state/dsh.sock\ntelemetry: {telemetry}\nplugins:\n  \
             - name: bash-local\n  - name: hooks-claude\n    config: {{config_path: hooks.json}}\n  \
             - id: model\n    name: model-scripted\n    config: {}\n",
            json!({ "script": script })
        ),
    )
    .unwrap();
    config
}

/// One exported span.
#[derive(Debug, Clone)]
struct Span {
    name: String,
    id: Vec<u8>,
    parent: Vec<u8>,
    attributes: HashMap<String, String>,
}

/// Answers OTLP/HTTP export requests, keeping every span.
fn receiver() -> (u16, Arc<Mutex<Vec<Span>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let sink = spans.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let sink = sink.clone();
            std::thread::spawn(move || serve_exports(stream, &sink));
        }
    });
    (port, spans)
}

fn serve_exports(stream: TcpStream, sink: &Mutex<Vec<Span>>) {
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).unwrap();
        assert!(
            request_line.starts_with("POST /v1/traces "),
            "{request_line}"
        );
        let export = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
        let mut got = sink.lock().unwrap();
        for resource in export.resource_spans {
            for scope in resource.scope_spans {
                for span in scope.spans {
                    let attributes = span
                        .attributes
                        .iter()
                        .map(|kv| {
                            let value = match kv.value.as_ref().and_then(|v| v.value.clone()) {
                                Some(AnyValue::StringValue(s)) => s,
                                Some(AnyValue::IntValue(i)) => i.to_string(),
                                Some(AnyValue::BoolValue(b)) => b.to_string(),
                                Some(AnyValue::DoubleValue(d)) => d.to_string(),
                                other => format!("{other:?}"),
                            };
                            (kv.key.clone(), value)
                        })
                        .collect();
                    got.push(Span {
                        name: span.name,
                        id: span.span_id,
                        parent: span.parent_span_id,
                        attributes,
                    });
                }
            }
        }
        drop(got);
        writer
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
    }
}

fn connect(dir: &Path) -> RpcClient {
    let mut client = RpcClient::connect(&dir.join("state/dsh.sock")).unwrap();
    client.initialize();
    client
}

/// FNV-1a 64 of `text` (the hook span's command hash).
fn fnv(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[test]
fn one_turn_exports_its_spans_to_otlp_with_their_parents() {
    let (port, spans) = receiver();
    let root = temp_dir();
    let config = project(
        root.path(),
        &format!("{{otlp_endpoint: 'http://127.0.0.1:{port}'}}"),
    );
    let daemon = ServedDaemon::start(&config, root.path(), "warn");
    let mut client = connect(root.path());
    let id = client.new_session(&root.path().join("proj"));
    assert_eq!(client.prompt(&id, "go"), "end_turn");
    drop(client);
    // SIGTERM: the daemon closes the session and flushes its spans.
    assert!(daemon.stop().success());

    let deadline = Instant::now() + WAIT;
    let all = loop {
        let all = spans.lock().unwrap().clone();
        if all.iter().any(|s| s.name == "session") {
            break all;
        }
        assert!(Instant::now() < deadline, "no session span; got {all:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let by_id: HashMap<&[u8], &Span> = all.iter().map(|s| (s.id.as_slice(), s)).collect();
    let parent = |s: &Span| by_id.get(s.parent.as_slice()).copied();
    let named = |name: &str| -> Vec<&Span> { all.iter().filter(|s| s.name == name).collect() };
    let one = |name: &str| -> &Span {
        let found = named(name);
        assert_eq!(found.len(), 1, "{name}: {all:#?}");
        found[0]
    };

    let session = one("session");
    assert_eq!(session.attributes["session"], id);
    assert!(session.parent.is_empty(), "the session span is a root");
    let turn = one("turn");
    assert_eq!(parent(turn).map(|p| p.name.as_str()), Some("session"));
    let steps = named("step");
    assert_eq!(steps.len(), 2, "{all:#?}");
    for step in &steps {
        assert_eq!(parent(step).map(|p| p.id.clone()), Some(turn.id.clone()));
    }
    for request in named("model.request") {
        assert_eq!(parent(request).map(|p| p.name.as_str()), Some("step"));
    }
    assert_eq!(named("model.request").len(), 2);
    let tool = one("tool.call");
    assert_eq!(parent(tool).map(|p| p.name.as_str()), Some("step"));
    assert_eq!(tool.attributes["tool"], "Bash");
    assert_eq!(tool.attributes["session"], id);
    assert!(tool.attributes["call_id"].starts_with("call"), "{tool:?}");

    let hook = one("hook");
    assert_eq!(hook.attributes["event"], "PreToolUse");
    assert_eq!(hook.attributes["matcher"], "Bash");
    assert_eq!(hook.attributes["command_hash"], fnv(HOOK));
    assert_eq!(hook.attributes["exit"], "0");
    assert_eq!(hook.attributes["outcome"], "success");
    assert!(hook.attributes.contains_key("duration_ms"), "{hook:?}");
    // hook < listener (the Claude bridge) < seam tools/pre-execute < tool.call
    let listener = parent(hook).unwrap();
    assert_eq!(listener.name, "listener");
    assert_eq!(listener.attributes["plugin"], "hooks-claude");
    assert_eq!(listener.attributes["seam"], "tools/pre-execute");
    let mut up = parent(listener).unwrap();
    while up.name == "listener" {
        up = parent(up).unwrap();
    }
    assert_eq!(up.name, "seam");
    assert_eq!(up.attributes["seam"], "tools/pre-execute");
    assert_eq!(parent(up).map(|p| p.id.clone()), Some(tool.id.clone()));
    // Every seam the tool went through sits under its tool call.
    for seam in named("seam")
        .into_iter()
        .filter(|s| s.attributes["seam"].starts_with("tools/"))
    {
        assert_eq!(
            parent(seam).map(|p| p.id.clone()),
            Some(tool.id.clone()),
            "{seam:?}"
        );
    }
}

/// GET `path` from 127.0.0.1:`port`; returns the body.
fn http_get(port: u16, path: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    body.to_string()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_metrics_endpoint_counts_one_turn() {
    let port = free_port();
    let root = temp_dir();
    let config = project(
        root.path(),
        &format!("{{metrics_listen: '127.0.0.1:{port}'}}"),
    );
    let daemon = ServedDaemon::start(&config, root.path(), "warn");
    let before = prometheus_parse::Scrape::parse(
        http_get(port, "/metrics")
            .lines()
            .map(|l| Ok(l.to_string())),
    )
    .unwrap();
    assert!(
        !before.samples.iter().any(|s| s.metric == "dsh_turns_total"),
        "{:?}",
        before.samples
    );
    let mut client = connect(root.path());
    let id = client.new_session(&root.path().join("proj"));
    assert_eq!(client.prompt(&id, "go"), "end_turn");

    let scrape = prometheus_parse::Scrape::parse(
        http_get(port, "/metrics")
            .lines()
            .map(|l| Ok(l.to_string())),
    )
    .unwrap();
    let value = |metric: &str, labels: &[(&str, &str)]| -> Option<f64> {
        scrape
            .samples
            .iter()
            .find(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match &s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => *v,
                prometheus_parse::Value::Histogram(h) => {
                    h.iter().map(|b| b.count).fold(0.0, f64::max)
                }
                other => panic!("{metric}: {other:?}"),
            })
    };
    assert_eq!(
        value("dsh_turns_total", &[("reason", "completed")]),
        Some(1.0)
    );
    assert_eq!(
        value(
            "dsh_tool_calls_total",
            &[("tool", "Bash"), ("outcome", "ok")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            "dsh_hook_runs_total",
            &[("event", "PreToolUse"), ("outcome", "success")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value("dsh_hook_duration_seconds", &[("event", "PreToolUse")]),
        Some(1.0),
        "one hook run in the histogram"
    );
    assert_eq!(
        value("dsh_seam_decisions_total", &[("seam", "tools/pre-execute")]),
        Some(1.0)
    );
    assert!(
        value(
            "dsh_seam_duration_seconds",
            &[("seam", "tools/pre-execute")]
        ) == Some(1.0),
        "{:?}",
        scrape.samples
    );
    assert_eq!(value("dsh_sessions_held", &[]), Some(1.0));
    drop(client);
    assert!(daemon.stop().success());
}
