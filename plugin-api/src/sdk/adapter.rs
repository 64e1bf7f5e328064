//! Turns a [`Plugin`] into a root module and its seam methods into
//! boundary listeners, catching every panic on the way.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RStr, RString, RVec};
use async_ffi::{FfiFuture, FutureExt as _};
use futures::FutureExt as _;

use super::{ExecuteNext, FromSeamOutput, Host, Next, Plugin};
use crate::ffi::{Guard, Guard_TO, HostContextBox, Listener, Listener_TO, NextBox, SeamResult};
use crate::root::{PluginDescriptor, PluginModule, PluginModuleRef};
use crate::seams::{GuardDecision, Seam, SeamInput, SeamOutput, ToolCall};

/// The root module for `P`. `export_plugin!` calls this from a `.so`; the
/// host calls it directly for built-ins.
pub fn plugin_module<P: Plugin>() -> PluginModuleRef {
    PluginModule {
        api_version: RStr::from_str(crate::API_VERSION),
        describe: describe::<P>,
        apply: apply::<P>,
    }
    .leak_into_prefix()
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
    for &seam in P::SEAMS {
        let registered = if seam == Seam::Guard {
            ctx.guard(Guard_TO::from_value(
                GuardAdapter(plugin.clone()),
                TD_Opaque,
            ))
        } else {
            let listener = SeamAdapter {
                plugin: plugin.clone(),
            };
            ctx.listen(seam, Listener_TO::from_value(listener, TD_Opaque))
        };
        registered.into_result().map_err(String::from)?;
    }
    Ok(())
}

struct GuardAdapter<P>(Arc<P>);

impl<P: Plugin> Guard for GuardAdapter<P> {
    fn check(&self, call: RArc<ToolCall>) -> RResult<GuardDecision, RString> {
        match catch_unwind(AssertUnwindSafe(|| self.0.guard(&call))) {
            Ok(decision) => RResult::ROk(decision),
            Err(panic) => {
                RResult::RErr(format!("guard panicked: {}", panic_message(&panic)).into())
            }
        }
    }
}

struct SeamAdapter<P> {
    plugin: Arc<P>,
}

/// Runs a typed future, catching panics and wrapping the answer.
fn boundary<T: 'static, F>(
    make: impl FnOnce() -> F,
    wrap: fn(T) -> SeamOutput,
) -> FfiFuture<SeamResult>
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
            Ok(Ok(value)) => RResult::ROk(wrap(value)),
            Ok(Err(e)) => RResult::RErr(e.into()),
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
    fn call(&self, input: SeamInput, next: NextBox) -> FfiFuture<SeamResult> {
        let p = self.plugin.clone();
        match input {
            SeamInput::SessionStart(i) => boundary(|| p.session_start(i), observed),
            SeamInput::SessionEnd(i) => boundary(|| p.session_end(i), observed),
            SeamInput::PromptSubmit(i) => boundary(
                || p.prompt_submit(i, Next::new(next)),
                FromSeamOutput::into_output,
            ),
            SeamInput::PreExecute(i) => boundary(
                || p.pre_execute(i, Next::new(next)),
                FromSeamOutput::into_output,
            ),
            SeamInput::Execute(i) => boundary(
                || p.execute(i, ExecuteNext::new(next)),
                FromSeamOutput::into_output,
            ),
            SeamInput::PostExecute(i) => boundary(
                || p.post_execute(i, Next::new(next)),
                FromSeamOutput::into_output,
            ),
            SeamInput::ToolResult(i) => boundary(|| p.tool_result(i), observed),
            SeamInput::TurnContinuation(i) => boundary(
                || p.turn_continuation(i, Next::new(next)),
                FromSeamOutput::into_output,
            ),
            SeamInput::SubagentStart(i) => boundary(|| p.subagent_start(i), observed),
            SeamInput::SubagentEnd(i) => boundary(|| p.subagent_end(i), observed),
        }
    }
}
