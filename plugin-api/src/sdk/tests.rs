//! The SDK against an in-memory host context: which seams a plugin listens
//! on, panics caught at every entry point, typed and boundary answers, and
//! what an older build does with an input or a decision it does not know
//! (simulated with a "newer" copy of the boundary enums, transmuted the way
//! a value from a newer `.so` arrives).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::{Arc, Mutex};

use abi_stable::StableAbi;
use abi_stable::nonexhaustive_enum::NonExhaustive;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, ROption, RResult, RStr, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use futures::executor::block_on;

use crate::decisions::*;
use crate::ffi::*;
use crate::seams::*;
use crate::types::{LogLevel, SessionRef, ToolSpec};
use crate::{Host, Next, NoConfig, Plugin, listened, plugin_module};

/// What a plugin registered on the fake host.
#[derive(Default)]
struct Registered {
    listeners: Vec<(Seam, Arc<ListenerBox>)>,
    guards: Vec<Arc<GuardBox>>,
}

#[derive(Clone, Default)]
struct FakeHost(Arc<Mutex<Registered>>);

impl FakeHost {
    fn boxed(&self) -> HostContextBox {
        HostContext_TO::from_ptr(RArc::new(self.clone()), TD_Opaque)
    }

    fn listener(&self, seam: Seam) -> Arc<ListenerBox> {
        let registered = self.0.lock().unwrap();
        let found = registered.listeners.iter().find(|(s, _)| *s == seam);
        found
            .map(|(_, l)| l.clone())
            .expect("a listener on the seam")
    }

    fn seams(&self) -> Vec<Seam> {
        self.0
            .lock()
            .unwrap()
            .listeners
            .iter()
            .map(|(s, _)| *s)
            .collect()
    }
}

impl HostContext for FakeHost {
    fn plugin_id(&self) -> RString {
        "fake".into()
    }
    fn listen(&self, seam: Seam, listener: ListenerBox) -> RResult<(), RString> {
        self.0
            .lock()
            .unwrap()
            .listeners
            .push((seam, Arc::new(listener)));
        RResult::ROk(())
    }
    fn guard(&self, guard: GuardBox) -> RResult<(), RString> {
        self.0.lock().unwrap().guards.push(Arc::new(guard));
        RResult::ROk(())
    }
    fn register_tool(&self, _spec: ToolSpec, _body: ToolBodyBox) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn provide_service(&self, _name: RString, _service: ServiceBox) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn service(&self, _name: RStr<'_>) -> ROption<ServiceBox> {
        ROption::RNone
    }
    fn log(&self, _level: LogLevel, _message: RString) {}
    fn sleep(&self, _millis: u64) -> FfiFuture<()> {
        async {}.into_ffi()
    }
    fn inject_context(&self, _session_id: RString, _text: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn append_record(&self, _session_id: RString, _record: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn halt_turn(&self, _session_id: RString, _reason: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn state_dir(&self) -> RString {
        "/nonexistent".into()
    }
    fn stream_event(&self, _session_id: RString, _event: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn config_dir(&self) -> RString {
        "/nonexistent".into()
    }
}

/// A `next` that answers with a fixed wire result and counts its calls.
#[derive(Clone)]
struct FixedNext {
    answer: Arc<dyn Fn() -> WireResult + Send + Sync>,
    calls: Arc<Mutex<u32>>,
}

impl FixedNext {
    fn new(answer: impl Fn() -> WireResult + Send + Sync + 'static) -> Self {
        FixedNext {
            answer: Arc::new(answer),
            calls: Arc::default(),
        }
    }

    fn boxed(&self) -> NextBox {
        NextCall_TO::from_value(self.clone(), TD_Opaque)
    }

    fn calls(&self) -> u32 {
        *self.calls.lock().unwrap()
    }
}

impl NextCall for FixedNext {
    fn run(&self, _signal: ROption<AbortSignalBox>) -> FfiFuture<WireResult> {
        *self.calls.lock().unwrap() += 1;
        let answer = (self.answer)();
        async move { answer }.into_ffi()
    }
}

fn session() -> SessionRef {
    SessionRef {
        session_id: "ses".into(),
        cwd: "/".into(),
        log_path: "/ses.jsonl".into(),
        permission_mode: "default".into(),
        turn_id: String::new().into(),
        prompt_id: String::new().into(),
        parent_session_id: ROption::RNone,
        agent_type: ROption::RNone,
    }
}

fn call(arguments: &str) -> RArc<ToolCall> {
    RArc::new(ToolCall {
        session: session(),
        call_id: "c1".into(),
        name: "Bash".into(),
        arguments: arguments.into(),
        parent: ROption::RNone,
    })
}

fn pre_execute(arguments: &str) -> SeamInput_NE {
    SeamInput::PreExecute(call(arguments)).into()
}

fn allow() -> WireResult {
    RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()).into())
}

/// Applies `P` on a fresh fake host.
fn applied<P: Plugin>() -> (FakeHost, RResult<(), RString>) {
    let host = FakeHost::default();
    let outcome = (plugin_module::<P>().apply())(host.boxed(), "{}".into());
    (host, outcome)
}

/// Overrides nothing.
struct Silent;

impl Plugin for Silent {
    type Config = NoConfig;
    const NAME: &'static str = "silent";
    const VERSION: &'static str = "0";
    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Silent)
    }
}

/// Overrides one notification and one waterfall; the waterfall denies
/// `rm`, panics on `boom` and otherwise delegates.
struct Gate;

impl Plugin for Gate {
    type Config = NoConfig;
    const NAME: &'static str = "gate";
    const VERSION: &'static str = "0";
    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Gate)
    }
    async fn pre_execute(
        self: Arc<Self>,
        call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        if call.arguments.contains("boom") {
            panic!("gate exploded");
        }
        if call.arguments.contains("rm") {
            return Ok(PreToolDecision::Deny {
                reason: "no rm".into(),
            });
        }
        next.run().await
    }
    async fn tool_result(self: Arc<Self>, _input: RArc<PostExecuteInput>) -> Result<(), String> {
        Ok(())
    }
}

/// An override that does its work before returning `next`'s own future:
/// a different type from the default's, so it still counts as listening.
struct Counter(Mutex<u32>);

impl Plugin for Counter {
    type Config = NoConfig;
    const NAME: &'static str = "counter";
    const VERSION: &'static str = "0";
    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Counter(Mutex::new(0)))
    }
    #[allow(clippy::manual_async_fn)] // the point: not an `async fn`
    fn prompt_submit(
        self: Arc<Self>,
        _input: RArc<PromptSubmitInput>,
        next: Next<PromptDecision>,
    ) -> impl std::future::Future<Output = Result<PromptDecision, String>> + Send {
        *self.0.lock().unwrap() += 1;
        next.run()
    }
}

/// Overrides every seam method.
struct Everything;

impl Plugin for Everything {
    type Config = NoConfig;
    const NAME: &'static str = "everything";
    const VERSION: &'static str = "0";
    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Everything)
    }
    async fn session_start(self: Arc<Self>, _i: RArc<SessionStartInput>) -> Result<(), String> {
        Ok(())
    }
    async fn session_end(self: Arc<Self>, _i: RArc<SessionEndInput>) -> Result<(), String> {
        Ok(())
    }
    async fn prompt_submit(
        self: Arc<Self>,
        _i: RArc<PromptSubmitInput>,
        n: Next<PromptDecision>,
    ) -> Result<PromptDecision, String> {
        n.run().await
    }
    async fn pre_execute(
        self: Arc<Self>,
        _i: RArc<ToolCall>,
        n: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        n.run().await
    }
    async fn execute(
        self: Arc<Self>,
        _i: RArc<ExecuteInput>,
        n: crate::ExecuteNext,
    ) -> Result<ToolResult, String> {
        n.run(None).await
    }
    async fn post_execute(
        self: Arc<Self>,
        _i: RArc<PostExecuteInput>,
        n: Next<PostToolDecision>,
    ) -> Result<PostToolDecision, String> {
        n.run().await
    }
    async fn tool_result(self: Arc<Self>, _i: RArc<PostExecuteInput>) -> Result<(), String> {
        Ok(())
    }
    async fn turn_continuation(
        self: Arc<Self>,
        _i: RArc<ContinuationInput>,
        n: Next<ContinuationDecision>,
    ) -> Result<ContinuationDecision, String> {
        n.run().await
    }
    async fn subagent_start(self: Arc<Self>, _i: RArc<SubagentInfo>) -> Result<(), String> {
        Ok(())
    }
    async fn subagent_end(self: Arc<Self>, _i: RArc<SubagentInfo>) -> Result<(), String> {
        Ok(())
    }
    async fn turn_end(self: Arc<Self>, _i: RArc<TurnEndInput>) -> Result<(), String> {
        Ok(())
    }
    async fn cwd_changed(self: Arc<Self>, _i: RArc<CwdChangedInput>) -> Result<(), String> {
        Ok(())
    }
    async fn model_request(self: Arc<Self>, _i: RArc<ModelRequestInput>) -> Result<(), String> {
        Ok(())
    }
    async fn permission_request(
        self: Arc<Self>,
        _i: RArc<PermissionRequestInput>,
        next: Next<PermissionDecision>,
    ) -> Result<PermissionDecision, String> {
        next.run().await
    }
    async fn compact(
        self: Arc<Self>,
        _i: RArc<CompactInput>,
        next: Next<PromptDecision>,
    ) -> Result<PromptDecision, String> {
        next.run().await
    }
    async fn compacted(self: Arc<Self>, _i: RArc<CompactedInput>) -> Result<(), String> {
        Ok(())
    }
    async fn elicitation(
        self: Arc<Self>,
        _i: RArc<ElicitationInput>,
        next: Next<ElicitationDecision>,
    ) -> Result<ElicitationDecision, String> {
        next.run().await
    }
}

#[test]
fn a_plugin_listens_exactly_on_the_seams_it_overrides() {
    assert_eq!(listened::<Silent>(), Vec::<Seam>::new());
    assert_eq!(listened::<Gate>(), vec![Seam::PreExecute, Seam::ToolResult]);
    assert_eq!(listened::<Counter>(), vec![Seam::PromptSubmit]);
    // Every seam a plugin method stands for is derived; guards are
    // registered on the host instead.
    let every: Vec<Seam> = Seam::ALL
        .iter()
        .copied()
        .filter(|s| *s != Seam::Guard)
        .collect();
    assert_eq!(listened::<Everything>(), every);
    // And applying registers exactly those.
    let (host, outcome) = applied::<Gate>();
    assert_eq!(outcome, RResult::ROk(()));
    assert_eq!(host.seams(), vec![Seam::PreExecute, Seam::ToolResult]);
    let (host, outcome) = applied::<Silent>();
    assert_eq!(outcome, RResult::ROk(()));
    assert!(host.seams().is_empty());
}

#[test]
fn listener_decisions_cross_in_boundary_form_and_delegation_reaches_next() {
    let (host, _) = applied::<Gate>();
    let listener = host.listener(Seam::PreExecute);
    let next = FixedNext::new(allow);
    let denied = block_on(listener.call(pre_execute(r#"{"command":"rm x"}"#), next.boxed()));
    assert_eq!(
        typed_result(denied),
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
            reason: "no rm".into()
        }))
    );
    assert_eq!(next.calls(), 0, "a deny short-circuits");
    let allowed = block_on(listener.call(pre_execute(r#"{"command":"ls"}"#), next.boxed()));
    assert_eq!(typed_result(allowed), typed_result(allow()));
    assert_eq!(next.calls(), 1);
}

#[test]
fn panics_are_caught_at_every_entry_point() {
    let (host, _) = applied::<Gate>();
    let listener = host.listener(Seam::PreExecute);
    let next = FixedNext::new(allow);
    let failed = block_on(listener.call(pre_execute("boom"), next.boxed()));
    assert_eq!(
        failed,
        RResult::RErr("listener panicked: gate exploded".into())
    );

    struct PanicsInApply;
    impl Plugin for PanicsInApply {
        type Config = NoConfig;
        const NAME: &'static str = "panics";
        const VERSION: &'static str = "0";
        fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
            panic!("no config for you")
        }
    }
    let (_, outcome) = applied::<PanicsInApply>();
    assert_eq!(
        outcome,
        RResult::RErr("plugin panicked in apply: no config for you".into())
    );

    struct PanickyGuard;
    impl Plugin for PanickyGuard {
        type Config = NoConfig;
        const NAME: &'static str = "guard";
        const VERSION: &'static str = "0";
        fn apply(host: &Host, _config: NoConfig) -> Result<Self, String> {
            host.add_guard(|call: &ToolCall| {
                if call.arguments.contains("boom") {
                    panic!("guard exploded");
                }
                GuardDecision::Deny {
                    reason: "never".into(),
                }
            })?;
            Ok(PanickyGuard)
        }
    }
    let (host, outcome) = applied::<PanickyGuard>();
    assert_eq!(outcome, RResult::ROk(()));
    let guard = host.0.lock().unwrap().guards[0].clone();
    assert_eq!(
        guard.check(call("boom")),
        RResult::RErr("guard panicked: guard exploded".into())
    );
    let deny = guard.check(call("ls")).map(|d| d.into_enum().unwrap());
    assert_eq!(
        deny,
        RResult::ROk(GuardDecision::Deny {
            reason: "never".into()
        })
    );
}

#[test]
fn every_typed_answer_survives_the_boundary_unchanged() {
    let text = || RString::from("t");
    let answers = [
        SeamOutput::Observed,
        SeamOutput::Prompt(PromptDecision::allow()),
        SeamOutput::Prompt(PromptDecision::Allow {
            content: ROption::RSome(vec![crate::ContentBlock::text("x")].into()),
            additional_context: ROption::RSome(text()),
        }),
        SeamOutput::Prompt(PromptDecision::Block { reason: text() }),
        SeamOutput::Prompt(PromptDecision::allow_with_context("t")),
        SeamOutput::PreTool(PreToolDecision::allow()),
        SeamOutput::PreTool(PreToolDecision::Deny { reason: text() }),
        SeamOutput::PreTool(PreToolDecision::Ask {
            reason: ROption::RSome(text()),
        }),
        SeamOutput::Execute(ToolResult::error("e").with_structured("{}")),
        SeamOutput::PostTool(PostToolDecision::accept()),
        SeamOutput::PostTool(PostToolDecision::Block {
            feedback: text(),
            additional_context: ROption::RNone,
        }),
        SeamOutput::PostTool(PostToolDecision::accept_with_context("t")),
        SeamOutput::PostTool(
            PostToolDecision::Block {
                feedback: text(),
                additional_context: ROption::RNone,
            }
            .with_pieces(vec![crate::AuthoredContext::by("p", "t")]),
        ),
        SeamOutput::Continuation(ContinuationDecision::Stop),
        SeamOutput::Continuation(ContinuationDecision::Continue {
            reason: ROption::RSome(text()),
        }),
        SeamOutput::Continuation(ContinuationDecision::steer(vec!["a".into(), "b".into()])),
        SeamOutput::Permission(PermissionDecision::Ask),
        SeamOutput::Permission(PermissionDecision::Allow {
            updated_arguments: ROption::RSome(text()),
            updated_permissions: ROption::RSome(text()),
        }),
        SeamOutput::Permission(PermissionDecision::Deny {
            message: text(),
            interrupt: true,
        }),
        SeamOutput::Elicitation(ElicitationDecision::Accept {
            content: ROption::RSome(text()),
        }),
        SeamOutput::Elicitation(ElicitationDecision::Accept {
            content: ROption::RNone,
        }),
        SeamOutput::Elicitation(ElicitationDecision::Decline),
        SeamOutput::Elicitation(ElicitationDecision::Cancel),
    ];
    for answer in answers {
        let wire = SeamAnswer_NE::from(answer.clone());
        assert_eq!(SeamOutput::try_from(wire.clone()), Ok(answer.clone()));
        assert_eq!(
            typed_result(wire_result(RResult::ROk(answer.clone()))),
            RResult::ROk(answer)
        );
    }
    let input = ContinuationInput {
        session: session(),
        step_count: 1,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: 0,
        last_assistant_message: text(),
    };
    assert_eq!(input.default_decision(), Some(ContinuationDecision::Stop));
    assert!(input.default == ContinuationDecision::Stop);
}

/// The boundary enums as a later minor might declare them: the same
/// variants, then one more, in storage of the same size.
mod newer {
    #![allow(non_local_definitions, dead_code)]

    use super::*;

    #[repr(u8)]
    #[derive(StableAbi, Clone, Debug, PartialEq)]
    #[sabi(kind(WithNonExhaustive(size = [usize; 24], traits(Clone, Debug, PartialEq))))]
    pub enum SeamAnswer {
        Observed,
        Prompt(PromptDecision_NE),
        PreTool(PreToolDecision_NE),
        Execute(ToolResult),
        PostTool(PostToolDecision_NE),
        Continuation(ContinuationDecision_NE),
        Permission(PermissionDecision_NE),
        Elicitation(ElicitationDecision_NE),
        Later(RString),
    }

    #[repr(u8)]
    #[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
    #[sabi(kind(WithNonExhaustive(
        size = [usize; 16],
        traits(Clone, Debug, PartialEq, Eq)
    )))]
    pub enum PreToolDecision {
        Allow { updated_arguments: ROption<RString> },
        Deny { reason: RString },
        Ask { reason: ROption<RString> },
        Defer { until: RString },
    }

    #[repr(u8)]
    #[derive(StableAbi, Clone)]
    #[sabi(kind(WithNonExhaustive(size = [usize; 8], traits(Clone))))]
    pub enum SeamInput {
        SessionStart(RArc<SessionStartInput>),
        SessionEnd(RArc<SessionEndInput>),
        PromptSubmit(RArc<PromptSubmitInput>),
        PreExecute(RArc<ToolCall>),
        Execute(RArc<ExecuteInput>),
        PostExecute(RArc<PostExecuteInput>),
        ToolResult(RArc<PostExecuteInput>),
        TurnContinuation(RArc<ContinuationInput>),
        SubagentStart(RArc<SubagentInfo>),
        SubagentEnd(RArc<SubagentInfo>),
        TurnEnd(RArc<TurnEndInput>),
        CwdChanged(RArc<CwdChangedInput>),
        ModelRequest(RArc<ModelRequestInput>),
        PermissionRequest(RArc<PermissionRequestInput>),
        Compact(RArc<CompactInput>),
        Compacted(RArc<CompactedInput>),
        Elicitation(RArc<ElicitationInput>),
        Later(RArc<SessionEndInput>),
    }
}

/// A value of a newer build's enum, as this build receives it.
///
/// SAFETY (of every caller): `newer` mirrors this build's enum with
/// variants appended, storage of the same size and alignment and the same
/// trait set, which is the layout the loader's check guarantees for a
/// value from another `.so`; the vtable inside is the newer enum's, so
/// dropping and cloning stay correct.
unsafe fn arrived<N, O>(newer: N) -> O {
    assert_eq!(std::mem::size_of::<N>(), std::mem::size_of::<O>());
    // SAFETY: see above.
    unsafe { std::mem::transmute_copy(&std::mem::ManuallyDrop::new(newer)) }
}

fn later_answer() -> SeamAnswer_NE {
    let newer: newer::SeamAnswer_NE = NonExhaustive::new(newer::SeamAnswer::Later("x".into()));
    // SAFETY: `newer::SeamAnswer` mirrors `SeamAnswer` (see `arrived`).
    unsafe { arrived(newer) }
}

fn later_decision() -> SeamAnswer_NE {
    let defer: newer::PreToolDecision_NE = NonExhaustive::new(newer::PreToolDecision::Defer {
        until: "tomorrow".into(),
    });
    // SAFETY: `newer::PreToolDecision` mirrors `PreToolDecision`.
    let defer: PreToolDecision_NE = unsafe { arrived(defer) };
    SeamAnswer::PreTool(defer).into()
}

#[test]
fn an_answer_or_decision_from_a_newer_build_is_held_not_decoded() {
    let unknown = SeamOutput::try_from(later_answer()).unwrap_err();
    assert_eq!(unknown.what, "answer #8");
    assert_eq!(*unknown.answer, later_answer(), "held unchanged");
    assert!(
        unknown.to_string().ends_with("does not know: answer #8"),
        "{unknown}"
    );
    let unknown = SeamOutput::try_from(later_decision()).unwrap_err();
    assert_eq!(unknown.what, "tools/pre-execute decision #3");
    assert_eq!(*unknown.answer, later_decision());
    // The host side turns it into a failure naming it.
    let failed = typed_result(RResult::ROk(later_decision()));
    assert!(
        matches!(&failed, RResult::RErr(e) if e.ends_with("tools/pre-execute decision #3")),
        "{failed:?}"
    );
}

#[test]
fn a_decision_the_plugin_cannot_decode_goes_on_unchanged_unless_it_decides() {
    // Gate delegates `ls` with `?`: the undecodable answer passes through.
    let (host, _) = applied::<Gate>();
    let listener = host.listener(Seam::PreExecute);
    let next = FixedNext::new(|| RResult::ROk(later_decision()));
    let answer = block_on(listener.call(pre_execute("ls"), next.boxed()));
    assert_eq!(answer, RResult::ROk(later_decision()));
    // A listener that sees the error and decides for itself wins.
    struct Insists;
    impl Plugin for Insists {
        type Config = NoConfig;
        const NAME: &'static str = "insists";
        const VERSION: &'static str = "0";
        fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
            Ok(Insists)
        }
        async fn pre_execute(
            self: Arc<Self>,
            _call: RArc<ToolCall>,
            next: Next<PreToolDecision>,
        ) -> Result<PreToolDecision, String> {
            match next.run().await {
                Ok(decision) => Ok(decision),
                Err(e) => Ok(PreToolDecision::Deny { reason: e.into() }),
            }
        }
    }
    let (host, _) = applied::<Insists>();
    let listener = host.listener(Seam::PreExecute);
    let answer = typed_result(block_on(listener.call(pre_execute("ls"), next.boxed())));
    let RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny { reason })) = answer else {
        panic!("expected the listener's own deny, got {answer:?}");
    };
    assert!(
        reason.ends_with("does not know: tools/pre-execute decision #3"),
        "{reason}"
    );
}

#[test]
fn an_input_the_plugin_cannot_decode_is_delegated() {
    let (host, _) = applied::<Gate>();
    let listener = host.listener(Seam::PreExecute);
    let newer: newer::SeamInput_NE =
        NonExhaustive::new(newer::SeamInput::Later(RArc::new(SessionEndInput {
            session: session(),
            reason: "later".into(),
        })));
    // SAFETY: `newer::SeamInput` mirrors `SeamInput` (see `arrived`).
    let input: SeamInput_NE = unsafe { arrived(newer) };
    assert!(input.as_enum().is_err(), "this build cannot decode it");
    let next = FixedNext::new(allow);
    let answer = block_on(listener.call(input, next.boxed()));
    assert_eq!(answer, allow());
    assert_eq!(next.calls(), 1, "as if the plugin were not listening");
}

#[test]
fn the_seam_table_is_append_only_and_complete() {
    for (i, seam) in Seam::ALL.iter().enumerate() {
        assert_eq!(usize::from(seam.number()), i, "{seam}");
        assert!(seam.is_known());
        assert_eq!(Seam::from_name(seam.name()), Some(*seam));
    }
    let unknown = Seam::from_number(200);
    assert!(!unknown.is_known());
    assert_eq!(unknown.name(), "unknown");
    assert_eq!(unknown.to_string(), "unknown seam #200");
    assert!(Seam::ToolResult.is_notification() && !Seam::PreExecute.is_notification());
}

mod exported {
    use super::Silent;
    crate::export_plugin!(Silent);
}

#[test]
fn export_plugin_emits_the_header_abi_stable_looks_up() {
    // The static's name is the symbol: it must be abi_stable's.
    assert_eq!(
        stringify!(_1as_0lib_1header_0root_bmodule_bloader),
        abi_stable::library::ROOT_MODULE_LOADER_NAME
    );
    let header = &exported::_1as_0lib_1header_0root_bmodule_bloader;
    let layout = header.layout().expect("a layout to check");
    assert_eq!(
        layout.full_type().to_string(),
        <crate::PluginModuleRef as StableAbi>::LAYOUT
            .full_type()
            .to_string()
    );
}

#[test]
fn steering_parts_have_a_text_form_for_older_listeners() {
    let two = ContinuationDecision::steer(vec!["a\n".into(), "b".into()]);
    assert!(matches!(two, ContinuationDecision::ContinueParts { .. }));
    assert_eq!(two.steering_parts(), Some(vec!["a\n".into(), "b".into()]));
    assert_eq!(
        two.into_text_form(),
        ContinuationDecision::Continue {
            reason: ROption::RSome("a\n\nb".into())
        }
    );
    assert_eq!(
        ContinuationDecision::steer(vec!["one".into()]),
        ContinuationDecision::Continue {
            reason: ROption::RSome("one".into())
        }
    );
    assert_eq!(
        ContinuationDecision::steer(Vec::new()).steering_parts(),
        Some(Vec::new())
    );
    assert_eq!(ContinuationDecision::Stop.steering_parts(), None);
    assert!(!crate::reads_steering_parts("1.5.0"));
    assert!(crate::reads_steering_parts("1.6.0"));
    assert!(crate::reads_steering_parts(crate::API_VERSION));
    assert!(!crate::reads_steering_parts("garbage"));
}
