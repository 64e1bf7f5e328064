//! Unit tests of the seam bus with in-process listeners and guards: order
//! by manifest position, short-circuit, failure attribution, notification
//! containment, guards, time limits, and what a built bus holds.

use std::sync::{Arc, Mutex};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{
    Guard, Guard_TO, Listener, Listener_TO, NextBox, SeamResult, WireResult,
};
use dsh_plugin_api::{
    GuardDecision, GuardDecision_NE, PostExecuteInput, PreToolDecision, Seam, SeamInput,
    SeamInput_NE, SeamOutput, SessionRef, ToolCall, ToolResult,
};
use futures::executor::block_on;

use super::{BusRegistrations, GuardVerdict, ListenerFailure, Owner, SeamBus, TerminalFn};

type Log = Arc<Mutex<Vec<String>>>;

/// Plugins' bus registrations, to build buses from.
#[derive(Default)]
struct Plugins(Mutex<Vec<(Owner, BusRegistrations)>>);

impl Plugins {
    /// The registrations of `owner` (by id), added on first use.
    fn of(&self, owner: Owner, register: impl FnOnce(&mut BusRegistrations)) {
        let mut plugins = self.0.lock().unwrap();
        let at = match plugins.iter().position(|(o, _)| o.id == owner.id) {
            Some(at) => at,
            None => {
                plugins.push((owner, BusRegistrations::default()));
                plugins.len() - 1
            }
        };
        register(&mut plugins[at].1);
    }

    fn listen(&self, owner: Owner, seam: Seam, listener: dsh_plugin_api::ffi::ListenerBox) {
        self.of(owner, |r| r.listen(seam, listener));
    }

    fn guard(&self, owner: Owner, guard: dsh_plugin_api::ffi::GuardBox) {
        self.of(owner, |r| r.guard(guard));
    }

    /// The bus of every plugin so far.
    fn bus(&self) -> SeamBus {
        let plugins = self.0.lock().unwrap();
        SeamBus::build(plugins.iter().map(|(o, r)| (o, r)))
    }
}

fn owner(id: &str, position: u32) -> Owner {
    Owner::new(id, position)
}

/// What a test listener does after logging its name.
#[derive(Clone)]
enum Act {
    Delegate,
    Answer(PreToolDecision),
    Fail(&'static str),
    /// Never answers.
    Hang,
    /// Sleeps on the runtime's timer for this long, then allows.
    Slow(std::time::Duration),
}

struct Recorder {
    name: &'static str,
    log: Log,
    act: Act,
}

impl Listener for Recorder {
    fn call(&self, _input: SeamInput_NE, next: NextBox) -> FfiFuture<WireResult> {
        self.log.lock().unwrap().push(self.name.to_string());
        match &self.act {
            Act::Delegate => next.run(ROption::RNone),
            Act::Answer(decision) => {
                let decision = decision.clone();
                async move { RResult::ROk(SeamOutput::PreTool(decision).into()) }.into_ffi()
            }
            Act::Fail(message) => {
                let message = RString::from(*message);
                async move { RResult::RErr(message) }.into_ffi()
            }
            Act::Hang => std::future::pending().into_ffi(),
            Act::Slow(wait) => {
                let wait = *wait;
                async move {
                    tokio::time::sleep(wait).await;
                    RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()).into())
                }
                .into_ffi()
            }
        }
    }
}

fn listen(bus: &Plugins, seam: Seam, id: &'static str, position: u32, log: &Log, act: Act) {
    let listener = Recorder {
        name: id,
        log: log.clone(),
        act,
    };
    bus.listen(
        owner(id, position),
        seam,
        Listener_TO::from_value(listener, TD_Opaque),
    );
}

pub(super) fn call() -> RArc<ToolCall> {
    RArc::new(ToolCall {
        session: SessionRef {
            session_id: "s".into(),
            cwd: "/".into(),
            log_path: "/s.jsonl".into(),
            permission_mode: "default".into(),
            turn_id: "t".into(),
            prompt_id: "p".into(),
            parent_session_id: ROption::RNone,
            agent_type: ROption::RNone,
        },
        call_id: "c1".into(),
        name: "Bash".into(),
        arguments: "{}".into(),
        parent: ROption::RNone,
    })
}

/// Runs a pre-execute waterfall whose terminal logs `terminal` and allows.
fn pre_execute(bus: &Plugins, log: &Log) -> SeamResult {
    let log = log.clone();
    let terminal = TerminalFn(
        move |_| -> futures::future::BoxFuture<'static, SeamResult> {
            log.lock().unwrap().push("terminal".into());
            Box::pin(async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) })
        },
    );
    block_on(
        bus.bus()
            .waterfall(SeamInput::PreExecute(call()), Arc::new(terminal)),
    )
}

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn waterfall_runs_listeners_by_manifest_position_then_registration() {
    let (bus, log) = (Plugins::default(), Log::default());
    listen(&bus, Seam::PreExecute, "c", 2, &log, Act::Delegate);
    listen(&bus, Seam::PreExecute, "a", 0, &log, Act::Delegate);
    listen(&bus, Seam::PreExecute, "b", 1, &log, Act::Delegate);
    listen(&bus, Seam::PreExecute, "a-again", 0, &log, Act::Delegate);
    let result = pre_execute(&bus, &log);
    assert_eq!(
        result,
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
    );
    assert_eq!(taken(&log), ["a", "a-again", "b", "c", "terminal"]);
}

#[test]
fn a_listener_that_does_not_call_next_short_circuits() {
    let (bus, log) = (Plugins::default(), Log::default());
    let deny = PreToolDecision::Deny {
        reason: "no".into(),
    };
    listen(&bus, Seam::PreExecute, "a", 0, &log, Act::Delegate);
    listen(
        &bus,
        Seam::PreExecute,
        "b",
        1,
        &log,
        Act::Answer(deny.clone()),
    );
    listen(&bus, Seam::PreExecute, "c", 2, &log, Act::Delegate);
    assert_eq!(
        pre_execute(&bus, &log),
        RResult::ROk(SeamOutput::PreTool(deny))
    );
    assert_eq!(taken(&log), ["a", "b"]);
}

#[test]
fn a_failing_listener_fails_the_waterfall_naming_its_plugin_once() {
    let (bus, log) = (Plugins::default(), Log::default());
    listen(&bus, Seam::PreExecute, "a", 0, &log, Act::Delegate);
    listen(&bus, Seam::PreExecute, "b", 1, &log, Act::Fail("boom"));
    assert_eq!(
        pre_execute(&bus, &log),
        RResult::RErr("plugin `b`: boom".into())
    );
    assert_eq!(taken(&log), ["a", "b"]);
}

#[test]
fn a_listener_cannot_pass_its_failure_off_as_another_plugins() {
    let (bus, log) = (Plugins::default(), Log::default());
    listen(&bus, Seam::PreExecute, "a", 0, &log, Act::Delegate);
    listen(
        &bus,
        Seam::PreExecute,
        "b",
        1,
        &log,
        Act::Fail("plugin `a`: forged"),
    );
    assert_eq!(
        pre_execute(&bus, &log),
        RResult::RErr("plugin `b`: plugin `a`: forged".into())
    );
}

#[test]
fn an_empty_waterfall_is_its_terminal() {
    let (bus, log) = (Plugins::default(), Log::default());
    assert_eq!(
        pre_execute(&bus, &log),
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
    );
    assert_eq!(taken(&log), ["terminal"]);
}

#[test]
fn notify_runs_every_listener_and_contains_failures() {
    let (bus, log) = (Plugins::default(), Log::default());
    listen(&bus, Seam::ToolResult, "a", 0, &log, Act::Fail("disk full"));
    listen(&bus, Seam::ToolResult, "b", 1, &log, Act::Delegate);
    listen(&bus, Seam::ToolResult, "c", 2, &log, Act::Fail("nope"));
    let input = SeamInput::ToolResult(RArc::new(PostExecuteInput {
        call: call(),
        result: ToolResult::text("ok"),
        denied: false,
    }));
    let failures = block_on(bus.bus().notify(input));
    assert_eq!(taken(&log), ["a", "b", "c"]);
    assert_eq!(
        failures,
        vec![
            ListenerFailure {
                plugin: Arc::from("a"),
                message: "disk full".into()
            },
            ListenerFailure {
                plugin: Arc::from("c"),
                message: "nope".into()
            },
        ]
    );
}

#[test]
fn a_listener_over_its_limit_fails_the_chain_while_time_in_next_is_not_charged() {
    use std::time::Duration;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let log = Log::default();
    let limited = |id: &'static str, position, limit_ms| {
        owner(id, position).with_calls(super::CallPolicy {
            timeout: Some(Duration::from_millis(limit_ms)),
            threads: None,
        })
    };
    let add = |bus: &Plugins, owner: Owner, act: Act| {
        let listener = Recorder {
            name: "x",
            log: log.clone(),
            act,
        };
        bus.listen(
            owner,
            Seam::PreExecute,
            Listener_TO::from_value(listener, TD_Opaque),
        );
    };
    let terminal = || -> Arc<dyn super::Terminal> {
        Arc::new(TerminalFn(
            |_| -> futures::future::BoxFuture<'static, SeamResult> {
                Box::pin(async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow())) })
            },
        ))
    };

    // A delegating listener with a 50 ms limit in front of one that takes
    // 300 ms (its own limit is 10 s): the first one's clock is stopped.
    let bus = Plugins::default();
    add(&bus, limited("front", 0, 50), Act::Delegate);
    add(
        &bus,
        limited("slow", 1, 10_000),
        Act::Slow(Duration::from_millis(300)),
    );
    let traced = runtime.block_on(
        bus.bus()
            .waterfall_traced(SeamInput::PreExecute(call()), terminal()),
    );
    assert_eq!(
        traced.answer,
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
    );
    assert!(traced.timed_out.is_empty());

    // One that never answers is cut off at its limit, named once.
    let bus = Plugins::default();
    add(&bus, limited("front", 0, 10_000), Act::Delegate);
    add(&bus, limited("hang", 1, 50), Act::Hang);
    let traced = runtime.block_on(
        bus.bus()
            .waterfall_traced(SeamInput::PreExecute(call()), terminal()),
    );
    let cut = "did not answer within 0.05 s (listener_timeout_s); the call failed closed";
    assert_eq!(
        traced.answer,
        RResult::RErr(format!("plugin `hang`: {cut}").into())
    );
    assert_eq!(
        traced.timed_out,
        [ListenerFailure {
            plugin: Arc::from("hang"),
            message: cut.into()
        }]
    );
}

struct TestGuard(Result<GuardDecision, &'static str>);

impl Guard for TestGuard {
    fn check(&self, _call: RArc<ToolCall>) -> RResult<GuardDecision_NE, RString> {
        match &self.0 {
            Ok(decision) => RResult::ROk(decision.clone().into()),
            Err(message) => RResult::RErr((*message).into()),
        }
    }
}

fn guard(bus: &Plugins, id: &str, position: u32, answer: Result<GuardDecision, &'static str>) {
    bus.guard(
        owner(id, position),
        Guard_TO::from_value(TestGuard(answer), TD_Opaque),
    );
}

fn deny(reason: &str) -> GuardDecision {
    GuardDecision::Deny {
        reason: reason.into(),
    }
}

#[test]
fn guards_abstain_together_and_the_first_deny_wins() {
    let bus = Plugins::default();
    assert_eq!(
        block_on(bus.bus().check_guards(&call())),
        GuardVerdict::Abstain
    );
    guard(&bus, "quiet", 0, Ok(GuardDecision::Abstain));
    assert_eq!(
        block_on(bus.bus().check_guards(&call())),
        GuardVerdict::Abstain
    );
    guard(&bus, "late", 5, Ok(deny("late")));
    guard(&bus, "early", 1, Ok(deny("early")));
    assert_eq!(
        block_on(bus.bus().check_guards(&call())),
        GuardVerdict::Deny {
            plugin: Arc::from("early"),
            reason: "early".into()
        }
    );
    assert_eq!(bus.bus().listener_count(Seam::Guard), 3);
}

#[test]
fn a_failing_guard_denies() {
    let bus = Plugins::default();
    guard(&bus, "quiet", 0, Ok(GuardDecision::Abstain));
    guard(&bus, "broken", 1, Err("no answer"));
    guard(&bus, "later", 2, Ok(deny("later")));
    assert_eq!(
        block_on(bus.bus().check_guards(&call())),
        GuardVerdict::Deny {
            plugin: Arc::from("broken"),
            reason: "guard of plugin `broken` failed: no answer".into()
        }
    );
}

#[test]
fn a_bus_knows_each_plugins_seams_and_counts_listeners_per_seam() {
    let (bus, log) = (Plugins::default(), Log::default());
    listen(&bus, Seam::PreExecute, "a", 0, &log, Act::Delegate);
    listen(&bus, Seam::ToolResult, "a", 0, &log, Act::Delegate);
    guard(&bus, "a", 0, Ok(deny("a")));
    listen(&bus, Seam::PreExecute, "b", 1, &log, Act::Delegate);
    let built = bus.bus();
    assert_eq!(
        built.seams_of("a"),
        [Seam::PreExecute, Seam::Guard, Seam::ToolResult]
    );
    assert_eq!(built.seams_of("b"), [Seam::PreExecute]);
    assert!(built.seams_of("c").is_empty());
    assert_eq!(built.listener_count(Seam::PreExecute), 2);
    assert_eq!(built.listener_count(Seam::ToolResult), 1);
    assert_eq!(built.listener_count(Seam::Guard), 1);
    assert_eq!(built.listener_count(Seam::PromptSubmit), 0);
}
