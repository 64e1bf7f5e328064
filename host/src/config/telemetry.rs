//! The manifest's `telemetry:` block.
//!
//! ```yaml
//! telemetry:
//!   otlp_endpoint: http://127.0.0.1:4318   # OTLP/HTTP (protobuf); spans go to <endpoint>/v1/traces
//!   metrics_listen: 127.0.0.1:9464         # Prometheus text format at /metrics
//!   service_name: dsh                      # the `service.name` resource attribute
//! ```
//!
//! `OTEL_EXPORTER_OTLP_ENDPOINT`, when set and not empty, is the endpoint
//! when the manifest gives none. With neither, nothing is exported; without
//! `metrics_listen`, no listener is opened and nothing is counted.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// The block as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTelemetry {
    otlp_endpoint: Option<String>,
    metrics_listen: Option<String>,
    service_name: Option<String>,
}

/// What to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// Where spans go (OTLP over HTTP, protobuf), if anywhere.
    pub otlp_endpoint: Option<String>,
    /// Where the Prometheus endpoint listens, if anywhere.
    pub metrics_listen: Option<SocketAddr>,
    /// `service.name` of the exported spans.
    pub service_name: String,
}

/// The standard variable naming the OTLP endpoint.
pub const OTLP_ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

impl RawTelemetry {
    /// Validates the block (`env_endpoint`: `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub(crate) fn resolve(self, env_endpoint: Option<String>) -> Result<TelemetryConfig, String> {
        let otlp_endpoint = self
            .otlp_endpoint
            .or(env_endpoint)
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty());
        if let Some(endpoint) = &otlp_endpoint
            && !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
        {
            return Err(format!(
                "`telemetry.otlp_endpoint: {endpoint}` is not an http:// or https:// URL (OTLP over HTTP)"
            ));
        }
        let metrics_listen = match self.metrics_listen {
            None => None,
            Some(addr) => Some(addr.trim().parse::<SocketAddr>().map_err(|e| {
                format!("`telemetry.metrics_listen: {addr}` is not an address:port ({e})")
            })?),
        };
        Ok(TelemetryConfig {
            otlp_endpoint,
            metrics_listen,
            service_name: self.service_name.unwrap_or_else(|| "dsh".into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_and_bad_values_name_the_key() {
        let off = RawTelemetry::default().resolve(None).unwrap();
        assert_eq!(off.otlp_endpoint, None);
        assert_eq!(off.metrics_listen, None);
        let env = RawTelemetry::default()
            .resolve(Some("http://127.0.0.1:4318".into()))
            .unwrap();
        assert_eq!(env.otlp_endpoint.as_deref(), Some("http://127.0.0.1:4318"));
        let bad = RawTelemetry {
            metrics_listen: Some("localhost".into()),
            ..RawTelemetry::default()
        };
        assert!(
            bad.resolve(None)
                .unwrap_err()
                .contains("telemetry.metrics_listen")
        );
        let bad = RawTelemetry {
            otlp_endpoint: Some("127.0.0.1:4318".into()),
            ..RawTelemetry::default()
        };
        assert!(
            bad.resolve(None)
                .unwrap_err()
                .contains("telemetry.otlp_endpoint")
        );
    }
}
