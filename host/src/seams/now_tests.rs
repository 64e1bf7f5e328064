//! Unit tests of listeners that answer at once (`Listener::call_now`,
//! plugin API 1.5): a pass goes on to the next listener without the
//! listener's asynchronous call, an answer short-circuits, a failure names
//! its plugin, and what the chain answers and traces is exactly what it
//! answers and traces when the same listener delegates asynchronously.

use std::sync::{Arc, Mutex};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{ROption, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Immediate, Listener, Listener_TO, NextBox, SeamResult, WireResult};
use dsh_plugin_api::{PreToolDecision, Seam, SeamInput, SeamInput_NE, SeamOutput};
use futures::executor::block_on;

use super::{BusRegistrations, Owner, SeamBus, Terminal, TerminalFn, Traced};

type Log = Arc<Mutex<Vec<String>>>;

/// What a test listener answers at once.
#[derive(Clone)]
enum AtOnce {
    Later,
    Pass,
    Answer(PreToolDecision),
    Fail(&'static str),
}

/// What a test listener's asynchronous call does.
#[derive(Clone)]
enum Call {
    Delegate,
    Answer(PreToolDecision),
}

struct Both {
    name: &'static str,
    log: Log,
    now: AtOnce,
    call: Call,
}

impl Listener for Both {
    fn call(&self, _input: SeamInput_NE, next: NextBox) -> FfiFuture<WireResult> {
        self.log.lock().unwrap().push(self.name.to_string());
        match &self.call {
            Call::Delegate => next.run(ROption::RNone),
            Call::Answer(decision) => {
                let decision = decision.clone();
                async move { RResult::ROk(SeamOutput::PreTool(decision).into()) }.into_ffi()
            }
        }
    }

    fn call_now(&self, input: &SeamInput_NE) -> Immediate {
        assert!(
            matches!(input.as_enum(), Ok(SeamInput::PreExecute(_))),
            "asked with the waterfall's input"
        );
        self.log.lock().unwrap().push(format!("{}:now", self.name));
        match &self.now {
            AtOnce::Later => Immediate::Later,
            AtOnce::Pass => Immediate::Pass,
            AtOnce::Answer(decision) => {
                Immediate::Answer(RResult::ROk(SeamOutput::PreTool(decision.clone()).into()))
            }
            AtOnce::Fail(message) => Immediate::Answer(RResult::RErr(RString::from(*message))),
        }
    }
}

/// A bus of one listener per `(name, at once, call)`, in that order.
fn bus(log: &Log, listeners: &[(&'static str, AtOnce, Call)]) -> SeamBus {
    let plugins: Vec<(Owner, BusRegistrations)> = listeners
        .iter()
        .enumerate()
        .map(|(position, (name, now, call))| {
            let mut registered = BusRegistrations::default();
            registered.listen(
                Seam::PreExecute,
                Listener_TO::from_value(
                    Both {
                        name,
                        log: log.clone(),
                        now: now.clone(),
                        call: call.clone(),
                    },
                    TD_Opaque,
                ),
            );
            (Owner::new(name, position as u32), registered)
        })
        .collect();
    SeamBus::build(plugins.iter().map(|(o, r)| (o, r)))
}

/// A terminal that logs `terminal` and answers `answer`.
fn terminal(log: &Log, answer: SeamResult) -> Arc<dyn Terminal> {
    let log = log.clone();
    Arc::new(TerminalFn(
        move |_| -> futures::future::BoxFuture<'static, SeamResult> {
            log.lock().unwrap().push("terminal".into());
            let answer = answer.clone();
            Box::pin(async move { answer })
        },
    ))
}

fn allow() -> SeamResult {
    RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
}

fn deny(reason: &str) -> PreToolDecision {
    PreToolDecision::Deny {
        reason: reason.into(),
    }
}

fn pre_execute(bus: &SeamBus, log: &Log, end: SeamResult) -> SeamResult {
    block_on(bus.waterfall(
        SeamInput::PreExecute(super::tests::call()),
        terminal(log, end),
    ))
}

fn traced(bus: &SeamBus, log: &Log, end: SeamResult) -> Traced {
    block_on(bus.waterfall_traced(
        SeamInput::PreExecute(super::tests::call()),
        terminal(log, end),
    ))
}

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn listeners_that_pass_at_once_are_not_called_and_the_chain_goes_on() {
    let log = Log::default();
    let bus = bus(
        &log,
        &[
            ("a", AtOnce::Pass, Call::Answer(deny("a's call ran"))),
            ("b", AtOnce::Pass, Call::Answer(deny("b's call ran"))),
            ("c", AtOnce::Later, Call::Delegate),
            ("d", AtOnce::Pass, Call::Answer(deny("d's call ran"))),
        ],
    );
    assert_eq!(pre_execute(&bus, &log, allow()), allow());
    assert_eq!(
        taken(&log),
        ["a:now", "b:now", "c:now", "c", "d:now", "terminal"]
    );
}

#[test]
fn an_answer_at_once_short_circuits_the_rest() {
    let log = Log::default();
    let bus = bus(
        &log,
        &[
            ("a", AtOnce::Pass, Call::Delegate),
            ("b", AtOnce::Answer(deny("no")), Call::Delegate),
            ("c", AtOnce::Pass, Call::Delegate),
        ],
    );
    assert_eq!(
        pre_execute(&bus, &log, allow()),
        RResult::ROk(SeamOutput::PreTool(deny("no")))
    );
    assert_eq!(taken(&log), ["a:now", "b:now"]);
}

#[test]
fn a_failure_at_once_fails_the_chain_naming_its_plugin_once() {
    let log = Log::default();
    let bus = bus(
        &log,
        &[
            ("a", AtOnce::Pass, Call::Delegate),
            ("b", AtOnce::Later, Call::Delegate),
            ("c", AtOnce::Fail("boom"), Call::Delegate),
        ],
    );
    assert_eq!(
        pre_execute(&bus, &log, allow()),
        RResult::RErr("plugin `c`: boom".into())
    );
    assert_eq!(taken(&log), ["a:now", "b:now", "b", "c:now"]);
}

/// The same chain twice: `a` and `c` delegating through their calls, then
/// passing at once; answers and traces must be the same. Returns how many
/// trace entries there were.
fn same_as_delegating(middle: Call, end: SeamResult) -> usize {
    let log = Log::default();
    let chain = |form: AtOnce| {
        bus(
            &log,
            &[
                ("a", form.clone(), Call::Delegate),
                ("b", AtOnce::Later, middle.clone()),
                ("c", form, Call::Delegate),
            ],
        )
    };
    let delegating = traced(&chain(AtOnce::Later), &log, end.clone());
    let passing = traced(&chain(AtOnce::Pass), &log, end);
    assert_eq!(passing.answer, delegating.answer);
    let entries = |t: &Traced| -> Vec<(usize, String, SeamOutput)> {
        t.trace
            .iter()
            .map(|e| (e.index, e.plugin.to_string(), e.output.clone()))
            .collect()
    };
    assert_eq!(entries(&passing), entries(&delegating));
    entries(&delegating).len()
}

#[test]
fn passing_at_once_answers_and_traces_as_delegating_does() {
    // Every level (and the terminal) answered: all of them are traced.
    assert_eq!(same_as_delegating(Call::Delegate, allow()), 4);
    assert_eq!(
        same_as_delegating(Call::Answer(deny("b says no")), allow()),
        2
    );
    let rewrite = PreToolDecision::Allow {
        updated_arguments: ROption::RSome("{\"command\":\"ls\"}".into()),
    };
    assert_eq!(same_as_delegating(Call::Answer(rewrite), allow()), 2);
}

#[test]
fn a_terminal_failure_passed_at_once_is_attributed_as_when_delegated() {
    let failed: SeamResult = RResult::RErr("the core dispatch failed".into());
    // Failures are not traced; the answer (its attribution) is compared.
    assert_eq!(same_as_delegating(Call::Delegate, failed.clone()), 0);
    let log = Log::default();
    let bus = bus(&log, &[("a", AtOnce::Pass, Call::Delegate)]);
    assert_eq!(
        pre_execute(&bus, &log, failed),
        RResult::RErr("plugin `a`: the core dispatch failed".into())
    );
}
