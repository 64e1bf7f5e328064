//! Listeners that answer at once (plugin API 1.5, `Plugin::pre_execute_now`)
//! from a real `.so`: the host asks them inline, on the thread that runs
//! the chain at that point (the caller's, or the plugin thread of an async
//! listener before them whose `next` it is), never on a plugin thread of
//! their own; a pass hands the waterfall on to the next listener, whatever
//! form that one takes. (That they allocate nothing per call is the
//! `allocations` test binary, which counts with an allocator of its own.)

use std::time::Duration;

use abi_stable::std_types::RResult;
use dsh_host::config::{PluginEntry, PluginRef};
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_plugin_api::ffi::SeamResult;
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

/// The answer of a pre-execute waterfall through `delegate` fixtures with
/// these configs, run from a thread named `seam-caller` on a
/// current-thread runtime. The terminal denies, naming the thread it runs
/// on.
fn answer(configs: Vec<serde_json::Value>) -> SeamResult {
    assert!(fixture("delegate").exists());
    let caller = std::thread::Builder::new()
        .name("seam-caller".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let state = dsh_tests::temp_dir();
            let core = HostCore::new(state.path().to_path_buf(), runtime.handle().clone());
            let mut host = PluginHost::new(core, state.path().join("manifest.yml"));
            let n = configs.len();
            for (index, config) in configs.into_iter().enumerate() {
                host.load_entry(&delegate(&format!("listener-{index}"), index, config));
            }
            assert!(host.all_applied(), "{:?}", host.problems());
            assert_eq!(host.core().view().bus.listener_count(Seam::PreExecute), n);
            let call = tool_call("c1", "Bash", serde_json::json!({ "command": "ls" }));
            let end = terminal(|_| async {
                let thread = std::thread::current();
                let name = thread.name().unwrap_or("(unnamed)");
                RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
                    reason: format!("terminal on thread {name}").into(),
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
    caller.join().expect("the caller's thread")
}

fn denied(reason: &str) -> SeamResult {
    RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
        reason: reason.into(),
    }))
}

#[test]
fn a_so_listener_answering_at_once_runs_on_the_callers_thread_after_others_passed() {
    let now = serde_json::json!({ "now": true });
    let deny = serde_json::json!({ "deny_naming_thread": true });
    assert_eq!(
        answer(vec![now.clone(), now, deny]),
        denied("asked on thread seam-caller")
    );
}

#[test]
fn a_pass_at_once_from_a_so_hands_the_chain_on_to_the_terminal() {
    let now = serde_json::json!({ "now": true });
    assert_eq!(
        answer(vec![now.clone(), now]),
        denied("terminal on thread seam-caller")
    );
}

#[test]
fn after_an_async_so_listener_the_chain_runs_on_its_plugin_thread() {
    // The contrast: an async `.so` listener runs on a plugin thread, and
    // so does the rest of the chain it awaits as its `next`, a listener
    // answering at once included.
    let deny = serde_json::json!({ "deny_naming_thread": true });
    assert_eq!(
        answer(vec![serde_json::json!({}), deny]),
        denied("asked on thread dsh-plugin")
    );
    assert_eq!(
        answer(vec![serde_json::json!({})]),
        denied("terminal on thread dsh-plugin")
    );
}
