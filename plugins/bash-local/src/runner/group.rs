//! The child's process group: signalling it, and killing it on drop.
//!
//! Every child is spawned as the leader of a new process group, so one
//! signal reaches the shell and everything it started (pipelines,
//! background jobs, grandchildren). [`ProcessGroup`] is also the drop guard
//! that makes cancellation safe: if the future running a command is dropped
//! (the caller gave up, the plugin was disposed), the group is SIGKILLed.

use std::io;

/// A live process group created for one run.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    pgid: libc::pid_t,
    armed: bool,
}

impl ProcessGroup {
    /// The group led by `pid`. `None` for ids that do not name a child
    /// group: `kill(-0)` would hit our own group and `kill(-1)` every
    /// process we may signal, so those must never be built.
    pub(crate) fn led_by(pid: u32) -> Option<Self> {
        let pgid = libc::pid_t::try_from(pid).ok()?;
        // Not `then_some`: it would build (and drop, i.e. fire) the guard
        // for a refused id.
        if pgid > 1 {
            Some(ProcessGroup { pgid, armed: true })
        } else {
            None
        }
    }

    /// The group id (the leader's pid).
    pub(crate) fn id(&self) -> libc::pid_t {
        self.pgid
    }

    /// Sends `signal` to every process in the group. `ESRCH` (the group is
    /// already empty) is not an error.
    pub(crate) fn signal(&self, signal: libc::c_int) -> io::Result<()> {
        if self.pgid <= 1 {
            // Belt and braces for the invariant `led_by` establishes.
            return Err(io::Error::other(format!(
                "refusing to signal process group {}",
                self.pgid
            )));
        }
        // SAFETY: kill(2) has no memory-safety preconditions. The negative
        // pid addresses exactly the group this run created (`pgid > 1` is
        // checked in `led_by`).
        let rc = unsafe { libc::kill(-self.pgid, signal) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::ESRCH) {
            Ok(())
        } else {
            Err(err)
        }
    }

    /// Signals the group, logging (not failing) when that is impossible.
    pub(crate) fn signal_logged(&self, signal: libc::c_int) {
        if let Err(e) = self.signal(signal) {
            tracing::warn!(pgid = self.pgid, signal, error = %e, "cannot signal process group");
        }
    }

    /// The run finished on its own: leave whatever is left of the group
    /// alone (a command may deliberately start a detached server).
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if self.armed {
            tracing::debug!(
                pgid = self.pgid,
                "run dropped before it finished: killing its process group"
            );
            self.signal_logged(libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_ids_that_would_hit_other_processes() {
        assert!(ProcessGroup::led_by(0).is_none());
        assert!(ProcessGroup::led_by(1).is_none());
        assert!(ProcessGroup::led_by(u32::MAX).is_none());
        let mut g = ProcessGroup::led_by(4242).expect("valid id");
        g.disarm(); // never signal a group we did not create
        assert_eq!(g.id(), 4242);
    }
}
