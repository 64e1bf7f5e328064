//! `Read` beyond text, as Claude Code 2.1.197 does it (recorded S84, S120):
//! images come back as an image block, other binary extensions are refused
//! by name.
//!
//! - **Refused by extension** ([`binary_extension_refusal`]): a path whose
//!   extension is on Claude Code's list of binary ones (archives, media,
//!   executables, office files, fonts, databases; case-insensitive) and is
//!   not an image or a PDF is refused with
//!   `<tool_use_error>This tool cannot read binary files. The file appears
//!   to be a binary .bin file. ...</tool_use_error>`, before any hook hears
//!   of the call (the host asks this module while it checks the call's
//!   input). The content is never looked at: a `.txt` holding a NUL byte is
//!   text.
//! - **Images** ([`is_image_path`], [`read_image`]): a `.png`, `.jpg`,
//!   `.jpeg`, `.gif` or `.webp` path, or a path without extension whose
//!   first bytes are a PNG, JPEG, GIF or WebP signature. The model reads one
//!   image block (base64, the media type of what is sent); the structured
//!   response is Claude Code's
//!   `{"type":"image","file":{"base64","type","originalSize","dimensions"}}`
//!   (`originalSize` the file's bytes; `dimensions` only when the image
//!   decoded). Images over 2000×2000 pixels, 3,932,160 bytes, the 512,000
//!   byte budget or the read token cap are resized or re-encoded by
//!   [`crate::resize`], as Claude Code does (recorded S150); a resized one
//!   is followed by Claude Code's `[Image: original WxH, displayed at wxh.
//!   ...]` note ([`resize_note`]), which the plugin adds as context after
//!   the step's results. PDFs and notebooks are not read.

use std::path::Path;

use base64::Engine as _;
use dsh_plugin_api::{ContentBlock, ToolResult};
use serde_json::json;

use crate::resize;

/// Claude Code's binary extensions (its `Read` refuses them by name).
const BINARY_EXTENSIONS: &[&str] = &[
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tiff", ".tif", ".mp4", ".mov",
    ".avi", ".mkv", ".webm", ".wmv", ".flv", ".m4v", ".mpeg", ".mpg", ".mp3", ".wav", ".ogg",
    ".flac", ".aac", ".m4a", ".wma", ".aiff", ".opus", ".zip", ".tar", ".gz", ".bz2", ".7z",
    ".rar", ".xz", ".z", ".tgz", ".iso", ".exe", ".dll", ".so", ".dylib", ".bin", ".o", ".a",
    ".obj", ".lib", ".app", ".msi", ".deb", ".rpm", ".pdf", ".doc", ".docx", ".xls", ".xlsx",
    ".ppt", ".pptx", ".odt", ".ods", ".odp", ".ttf", ".otf", ".woff", ".woff2", ".eot", ".pyc",
    ".pyo", ".class", ".jar", ".war", ".ear", ".node", ".wasm", ".rlib", ".sqlite", ".sqlite3",
    ".db", ".mdb", ".idx", ".psd", ".ai", ".eps", ".sketch", ".fig", ".xd", ".blend", ".3ds",
    ".max", ".swf", ".fla", ".lockb", ".dat", ".data",
];

/// Extensions `Read` shows as images.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// Node's `path.extname`, lowercased: the last `.` of the file name and
/// what follows, unless the name starts with it (`.bashrc` has none).
fn extname(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(i) if i > 0 && name[..i].chars().any(|c| c != '.') => name[i..].to_lowercase(),
        _ => String::new(),
    }
}

/// Claude Code's refusal text for a path with a binary extension that is
/// neither an image nor a PDF, or `None` when `Read` may read it.
pub fn binary_extension_refusal(path: &str) -> Option<String> {
    // Claude Code takes everything from the path's last `.` on (so a
    // dotted folder with an extension-less file is not binary).
    let tail = path.rfind('.').map_or_else(
        || path.chars().last().map(String::from).unwrap_or_default(),
        |i| path[i..].to_string(),
    );
    let tail = tail.to_lowercase();
    let ext = extname(path);
    let bare = ext.strip_prefix('.').unwrap_or(&ext);
    if !BINARY_EXTENSIONS.contains(&tail.as_str())
        || bare == "pdf"
        || IMAGE_EXTENSIONS.contains(&bare)
    {
        return None;
    }
    Some(format!(
        "<tool_use_error>This tool cannot read binary files. The file appears to be a binary {ext} \
         file. Please use appropriate tools for binary file analysis.</tool_use_error>"
    ))
}

/// The MIME type of an image signature at the start of `bytes`.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

/// Whether `Read` treats `path` as an image: by extension, or, without
/// one, by its first bytes (`head`).
pub fn is_image_path(path: &Path, head: impl FnOnce() -> Option<Vec<u8>>) -> bool {
    let ext = extname(&path.to_string_lossy());
    match ext.strip_prefix('.') {
        Some(bare) => IMAGE_EXTENSIONS.contains(&bare),
        None => head().is_some_and(|h| sniff(&h).is_some()),
    }
}

/// Width and height from an image header (PNG, GIF, JPEG, WebP), as Claude
/// Code reads them.
pub fn dimensions(b: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]) as u32);
    let le16 = |i: usize| Some(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?]) as u32);
    if b.len() < 10 {
        return None;
    }
    if b.starts_with(&[0x89, b'P', b'N', b'G']) && b.len() >= 24 {
        let be32 = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        return Some((be32(16), be32(20)));
    }
    if b.starts_with(b"GIF") {
        return Some((le16(6)?, le16(8)?));
    }
    if b.starts_with(&[0xff, 0xd8]) {
        let mut t = 2;
        while t + 9 < b.len() {
            if b[t] != 0xff {
                t += 1;
                continue;
            }
            let n = b[t + 1];
            if n == 0xff {
                t += 1;
                continue;
            }
            if (0xc0..=0xcf).contains(&n) && n != 0xc4 && n != 0xc8 && n != 0xcc {
                return Some((be16(t + 7)?, be16(t + 5)?));
            }
            if (0xd0..=0xd9).contains(&n) || n == 1 {
                t += 2;
                continue;
            }
            let len = be16(t + 2)? as usize;
            if len < 2 {
                return None;
            }
            t += 2 + len;
        }
        return None;
    }
    if b.len() >= 30 && b.starts_with(b"RIFF") && &b[8..12] == b"WEBP" {
        return match &b[12..16] {
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let n = u32::from_le_bytes([b[21], b[22], b[23], b[24]]);
                Some(((n & 0x3fff) + 1, ((n >> 14) & 0x3fff) + 1))
            }
            b"VP8X" => {
                let le24 = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], 0]);
                Some((le24(24) + 1, le24(27) + 1))
            }
            _ => None,
        };
    }
    None
}

/// What Claude Code says the bytes are when an image path holds no image.
fn describe(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(32)];
    let text: String = head
        .iter()
        .map(|&c| {
            if (0x20..=0x7e).contains(&c) {
                c as char
            } else {
                '.'
            }
        })
        .collect();
    let lower = text.to_lowercase();
    let start: String = text.chars().take(24).collect();
    if lower.contains("<!doctype") || lower.contains("<html") {
        format!("HTML document (starts with \"{start}\")")
    } else if lower.starts_with("<?xml") || lower.starts_with("<svg") {
        format!("XML/SVG document (starts with \"{start}\")")
    } else if lower.starts_with('{') || lower.starts_with('[') {
        format!("JSON/text (starts with \"{start}\")")
    } else if lower.starts_with("%pdf") {
        "PDF document".to_string()
    } else {
        let hex: Vec<String> = head.iter().take(8).map(|c| format!("{c:02x}")).collect();
        format!("unrecognized bytes (hex: {})", hex.join(" "))
    }
}

/// Reads the image at `path` (given as the model named it, `shown`) into
/// the result the model and the hooks get; `max_tokens` is the read token
/// cap.
pub fn read_image(path: &Path, shown: &str, max_tokens: u64) -> ToolResult {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return ToolResult::error(crate::FsToolError::io("read", path, e).to_string()),
    };
    if bytes.is_empty() {
        return ToolResult::error(format!("Image file is empty: {}", path.display()));
    }
    let Some(mime) = sniff(&bytes) else {
        return ToolResult::error(format!(
            "File has an image extension but its content is not a valid PNG/JPEG/GIF/WebP. \
             Detected: {}. This usually means a download saved an error/login page instead of \
             the image. Use `file \"{shown}\"` to confirm, or read it as text with Bash (e.g. \
             `head -c 500`).",
            describe(&bytes)
        ));
    };
    let sniffed = mime_subtype(mime);
    let mut shown_image = match resize::process(&bytes, sniffed) {
        Ok(s) => s,
        Err(e) => return ToolResult::error(e.to_string()),
    };
    if shown_image.bytes.len() > resize::BYTE_BUDGET {
        match resize::budget_jpeg(&shown_image.bytes, shown_image.subtype, resize::BYTE_BUDGET) {
            Ok(out) => {
                shown_image.bytes = out;
                shown_image.subtype = "jpeg";
            }
            Err(e) => {
                tracing::debug!(error = %e, "byte budget failed; the file is shown as it is");
                shown_image = resize::Shown {
                    bytes: bytes.clone(),
                    subtype: sniffed,
                    dimensions: None,
                };
            }
        }
    }
    let (tiles_w, tiles_h) = match shown_image.dimensions {
        Some(d) => (d.display_width, d.display_height),
        None => dimensions(&bytes).unwrap_or((resize::MAX_SIDE, resize::MAX_SIDE)),
    };
    if resize::image_tokens(tiles_w, tiles_h) > max_tokens {
        let (out, subtype) = resize::fit_tokens(&bytes, sniffed, max_tokens);
        shown_image = resize::Shown {
            bytes: out,
            subtype,
            dimensions: None,
        };
    }
    let media_type = format!("image/{}", shown_image.subtype);
    let data = base64::engine::general_purpose::STANDARD.encode(&shown_image.bytes);
    let mut file = json!({"base64": data, "type": media_type, "originalSize": bytes.len()});
    if let Some(d) = shown_image.dimensions {
        file["dimensions"] = json!({"originalWidth": d.original_width,
            "originalHeight": d.original_height, "displayWidth": d.display_width,
            "displayHeight": d.display_height});
    }
    let structured = json!({"type": "image", "file": file});
    ToolResult {
        content: vec![ContentBlock::image(media_type, data)].into(),
        is_error: false,
        structured: dsh_plugin_api::ROption::RSome(structured.to_string().into()),
    }
}

/// The subtype of a sniffed MIME type, as a static string.
fn mime_subtype(mime: &'static str) -> &'static str {
    mime.strip_prefix("image/").unwrap_or("png")
}

/// Claude Code's note for a `Read` result whose image was resized (from
/// its structured response), or `None`.
pub fn resize_note(result: &ToolResult) -> Option<String> {
    // Only an image result has dimensions (a text result is not parsed).
    result
        .content
        .iter()
        .any(|b| matches!(b.as_enum(), Ok(ContentBlock::Image { .. })))
        .then_some(())?;
    let structured = result.structured.as_ref().into_option()?;
    let value: serde_json::Value = serde_json::from_str(structured).ok()?;
    let d = value.get("file")?.get("dimensions")?;
    let get = |k: &str| d.get(k)?.as_u64().and_then(|v| u32::try_from(v).ok());
    resize::resize_note(&resize::Dimensions {
        original_width: get("originalWidth")?,
        original_height: get("originalHeight")?,
        display_width: get("displayWidth")?,
        display_height: get("displayHeight")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_extensions_are_refused_by_name_images_and_text_are_not() {
        let refused = binary_extension_refusal("/p/ARCHIVE.ZIP").expect("refused");
        assert!(refused.contains("a binary .zip file"), "{refused}");
        // A dot file: Node's extname is empty, Claude Code's list still matches.
        let dotted = binary_extension_refusal("/p/.bin").expect("refused");
        assert!(dotted.contains("a binary  file"), "{dotted}");
        for ok in [
            "/p/dot.png",
            "/p/a.PDF",
            "/p/nul.txt",
            "/p/Makefile",
            "/p/a.zip/f",
        ] {
            assert_eq!(binary_extension_refusal(ok), None, "{ok}");
        }
    }

    #[test]
    fn signatures_and_header_dimensions() {
        let png = [
            0x89, b'P', b'N', b'G', 13, 10, 26, 10, 0, 0, 0, 13, b'I', b'H', b'D', b'R', 0, 0, 0,
            3, 0, 0, 0, 2,
        ];
        assert_eq!(
            (sniff(&png), dimensions(&png)),
            (Some("image/png"), Some((3, 2)))
        );
        let gif = *b"GIF89a\x05\x00\x07\x00\x00\x00";
        assert_eq!(
            (sniff(&gif), dimensions(&gif)),
            (Some("image/gif"), Some((5, 7)))
        );
        assert_eq!(sniff(b"<html>"), None);
        assert_eq!(
            describe(b"{\"a\":1}"),
            "JSON/text (starts with \"{\"a\":1}\")"
        );
    }
}
