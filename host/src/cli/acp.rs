//! `dsh acp`: ACP on stdio for editors.
//!
//! With `--connect SOCKET`, or when the manifest's socket has a live daemon,
//! it relays stdio to the daemon byte for byte; otherwise it boots the
//! manifest and hosts the agent in-process. Either way stdout carries
//! protocol frames only: tracing is set up on stderr before anything runs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use dsh_host::acp::AcpServer;
use dsh_host::config::Manifest;
use tokio::io::AsyncWriteExt as _;
use tokio::net::UnixStream;

/// How long the relay waits for the daemon's last frames after the editor
/// closed stdin.
const DRAIN: Duration = Duration::from_secs(5);

/// Options of `dsh acp`.
pub(crate) struct AcpArgs {
    pub(crate) config: PathBuf,
    pub(crate) connect: Option<PathBuf>,
}

/// Serves ACP on stdio until the editor closes it. Exit 0 on a clean
/// close, 1 when the daemon or the manifest cannot be used or the
/// connection broke.
pub(crate) fn acp(args: AcpArgs) -> anyhow::Result<ExitCode> {
    super::init_tracing("info");
    let runtime = tokio::runtime::Runtime::new()?;
    let code = run(&args, &runtime);
    // stdin is read on a blocking thread that may still be parked in read();
    // do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    Ok(code)
}

fn run(args: &AcpArgs, runtime: &tokio::runtime::Runtime) -> ExitCode {
    if let Some(socket) = &args.connect {
        return match runtime.block_on(UnixStream::connect(socket)) {
            Ok(stream) => relay_exit(runtime, socket, stream),
            Err(e) => {
                tracing::error!(socket = %socket.display(), "cannot connect to the dsh daemon: {e}");
                ExitCode::from(1)
            }
        };
    }
    let manifest = match Manifest::load(&args.config) {
        Ok(m) => m,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::from(1);
        }
    };
    if let Ok(stream) = runtime.block_on(UnixStream::connect(&manifest.socket)) {
        return relay_exit(runtime, &manifest.socket, stream);
    }
    tracing::info!(socket = %manifest.socket.display(), "no daemon; hosting the agent in-process");
    let booted = match super::boot(&args.config, runtime, &super::CliPermissions::default()) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::from(1);
        }
    };
    let server = AcpServer::new(booted.agent.clone());
    let served = runtime.block_on(server.serve(tokio::io::stdin(), tokio::io::stdout()));
    drop(server);
    drop(booted);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        // serve has logged why.
        Err(_) => ExitCode::from(1),
    }
}

fn relay_exit(runtime: &tokio::runtime::Runtime, socket: &Path, stream: UnixStream) -> ExitCode {
    tracing::info!(socket = %socket.display(), "relaying stdio to the dsh daemon");
    match runtime.block_on(relay(stream)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(socket = %socket.display(), "relay failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// Copies stdin to the socket and the socket to stdout. Ends when the
/// daemon closes, or (after a short drain) when the editor closes stdin.
async fn relay(stream: UnixStream) -> std::io::Result<()> {
    let (mut from_daemon, mut to_daemon) = stream.into_split();
    let up = async {
        let copied = tokio::io::copy(&mut tokio::io::stdin(), &mut to_daemon).await;
        // Half-close: the daemon sees EOF and finishes the connection.
        let _ = to_daemon.shutdown().await;
        copied
    };
    let down = async {
        let mut stdout = tokio::io::stdout();
        let copied = tokio::io::copy(&mut from_daemon, &mut stdout).await;
        stdout.flush().await?;
        copied
    };
    tokio::pin!(up, down);
    tokio::select! {
        copied = &mut down => copied.map(drop),
        copied = &mut up => {
            copied?;
            match tokio::time::timeout(DRAIN, down).await {
                Ok(copied) => copied.map(drop),
                Err(_) => Ok(()),
            }
        }
    }
}
