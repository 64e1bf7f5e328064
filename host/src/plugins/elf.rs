//! A look at a `.so` file's ELF headers before the dynamic loader maps it.
//!
//! glibc's `dlopen` maps each loadable segment as its program header says,
//! without checking that the file holds it: a library cut short (a copy or
//! a build interrupted) maps pages past the end of the file, and the first
//! touch of one kills the whole process with `SIGBUS`. For a library of
//! another machine it answers "No such file or directory", naming a file
//! that is there. So the header is read first: an ELF file of this
//! machine's class, byte order and architecture, a shared object, whose
//! program headers and loadable segments all lie inside the file. Anything
//! else is refused with what it is.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// ELF64 header size, and the size of one program header in it.
const EHDR_LEN: usize = 64;
const PHDR_LEN: u64 = 56;
/// `e_type` of a shared object.
const ET_DYN: u16 = 3;
/// `p_type` of a loadable segment.
const PT_LOAD: u32 = 1;
/// Program headers read at most (a real library has a dozen).
const MAX_PHDRS: u64 = 4096;

/// This build's `e_machine`, when known.
#[cfg(target_arch = "x86_64")]
const MACHINE: Option<u16> = Some(62);
#[cfg(target_arch = "aarch64")]
const MACHINE: Option<u16> = Some(183);
#[cfg(target_arch = "riscv64")]
const MACHINE: Option<u16> = Some(243);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const MACHINE: Option<u16> = None;

/// A readable name for an `e_machine` value.
fn machine_name(machine: u16) -> String {
    match machine {
        3 => "x86 (32-bit)".into(),
        8 => "MIPS".into(),
        20 => "PowerPC".into(),
        21 => "PowerPC 64".into(),
        22 => "s390".into(),
        40 => "ARM (32-bit)".into(),
        62 => "x86-64".into(),
        183 => "AArch64".into(),
        243 => "RISC-V".into(),
        258 => "LoongArch".into(),
        other => format!("machine {other}"),
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Checks that the file at `path` is a shared library this process can map
/// whole; the error says what it is instead, in a few words.
pub(crate) fn check(path: &Path) -> Result<(), String> {
    // Only 64-bit little-endian builds are checked; elsewhere the loader
    // judges alone.
    if !(cfg!(target_pointer_width = "64") && cfg!(target_endian = "little")) {
        return Ok(());
    }
    let file = File::open(path).map_err(|e| e.to_string())?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    let mut ehdr = [0u8; EHDR_LEN];
    let got = read_at_most(&file, &mut ehdr, 0)?;
    if got < 4 || ehdr[..4] != *b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    if got < EHDR_LEN {
        return Err(format!(
            "truncated: the file has {len} bytes, less than an ELF header"
        ));
    }
    match ehdr[4] {
        2 => {}
        1 => return Err("a 32-bit library; this dsh is 64-bit".into()),
        other => return Err(format!("unknown ELF class {other}")),
    }
    if ehdr[5] != 1 {
        return Err("a big-endian library; this dsh is little-endian".into());
    }
    let kind = u16_at(&ehdr, 16);
    if kind != ET_DYN {
        let what = match kind {
            1 => "a relocatable object (.o)".to_string(),
            2 => "an executable".to_string(),
            4 => "a core dump".to_string(),
            other => format!("ELF type {other}"),
        };
        return Err(format!("{what}, not a shared library"));
    }
    let machine = u16_at(&ehdr, 18);
    if let Some(ours) = MACHINE
        && machine != ours
    {
        return Err(format!(
            "built for {}; this dsh runs on {}",
            machine_name(machine),
            machine_name(ours)
        ));
    }
    let phoff = u64_at(&ehdr, 32);
    let phentsize = u64::from(u16_at(&ehdr, 54));
    let phnum = u64::from(u16_at(&ehdr, 56));
    if phentsize != PHDR_LEN || phnum == 0 || phnum > MAX_PHDRS {
        return Err(format!(
            "malformed ELF header ({phnum} program headers of {phentsize} bytes)"
        ));
    }
    let table_end = phoff.saturating_add(phnum * PHDR_LEN);
    if table_end > len {
        return Err(format!(
            "truncated: its program headers end at byte {table_end}, the file has {len} bytes"
        ));
    }
    let mut table = vec![0u8; (phnum * PHDR_LEN) as usize];
    if read_at_most(&file, &mut table, phoff)? < table.len() {
        return Err(format!("truncated: the file has {len} bytes"));
    }
    for phdr in table.chunks_exact(PHDR_LEN as usize) {
        if u32_at(phdr, 0) != PT_LOAD {
            continue;
        }
        let (offset, filesz) = (u64_at(phdr, 8), u64_at(phdr, 32));
        let end = offset.saturating_add(filesz);
        if end > len {
            return Err(format!(
                "truncated: a loadable segment ends at byte {end}, the file has {len} bytes"
            ));
        }
    }
    Ok(())
}

/// Reads into `buf` from `offset` until it is full or the file ends;
/// returns how much was read.
fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> Result<usize, String> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(got)
}
