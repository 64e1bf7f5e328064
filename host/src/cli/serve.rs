//! `dsh serve`: boot the manifest and run the daemon with the ACP server
//! answering every accepted connection.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use dsh_host::acp::AcpServer;
use dsh_host::daemon::{ConnectionHandler, Daemon, DaemonOptions};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use tokio::net::UnixStream;

struct AcpConnections(Arc<AcpServer>);

impl ConnectionHandler for AcpConnections {
    fn serve(&self, stream: UnixStream) -> BoxFuture<'static, ()> {
        let server = self.0.clone();
        async move {
            let (reader, writer) = stream.into_split();
            if let Err(e) = server.serve(reader, writer).await {
                tracing::warn!("connection ended: {e}");
            }
        }
        .boxed()
    }
}

/// Serves until SIGTERM. Exit 0 after a clean stop, 1 when it cannot start.
pub(crate) fn serve(config: &Path) -> anyhow::Result<ExitCode> {
    let manifest = match dsh_host::config::Manifest::load(config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    // Before the runtime: the span exporter's HTTP client blocks on a
    // thread of its own.
    let telemetry = match dsh_host::telemetry::init(&manifest.log_level, &manifest.telemetry) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let runtime = tokio::runtime::Runtime::new()?;
    if let Some(addr) = manifest.telemetry.metrics_listen {
        match runtime.block_on(dsh_host::telemetry::serve_metrics(addr)) {
            Ok(bound) => tracing::info!("metrics at http://{bound}/metrics"),
            Err(e) => {
                eprintln!("dsh: telemetry.metrics_listen {addr}: cannot listen: {e}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    let outcome = serve_booted(config, &runtime);
    // Plugin-spawned tasks must not keep a stopped daemon alive.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    telemetry.shutdown();
    outcome
}

fn serve_booted(config: &Path, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let booted = match super::boot(config, runtime, &super::CliPermissions::default()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let daemon = Daemon {
        manifest_path: booted.manifest.path.clone(),
        socket: booted.manifest.socket.clone(),
        host: booted.host,
        agent: booted.agent.clone(),
        options: DaemonOptions {
            shutdown_grace: booted.manifest.shutdown_grace,
        },
    };
    let outcome = runtime.block_on(async move {
        let acp = AcpServer::new(booted.agent);
        daemon.run(Arc::new(AcpConnections(acp))).await
    });
    match outcome {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
