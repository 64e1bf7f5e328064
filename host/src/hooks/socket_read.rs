//! Reading a socket hook server's answer lines: one buffer per connection,
//! kept across the calls that take turns reading it, and a short, bounded
//! spin before a call that has just sent its request parks.
//!
//! A line is read into [`Reader::line`]; a reading call dropped halfway
//! through one (its hook timed out) loses nothing, the next reader goes on
//! from there. Bytes past the line stay in the buffer for the next.
//!
//! The spin ([`Reader::spin`]): a call whose request is on its way does not
//! park at once but tries the socket (a non-blocking `recv`, the core
//! offered to other threads between tries) for at most [`SPIN`]. A server
//! that answers within it is read without the caller's thread going to
//! sleep and being woken again (an epoll wake-up and a thread wake-up: on
//! an idle core, the larger share of a round trip's cost). The price: a
//! call to a server slower than [`SPIN`] keeps one worker thread busy for
//! [`SPIN`] before it parks as before. Nothing spins while no request is in
//! flight, and a call spins once per turn at reading, never while it waits
//! for another call to hand over its answer.

use std::os::fd::AsRawFd as _;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt as _;
use tokio::net::unix::OwnedReadHalf;

use super::socket::MAX_LINE_BYTES;

/// The longest a call spins for its answer before it parks.
pub const SPIN: Duration = Duration::from_micros(50);

/// How much is read from the socket at a time.
const CHUNK: usize = 8 * 1024;

/// How a [`Reader::read_line`] ended.
pub enum Line {
    /// A whole line is in [`Reader::line`] (or the last, unterminated one
    /// before the connection ended).
    Text,
    /// The connection ended between lines.
    Eof,
    /// The line passed [`MAX_LINE_BYTES`].
    TooLong,
}

/// The read side of a connection, read by one waiting call at a time.
pub struct Reader {
    half: OwnedReadHalf,
    /// Bytes read off the socket and not yet taken: `buf[at..]`.
    buf: Vec<u8>,
    at: usize,
    /// The line being read (without its newline).
    pub line: Vec<u8>,
}

impl Reader {
    pub fn new(half: OwnedReadHalf) -> Reader {
        Reader {
            half,
            buf: Vec::with_capacity(CHUNK),
            at: 0,
            line: Vec::new(),
        }
    }

    /// Waits up to [`SPIN`] for bytes to arrive, without parking, when none
    /// are buffered. Whatever comes is buffered for [`Self::read_line`]; an
    /// error or the end of the connection stops the spin and is left for
    /// [`Self::read_line`] to find.
    pub fn spin(&mut self, budget: Duration) {
        if self.at < self.buf.len() || budget.is_zero() {
            return;
        }
        let until = Instant::now() + budget;
        loop {
            match self.try_recv() {
                Some(_) => return,
                None if Instant::now() >= until => return,
                None => std::thread::yield_now(),
            }
        }
    }

    /// One non-blocking `recv` into the buffer (empty, as [`Self::spin`]
    /// calls it): the bytes read (0 at the end of the connection), or
    /// `None` when none are there yet or the read failed (a failure is
    /// found again by the next read through tokio).
    ///
    /// It reads the socket's descriptor directly: tokio's own `try_read`
    /// does not touch the socket once it last saw it empty, until its
    /// reactor says it turned readable, which is the wake-up this avoids.
    /// Reading behind tokio's back is sound: tokio learns readiness from
    /// edge-triggered epoll events, so at worst it wakes once for bytes
    /// already read here, finds the socket empty, and waits again.
    fn try_recv(&mut self) -> Option<usize> {
        self.buf.clear();
        self.at = 0;
        let spare = self.buf.spare_capacity_mut();
        // SAFETY: the descriptor is the open socket `self.half` borrows for
        // the whole call; `recv` writes at most `spare.len()` bytes into the
        // buffer's spare capacity, and the length is set to cover exactly
        // the bytes it reports written.
        let n = unsafe {
            libc::recv(
                self.half.as_ref().as_raw_fd(),
                spare.as_mut_ptr().cast(),
                spare.len(),
                libc::MSG_DONTWAIT,
            )
        };
        let n = usize::try_from(n).ok()?;
        // SAFETY: `recv` initialised the first `n` bytes of the spare
        // capacity (`n <= spare.len()`).
        unsafe { self.buf.set_len(n) };
        Some(n)
    }

    /// Reads the rest of one line (without its newline) into
    /// [`Self::line`], at most [`MAX_LINE_BYTES`]. Dropped while it waits,
    /// it loses nothing: what was read is in the buffer or in the line.
    pub async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            if self.at == self.buf.len() {
                self.buf.clear();
                self.at = 0;
                // Cancel-safe: nothing is read unless this completes.
                if self.half.read_buf(&mut self.buf).await? == 0 {
                    return Ok(if self.line.is_empty() {
                        Line::Eof
                    } else {
                        Line::Text
                    });
                }
            }
            let available = &self.buf[self.at..];
            let (take, done) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let end = if done { take - 1 } else { take };
            if self.line.len() + end > MAX_LINE_BYTES {
                return Ok(Line::TooLong);
            }
            self.line.extend_from_slice(&available[..end]);
            self.at += take;
            if done {
                return Ok(Line::Text);
            }
        }
    }
}
