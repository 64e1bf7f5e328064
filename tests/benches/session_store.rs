//! Appending events to PostgreSQL vs the JSONL files, in one run.
//!
//! One "turn" is what a short real turn logs: `turn/start`, a user
//! message, an assistant message with a tool call, the call, its result,
//! a final assistant message, `turn/end` (7 events), then the turn end's
//! sync (an fsync for the files, one transaction for PostgreSQL). Each
//! store gets its own session; the PostgreSQL server is the test suite's
//! own ([`dsh_tests::postgres::PgServer`], with `fsync=off` like the tests,
//! so the figure is the store's own cost, not the disk's). After
//! criterion's report, prints events per second and per-turn latency of
//! each store and their ratio.
//!
//! Run: `cargo bench --bench session_store` (needs the `postgresql`
//! package; says so and measures only the files without it).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // a benchmark reports and fails loudly

use std::time::{Duration, Instant};

use criterion::Criterion;
use dsh_host::session::postgres::{PgOptions, PgStore};
use dsh_host::session::{
    FileStore, SessionEvent, SessionHeader, SessionLog, SessionStore, TurnEndReason, TurnKind,
};
use dsh_tests::postgres::PgServer;
use serde_json::json;

const EVENTS_PER_TURN: u32 = 7;

fn one_turn(log: &mut SessionLog, n: u64) {
    let turn = format!("turn_{n}");
    log.append(SessionEvent::turn_start(&turn, TurnKind::Prompt))
        .unwrap();
    for event in [
        json!({"type": "user/message", "content": "list the files", "source": {"kind": "user"}}),
        json!({"type": "assistant/message", "content": "", "tool_calls": [{"id": format!("c{n}"), "name": "Bash", "arguments": {"command": "ls"}}]}),
        json!({"type": "tool/call", "call_id": format!("c{n}"), "name": "Bash", "arguments": {"command": "ls"}}),
        json!({"type": "tool/result", "call_id": format!("c{n}"), "name": "Bash", "content": "a\nb\nc\n", "is_error": false}),
        json!({"type": "assistant/message", "content": "three files", "tool_calls": []}),
    ] {
        log.append(SessionEvent::from_value(event)).unwrap();
    }
    log.append(SessionEvent::turn_end(
        &turn,
        TurnEndReason::Completed,
        None,
    ))
    .unwrap();
    log.sync().unwrap();
}

fn median_turn(c: &mut Criterion, name: &str, store: &dyn SessionStore) -> Duration {
    let id = format!("bench-{name}-{}", std::process::id());
    let mut log = SessionLog::create_in(store, SessionHeader::new(&id, "/tmp")).unwrap();
    let mut n = 0u64;
    let mut samples: Vec<Duration> = Vec::new();
    c.bench_function(
        &format!("one turn ({EVENTS_PER_TURN} events + sync): {name}"),
        |b| {
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    n += 1;
                    one_turn(&mut log, n);
                }
                let took = started.elapsed();
                samples.push(took / iters.max(1) as u32);
                took
            })
        },
    );
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let dir = tempfile::tempdir().unwrap();
    let files = median_turn(&mut c, "jsonl", &FileStore::new(dir.path()));
    let Some(pg) = PgServer::start() else {
        println!("files: {files:?} per turn; PostgreSQL not measured");
        return;
    };
    let store = PgStore::connect(&PgOptions::new(&pg.url())).unwrap();
    let postgres = median_turn(&mut c, "postgres", &store);
    c.final_summary();
    let per_second = |t: Duration| f64::from(EVENTS_PER_TURN) / t.as_secs_f64();
    println!();
    println!(
        "jsonl:    {:>10.0} events/s, {:>8.1} µs per turn",
        per_second(files),
        files.as_secs_f64() * 1e6
    );
    println!(
        "postgres: {:>10.0} events/s, {:>8.1} µs per turn",
        per_second(postgres),
        postgres.as_secs_f64() * 1e6
    );
    println!(
        "postgres/jsonl: {:.2}x the time per turn ({:+.1} µs added per turn)",
        postgres.as_secs_f64() / files.as_secs_f64(),
        (postgres.as_secs_f64() - files.as_secs_f64()) * 1e6
    );
}
