//! Prometheus metrics: counters, gauges and histograms kept in the process,
//! rendered in the Prometheus text format (0.0.4) by [`render`].
//!
//! Off until [`enable`] is called (`telemetry.metrics_listen`): until then
//! every recording function is one relaxed atomic load and returns, so the
//! hot path pays nothing measurable. Labels are few and bounded (seam
//! names, plugin ids, hook events, outcomes, end reasons).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Upper bounds (seconds) of the latency histograms' buckets.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0,
];

type Labels = Vec<(&'static str, String)>;

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
struct Store {
    counters: BTreeMap<(&'static str, Labels), u64>,
    gauges: BTreeMap<(&'static str, Labels), i64>,
    histograms: BTreeMap<(&'static str, Labels), Histogram>,
}

fn store() -> &'static Mutex<Store> {
    static STORE: OnceLock<Mutex<Store>> = OnceLock::new();
    STORE.get_or_init(Mutex::default)
}

/// What each metric is, for `# HELP` and `# TYPE`.
const METRICS: &[(&str, &str, &str)] = &[
    ("dsh_turns_total", "counter", "Turns ended, by end reason."),
    (
        "dsh_tool_calls_total",
        "counter",
        "Tool calls answered, by tool and outcome (ok, error).",
    ),
    (
        "dsh_hook_runs_total",
        "counter",
        "Hook processes run, by hook event and outcome.",
    ),
    (
        "dsh_hook_duration_seconds",
        "histogram",
        "How long each hook process ran, by hook event.",
    ),
    (
        "dsh_seam_decisions_total",
        "counter",
        "Decisions taken on a seam, by seam and kind.",
    ),
    (
        "dsh_seam_duration_seconds",
        "histogram",
        "How long each seam dispatch took, by seam.",
    ),
    (
        "dsh_listener_failures_total",
        "counter",
        "Listener calls that failed or ran out of time, by plugin and seam.",
    ),
    (
        "dsh_sessions_held",
        "gauge",
        "Sessions this host holds open now.",
    ),
];

/// Starts recording.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Whether metrics are being recorded.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn labels(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| (*k, (*v).to_string())).collect()
}

fn with_store(f: impl FnOnce(&mut Store)) {
    let mut store = store().lock().unwrap_or_else(|p| p.into_inner());
    f(&mut store);
}

/// Adds one to counter `name`.
pub fn inc(name: &'static str, pairs: &[(&'static str, &str)]) {
    if !enabled() {
        return;
    }
    with_store(|s| *s.counters.entry((name, labels(pairs))).or_default() += 1);
}

/// Adds `delta` to gauge `name`.
pub fn gauge_add(name: &'static str, pairs: &[(&'static str, &str)], delta: i64) {
    if !enabled() {
        return;
    }
    with_store(|s| *s.gauges.entry((name, labels(pairs))).or_default() += delta);
}

/// Records `took` in histogram `name`.
pub fn observe(name: &'static str, pairs: &[(&'static str, &str)], took: Duration) {
    if !enabled() {
        return;
    }
    let seconds = took.as_secs_f64();
    with_store(|s| {
        let h = s.histograms.entry((name, labels(pairs))).or_default();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                h.counts[i] += 1;
            }
        }
        h.count += 1;
        h.sum += seconds;
    });
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn label_text(labels: &Labels, extra: Option<(&str, String)>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if let Some((k, v)) = extra {
        parts.push(format!("{k}=\"{v}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// Every metric in the Prometheus text format.
pub fn render() -> String {
    let store = store().lock().unwrap_or_else(|p| p.into_inner());
    let mut out = String::new();
    for (name, kind, help) in METRICS {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        match *kind {
            "counter" => {
                for ((n, l), v) in &store.counters {
                    if n == name {
                        let _ = writeln!(out, "{name}{} {v}", label_text(l, None));
                    }
                }
            }
            "gauge" => {
                let mut any = false;
                for ((n, l), v) in &store.gauges {
                    if n == name {
                        any = true;
                        let _ = writeln!(out, "{name}{} {v}", label_text(l, None));
                    }
                }
                if !any {
                    let _ = writeln!(out, "{name} 0");
                }
            }
            _ => {
                for ((n, l), h) in &store.histograms {
                    if n != name {
                        continue;
                    }
                    for (i, bound) in BUCKETS.iter().enumerate() {
                        let _ = writeln!(
                            out,
                            "{name}_bucket{} {}",
                            label_text(l, Some(("le", bound.to_string()))),
                            h.counts[i]
                        );
                    }
                    let _ = writeln!(
                        out,
                        "{name}_bucket{} {}",
                        label_text(l, Some(("le", "+Inf".into()))),
                        h.count
                    );
                    let _ = writeln!(out, "{name}_sum{} {}", label_text(l, None), h.sum);
                    let _ = writeln!(out, "{name}_count{} {}", label_text(l, None), h.count);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_histograms_and_gauges_render_in_the_text_format() {
        enable();
        inc("dsh_turns_total", &[("reason", "completed")]);
        inc("dsh_turns_total", &[("reason", "completed")]);
        observe(
            "dsh_hook_duration_seconds",
            &[("event", "Pre\"Tool")],
            Duration::from_millis(3),
        );
        gauge_add("dsh_sessions_held", &[], 1);
        let text = render();
        assert!(
            text.contains("dsh_turns_total{reason=\"completed\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("dsh_hook_duration_seconds_bucket{event=\"Pre\\\"Tool\",le=\"0.005\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "dsh_hook_duration_seconds_bucket{event=\"Pre\\\"Tool\",le=\"0.0025\"} 0"
            ),
            "{text}"
        );
        assert!(text.contains("dsh_sessions_held 1"), "{text}");
        assert!(text.contains("# TYPE dsh_seam_duration_seconds histogram"));
    }
}
