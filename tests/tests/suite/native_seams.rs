//! Listeners that answer at once (plugin API 1.5, `Plugin::pre_execute_now`)
//! from a real `.so`: the host asks them on the caller's thread, not on a
//! plugin thread, and a pass hands the waterfall on to the next listener,
//! whatever form that one takes. (That they allocate nothing per call is
//! the `allocations` test binary, which counts with an allocator of its
//! own.)

use std::time::Duration;

use abi_stable::std_types::RResult;
use dsh_host::config::{PluginEntry, PluginRef};
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_plugin_api::{PreToolDecision, Seam, SeamInput, SeamOutput};
use dsh_tests::fixture;
use dsh_tests::host::{terminal, tool_call};

/// A `.so` entry of the `delegate` fixture with `config`, as the manifest
/// loader makes it (30 s time limit, the default for a `.so`).
fn delegate(id: &str, index: usize, config: serde_json::Value) -> PluginEntry {
    PluginEntry {
        id: id.into(),
        plugin: PluginRef::Library(fixture("delegate")),
        config,
        disabled: false,
        index,
        listener_timeout: Some(Duration::from_secs(30)),
    }
}

#[test]
fn a_so_listener_answering_at_once_runs_on_the_callers_thread_after_others_passed() {
    let library = fixture("delegate");
    assert!(library.exists());
    let caller = std::thread::Builder::new()
        .name("seam-caller".into())
        .spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let state = dsh_tests::temp_dir();
            let core = HostCore::new(state.path().to_path_buf(), runtime.handle().clone());
            let mut host = PluginHost::new(core, state.path().join("manifest.yml"));
            // Passes at once; delegates on a plugin thread; denies at once.
            host.load_entry(&delegate("pass", 0, serde_json::json!({ "now": true })));
            host.load_entry(&delegate("async", 1, serde_json::json!({})));
            host.load_entry(&delegate(
                "deny",
                2,
                serde_json::json!({ "deny_naming_thread": true }),
            ));
            assert!(host.all_applied(), "{:?}", host.problems());
            assert_eq!(host.core().view().bus.listener_count(Seam::PreExecute), 3);
            let call = tool_call("c1", "Bash", serde_json::json!({ "command": "ls" }));
            let end =
                terminal(|_| async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) });
            let waterfall = host
                .core()
                .view()
                .bus
                .waterfall(SeamInput::PreExecute(call), end);
            runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(60), waterfall)
                    .await
                    .expect("the waterfall answers")
            })
        })
        .expect("a thread");
    let answer = caller.join().expect("the caller's thread");
    assert_eq!(
        answer,
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
            reason: "asked on thread seam-caller".into()
        }))
    );
}

#[test]
fn a_so_listener_of_the_async_form_still_runs_on_a_plugin_thread() {
    // The contrast: the same fixture's async form, made to answer through
    // its call, is not asked inline. Its `pre_execute` delegates; the
    // terminal reports the thread it runs on (the async listener's
    // `next` runs where the listener polls it: a plugin thread).
    let caller = std::thread::Builder::new()
        .name("seam-caller".into())
        .spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let state = dsh_tests::temp_dir();
            let core = HostCore::new(state.path().to_path_buf(), runtime.handle().clone());
            let mut host = PluginHost::new(core, state.path().join("manifest.yml"));
            host.load_entry(&delegate("async", 0, serde_json::json!({})));
            assert!(host.all_applied(), "{:?}", host.problems());
            let call = tool_call("c1", "Bash", serde_json::json!({ "command": "ls" }));
            let end = terminal(|_| async {
                let thread = std::thread::current();
                RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
                    reason: thread.name().unwrap_or("(unnamed)").into(),
                }))
            });
            let waterfall = host
                .core()
                .view()
                .bus
                .waterfall(SeamInput::PreExecute(call), end);
            runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(60), waterfall)
                    .await
                    .expect("the waterfall answers")
            })
        })
        .expect("a thread");
    let answer = caller.join().expect("the caller's thread");
    assert_eq!(
        answer,
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
            reason: "dsh-plugin".into()
        }))
    );
}
