//! The pipe the runner reads a child's stdout from: the child's own, or,
//! in a merged run ([`super::run_merged`]), the one pipe its stdout and
//! stderr share.

use std::io::PipeReader;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::unix::pipe::Receiver;
use tokio::process::{Child, ChildStdout};

/// Where a run's stdout is read from.
pub(super) enum Output {
    /// The child's stdout pipe, as the runtime made it.
    Child(ChildStdout),
    /// The pipe the child's stdout and stderr share.
    Merged(Receiver),
}

impl Output {
    /// `child`'s stdout, or `merged` (the shared pipe's reading end) made
    /// asynchronous.
    pub(super) fn of(child: &mut Child, merged: Option<PipeReader>) -> Option<Output> {
        let Some(read) = merged else {
            return child.stdout.take().map(Output::Child);
        };
        match Receiver::from_owned_fd(OwnedFd::from(read)) {
            Ok(receiver) => Some(Output::Merged(receiver)),
            Err(e) => {
                // Not expected for a pipe just made: the child's writes then
                // fail (EPIPE) and its output is lost, which the log says.
                tracing::warn!(error = %e, "process-runner: cannot read the child's output");
                None
            }
        }
    }
}

impl AsyncRead for Output {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Output::Child(pipe) => Pin::new(pipe).poll_read(cx, buf),
            Output::Merged(pipe) => Pin::new(pipe).poll_read(cx, buf),
        }
    }
}
