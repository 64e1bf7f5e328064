//! Idle memory of `dsh serve`: the resident set of a daemon that loaded
//! every built-in plugin and the three example `.so` plugins, against a
//! daemon with no plugins started in the same run.
//!
//! Target (issue 15): the loaded daemon idles at ≤ 15 MB RSS. Both daemons
//! are the release binary built by this bench; each is measured after
//! `READY=1` and one ACP `initialize` round trip, when start-up is over.
//! The figures are `VmRSS` and its anonymous part (`RssAnon`: heap, not
//! the binary's mapped text) from `/proc/<pid>/status`, the median of five
//! daemons of each kind. Exits non-zero when the target is missed.
//!
//! Run: `cargo bench -p dsh-tests --bench idle_memory`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // a benchmark reports and fails loudly

use std::path::Path;

use dsh_tests::artifacts::{example, workspace};
use dsh_tests::daemon::{RpcClient, ServedDaemon};
use serde_json::json;

/// The target for the loaded daemon, in KiB.
const TARGET_KIB: u64 = 15 * 1024;
const ROUNDS: usize = 5;

/// `VmRSS` and `RssAnon` of `pid`, in KiB.
fn rss(pid: i32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("RssAnon:"))
}

fn manifest(dir: &Path, plugins: serde_json::Value) -> std::path::PathBuf {
    let path = dir.join("cordis.yml");
    let text = format!(
        "state_dir: {}\nsocket: {}\nplugins: {plugins}\n",
        dir.join("state").display(),
        dir.join("dsh.sock").display()
    );
    std::fs::write(&path, text).expect("write the manifest");
    path
}

/// The resident set of one idle daemon on `plugins`.
fn measure(plugins: &serde_json::Value) -> (u64, u64) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = manifest(dir.path(), plugins.clone());
    let daemon = ServedDaemon::start(&config, dir.path(), "warn");
    let mut client = RpcClient::connect(&dir.path().join("dsh.sock")).expect("connect");
    client.initialize();
    let figures = rss(daemon.pid());
    let problems = daemon.stderr();
    assert!(
        !problems.contains("WARN") && !problems.contains("ERROR"),
        "the daemon complained:\n{problems}"
    );
    daemon.stop();
    figures
}

/// How many names of `host/startup-order.txt` the `dsh` binary has, of
/// how many: the order only helps for names the build still has (they
/// carry hashes that a dependency or compiler change moves). `None` when
/// `nm` cannot be run.
fn startup_order_found(root: &Path, dsh: &Path) -> Option<(usize, usize)> {
    let list = std::fs::read_to_string(root.join("host/startup-order.txt")).ok()?;
    let out = std::process::Command::new("nm")
        .arg("--defined-only")
        .arg(dsh)
        .output()
        .ok()?;
    let have: std::collections::HashSet<&str> = std::str::from_utf8(&out.stdout)
        .ok()?
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    let names: Vec<&str> = list.lines().filter(|l| !l.is_empty()).collect();
    let found = names.iter().filter(|n| have.contains(*n)).count();
    Some((found, names.len()))
}

fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

fn main() {
    // Criterion passes `--bench`; there is nothing to filter here.
    let root = dsh_tests::workspace_root();
    let built = workspace();
    let loaded = json!([
        {"name": "bash-local"},
        {"name": "tools-fs"},
        {"name": "model-scripted", "config": {"script": root.join("config/demo-script.yml")}},
        {"name": "hooks-claude", "config": {"config_path": root.join("config/hooks/claude-settings.json")}},
        {"name": "hooks-codex", "config": {"config_path": root.join("config/hooks/codex-hooks.json")}},
        {"id": "policy-gate", "path": example("policy-gate"), "config": {"deny": ["rm -rf /"], "tools": ["Bash"]}},
        {"id": "timeout", "path": example("timeout"), "config": {"millis": 120000}},
        {"id": "audit", "path": example("audit"), "config": {"path": "audit.jsonl"}},
    ]);
    let empty = json!([]);
    let (mut base, mut full) = (Vec::new(), Vec::new());
    // Interleaved, so load on the machine hits both kinds alike.
    for _ in 0..ROUNDS {
        base.push(measure(&empty));
        full.push(measure(&loaded));
    }
    let pick = |runs: &[(u64, u64)], anon: bool| {
        median(runs.iter().map(|r| if anon { r.1 } else { r.0 }).collect())
    };
    let (base_rss, base_anon) = (pick(&base, false), pick(&base, true));
    let (full_rss, full_anon) = (pick(&full, false), pick(&full, true));
    println!("idle_memory (median of {ROUNDS} daemons each, KiB):");
    println!("  baseline, no plugins:     VmRSS {base_rss:>7}  RssAnon {base_anon:>7}");
    println!("  every built-in + 3 .so:   VmRSS {full_rss:>7}  RssAnon {full_anon:>7}");
    println!(
        "  ratio loaded / baseline:  {:.2}x  (plugins add {} KiB)",
        full_rss as f64 / base_rss as f64,
        full_rss.saturating_sub(base_rss)
    );
    if let Some((found, listed)) = startup_order_found(&root, &built.dsh) {
        println!(
            "  startup order: {found} of {listed} listed functions are in this build{}",
            if found * 10 < listed * 9 {
                " (stale: regenerate with tools/startup-order/generate.py)"
            } else {
                ""
            }
        );
    }
    println!(
        "  target: loaded ≤ {TARGET_KIB} KiB: {}",
        if full_rss <= TARGET_KIB {
            "met"
        } else {
            "MISSED"
        }
    );
    if full_rss > TARGET_KIB {
        std::process::exit(1);
    }
}
