//! Opening a file a user named for dsh to read (the manifest, a scripted
//! model's script, a session to import) without being stalled or flooded
//! by what it turns out to be.
//!
//! A FIFO is opened without waiting for a writer (a plain `open` waits
//! forever when nobody writes), then read as a pipe: to its end, or as
//! empty when no writer is there. A device (`/dev/zero` never ends, a
//! terminal waits for typing), a folder or a socket is refused by what it
//! is. The caller still bounds how much it reads.

use std::fs::File;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

/// Opens `path` for blocking reads, or says what it is instead of a file.
pub fn open_input(path: &Path) -> Result<File, String> {
    // Without O_NONBLOCK, opening a FIFO waits for a writer.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let kind = file.metadata().map_err(|e| e.to_string())?.file_type();
    if kind.is_file() || kind.is_fifo() {
        // Reads then wait for data, or see the end once no writer is left.
        nix::fcntl::fcntl(
            &file,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
        )
        .map_err(|e| e.to_string())?;
        return Ok(file);
    }
    let what = if kind.is_dir() {
        "a folder"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(format!("{what}, not a file to read"))
}
