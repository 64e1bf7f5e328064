//! Running every hook of one point.
//!
//! All matching hooks start concurrently and the point waits for all of
//! them (a timed-out hook is killed by the runner and fails open; one whose
//! output passes the limit is killed and blocks, its stderr replaced by
//! the error). The
//! bridge then interprets each answer and calls [`record`], which appends
//! the `hook/invoked` + `hook/result` pair of every hook, adjacent and in
//! config order, whatever order the processes finished in.

use futures::future::join_all;
use tracing::{Instrument as _, debug, warn};

use crate::Dialect;
use crate::codec::Exit;
use crate::records;
use crate::runner::{HookHost, RunAnswer, RunRequest};

/// One hook the point will run (or refuse to run).
#[derive(Clone, Debug)]
pub struct Invocation {
    /// Position of the hook in the bridge's config (for records).
    pub index: usize,
    /// The command string as configured.
    pub command: String,
    /// The raw matcher of its group, if any.
    pub matcher: Option<String>,
    /// The config file it came from.
    pub source: String,
    /// The process to run, or why the hook is refused without running
    /// (the message becomes its stderr, as the real CLI reports it).
    pub request: Result<RunRequest, String>,
    /// For an `http` or `socket` hook, where `request` is sent instead of
    /// being run as a process.
    pub transport: Option<crate::transport::Handler>,
}

/// How a hook's answer was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ran and answered (or said nothing).
    Success,
    /// Blocked or denied the point.
    Blocked,
    /// Failed without blocking: other exit, signal, invalid output.
    NonBlockingError,
    /// Killed on timeout; failed open.
    TimedOut,
    /// Never started: refused by the bridge or the runner could not spawn it.
    NotStarted,
}

impl Outcome {
    /// Name used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Blocked => "blocked",
            Outcome::NonBlockingError => "non_blocking_error",
            Outcome::TimedOut => "timed_out",
            Outcome::NotStarted => "not_started",
        }
    }

    /// The outcome the exit alone implies; bridges refine it once they read
    /// the output (a JSON deny is `Blocked`, invalid JSON an error).
    pub fn of_exit(exit: &Exit) -> Outcome {
        match exit {
            Exit::Success => Outcome::Success,
            Exit::Block | Exit::OutputTooLarge { .. } => Outcome::Blocked,
            Exit::Failed { .. } | Exit::Signaled { .. } => Outcome::NonBlockingError,
            Exit::TimedOut => Outcome::TimedOut,
            Exit::SpawnFailed { .. } => Outcome::NotStarted,
        }
    }
}

/// One finished hook: what ran and what it answered.
#[derive(Clone, Debug)]
pub struct HookRun {
    /// Position in the bridge's config.
    pub index: usize,
    /// The command string.
    pub command: String,
    /// The raw matcher of its group.
    pub matcher: Option<String>,
    /// The config file it came from.
    pub source: String,
    /// The runner's answer.
    pub answer: RunAnswer,
    /// How the bridge took it (defaults to [`Outcome::of_exit`]).
    pub outcome: Outcome,
    /// Why the output was rejected, or other detail for the log.
    pub detail: Option<String>,
    /// When it finished among the runs of its point: 0 first. Claude Code
    /// reads the answers of one point in this order.
    pub finished: usize,
}

/// The indices of `runs` in the order they finished.
pub fn completion_order(runs: &[HookRun]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| runs[i].finished);
    order
}

impl HookRun {
    /// The exit classification of the answer.
    pub fn exit(&self) -> Exit {
        Exit::of(&self.answer)
    }
}

/// Runs every invocation concurrently and waits for all of them. The
/// result keeps the invocations' order.
pub async fn run_all(host: &dyn HookHost, invocations: Vec<Invocation>) -> Vec<HookRun> {
    let done = std::sync::atomic::AtomicUsize::new(0);
    let done = &done;
    let futures = invocations.into_iter().map(|inv| {
        let span = hook_span(&inv);
        let answer = match inv.request {
            Ok(request) => {
                debug!(command = %inv.command, "starting hook");
                match inv.transport {
                    Some(handler) => host.send(handler, request),
                    None => host.run(request),
                }
            }
            Err(message) => {
                let refused = RunAnswer {
                    exit_code: Some(1),
                    stderr: message.clone(),
                    spawn_error: Some(message),
                    ..RunAnswer::default()
                };
                Box::pin(async move { refused })
            }
        };
        let span_for_future = span.clone();
        async move {
            let mut answer = answer.await;
            let finished = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let exit = Exit::of(&answer);
            let outcome = Outcome::of_exit(&exit);
            let mut detail = None;
            if let Exit::OutputTooLarge { stream } = exit {
                // The answer is unreadable: its stderr becomes the reason
                // of the block, and the cut output is not kept around.
                let message = crate::codec::output_too_large_message(stream);
                warn!(command = %inv.command, "{message}");
                answer.stdout.clear();
                answer.stderr = message.clone();
                detail = Some(message);
            }
            span.record("outcome", outcome.as_str());
            span.record("duration_ms", answer.duration_ms);
            match (answer.exit_code, answer.signal) {
                (Some(code), _) => span.record("exit", code),
                (None, Some(signal)) => span.record("exit", format!("signal {signal}").as_str()),
                (None, None) => span.record("exit", "none"),
            };
            HookRun {
                index: inv.index,
                command: inv.command,
                matcher: inv.matcher,
                source: inv.source,
                answer,
                outcome,
                detail,
                finished,
            }
        }
        .instrument(span_for_future)
    });
    join_all(futures).await
}

/// The `hook` span of one run (telemetry; disabled, and free, unless an
/// exporter listens): the hook event (from the payload's
/// `hook_event_name`), the matcher, a hash of the command (FNV-1a, 64 bits,
/// hex: the command itself may hold secrets), then the exit, the outcome
/// and the duration.
fn hook_span(inv: &Invocation) -> tracing::Span {
    let span = tracing::trace_span!(
        "hook",
        event = tracing::field::Empty,
        matcher = inv.matcher.as_deref().unwrap_or(""),
        command_hash = %command_hash(&inv.command),
        exit = tracing::field::Empty,
        outcome = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
    );
    if !span.is_disabled()
        && let Ok(request) = &inv.request
        && let Ok(payload) = serde_json::from_str::<serde_json::Value>(&request.stdin)
        && let Some(event) = payload.get("hook_event_name").and_then(|e| e.as_str())
    {
        span.record("event", event);
    }
    span
}

/// FNV-1a (64 bits) of `command`, as 16 hex digits.
pub fn command_hash(command: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in command.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Appends the `hook/invoked` + `hook/result` pair of every run, in order.
///
/// Outside a turn the host has no log to append to; that is expected for
/// session start and end, so failures are only logged at debug level.
pub fn record(
    host: &dyn HookHost,
    session_id: &str,
    dialect: Dialect,
    event: &str,
    runs: &[HookRun],
) {
    for run in runs {
        let appended = match records::pair_text(dialect, event, run) {
            Ok(pair) => pair
                .iter()
                .map(|text| host.append_record_text(session_id, text))
                .collect::<Vec<_>>(),
            Err(e) => vec![Err(format!("cannot encode a hook record: {e}"))],
        };
        let notices = records::notices(dialect, event, run);
        for result in appended.into_iter().chain(
            notices
                .iter()
                .map(|rec| host.append_record(session_id, rec)),
        ) {
            if let Err(e) = result {
                debug!(session = %session_id, error = %e, "hook record not appended");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{BoxFuture, hook_request};
    use serde_json::Value;
    use std::sync::Mutex;

    /// A host whose "processes" answer at once from their command name:
    /// `deny` exits 2, anything else exits 0.
    #[derive(Default)]
    struct Scripted {
        records: Mutex<Vec<Value>>,
        started: Mutex<Vec<String>>,
    }

    impl HookHost for Scripted {
        fn run(&self, request: RunRequest) -> BoxFuture<RunAnswer> {
            let cmd = request.program.last().cloned().unwrap_or_default();
            self.started.lock().unwrap().push(cmd.clone());
            let deny = cmd == "deny";
            Box::pin(async move {
                RunAnswer {
                    exit_code: Some(if deny { 2 } else { 0 }),
                    stderr: if deny { "no\n".into() } else { String::new() },
                    ..RunAnswer::default()
                }
            })
        }
        fn inject_context(&self, _: &str, _: &str) -> Result<(), String> {
            Ok(())
        }
        fn append_record(&self, _: &str, record: &Value) -> Result<(), String> {
            self.records.lock().unwrap().push(record.clone());
            Ok(())
        }
        fn halt_turn(&self, _: &str, _: &str) -> Result<(), String> {
            Ok(())
        }
        fn warn(&self, _: &str) {}
        fn report_problem(&self, _: dsh_plugin_api::ConfigProblem) {}
    }

    fn inv(index: usize, cmd: &str) -> Invocation {
        Invocation {
            index,
            command: cmd.into(),
            matcher: None,
            source: "/cfg.json".into(),
            request: Ok(hook_request(
                vec!["/bin/sh".into(), "-c".into(), cmd.into()],
                "/",
                String::new(),
                1,
            )),
            transport: None,
        }
    }

    #[test]
    fn runs_keep_config_order_and_records_stay_adjacent() {
        let host = Scripted::default();
        let mut refused = inv(2, "refused");
        refused.request = Err("Failed to run: nope".into());
        let runs = futures::executor::block_on(run_all(
            &host,
            vec![inv(0, "ok"), inv(1, "deny"), refused],
        ));
        assert_eq!(runs.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(runs[0].outcome, Outcome::Success);
        assert_eq!(runs[1].outcome, Outcome::Blocked);
        assert_eq!(runs[2].outcome, Outcome::NotStarted);
        assert_eq!(runs[2].answer.stderr, "Failed to run: nope");
        assert_eq!(*host.started.lock().unwrap(), ["ok", "deny"]);

        record(&host, "s1", Dialect::Claude, "PreToolUse", &runs);
        let recs = host.records.lock().unwrap();
        let kinds: Vec<(String, u64)> = recs
            .iter()
            .map(|r| {
                (
                    r["type"].as_str().unwrap().to_string(),
                    r["index"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("hook/invoked".to_string(), 0),
                ("hook/result".to_string(), 0),
                ("hook/invoked".to_string(), 1),
                ("hook/result".to_string(), 1),
                ("hook/invoked".to_string(), 2),
                ("hook/result".to_string(), 2),
            ]
        );
        assert_eq!(recs[3]["outcome"], "blocked");
        assert_eq!(recs[3]["exit_code"], 2);
        assert_eq!(recs[0]["dialect"], "claude");
    }
}
