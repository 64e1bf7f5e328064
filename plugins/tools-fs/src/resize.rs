//! What `Read` makes of an image before the model sees it, as Claude Code
//! 2.1.197 does it (read from its bundled code, recorded S150): Claude
//! Code's native image processor is built on the `image` crate 0.25.10 (PNG,
//! JPEG and WebP; no GIF decoder), and so is this module, so the decoded
//! dimensions, the media type and, where recorded, the bytes match.
//!
//! - **Decode** ([`decode`]): the whole image, with an allocation limit of
//!   512 MiB (the crate's default, set explicitly): a PNG declaring
//!   100000×100000 pixels is refused before anything is allocated. An image
//!   that does not decode (truncated, corrupt, a GIF, over the limit) is
//!   shown unchanged, without `dimensions`, when its header's size is within
//!   2000×2000 and its base64 within 5,242,880 bytes; otherwise the read
//!   fails with Claude Code's `Unable to resize image — ...` text
//!   ([`ResizeError`]).
//! - **Fit** ([`process`]): an image within 2000×2000 pixels and 3,932,160
//!   bytes is kept as it is. One over the bytes only is re-encoded: a PNG
//!   first as PNG (Claude Code's palette PNG, below), then as JPEG at
//!   quality 80, 60, 40, 20 until one fits. One over 2000 pixels is
//!   resized (Lanczos3) to the size Claude Code computes (the long side to
//!   2000, the other `Math.round`ed; `displayWidth`/`displayHeight` say
//!   that size) and re-encoded in its own format (PNG; JPEG at quality 80;
//!   WebP lossless). The decoded size can be a pixel smaller than the
//!   reported one: the processor fits the image into that box twice, once
//!   truncating in `f32`, once rounding, as [`fitted_size`] does (recorded
//!   for 15 shapes). Still over 3,932,160 bytes: JPEG at quality 80 … 20,
//!   then at most 1000 pixels wide at quality 20.
//! - **Byte budget** ([`budget_jpeg`]): a result over 512,000 bytes becomes
//!   a JPEG whose quality is searched (90, then halving 1…89 five times)
//!   for the best one that fits; its media type is then `image/jpeg`.
//! - **Token budget** ([`fit_tokens`]): an image of more than the read
//!   token cap in tiles (`ceil(w/28) × ceil(h/28)`) is shrunk to
//!   `cap / 0.125 × 0.75` bytes: scaled by 1, ¾, ½, ¼, then 800×800 (PNG),
//!   600×600 at JPEG 50, 400×400 at JPEG 20; the result carries no
//!   `dimensions`.
//!
//! Claude Code asks for a palette PNG (`png({compressionLevel: 9, palette:
//! true})`, and `colors: 64` at 800×800); its processor ignores those
//! options and writes the crate's default PNG in the image's own colour
//! type, as this module does: recorded byte for byte for images of 4, 8
//! (with alpha), 16, 300 and some 30,000 colours (S150, S151), none of them
//! indexed.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// Largest width and height shown without resizing.
pub const MAX_SIDE: u32 = 2000;
/// Largest encoded image kept as it is (Claude Code's `targetRawSize`).
pub const TARGET_RAW_BYTES: usize = 3_932_160;
/// Largest base64 an image may have when it cannot be processed.
pub const MAX_BASE64_BYTES: usize = 5_242_880;
/// Largest image sent to the model; bigger ones become a JPEG.
pub const BYTE_BUDGET: usize = 512_000;
/// The decoder's allocation limit (the `image` crate's default).
pub const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;

/// An image's size as read and as shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dimensions {
    /// Width of the file's image.
    pub original_width: u32,
    /// Height of the file's image.
    pub original_height: u32,
    /// Width Claude Code reports it shows.
    pub display_width: u32,
    /// Height Claude Code reports it shows.
    pub display_height: u32,
}

/// What the model is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The encoded image.
    pub bytes: Vec<u8>,
    /// Its media subtype (`png`, `jpeg`, `webp`, `gif`).
    pub subtype: &'static str,
    /// Present when the image was decoded.
    pub dimensions: Option<Dimensions>,
}

/// Why an image cannot be shown (Claude Code's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResizeError {
    /// Not decodable and no size in its header.
    #[error(
        "Unable to resize image \u{2014} image processing is unavailable and dimensions could \
         not be read from the file header. Please convert the image to PNG, JPEG, GIF, or WebP."
    )]
    NoHeader,
    /// Not decodable and over 2000 pixels.
    #[error(
        "Unable to resize image \u{2014} dimensions exceed the {MAX_SIDE}x{MAX_SIDE}px limit and \
         image processing failed. Please resize the image to reduce its pixel dimensions."
    )]
    OverSide,
    /// Not decodable and over the base64 limit.
    #[error(
        "Unable to resize image ({} raw, {} base64). The image exceeds the {} API limit and \
         compression failed. Please resize the image manually or use a smaller image.",
        human_size(*raw as f64), human_size(*base64 as f64), human_size(MAX_BASE64_BYTES as f64)
    )]
    OverBytes {
        /// The file's bytes.
        raw: usize,
        /// Its base64 length.
        base64: usize,
    },
}

/// Decodes a whole image within [`MAX_DECODE_ALLOC`].
pub fn decode(bytes: &[u8]) -> Result<(DynamicImage, &'static str), image::ImageError> {
    let mut reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format()?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    let subtype = match reader.format() {
        Some(ImageFormat::Png) => "png",
        Some(ImageFormat::Jpeg) => "jpeg",
        Some(ImageFormat::WebP) => "webp",
        _ => "",
    };
    let image = reader.decode()?;
    Ok((image, subtype))
}

/// Claude Code's `ja`: `123 bytes`, `1.5KB`, `5MB`.
pub fn human_size(bytes: f64) -> String {
    let kb = bytes / 1024.0;
    if kb < 1.0 {
        return format!("{bytes} bytes");
    }
    let trim = |s: String| s.strip_suffix(".0").map(str::to_string).unwrap_or(s);
    if kb < 1024.0 {
        return format!("{}KB", trim(to_fixed(kb, 1)));
    }
    let mb = kb / 1024.0;
    if mb < 1024.0 {
        return format!("{}MB", trim(to_fixed(mb, 1)));
    }
    format!("{}GB", trim(to_fixed(mb / 1024.0, 1)))
}

/// JavaScript's `Number.prototype.toFixed`: a tie rounds up (Rust's
/// formatting rounds it to even).
pub fn to_fixed(x: f64, digits: usize) -> String {
    let exact = format!("{:.*}", digits + 30, x.abs());
    let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut kept: Vec<u8> = int.bytes().chain(frac.bytes().take(digits)).collect();
    if frac.as_bytes().get(digits).is_some_and(|&d| d >= b'5') {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, b'1');
                break;
            }
            i -= 1;
            if kept[i] == b'9' {
                kept[i] = b'0';
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let split = kept.len() - digits;
    let digits_str = String::from_utf8_lossy(&kept);
    let sign = if x < 0.0 && kept.iter().any(|&d| d != b'0') {
        "-"
    } else {
        ""
    };
    if digits == 0 {
        format!("{sign}{digits_str}")
    } else {
        format!("{sign}{}.{}", &digits_str[..split], &digits_str[split..])
    }
}

/// JavaScript's `Math.round` on a ratio of integers.
fn js_round(x: f64) -> u32 {
    (x + 0.5).floor().max(0.0) as u32
}

/// The size Claude Code reports for an image over [`MAX_SIDE`].
pub fn display_size(width: u32, height: u32) -> (u32, u32) {
    let (mut w, mut h) = (width, height);
    let max = MAX_SIDE;
    if w > max {
        h = js_round(f64::from(h) * f64::from(max) / f64::from(w));
        w = max;
    }
    if h > max {
        w = js_round(f64::from(w) * f64::from(max) / f64::from(h));
        h = max;
    }
    (w, h)
}

/// The size the processor actually makes when fitting `width`×`height`
/// inside `box_w`×`box_h` without enlarging: first the box scaled in `f32`
/// and truncated, then the `image` crate's own fit (rounded) into that.
pub fn fitted_size(width: u32, height: u32, box_w: u32, box_h: u32) -> (u32, u32) {
    let ratio = (box_w as f32 / width as f32).min(box_h as f32 / height as f32);
    if ratio >= 1.0 {
        return (width, height);
    }
    let fw = ((width as f32 * ratio) as u32).max(1);
    let fh = ((height as f32 * ratio) as u32).max(1);
    let r = (f64::from(fw) / f64::from(width)).min(f64::from(fh) / f64::from(height));
    let round = |v: u32| ((f64::from(v) * r).round() as u32).max(1);
    (round(width), round(height))
}

/// `image` resized to fit `box_w`×`box_h`, never enlarged.
fn fit(image: &DynamicImage, box_w: u32, box_h: u32) -> DynamicImage {
    let (w, h) = fitted_size(image.width(), image.height(), box_w, box_h);
    if (w, h) == (image.width(), image.height()) {
        return image.clone();
    }
    image.resize_exact(w, h, FilterType::Lanczos3)
}

/// `image` as JPEG at `quality`.
pub fn jpeg(image: &DynamicImage, quality: u8) -> Result<Vec<u8>, image::ImageError> {
    let mut out = Vec::new();
    let encoder = JpegEncoder::new_with_quality(&mut out, quality);
    match image {
        DynamicImage::ImageLuma8(gray) => gray.write_with_encoder(encoder)?,
        other => other.to_rgb8().write_with_encoder(encoder)?,
    }
    Ok(out)
}

/// `image` in its own format: PNG, JPEG at 80, WebP (lossless).
fn encode_as(image: &DynamicImage, subtype: &str) -> Result<Vec<u8>, image::ImageError> {
    let format = match subtype {
        "jpeg" => return jpeg(image, 80),
        "webp" => ImageFormat::WebP,
        _ => ImageFormat::Png,
    };
    let mut out = Vec::new();
    image.write_to(&mut Cursor::new(&mut out), format)?;
    Ok(out)
}

/// The first of `qualities` whose JPEG is at most `limit` bytes.
fn first_jpeg_within(
    image: &DynamicImage,
    qualities: &[u8],
    limit: usize,
) -> Result<Option<Vec<u8>>, image::ImageError> {
    for &q in qualities {
        let out = jpeg(image, q)?;
        if out.len() <= limit {
            return Ok(Some(out));
        }
    }
    Ok(None)
}

/// Claude Code's `resizeImage` for `bytes` (of `size` bytes, signature
/// subtype `sniffed`): what is shown, or why nothing can be.
pub fn process(bytes: &[u8], sniffed: &'static str) -> Result<Shown, ResizeError> {
    match processed(bytes) {
        Ok(shown) => Ok(shown),
        Err(e) => {
            tracing::debug!(error = %e, "image not processed; falling back to its header");
            unprocessed(bytes, sniffed)
        }
    }
}

/// The fallback when the image cannot be decoded or encoded.
fn unprocessed(bytes: &[u8], sniffed: &'static str) -> Result<Shown, ResizeError> {
    let (w, h) = crate::image::dimensions(bytes).ok_or(ResizeError::NoHeader)?;
    let base64 = bytes.len().div_ceil(3) * 4;
    let over_side = w > MAX_SIDE || h > MAX_SIDE;
    if base64 <= MAX_BASE64_BYTES && !over_side {
        return Ok(Shown {
            bytes: bytes.to_vec(),
            subtype: sniffed,
            dimensions: None,
        });
    }
    Err(if over_side {
        ResizeError::OverSide
    } else {
        ResizeError::OverBytes {
            raw: bytes.len(),
            base64,
        }
    })
}

fn processed(bytes: &[u8]) -> Result<Shown, image::ImageError> {
    let (image, subtype) = decode(bytes)?;
    let (width, height) = (image.width(), image.height());
    let dims = |display_width, display_height| {
        Some(Dimensions {
            original_width: width,
            original_height: height,
            display_width,
            display_height,
        })
    };
    let over_side = width > MAX_SIDE || height > MAX_SIDE;
    if bytes.len() <= TARGET_RAW_BYTES && !over_side {
        return Ok(Shown {
            bytes: bytes.to_vec(),
            subtype,
            dimensions: dims(width, height),
        });
    }
    if !over_side && subtype == "png" {
        // Claude Code asks for `png({compressionLevel: 9, palette: true})`;
        // its processor writes the crate's default truecolour PNG (S151).
        let out = encode_as(&image, "png")?;
        if out.len() <= TARGET_RAW_BYTES {
            return Ok(Shown {
                bytes: out,
                subtype,
                dimensions: dims(width, height),
            });
        }
    }
    if !over_side && let Some(out) = first_jpeg_within(&image, &[80, 60, 40, 20], TARGET_RAW_BYTES)?
    {
        return Ok(Shown {
            bytes: out,
            subtype: "jpeg",
            dimensions: dims(width, height),
        });
    }
    let (dw, dh) = display_size(width, height);
    let resized = fit(&image, dw, dh);
    let out = encode_as(&resized, subtype)?;
    if out.len() <= TARGET_RAW_BYTES {
        return Ok(Shown {
            bytes: out,
            subtype,
            dimensions: dims(dw, dh),
        });
    }
    if let Some(out) = first_jpeg_within(&resized, &[80, 60, 40, 20], TARGET_RAW_BYTES)? {
        return Ok(Shown {
            bytes: out,
            subtype: "jpeg",
            dimensions: dims(dw, dh),
        });
    }
    let w = dw.min(1000);
    let h = js_round(f64::from(dh) * f64::from(w) / f64::from(dw.max(1)));
    Ok(Shown {
        bytes: jpeg(&fit(&image, w, h), 20)?,
        subtype: "jpeg",
        dimensions: dims(w, h),
    })
}

/// Claude Code's byte budget: the best JPEG of `bytes` within `limit`
/// (quality 90, then a five-step search of 1…89), or the smallest tried.
pub fn budget_jpeg(
    bytes: &[u8],
    subtype: &str,
    limit: usize,
) -> Result<Vec<u8>, image::ImageError> {
    let (image, _) = decode(bytes)?;
    let mut smallest = bytes.to_vec();
    let mut high: i32 = 90;
    if subtype != "jpeg" {
        let first = jpeg(&image, 90)?;
        if first.len() <= limit {
            return Ok(first);
        }
        if first.len() < smallest.len() {
            smallest = first;
        }
        high = 89;
    }
    let mut low: i32 = 1;
    let mut best = None;
    for _ in 0..5 {
        let q = (low + high) / 2;
        let out = jpeg(&image, q.clamp(1, 100) as u8)?;
        if out.len() < smallest.len() {
            smallest.clone_from(&out);
        }
        if out.len() <= limit {
            best = Some(out);
            low = q + 1;
        } else {
            high = q - 1;
        }
        if low > high {
            break;
        }
    }
    Ok(best.unwrap_or(smallest))
}

/// Image tokens as Claude Code counts them: 28-pixel tiles.
pub fn image_tokens(width: u32, height: u32) -> u64 {
    if width == 0 || height == 0 {
        return 0;
    }
    u64::from(width.div_ceil(28)) * u64::from(height.div_ceil(28))
}

/// Claude Code's `compressImageToTokenBudget`: `bytes` within
/// `max_tokens / 0.125 × 0.75` bytes, as `(bytes, subtype)`. When the image
/// cannot be decoded it is shown as it is (`sniffed`), as Claude Code does.
pub fn fit_tokens(bytes: &[u8], sniffed: &'static str, max_tokens: u64) -> (Vec<u8>, &'static str) {
    let max_bytes = ((max_tokens as f64 / 0.125).floor() * 0.75).floor() as usize;
    let attempt = || -> Result<(Vec<u8>, &'static str), image::ImageError> {
        let (image, format) = decode(bytes)?;
        if bytes.len() <= max_bytes {
            return Ok((bytes.to_vec(), format));
        }
        for scale in [1.0, 0.75, 0.5, 0.25] {
            let w = (f64::from(image.width()) * scale).round() as u32;
            let h = (f64::from(image.height()) * scale).round() as u32;
            let out = encode_as(&fit(&image, w.max(1), h.max(1)), format)?;
            if out.len() <= max_bytes {
                return Ok((out, format));
            }
        }
        if format == "png" {
            let out = encode_as(&fit(&image, 800, 800), "png")?;
            if out.len() <= max_bytes {
                return Ok((out, "png"));
            }
        }
        let out = jpeg(&fit(&image, 600, 600), 50)?;
        if out.len() <= max_bytes {
            return Ok((out, "jpeg"));
        }
        Ok((jpeg(&fit(&image, 400, 400), 20)?, "jpeg"))
    };
    attempt().unwrap_or_else(|e| {
        tracing::debug!(error = %e, "image not fitted to the token budget; shown as it is");
        (bytes.to_vec(), sniffed)
    })
}

/// Claude Code's note after a resized image: `[Image: original WxH,
/// displayed at wxh. Multiply coordinates by R to map to original image.]`,
/// or `None` when it is shown at its own size.
pub fn resize_note(d: &Dimensions) -> Option<String> {
    if d.display_width == 0 || d.display_height == 0 {
        return None;
    }
    if d.original_width == d.display_width && d.original_height == d.display_height {
        return None;
    }
    let ratio = f64::from(d.original_width) / f64::from(d.display_width);
    Some(format!(
        "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {} to map to \
         original image.]",
        d.original_width,
        d.original_height,
        d.display_width,
        d.display_height,
        to_fixed(ratio, 2)
    ))
}
