//! `Read` of images that fight the resizer (issue 10): through the real
//! binary, `dsh prompt` with `tools-fs` and a scripted model calling `Read`.
//! A PNG declaring 100000×100000 pixels is refused by the decoder's
//! allocation limit before anything is allocated (`dsh` runs with a 4 GiB
//! address space, so an attempt to allocate its 30 GB would abort it) and
//! ends in Claude Code's `Unable to resize image` text; a truncated PNG within the limits is shown
//! as it is, without dimensions; a truncated JPEG too wide to show and a
//! PNG whose pixel data is garbage are refused by their header's size.

use serde_json::{Value, json};

use std::os::unix::process::CommandExt as _;

use super::read::{error_text, project, read_all_in};

/// A PNG declaring `w`×`h` RGB pixels whose IDAT is `idat`.
fn png(w: u32, h: u32, idat: &[u8]) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut body = kind.to_vec();
        body.extend(data);
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend(&body);
        c.extend(crc32fast::hash(&body).to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(b"IDAT", idat));
    out.extend(chunk(b"IEND", b""));
    out
}

/// The address space `dsh` gets here: plenty for a turn, far too little for
/// the 30 GB the bomb's header asks for (an attempt aborts the process).
const ADDRESS_SPACE: u64 = 4 << 30;

const OVER_SIDE: &str = "Unable to resize image \u{2014} dimensions exceed the 2000x2000px limit \
     and image processing failed. Please resize the image to reduce its pixel dimensions.";

#[test]
fn bombs_truncated_and_corrupt_images_end_in_a_clear_result() {
    let (d, proj) = project();
    // 1000 zero bytes as a stored zlib stream: plenty for a decoder that
    // believed the header.
    let mut zeros = vec![0x78, 0x01, 0x01, 0xe8, 0x03, 0x17, 0xfc];
    zeros.extend([0u8; 1000]);
    zeros.extend([0x03, 0xe8, 0x00, 0x01]);
    std::fs::write(proj.join("bomb.png"), png(100_000, 100_000, &zeros)).unwrap();
    // Within the limits but cut short: shown as it is.
    let whole = png(40, 30, &zeros);
    let cut = &whole[..whole.len() - 30];
    std::fs::write(proj.join("cut.png"), cut).unwrap();
    // 3000 pixels wide by its header, then garbage.
    std::fs::write(
        proj.join("garbage.png"),
        png(3000, 10, b"not a zlib stream at all"),
    )
    .unwrap();
    // A JPEG header (SOF0, 2400x3000) and nothing after it.
    let mut jpeg = vec![0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08];
    jpeg.extend(3000u16.to_be_bytes());
    jpeg.extend(2400u16.to_be_bytes());
    jpeg.extend([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    std::fs::write(proj.join("cut.jpg"), &jpeg).unwrap();
    let r = read_all_in(
        d.path(),
        &["bomb.png", "cut.png", "garbage.png", "cut.jpg"],
        json!({}),
        |command| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            // SAFETY: setrlimit is async-signal-safe; it only limits the
            // child about to exec.
            unsafe {
                command.pre_exec(move || {
                    if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        },
    );
    assert_eq!(error_text(&r[0]), OVER_SIDE, "{}", r[0]);
    assert_eq!(r[1]["is_error"], false, "{}", r[1]);
    assert_eq!(r[1]["images"][0]["mime_type"], "image/png", "{}", r[1]);
    let file: &Value = &r[1]["structured"]["file"];
    assert_eq!(file["originalSize"], cut.len(), "{}", r[1]);
    assert_eq!(file.get("dimensions"), None, "{}", r[1]);
    assert_eq!(error_text(&r[2]), OVER_SIDE, "{}", r[2]);
    assert_eq!(error_text(&r[3]), OVER_SIDE, "{}", r[3]);
}
