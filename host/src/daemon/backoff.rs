//! Backing off when `accept()` fails.
//!
//! An accept that fails for want of resources (EMFILE when the process is
//! out of file descriptors, ENFILE, ENOBUFS) leaves the connection queued,
//! so the listener stays readable and an immediate retry fails again: a
//! busy loop writing a log line per turn. Instead the loop pauses, 100 ms
//! at first and doubling up to 1 s, logs one warning when a burst of
//! failures starts and one line when an accept succeeds again, with how
//! many failed in between.

use std::time::Duration;

/// The first pause after a failed accept.
pub(crate) const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause.
pub(crate) const MAX_PAUSE: Duration = Duration::from_secs(1);

/// Failed accepts since the last success, and the next pause.
#[derive(Debug)]
pub(crate) struct AcceptBackoff {
    failures: u64,
    next_pause: Duration,
}

impl Default for AcceptBackoff {
    fn default() -> Self {
        AcceptBackoff {
            failures: 0,
            next_pause: FIRST_PAUSE,
        }
    }
}

impl AcceptBackoff {
    /// Records a failed accept; returns how long to pause before the next.
    pub(crate) fn failed(&mut self, error: &std::io::Error) -> Duration {
        if self.failures == 0 {
            tracing::warn!(
                "accept failed: {error}; pausing new connections (backing off up to {} ms) until it succeeds",
                MAX_PAUSE.as_millis()
            );
        }
        self.failures += 1;
        let pause = self.next_pause;
        self.next_pause = (self.next_pause * 2).min(MAX_PAUSE);
        pause
    }

    /// Records a successful accept, ending a burst of failures if one ran.
    pub(crate) fn succeeded(&mut self) {
        if self.failures > 0 {
            tracing::info!(
                failures = self.failures,
                "accept recovered after {} failed attempts",
                self.failures
            );
        }
        *self = AcceptBackoff::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_to_the_cap_and_start_over_after_a_success() {
        let emfile = std::io::Error::from_raw_os_error(libc::EMFILE);
        let mut backoff = AcceptBackoff::default();
        let pauses: Vec<u128> = (0..7)
            .map(|_| backoff.failed(&emfile).as_millis())
            .collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1000, 1000, 1000]);
        assert_eq!(backoff.failures, 7);
        backoff.succeeded();
        assert_eq!(backoff.failures, 0);
        assert_eq!(backoff.failed(&emfile), FIRST_PAUSE);
    }
}
