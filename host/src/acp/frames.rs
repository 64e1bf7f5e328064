//! Newline-delimited frames with a size limit.
//!
//! The SDK's `Lines` transport parses and answers each line (a non-JSON line
//! gets a `-32700` parse error and the connection goes on); this codec only
//! cuts the byte stream into lines and refuses to buffer one longer than the
//! limit: such a frame is an I/O error, which ends that connection alone.
//! Blank lines are skipped, a trailing `\r` is dropped, and invalid UTF-8 is
//! replaced rather than fatal (the JSON parser then judges the line).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::bytes::{Buf, BufMut, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

/// Splits lines of at most `limit` bytes; encodes one line per frame.
#[derive(Debug, Clone)]
pub(crate) struct FrameCodec {
    limit: usize,
    /// Set when a frame went over the limit, so the caller can tell that
    /// apart from other transport failures.
    oversized: Arc<AtomicBool>,
    /// Where the newline search resumes, so a long line is scanned once.
    scanned: usize,
}

impl FrameCodec {
    pub(crate) fn new(limit: usize, oversized: Arc<AtomicBool>) -> Self {
        FrameCodec {
            limit,
            oversized,
            scanned: 0,
        }
    }

    fn too_large(&self) -> io::Error {
        self.oversized.store(true, Ordering::SeqCst);
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame exceeds the {}-byte limit", self.limit),
        )
    }

    fn line(bytes: &[u8]) -> String {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        String::from_utf8_lossy(bytes).into_owned()
    }
}

impl Decoder for FrameCodec {
    type Item = String;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<String>, io::Error> {
        loop {
            let Some(offset) = buf[self.scanned..].iter().position(|b| *b == b'\n') else {
                self.scanned = buf.len();
                if buf.len() > self.limit {
                    return Err(self.too_large());
                }
                return Ok(None);
            };
            let end = self.scanned + offset;
            self.scanned = 0;
            if end > self.limit {
                return Err(self.too_large());
            }
            let line = Self::line(&buf[..end]);
            buf.advance(end + 1);
            if !line.trim().is_empty() {
                return Ok(Some(line));
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<String>, io::Error> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        // A last frame without its newline still counts.
        self.scanned = 0;
        let line = Self::line(buf);
        buf.clear();
        Ok((!line.trim().is_empty()).then_some(line))
    }
}

impl Encoder<String> for FrameCodec {
    type Error = io::Error;

    fn encode(&mut self, line: String, buf: &mut BytesMut) -> Result<(), io::Error> {
        buf.reserve(line.len() + 1);
        buf.put_slice(line.as_bytes());
        buf.put_u8(b'\n');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn codec(limit: usize) -> (FrameCodec, Arc<AtomicBool>) {
        let flag = Arc::new(AtomicBool::new(false));
        (FrameCodec::new(limit, flag.clone()), flag)
    }

    #[test]
    fn splits_lines_skipping_blanks_and_carriage_returns() {
        let (mut c, _) = codec(64);
        let mut buf = BytesMut::from(&b"one\r\n\n  \ntwo\nthr"[..]);
        assert_eq!(c.decode(&mut buf).unwrap().as_deref(), Some("one"));
        assert_eq!(c.decode(&mut buf).unwrap().as_deref(), Some("two"));
        assert_eq!(c.decode(&mut buf).unwrap(), None);
        buf.extend_from_slice(b"ee\n");
        assert_eq!(c.decode(&mut buf).unwrap().as_deref(), Some("three"));
        buf.extend_from_slice(b"tail");
        assert_eq!(c.decode_eof(&mut buf).unwrap().as_deref(), Some("tail"));
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_before_its_newline_arrives() {
        let (mut c, flag) = codec(8);
        let mut buf = BytesMut::from(&b"12345678\n"[..]);
        assert_eq!(c.decode(&mut buf).unwrap().as_deref(), Some("12345678"));
        assert!(!flag.load(Ordering::SeqCst));
        buf.extend_from_slice(b"123456789");
        assert!(c.decode(&mut buf).is_err());
        assert!(flag.load(Ordering::SeqCst));
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let (mut c, _) = codec(64);
        let mut buf = BytesMut::from(&b"a\xffb\n"[..]);
        assert_eq!(c.decode(&mut buf).unwrap().as_deref(), Some("a\u{fffd}b"));
    }

    mod fuzz {
        //! The frame reader under arbitrary bytes cut into arbitrary reads,
        //! against a model written the obvious way. Part of the fuzz suite
        //! (README, "Fuzzing"): `PROPTEST_CASES` sets the number of cases.
        use super::*;
        use proptest::prelude::*;

        /// What the reader must yield: each line's text (`\r` dropped,
        /// invalid UTF-8 replaced, blanks skipped), or an error at the first
        /// line over the limit.
        fn model(input: &[u8], limit: usize) -> (Vec<String>, bool) {
            let mut frames = Vec::new();
            let mut parts: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
            if input.ends_with(b"\n") {
                parts.pop();
            }
            for part in parts {
                if part.len() > limit {
                    return (frames, true);
                }
                let line = FrameCodec::line(part);
                if !line.trim().is_empty() {
                    frames.push(line);
                }
            }
            (frames, false)
        }

        fn bytes() -> impl Strategy<Value = Vec<u8>> {
            let piece = prop_oneof![
                Just(b"\n".to_vec()),
                Just(b"\r\n".to_vec()),
                Just(b" ".to_vec()),
                Just(br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#.to_vec()),
                prop::collection::vec(any::<u8>(), 0..24),
            ];
            prop::collection::vec(piece, 0..16).prop_map(|p| p.concat())
        }

        proptest! {
            #[test]
            fn any_bytes_in_any_reads_match_the_model(
                input in bytes(),
                cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
                limit in 1usize..64,
            ) {
                let (mut c, flag) = codec(limit);
                let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
                cuts.push(input.len());
                cuts.sort_unstable();
                let (expected, oversized) = model(&input, limit);
                let mut got = Vec::new();
                let mut buf = BytesMut::new();
                let mut from = 0;
                let mut failed = false;
                'read: for to in cuts {
                    buf.extend_from_slice(&input[from..to]);
                    from = to;
                    loop {
                        match c.decode(&mut buf) {
                            Ok(Some(line)) => got.push(line),
                            Ok(None) => break,
                            Err(_) => { failed = true; break 'read; }
                        }
                    }
                }
                while !failed {
                    match c.decode_eof(&mut buf) {
                        Ok(Some(line)) => got.push(line),
                        Ok(None) => break,
                        Err(_) => failed = true,
                    }
                }
                prop_assert_eq!(failed, oversized);
                prop_assert_eq!(flag.load(Ordering::SeqCst), oversized);
                prop_assert_eq!(got, expected);
            }

            #[test]
            fn encoded_frames_decode_to_themselves(
                // A frame is never blank (JSON-RPC text): blank lines are
                // skipped by design, Unicode whitespace included.
                lines in prop::collection::vec(
                    "[^\n\r]*[^\n\r]".prop_filter("not blank", |l: &String| !l.trim().is_empty()),
                    0..8,
                ),
            ) {
                let (mut c, _) = codec(1 << 20);
                let mut buf = BytesMut::new();
                for line in &lines {
                    c.encode(line.clone(), &mut buf).unwrap();
                }
                let mut got = Vec::new();
                while let Some(line) = c.decode(&mut buf).unwrap() {
                    got.push(line);
                }
                prop_assert_eq!(got, lines);
            }
        }
    }
}
