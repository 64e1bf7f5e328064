//! The C allocator interposed and counted, for the executables that count
//! allocations per seam dispatch (`tests/allocations.rs`,
//! `benches/seam_dispatch.rs`). It is compiled into each of them (`#[path]`
//! module): glibc routes every library's `malloc` to the definition in the
//! executable, so it cannot live in a library crate.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// Allocations so far, every thread's and every library's (the `.so`
/// plugins have allocators of their own: a Rust `#[global_allocator]`
/// would not see theirs). Counted by the C allocator's entry points,
/// which this executable interposes for the whole process (glibc routes
/// every `malloc` of every library to the executable's definition) and
/// forwards to glibc's own.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(count: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
}

fn counted() {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
}

/// `malloc(3)`, counted.
///
/// # Safety
/// As `malloc(3)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    counted();
    // SAFETY: the caller's contract, passed on.
    unsafe { __libc_malloc(size) }
}

/// `calloc(3)`, counted.
///
/// # Safety
/// As `calloc(3)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    counted();
    // SAFETY: the caller's contract, passed on.
    unsafe { __libc_calloc(count, size) }
}

/// `realloc(3)`, counted (growing may allocate).
///
/// # Safety
/// As `realloc(3)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    counted();
    // SAFETY: the caller's contract, passed on.
    unsafe { __libc_realloc(ptr, size) }
}

/// `posix_memalign(3)`, counted (Rust's `System` uses it for large
/// alignments).
///
/// # Safety
/// As `posix_memalign(3)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
    counted();
    if !align.is_power_of_two() || !align.is_multiple_of(std::mem::size_of::<usize>()) {
        return libc::EINVAL;
    }
    // SAFETY: the caller's contract, passed on; `align` is valid.
    let ptr = unsafe { __libc_memalign(align, size) };
    if ptr.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: `out` is the caller's writable pointer.
    unsafe { *out = ptr };
    0
}

/// `aligned_alloc(3)`, counted.
///
/// # Safety
/// As `aligned_alloc(3)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    counted();
    // SAFETY: the caller's contract, passed on.
    unsafe { __libc_memalign(align, size) }
}

/// `memalign(3)`, counted.
///
/// # Safety
/// As `memalign(3)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    counted();
    // SAFETY: the caller's contract, passed on.
    unsafe { __libc_memalign(align, size) }
}

/// Allocations counted so far.
pub fn allocated() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}
