//! `Read` of images Claude Code resizes or re-encodes (recorded S150), over
//! real files made with the `image` crate.

use base64::Engine as _;
use dsh_plugin_api::{ContentBlock, ToolResult};
use dsh_tools_fs::resize::{self, Dimensions};
use dsh_tools_fs::{Config, read_tool};
use image::{DynamicImage, ImageFormat, RgbImage};
use serde_json::json;

use super::support::*;

async fn read_with(path: &std::path::Path, config: &Config) -> ToolResult {
    read_tool(
        &json!({"file_path": path}),
        path.parent().expect("dir"),
        config,
    )
    .await
}

/// A `w`×`h` gradient (compresses well) or noise (does not).
fn picture(w: u32, h: u32, noise: bool) -> DynamicImage {
    let mut seed: u32 = 150;
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        if noise {
            let mut next = || {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (seed >> 16) as u8
            };
            image::Rgb([next(), next(), next()])
        } else {
            image::Rgb([(x * 255 / w.max(2)) as u8, (y * 255 / h.max(2)) as u8, 128])
        }
    }))
}

fn save(dir: &std::path::Path, name: &str, image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut bytes = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut bytes), format)
        .expect("encode");
    std::fs::write(dir.join(name), &bytes).expect("write");
    bytes
}

/// The one image block: (media type, its bytes).
fn block(result: &ToolResult) -> (String, Vec<u8>) {
    let Ok(ContentBlock::Image { mime_type, data }) = result.content[0].as_enum() else {
        panic!("not an image block: {}", result.text_content());
    };
    (
        mime_type.to_string(),
        base64::engine::general_purpose::STANDARD
            .decode(data.as_str())
            .expect("base64"),
    )
}

fn decoded_size(bytes: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory(bytes).expect("decodes");
    (image.width(), image.height())
}

#[tokio::test]
async fn an_image_over_2000_pixels_is_resized_in_its_own_format_and_says_so() {
    let (_d, dir) = temp_dir();
    let original = save(
        &dir,
        "wide.png",
        &picture(3000, 1500, false),
        ImageFormat::Png,
    );
    save(
        &dir,
        "odd.png",
        &picture(2999, 1001, false),
        ImageFormat::Png,
    );
    let wide = read_with(&dir.join("wide.png"), &Config::default()).await;
    assert!(!wide.is_error, "{}", wide.text_content());
    let (mime, bytes) = block(&wide);
    assert_eq!(
        (mime.as_str(), decoded_size(&bytes)),
        ("image/png", (2000, 1000))
    );
    let file = &structured(&wide)["file"];
    assert_eq!(file["type"], "image/png");
    assert_eq!(file["originalSize"], original.len());
    assert_eq!(
        file["dimensions"],
        json!({"originalWidth": 3000, "originalHeight": 1500, "displayWidth": 2000, "displayHeight": 1000})
    );
    assert_eq!(
        dsh_tools_fs::image::resize_note(&wide).as_deref(),
        Some(
            "[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 \
             to map to original image.]"
        )
    );
    // Claude Code reports 2000x668 and sends 1998x667 (recorded).
    let odd = read_with(&dir.join("odd.png"), &Config::default()).await;
    assert_eq!(decoded_size(&block(&odd).1), (1998, 667));
    assert_eq!(
        structured(&odd)["file"]["dimensions"],
        json!({"originalWidth": 2999, "originalHeight": 1001, "displayWidth": 2000, "displayHeight": 668})
    );
}

#[tokio::test]
async fn an_image_over_the_byte_budget_becomes_a_jpeg_of_the_same_size() {
    let (_d, dir) = temp_dir();
    let original = save(
        &dir,
        "noise.png",
        &picture(500, 400, true),
        ImageFormat::Png,
    );
    assert!(original.len() > resize::BYTE_BUDGET, "{}", original.len());
    let result = read_with(&dir.join("noise.png"), &Config::default()).await;
    let (mime, bytes) = block(&result);
    assert_eq!(mime, "image/jpeg");
    assert!(bytes.len() <= resize::BYTE_BUDGET, "{}", bytes.len());
    assert_eq!(decoded_size(&bytes), (500, 400));
    let file = &structured(&result)["file"];
    assert_eq!(file["type"], "image/jpeg");
    assert_eq!(
        file["dimensions"],
        json!({"originalWidth": 500, "originalHeight": 400, "displayWidth": 500, "displayHeight": 400})
    );
    assert_eq!(dsh_tools_fs::image::resize_note(&result), None);
}

#[tokio::test]
async fn images_that_do_not_decode_are_shown_as_they_are_or_refused_by_their_header() {
    let (_d, dir) = temp_dir();
    let png = save(&dir, "whole.png", &picture(50, 50, false), ImageFormat::Png);
    let truncated = &png[..png.len() / 2];
    std::fs::write(dir.join("trunc.png"), truncated).expect("write");
    // Claude Code's processor has no GIF decoder: a small GIF goes as it
    // is, without dimensions; a wide one cannot be resized.
    let gif = b"GIF89a\x04\x00\x03\x00\x00\x00\x00,\x00\x00\x00\x00\x04\x00\x03\x00\x00\x02\x02D\x01\x00;";
    std::fs::write(dir.join("small.gif"), gif).expect("write");
    let mut wide_gif = gif.to_vec();
    wide_gif[6..8].copy_from_slice(&2500u16.to_le_bytes());
    std::fs::write(dir.join("wide.gif"), &wide_gif).expect("write");
    let trunc = read_with(&dir.join("trunc.png"), &Config::default()).await;
    assert_eq!(block(&trunc), ("image/png".to_string(), truncated.to_vec()));
    assert_eq!(structured(&trunc)["file"].get("dimensions"), None);
    let small = read_with(&dir.join("small.gif"), &Config::default()).await;
    assert_eq!(block(&small), ("image/gif".to_string(), gif.to_vec()));
    assert_eq!(structured(&small)["file"].get("dimensions"), None);
    let wide = read_with(&dir.join("wide.gif"), &Config::default()).await;
    assert!(wide.is_error);
    assert_eq!(
        wide.text_content(),
        "Unable to resize image \u{2014} dimensions exceed the 2000x2000px limit and image \
         processing failed. Please resize the image to reduce its pixel dimensions."
    );
}

#[tokio::test]
async fn an_image_over_the_token_cap_is_shrunk_to_its_byte_budget_without_dimensions() {
    let (_d, dir) = temp_dir();
    let original = save(&dir, "mid.png", &picture(700, 700, false), ImageFormat::Png);
    // 25 × 25 tiles = 625 tokens, over a cap of 500: at most 3000 bytes.
    let config = Config {
        max_read_tokens: 500,
        ..Config::default()
    };
    let result = read_with(&dir.join("mid.png"), &config).await;
    let (_, bytes) = block(&result);
    assert!(bytes.len() <= 3000, "{}", bytes.len());
    let (w, h) = decoded_size(&bytes);
    assert!(w < 700 && h < 700, "{w}x{h}");
    let file = &structured(&result)["file"];
    assert_eq!(file["originalSize"], original.len());
    assert_eq!(file.get("dimensions"), None);
    // Under the default cap the same image is shown as it is.
    let whole = read_with(&dir.join("mid.png"), &Config::default()).await;
    assert_eq!(block(&whole).1, original);
}

/// A PNG whose header declares `w`×`h` RGB pixels, with a little data.
fn declared_png(w: u32, h: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        let mut crc_input = kind.to_vec();
        crc_input.extend(data);
        c.extend(&crc_input);
        c.extend(crc32fast::hash(&crc_input).to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    // A zlib stream of 1000 zero bytes (stored, uncompressed).
    let mut idat = vec![0x78, 0x01, 0x01, 0xe8, 0x03, 0x17, 0xfc];
    idat.extend([0u8; 1000]);
    idat.extend([0x03, 0xe8, 0x00, 0x01]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(b"IDAT", &idat));
    png.extend(chunk(b"IEND", b""));
    png
}

#[test]
fn a_decompression_bomb_is_refused_before_it_is_allocated() {
    // 100000 x 100000 RGB pixels (30 GB decoded) in about 1 KB.
    let bomb = declared_png(100_000, 100_000);
    let err = resize::decode(&bomb).expect_err("refused");
    assert!(
        matches!(err, image::ImageError::Limits(_)),
        "not refused by the limits: {err}"
    );
    assert_eq!(
        resize::process(&bomb, "png"),
        Err(resize::ResizeError::OverSide)
    );
}

#[test]
fn resized_sizes_are_rounded_as_claude_code_reports_and_sends_them() {
    // (original, reported, decoded) as recorded (S150-aspect, S150-resize).
    let recorded = [
        ((3001, 2999), (2000, 1999), (1999, 1998)),
        ((2001, 1999), (2000, 1998), (1999, 1997)),
        ((4000, 3001), (2000, 1501), (1999, 1500)),
        ((2500, 2001), (2000, 1601), (1999, 1600)),
        ((2345, 1777), (2000, 1516), (1999, 1515)),
        ((3, 2500), (2, 2000), (2, 1666)),
        ((2003, 1000), (2000, 999), (1999, 998)),
        ((7000, 3), (2000, 1), (2000, 1)),
        ((2999, 1999), (2000, 1333), (1999, 1332)),
        ((2100, 2099), (2000, 1999), (1999, 1998)),
        ((3500, 2333), (2000, 1333), (1999, 1332)),
        ((2222, 3333), (1333, 2000), (1332, 1998)),
        ((2999, 1001), (2000, 668), (1998, 667)),
        ((3000, 1500), (2000, 1000), (2000, 1000)),
        ((1200, 2400), (1000, 2000), (1000, 2000)),
    ];
    for ((w, h), reported, sent) in recorded {
        let got = resize::display_size(w, h);
        assert_eq!(got, reported, "{w}x{h} reported");
        assert_eq!(
            resize::fitted_size(w, h, got.0, got.1),
            sent,
            "{w}x{h} sent"
        );
    }
}

#[test]
fn numbers_are_written_as_javascript_writes_them() {
    // `toFixed` rounds a tie up; Rust's formatting would give 1.12 and 0.2.
    assert_eq!(resize::to_fixed(1.125, 2), "1.13");
    assert_eq!(resize::to_fixed(0.25, 1), "0.3");
    assert_eq!(resize::to_fixed(2999.0 / 1998.0, 2), "1.50");
    assert_eq!(resize::human_size(47.0), "47 bytes");
    assert_eq!(resize::human_size(5_242_880.0), "5MB");
    assert_eq!(resize::human_size(600_648.0), "586.6KB");
    let note = resize::resize_note(&Dimensions {
        original_width: 4250,
        original_height: 10,
        display_width: 2000,
        display_height: 5,
    });
    assert_eq!(
        note.as_deref(),
        Some(
            "[Image: original 4250x10, displayed at 2000x5. Multiply coordinates by 2.13 to map \
             to original image.]"
        )
    );
}
