//! Turns a [`Plugin`] into a root module and its seam methods into
//! boundary listeners, catching every panic on the way.

use std::any::{Any, TypeId};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{ROption, RResult, RStr, RString, RVec};
use async_ffi::{FfiFuture, FutureExt as _};
use futures::FutureExt as _;

use super::next::Passthrough;
use super::now::{UnheardNow, immediate};
use super::{ExecuteNext, FromSeamOutput, Host, Next, Plugin, Unheard};
use crate::decisions::{
    ContinuationDecision, ElicitationDecision, PermissionDecision, PostToolDecision,
    PreToolDecision, PromptDecision, SeamOutput, ToolResult,
};
use crate::ffi::{HostContextBox, Immediate, Listener, Listener_TO, NextBox, WireResult};
use crate::root::{PluginDescriptor, PluginModule, PluginModuleRef};
use crate::seams::{Seam, SeamInput, SeamInput_NE};

/// The root module for `P`. `export_plugin!` calls this from a `.so`; the
/// host calls it directly for built-ins.
pub fn plugin_module<P: Plugin>() -> PluginModuleRef {
    PluginModule {
        api_version: RStr::from_str(crate::API_VERSION),
        describe: describe::<P>,
        apply: apply::<P>,
        description: RStr::from_str(P::DESCRIPTION),
        #[cfg(feature = "__fixture-future-minor")]
        fixture_future: 0,
    }
    .leak_into_prefix()
}

/// The type a two-argument seam method returns.
fn returns2<F, A, B, R: 'static>(_method: &F) -> TypeId
where
    F: Fn(A, B) -> R,
{
    TypeId::of::<R>()
}

/// The type a three-argument seam method returns.
fn returns3<F, A, B, C, R: 'static>(_method: &F) -> TypeId
where
    F: Fn(A, B, C) -> R,
{
    TypeId::of::<R>()
}

/// The seams `P` listens on: those whose methods it overrides.
///
/// A default method returns the SDK's private `Unheard<T>`; an override,
/// whatever it does, returns something else. Comparing the return types
/// tells them apart at no cost and cannot drift from the code: there is no
/// list to forget.
pub fn listened<P: Plugin>() -> Vec<Seam> {
    let unheard = |t: TypeId, default: TypeId| t != default;
    let rows = [
        (
            Seam::SessionStart,
            unheard(returns2(&P::session_start), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::SessionEnd,
            unheard(returns2(&P::session_end), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::PromptSubmit,
            unheard(
                returns3(&P::prompt_submit),
                TypeId::of::<Unheard<PromptDecision>>(),
            ),
        ),
        (
            Seam::PreExecute,
            unheard(
                returns3(&P::pre_execute),
                TypeId::of::<Unheard<PreToolDecision>>(),
            ) || answers_now::<P>(),
        ),
        (
            Seam::Execute,
            unheard(returns3(&P::execute), TypeId::of::<Unheard<ToolResult>>()),
        ),
        (
            Seam::PostExecute,
            unheard(
                returns3(&P::post_execute),
                TypeId::of::<Unheard<PostToolDecision>>(),
            ),
        ),
        (
            Seam::ToolResult,
            unheard(returns2(&P::tool_result), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::TurnContinuation,
            unheard(
                returns3(&P::turn_continuation),
                TypeId::of::<Unheard<ContinuationDecision>>(),
            ),
        ),
        (
            Seam::SubagentStart,
            unheard(returns2(&P::subagent_start), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::SubagentEnd,
            unheard(returns2(&P::subagent_end), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::TurnEnd,
            unheard(returns2(&P::turn_end), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::CwdChanged,
            unheard(returns2(&P::cwd_changed), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::ModelRequest,
            unheard(returns2(&P::model_request), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::PermissionRequest,
            unheard(
                returns3(&P::permission_request),
                TypeId::of::<Unheard<PermissionDecision>>(),
            ),
        ),
        (
            Seam::Compact,
            unheard(
                returns3(&P::compact),
                TypeId::of::<Unheard<PromptDecision>>(),
            ),
        ),
        (
            Seam::Compacted,
            unheard(returns2(&P::compacted), TypeId::of::<Unheard<()>>()),
        ),
        (
            Seam::Elicitation,
            unheard(
                returns3(&P::elicitation),
                TypeId::of::<Unheard<ElicitationDecision>>(),
            ),
        ),
    ];
    rows.into_iter()
        .filter_map(|(seam, overridden)| overridden.then_some(seam))
        .collect()
}

/// Whether `P` overrides [`Plugin::pre_execute_now`] (since 1.5), told
/// from the default by the type it returns, as [`listened`] does.
fn answers_now<P: Plugin>() -> bool {
    returns2(&P::pre_execute_now) != TypeId::of::<UnheardNow>()
}

/// Best-effort text of a panic payload.
pub(crate) fn panic_message(panic: &Box<dyn Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

fn strings(items: &[&str]) -> RVec<RString> {
    items.iter().map(|s| RString::from(*s)).collect()
}

extern "C" fn describe<P: Plugin>() -> PluginDescriptor {
    let schema = schemars::schema_for!(P::Config);
    let default_config =
        serde_json::to_string(&P::Config::default()).unwrap_or_else(|_| "{}".into());
    PluginDescriptor {
        name: P::NAME.into(),
        version: P::VERSION.into(),
        required_services: strings(P::REQUIRES),
        optional_services: strings(P::OPTIONAL),
        config_schema: serde_json::to_string(&schema)
            .unwrap_or_else(|_| "{}".into())
            .into(),
        default_config: default_config.into(),
        #[cfg(feature = "__fixture-abi-changed")]
        fixture_extra: 0,
    }
}

extern "C" fn apply<P: Plugin>(ctx: HostContextBox, config: RString) -> RResult<(), RString> {
    let outcome = catch_unwind(AssertUnwindSafe(|| apply_inner::<P>(ctx, &config)));
    match outcome {
        Ok(Ok(())) => RResult::ROk(()),
        Ok(Err(e)) => RResult::RErr(e.into()),
        Err(panic) => {
            RResult::RErr(format!("plugin panicked in apply: {}", panic_message(&panic)).into())
        }
    }
}

fn apply_inner<P: Plugin>(ctx: HostContextBox, config: &str) -> Result<(), String> {
    let config: P::Config = if config.trim().is_empty() || config.trim() == "null" {
        P::Config::default()
    } else {
        serde_json::from_str(config).map_err(|e| format!("invalid config: {e}"))?
    };
    let host = Host::new(ctx.clone());
    let plugin = Arc::new(P::apply(&host, config)?);
    let now = answers_now::<P>();
    for seam in listened::<P>() {
        let listener = SeamAdapter {
            plugin: plugin.clone(),
            now,
        };
        ctx.listen(seam, Listener_TO::from_value(listener, TD_Opaque))
            .into_result()
            .map_err(String::from)?;
    }
    Ok(())
}

struct SeamAdapter<P> {
    plugin: Arc<P>,
    /// Whether the plugin has a synchronous form ([`answers_now`]).
    now: bool,
}

/// Runs a typed future, catching panics and wrapping the answer. An
/// answer from `next` this build could not decode, if the listener
/// returns the resulting error, goes on unchanged.
fn boundary<T: 'static, F>(
    make: impl FnOnce() -> F,
    wrap: fn(T) -> SeamOutput,
    passthrough: Passthrough,
) -> FfiFuture<WireResult>
where
    F: Future<Output = Result<T, String>> + Send + 'static,
{
    let fut = match catch_unwind(AssertUnwindSafe(make)) {
        Ok(fut) => fut,
        Err(panic) => {
            let msg = format!("listener panicked: {}", panic_message(&panic));
            return async move { RResult::RErr(msg.into()) }.into_ffi();
        }
    };
    async move {
        match AssertUnwindSafe(fut).catch_unwind().await {
            Ok(Ok(value)) => RResult::ROk(wrap(value).into()),
            Ok(Err(e)) => match passthrough.take() {
                Some(answer) => RResult::ROk(answer),
                None => RResult::RErr(e.into()),
            },
            Err(panic) => {
                RResult::RErr(format!("listener panicked: {}", panic_message(&panic)).into())
            }
        }
    }
    .into_ffi()
}

fn observed(_: ()) -> SeamOutput {
    SeamOutput::Observed
}

impl<P: Plugin> Listener for SeamAdapter<P> {
    fn call_now(&self, input: &SeamInput_NE) -> Immediate {
        if !self.now {
            return Immediate::Later;
        }
        match input.as_enum() {
            Ok(SeamInput::PreExecute(call)) => {
                let (plugin, call) = (self.plugin.clone(), call.clone());
                immediate::<PreToolDecision>(
                    || plugin.pre_execute_now(call).into(),
                    SeamOutput::PreTool,
                )
            }
            _ => Immediate::Later,
        }
    }

    fn call(&self, input: SeamInput_NE, next: NextBox) -> FfiFuture<WireResult> {
        let input = match input.into_enum() {
            Ok(input) => input,
            // A seam added after this build: it never registered for it,
            // so the only fitting answer is "as if not listening".
            Err(_) => return next.run(ROption::RNone),
        };
        let p = self.plugin.clone();
        let slot = Passthrough::default();
        match input {
            SeamInput::SessionStart(i) => boundary(|| p.session_start(i), observed, slot),
            SeamInput::SessionEnd(i) => boundary(|| p.session_end(i), observed, slot),
            SeamInput::PromptSubmit(i) => boundary(
                || p.prompt_submit(i, Next::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            SeamInput::PreExecute(i) => boundary(
                || p.pre_execute(i, Next::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            SeamInput::Execute(i) => boundary(
                || p.execute(i, ExecuteNext::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            SeamInput::PostExecute(i) => boundary(
                || p.post_execute(i, Next::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            SeamInput::ToolResult(i) => boundary(|| p.tool_result(i), observed, slot),
            SeamInput::TurnContinuation(i) => boundary(
                || p.turn_continuation(i, Next::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            SeamInput::SubagentStart(i) => boundary(|| p.subagent_start(i), observed, slot),
            SeamInput::SubagentEnd(i) => boundary(|| p.subagent_end(i), observed, slot),
            SeamInput::TurnEnd(i) => boundary(|| p.turn_end(i), observed, slot),
            SeamInput::CwdChanged(i) => boundary(|| p.cwd_changed(i), observed, slot),
            SeamInput::ModelRequest(i) => boundary(|| p.model_request(i), observed, slot),
            SeamInput::PermissionRequest(i) => boundary(
                || p.permission_request(i, Next::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            SeamInput::Compact(i) => boundary(
                || p.compact(i, Next::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            SeamInput::Compacted(i) => boundary(|| p.compacted(i), observed, slot),
            SeamInput::Elicitation(i) => boundary(
                || p.elicitation(i, Next::with_passthrough(next, slot.clone())),
                FromSeamOutput::into_output,
                slot.clone(),
            ),
            #[cfg(feature = "__fixture-future-minor")]
            SeamInput::FixtureFuture(_) => next.run(ROption::RNone),
        }
    }
}
