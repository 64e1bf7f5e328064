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
}
