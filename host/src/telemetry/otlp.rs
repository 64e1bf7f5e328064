//! The process's `tracing` subscriber: the stderr formatter, plus an
//! OpenTelemetry layer exporting spans over OTLP/HTTP (protobuf) when an
//! endpoint is configured.
//!
//! The two layers filter on their own: stderr keeps the `log_level` /
//! `DSH_LOG` filter; the exporter takes every span whose target is dsh's
//! (`dsh_*` crates: the host, the built-in plugins, the hook bridges) at
//! any level, so the `trace`-level spans the host opens are exported
//! without flooding stderr. Spans are batched on the SDK's own thread;
//! [`Telemetry::shutdown`] flushes what is left.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::config::TelemetryConfig;

/// The exporter, kept to flush it at exit.
#[derive(Default)]
pub struct Telemetry {
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Telemetry {
    /// Exports the spans still queued (bounded by the SDK's export timeout).
    pub fn shutdown(self) {
        if let Some(provider) = self.provider
            && let Err(e) = provider.shutdown()
        {
            tracing::warn!("telemetry: flushing spans failed: {e}");
        }
    }
}

/// `<endpoint>/v1/traces`, as OTLP/HTTP wants for the traces signal.
fn traces_url(endpoint: &str) -> String {
    let base = endpoint.trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    }
}

/// Installs the process's subscriber: stderr at `level` (`DSH_LOG`
/// overrides it), and the OTLP exporter when `config` names an endpoint.
/// Call before starting a tokio runtime (the exporter's HTTP client is a
/// blocking one, on the SDK's own thread).
pub fn init(level: &str, config: &TelemetryConfig) -> Result<Telemetry, String> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DSH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    let Some(endpoint) = &config.otlp_endpoint else {
        let _ = tracing_subscriber::registry().with(stderr).try_init();
        return Ok(Telemetry::default());
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(traces_url(endpoint))
        .build()
        .map_err(|e| format!("telemetry.otlp_endpoint {endpoint}: {e}"))?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(config.service_name.clone())
        .build();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("dsh");
    let spans = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.is_span() && meta.target().starts_with("dsh")
        }));
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(spans)
        .try_init();
    Ok(Telemetry {
        provider: Some(provider),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_path_is_added_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://127.0.0.1:4318/v1/traces/"),
            "http://127.0.0.1:4318/v1/traces"
        );
    }
}
