//! Allocations per listener call on the `tools/pre-execute` path, counted
//! by interposing the C allocator in this test binary (so the `.so`
//! plugins' allocations count too; one test, so nothing else runs while it
//! counts): a listener that
//! answers at once (plugin API 1.5, `Plugin::pre_execute_now`) costs no
//! allocation, in-process or from a `.so`; the async form still does (the
//! FFI future and `next` of each call), which is what makes the first
//! assertion mean something.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;

use abi_stable::std_types::RResult;
use dsh_host::config::{PluginEntry, PluginRef};
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_host::seams::Terminal;
use dsh_plugin_api::{PreToolDecision, Seam, SeamInput, SeamOutput, plugin_module};
use dsh_tests::host::{terminal, tool_call};
use dsh_tests::listeners::{Delegate, Pass};

#[path = "../shared/counting_malloc.rs"]
mod counting_malloc;

use counting_malloc::allocated;

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
