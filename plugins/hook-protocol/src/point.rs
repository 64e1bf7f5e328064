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
use tracing::{debug, warn};

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
    let futures = invocations.into_iter().map(|inv| {
        let answer = match inv.request {
            Ok(request) => {
                debug!(command = %inv.command, "starting hook");
                host.run(request)
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
        async move {
            let mut answer = answer.await;
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
            HookRun {
                index: inv.index,
                command: inv.command,
                matcher: inv.matcher,
                source: inv.source,
                answer,
                outcome,
                detail,
            }
        }
    });
    join_all(futures).await
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
        let mut recs = vec![
            records::invoked(dialect, event, run),
            records::result(dialect, event, run),
        ];
        recs.extend(records::notices(dialect, event, run));
        for rec in recs {
            if let Err(e) = host.append_record(session_id, &rec) {
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
