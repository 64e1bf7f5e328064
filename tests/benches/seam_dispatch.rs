//! Cost of dispatching a `tools/pre-execute` waterfall through 1 and 10
//! listeners, in-process and across the `.so` boundary, against an empty
//! pipeline measured in the same run.
//!
//! Both kinds of listener only call `next`, and both go through the same
//! registry path: the in-process one is a `Plugin` defined here, applied via
//! `plugin_module::<P>()` and `PluginHost::load_module`; the `.so` one is the
//! `delegate` fixture, loaded N times under different ids. A `.so`
//! listener's call runs on a plugin thread (so a plugin that blocks its
//! thread stalls nothing else), so the across-so figure includes that hop;
//! every dispatch is driven by the runtime's `block_on`, the empty baseline
//! included, so the executor's share cancels out.
//!
//! Times are the process's CPU time (`CLOCK_PROCESS_CPUTIME_ID`, so the
//! plugin threads' work counts), not wall time: the machine is shared, and
//! time spent descheduled is not dispatch cost. After criterion's own report, prints the cost per
//! listener, `(t(N) - t(empty)) / N`, from the median time per dispatch of
//! each case.
//!
//! Run: `cargo bench --bench seam_dispatch` (builds the fixture in release).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // a benchmark reports and fails loudly

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use abi_stable::std_types::{RArc, RResult};
use criterion::{BenchmarkId, Criterion};
use dsh_host::config::{PluginEntry, PluginRef};
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_host::seams::Terminal;
use dsh_plugin_api::ffi::SeamResult;
use dsh_plugin_api::{
    Host, Next, NoConfig, Plugin, PreToolDecision, Seam, SeamInput, SeamOutput, ToolCall,
    plugin_module,
};
use dsh_tests::host::{terminal, tool_call};

/// The in-process listener: a pre-execute that only delegates.
struct InProcessDelegate;

impl Plugin for InProcessDelegate {
    type Config = NoConfig;
    const NAME: &'static str = "in-process-delegate";
    const VERSION: &'static str = "0.0.0";

    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(InProcessDelegate)
    }

    async fn pre_execute(
        self: Arc<Self>,
        _call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        next.run().await
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Side {
    Empty,
    InProcess,
    Library,
}

impl Side {
    fn label(self) -> &'static str {
        match self {
            Side::Empty => "empty",
            Side::InProcess => "in-process",
            Side::Library => "across-so",
        }
    }
}

/// A host with `n` delegating listeners of one side.
struct Pipeline {
    host: PluginHost,
    runtime: tokio::runtime::Runtime,
    _state: tempfile::TempDir,
}

fn pipeline(side: Side, n: usize, library: &Path) -> Pipeline {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let state = dsh_tests::temp_dir();
    let core = HostCore::new(state.path().to_path_buf(), runtime.handle().clone());
    let mut host = PluginHost::new(core, state.path().join("bench.yml"));
    for index in 0..n {
        let id = format!("listener-{index}");
        let plugin = match side {
            Side::Library => PluginRef::Library(library.to_path_buf()),
            _ => PluginRef::Builtin("in-process-delegate".into()),
        };
        let entry = PluginEntry {
            id,
            plugin,
            config: serde_json::json!({}),
            disabled: false,
            index,
            listener_timeout: None,
        };
        match side {
            Side::Library => host.load_entry(&entry),
            _ => host.load_module(
                &entry.id,
                plugin_module::<InProcessDelegate>(),
                entry.config.clone(),
            ),
        }
    }
    assert!(host.all_applied(), "{:?}", host.problems());
    assert_eq!(host.core().view().bus.listener_count(Seam::PreExecute), n);
    Pipeline {
        host,
        runtime,
        _state: state,
    }
}

fn dispatch(pipeline: &Pipeline, call: &RArc<ToolCall>, end: &Arc<dyn Terminal>) -> SeamResult {
    pipeline.runtime.block_on(
        pipeline
            .host
            .core()
            .view()
            .bus
            .waterfall(SeamInput::PreExecute(call.clone()), end.clone()),
    )
}

/// Median nanoseconds per dispatch of each sample, per case.
type Samples = Mutex<BTreeMap<(Side, usize), Vec<f64>>>;

fn bench(c: &mut Criterion, samples: &Samples) {
    let library = dsh_tests::fixture("delegate");
    let call = tool_call("c1", "Bash", serde_json::json!({ "command": "ls" }));
    let end = terminal(|_| async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) });
    let mut group = c.benchmark_group("pre_execute_dispatch");
    for (side, n) in [
        (Side::Empty, 0),
        (Side::InProcess, 1),
        (Side::InProcess, 10),
        (Side::Library, 1),
        (Side::Library, 10),
    ] {
        let pipeline = pipeline(side, n, &library);
        let expected = RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()));
        assert_eq!(dispatch(&pipeline, &call, &end), expected);
        group.bench_function(BenchmarkId::new(side.label(), n), |b| {
            b.iter_custom(|iters| {
                let start = process_cpu_time();
                for _ in 0..iters {
                    black_box(dispatch(&pipeline, &call, &end));
                }
                let elapsed = process_cpu_time().saturating_sub(start);
                let per = elapsed.as_nanos() as f64 / iters.max(1) as f64;
                samples
                    .lock()
                    .unwrap()
                    .entry((side, n))
                    .or_default()
                    .push(per);
                elapsed
            })
        });
    }
    group.finish();
}

/// CPU time this process has used so far, every thread included.
fn process_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn report(samples: &Samples) {
    let mut samples = samples.lock().unwrap();
    let mut t = BTreeMap::new();
    for (case, values) in samples.iter_mut() {
        t.insert(*case, median(values));
    }
    let empty = t.get(&(Side::Empty, 0)).copied().unwrap_or(f64::NAN);
    println!(
        "\ntools/pre-execute dispatch, median ns per dispatch (empty pipeline: {empty:.1} ns)"
    );
    println!(
        "{:<12} {:>9} {:>12} {:>22}",
        "side", "listeners", "t(N) ns", "(t(N)-t(0))/N ns"
    );
    for side in [Side::InProcess, Side::Library] {
        for n in [1usize, 10] {
            if let Some(tn) = t.get(&(side, n)) {
                let per = (tn - empty) / n as f64;
                println!("{:<12} {:>9} {:>12.1} {:>22.1}", side.label(), n, tn, per);
            }
        }
    }
}

fn main() {
    let samples = Samples::default();
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(40)
        .configure_from_args();
    bench(&mut criterion, &samples);
    criterion.final_summary();
    report(&samples);
}
