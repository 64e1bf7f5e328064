//! In-process `tools/pre-execute` listeners that do nothing but let the
//! call through, one per listener form, for the tests and benches that
//! measure what dispatching through a listener costs.

use std::sync::Arc;

use abi_stable::std_types::RArc;
use dsh_plugin_api::{Host, Next, NoConfig, Now, Plugin, PreToolDecision, ToolCall};

/// The async form: a pre-execute that only awaits `next`.
pub struct Delegate;

impl Plugin for Delegate {
    type Config = NoConfig;
    const NAME: &'static str = "delegate-async";
    const VERSION: &'static str = "0.0.0";

    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Delegate)
    }

    async fn pre_execute(
        self: Arc<Self>,
        _call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        next.run().await
    }
}

/// The form answering at once (plugin API 1.5): a pre-execute that passes.
pub struct Pass;

impl Plugin for Pass {
    type Config = NoConfig;
    const NAME: &'static str = "pass";
    const VERSION: &'static str = "0.0.0";

    fn apply(_host: &Host, _config: NoConfig) -> Result<Self, String> {
        Ok(Pass)
    }

    fn pre_execute_now(self: Arc<Self>, _call: RArc<ToolCall>) -> impl Into<Now<PreToolDecision>> {
        Now::Pass
    }
}
