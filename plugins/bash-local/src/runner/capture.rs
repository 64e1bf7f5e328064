//! Tail-keeping capture of one output stream.
//!
//! A runaway command can print gigabytes; the runner keeps memory bounded by
//! holding only the last `cap` bytes of each stream (the end of a build log
//! is where the error is). The cut is moved forward to a UTF-8 boundary so
//! the kept text never starts with half a character. A caller for whom the
//! cap is a hard limit uses [`TailBuffer::push_within_cap`] instead, which
//! keeps the head and says when the limit was passed.

/// The last `cap` bytes written to one stream.
#[derive(Debug)]
pub(crate) struct TailBuffer {
    cap: usize,
    buf: Vec<u8>,
    dropped: u64,
    /// Bytes refused by [`TailBuffer::push_within_cap`].
    refused: bool,
}

impl TailBuffer {
    /// An empty buffer keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        TailBuffer {
            cap,
            buf: Vec::new(),
            dropped: 0,
            refused: false,
        }
    }

    /// Appends what fits under the cap and nothing more. Returns false when
    /// some of `bytes` did not fit: the stream passed the cap, and the kept
    /// text is its head.
    pub(crate) fn push_within_cap(&mut self, bytes: &[u8]) -> bool {
        let room = self.cap.saturating_sub(self.buf.len());
        if bytes.len() <= room {
            self.buf.extend_from_slice(bytes);
            return true;
        }
        self.buf.extend_from_slice(&bytes[..room]);
        self.refused = true;
        false
    }

    /// Appends bytes, forgetting the oldest ones past the cap.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        // Compact only once the buffer holds twice the cap (plus a chunk),
        // so the front is drained O(1) times per cap bytes written.
        let slack = self.cap.max(64 * 1024);
        if self.buf.len() > self.cap.saturating_add(slack) {
            self.compact();
        }
    }

    fn compact(&mut self) {
        if self.buf.len() > self.cap {
            let excess = self.buf.len() - self.cap;
            self.buf.drain(..excess);
            self.dropped = self.dropped.saturating_add(excess as u64);
        }
    }

    /// Whether nothing was kept.
    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes kept so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The kept text (decoded lossily) and whether anything was dropped
    /// or refused.
    pub(crate) fn finish(self) -> (String, bool) {
        let (text, truncated, _) = self.finish_counted();
        (text, truncated)
    }

    /// [`TailBuffer::finish`], also giving how many bytes the text was
    /// decoded from.
    pub(crate) fn finish_counted(mut self) -> (String, bool, usize) {
        self.compact();
        let truncated = self.dropped > 0 || self.refused;
        let mut start = 0;
        if truncated {
            // Skip continuation bytes (10xxxxxx) of a character whose lead
            // byte was cut off; a UTF-8 character has at most 3 of them.
            while start < self.buf.len().min(3) && self.buf[start] & 0xC0 == 0x80 {
                start += 1;
            }
        }
        (
            String::from_utf8_lossy(&self.buf[start..]).into_owned(),
            truncated,
            self.buf.len() - start,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_cap() {
        let mut b = TailBuffer::new(10);
        b.push(b"hello");
        assert_eq!(b.finish(), ("hello".to_string(), false));
    }

    #[test]
    fn keeps_the_tail_past_the_cap() {
        let mut b = TailBuffer::new(4);
        b.push(b"abcdef");
        b.push(b"gh");
        assert_eq!(b.finish(), ("efgh".to_string(), true));
    }

    #[test]
    fn cut_moves_to_a_character_boundary() {
        // "é" is C3 A9 and "€" is E2 82 AC: keeping the last 4 bytes of
        // "aé€" keeps A9 E2 82 AC, and the orphaned A9 must go.
        let text = "aé€";
        let mut b = TailBuffer::new(4);
        b.push(text.as_bytes());
        assert_eq!(b.finish(), ("€".to_string(), true));
    }

    #[test]
    fn many_small_pushes_stay_bounded() {
        let mut b = TailBuffer::new(100);
        for i in 0..100_000u32 {
            b.push(format!("{i:06}\n").as_bytes());
            assert!(b.buf.len() <= 100 + 64 * 1024 + 7);
        }
        let (text, truncated) = b.finish();
        assert!(truncated);
        assert!(text.ends_with("099999\n"));
        assert!(text.len() <= 100);
    }

    #[test]
    fn within_cap_keeps_the_head_and_reports_the_overflow() {
        let mut b = TailBuffer::new(4);
        assert!(b.push_within_cap(b"ab"));
        assert!(b.push_within_cap(b"cd"));
        assert!(!b.push_within_cap(b"e"));
        assert_eq!(b.finish(), ("abcd".to_string(), true));
        let mut exact = TailBuffer::new(2);
        assert!(exact.push_within_cap(b"ab"));
        assert_eq!(exact.finish(), ("ab".to_string(), false));
    }

    #[test]
    fn zero_cap_keeps_nothing() {
        let mut b = TailBuffer::new(0);
        b.push(b"abc");
        assert_eq!(b.finish(), (String::new(), true));
    }
}
