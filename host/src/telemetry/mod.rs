//! Telemetry: OpenTelemetry spans and Prometheus metrics, both off unless
//! the manifest's `telemetry:` block (or `OTEL_EXPORTER_OTLP_ENDPOINT`)
//! asks for them.
//!
//! - **Spans** ([`otlp`]): the host opens `session` > `turn` > `step` >
//!   `model.request` and `tool.call`; every seam dispatch is a `seam` span
//!   and every listener call a `listener` span (plugin id) inside it; the
//!   hook bridges open a `hook` span per hook process (event, matcher,
//!   command hash, exit, outcome, duration). All but `turn` are at `trace`
//!   level, so with no exporter they are disabled callsites (one cached
//!   check each); with one, a `tracing-opentelemetry` layer sends them over
//!   OTLP/HTTP.
//! - **Metrics** ([`metrics`]): counters and histograms kept in the
//!   process, served in the Prometheus text format by [`serve_metrics`].
//!   Until it is enabled every recording call is one atomic load.

pub mod metrics;
mod otlp;

pub use otlp::{Telemetry, init};

use std::net::SocketAddr;
use std::time::Instant;

use abi_stable::std_types::RResult;
use dsh_plugin_api::ffi::SeamResult;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::seams::GuardVerdict;
use crate::session::SessionEvent;

/// The span of one seam dispatch.
pub fn seam_span(seam: &'static str, shape: &'static str) -> tracing::Span {
    tracing::trace_span!("seam", seam, shape)
}

/// The first word of a decision's debug form inside its seam wrapper
/// (`PreTool(Deny { .. })` gives `deny`).
fn decision_kind(answer: &SeamResult) -> String {
    match answer {
        RResult::ROk(output) => {
            let text = format!("{output:?}");
            let inner = text.split_once('(').map_or(text.as_str(), |(_, rest)| rest);
            inner
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
        }
        RResult::RErr(_) => "error".into(),
    }
}

/// A waterfall answered: its latency and its decision.
pub(crate) fn seam_answered(seam: &'static str, started: Instant, answer: &SeamResult) {
    if !metrics::enabled() {
        return;
    }
    metrics::observe(
        "dsh_seam_duration_seconds",
        &[("seam", seam)],
        started.elapsed(),
    );
    let kind = decision_kind(answer);
    metrics::inc(
        "dsh_seam_decisions_total",
        &[("seam", seam), ("kind", kind.as_str())],
    );
}

/// A notification went round.
pub(crate) fn seam_notified(seam: &'static str, started: Instant) {
    metrics::observe(
        "dsh_seam_duration_seconds",
        &[("seam", seam)],
        started.elapsed(),
    );
}

/// The guards answered.
pub(crate) fn guards_answered(started: Instant, verdict: &GuardVerdict) {
    if !metrics::enabled() {
        return;
    }
    metrics::observe(
        "dsh_seam_duration_seconds",
        &[("seam", "guards")],
        started.elapsed(),
    );
    let kind = match verdict {
        GuardVerdict::Abstain => "abstain",
        GuardVerdict::Deny { .. } => "deny",
    };
    metrics::inc(
        "dsh_seam_decisions_total",
        &[("seam", "guards"), ("kind", kind)],
    );
}

/// Counts what a logged event says happened (turn ends, tool results, hook
/// runs).
pub(crate) fn observe_event(event: &SessionEvent) {
    if !metrics::enabled() {
        return;
    }
    match event {
        SessionEvent::TurnEnd { reason, .. } => {
            metrics::inc("dsh_turns_total", &[("reason", reason.as_str())]);
        }
        SessionEvent::ToolResult { name, is_error, .. } => {
            let outcome = if *is_error { "error" } else { "ok" };
            metrics::inc(
                "dsh_tool_calls_total",
                &[("tool", name.as_str()), ("outcome", outcome)],
            );
        }
        SessionEvent::Other(record) if record["type"] == "hook/result" => {
            let text = |key: &str| record[key].as_str().unwrap_or("unknown").to_string();
            let (hook_event, outcome) = (text("event"), text("outcome"));
            metrics::inc(
                "dsh_hook_runs_total",
                &[
                    ("event", hook_event.as_str()),
                    ("outcome", outcome.as_str()),
                ],
            );
            if let Some(ms) = record["duration_ms"].as_u64() {
                metrics::observe(
                    "dsh_hook_duration_seconds",
                    &[("event", hook_event.as_str())],
                    std::time::Duration::from_millis(ms),
                );
            }
        }
        _ => {}
    }
}

/// Serves the metrics at `http://<addr>/metrics` (Prometheus text format)
/// until the runtime stops; enables recording. Binding is checked here.
pub async fn serve_metrics(addr: SocketAddr) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    metrics::enable();
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(answer_scrape(stream));
                }
                Err(e) => {
                    tracing::warn!("metrics listener: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    });
    Ok(bound)
}

/// One HTTP/1.1 request: `GET /metrics` gets the metrics, anything else 404.
async fn answer_scrape(mut stream: tokio::net::TcpStream) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        true
    })
    .await;
    if !matches!(read, Ok(true)) {
        return;
    }
    let line = String::from_utf8_lossy(&head);
    let first = line.lines().next().unwrap_or_default();
    let (status, body) = if first.starts_with("GET /metrics ") || first.starts_with("GET / ") {
        ("200 OK", metrics::render())
    } else {
        (
            "404 Not Found",
            "not found; the metrics are at /metrics\n".to_string(),
        )
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
