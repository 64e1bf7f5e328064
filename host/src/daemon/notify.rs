//! Talking to systemd: silent no-ops when not started by it.
//!
//! Each notification opens a socket, so when the daemon is out of file
//! descriptors every one fails; that is logged once until one succeeds
//! again, not once per status line.

use std::sync::atomic::{AtomicBool, Ordering};

use sd_notify::NotifyState;

/// Whether the last notification failed (its warning already logged).
static FAILING: AtomicBool = AtomicBool::new(false);

fn send(states: &[NotifyState]) {
    match sd_notify::notify(false, states) {
        Ok(()) => {
            if FAILING.swap(false, Ordering::Relaxed) {
                tracing::info!("systemd notifications go through again");
            }
        }
        Err(e) => {
            if !FAILING.swap(true, Ordering::Relaxed) {
                tracing::warn!("cannot notify systemd: {e}");
            }
        }
    }
}

/// `READY=1` plus a status line.
pub(crate) fn ready(status: &str) {
    send(&[NotifyState::Ready, NotifyState::Status(status)]);
}

/// A status line.
pub(crate) fn status(status: &str) {
    send(&[NotifyState::Status(status)]);
}

/// `RELOADING=1` with the monotonic timestamp systemd asks for.
pub(crate) fn reloading() {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own and passes.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) } == 0;
    let usec = if ok {
        now.tv_sec as i128 * 1_000_000 + now.tv_nsec as i128 / 1_000
    } else {
        0
    };
    send(&[
        NotifyState::Reloading,
        NotifyState::MonotonicUsec(usec),
        NotifyState::Status("reloading the manifest"),
    ]);
}

/// `STOPPING=1`.
pub(crate) fn stopping() {
    send(&[NotifyState::Stopping, NotifyState::Status("stopping")]);
}
