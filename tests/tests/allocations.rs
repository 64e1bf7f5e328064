//! Allocations per listener call on the `tools/pre-execute` path, counted
//! by interposing the C allocator in this test binary (so the `.so`
//! plugins' allocations count too; one test, so nothing else runs while it
//! counts): a listener that
//! answers at once (plugin API 1.5, `Plugin::pre_execute_now`) costs no
//! allocation, in-process or from a `.so`; the async form still does (the
//! FFI future and `next` of each call), which is what makes the first
//! assertion mean something.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use abi_stable::std_types::{RArc, RResult};
use dsh_host::config::{PluginEntry, PluginRef};
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_host::seams::Terminal;
use dsh_plugin_api::{
    Host, Next, NoConfig, Now, Plugin, PreToolDecision, Seam, SeamInput, SeamOutput, ToolCall,
    plugin_module,
};
use dsh_tests::host::{terminal, tool_call};

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

fn allocated() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// In-process, async: awaits `next`.
struct Delegate;

impl Plugin for Delegate {
    type Config = NoConfig;
    const NAME: &'static str = "delegate-async";
    const VERSION: &'static str = "0.0.0";

    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Delegate)
    }

    async fn pre_execute(
        self: Arc<Self>,
        _call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        next.run().await
    }
}

/// In-process, at once: passes.
struct Pass;

impl Plugin for Pass {
    type Config = NoConfig;
    const NAME: &'static str = "pass";
    const VERSION: &'static str = "0.0.0";

    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Pass)
    }

    fn pre_execute_now(self: Arc<Self>, _call: RArc<ToolCall>) -> impl Into<Now<PreToolDecision>> {
        Now::Pass
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    AsyncInProcess,
    PassInProcess,
    PassLibrary,
}

/// Allocations per pre-execute dispatch through `n` listeners of `kind`,
/// on a current-thread runtime (nothing runs on another thread), after a
/// warm-up.
fn allocations_per_dispatch(kind: Kind, n: usize) -> u64 {
    const ROUNDS: u64 = 50;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let state = dsh_tests::temp_dir();
    let core = HostCore::new(state.path().to_path_buf(), runtime.handle().clone());
    let mut host = PluginHost::new(core, state.path().join("manifest.yml"));
    for index in 0..n {
        let id = format!("listener-{index}");
        match kind {
            Kind::AsyncInProcess => {
                host.load_module(&id, plugin_module::<Delegate>(), serde_json::json!({}))
            }
            Kind::PassInProcess => {
                host.load_module(&id, plugin_module::<Pass>(), serde_json::json!({}))
            }
            Kind::PassLibrary => host.load_entry(&PluginEntry {
                id,
                plugin: PluginRef::Library(dsh_tests::fixture("delegate")),
                config: serde_json::json!({ "now": true }),
                disabled: false,
                index,
                listener_timeout: Some(std::time::Duration::from_secs(30)),
            }),
        }
    }
    assert!(host.all_applied(), "{:?}", host.problems());
    assert_eq!(host.core().view().bus.listener_count(Seam::PreExecute), n);
    let call = tool_call("c1", "Bash", serde_json::json!({ "command": "ls" }));
    let end: Arc<dyn Terminal> =
        terminal(|_| async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) });
    let bus = host.core().view();
    let dispatch = || {
        runtime.block_on(
            bus.bus
                .waterfall(SeamInput::PreExecute(call.clone()), end.clone()),
        )
    };
    for _ in 0..ROUNDS {
        assert_eq!(
            dispatch(),
            RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
        );
    }
    let before = allocated();
    for _ in 0..ROUNDS {
        std::hint::black_box(dispatch());
    }
    let total = allocated() - before;
    assert_eq!(total % ROUNDS, 0, "the same allocations every dispatch");
    total / ROUNDS
}

#[test]
fn listeners_answering_at_once_allocate_nothing_per_call_in_process_or_from_a_so() {
    let empty = allocations_per_dispatch(Kind::PassInProcess, 0);
    // The async form allocates per call: the counter sees a listener.
    let awaiting = allocations_per_dispatch(Kind::AsyncInProcess, 10);
    assert!(
        awaiting >= empty + 10,
        "10 async listeners: {awaiting} allocations per dispatch, empty: {empty}"
    );
    for kind in [Kind::PassInProcess, Kind::PassLibrary] {
        for n in [1, 10] {
            assert_eq!(
                allocations_per_dispatch(kind, n),
                empty,
                "{n} listeners at once ({}) allocate as the empty pipeline does",
                if kind == Kind::PassLibrary {
                    ".so"
                } else {
                    "in-process"
                }
            );
        }
    }
}
