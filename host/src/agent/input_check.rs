//! A tool's own input check, before `tools/pre-execute`: the service
//! `input-check/<tool>` of the plugin that offers the tool
//! (`dsh_plugin_api::services::input_check`). Claude Code refuses some
//! calls while it validates their input (`EnterWorktree` in a worktree
//! already, `ExitWorktree` with nothing to exit or with changes to
//! discard), and no hook hears of those calls (vectors `S230-*`); a tool
//! plugin says so through this service, the agent knowing no tool by name.

use dsh_plugin_api::ToolCall;
use dsh_plugin_api::abi_stable::std_types::RString;
use dsh_plugin_api::services::input_check::{
    AskHint, CheckAnswer, CheckRequest, METHOD_CHECK, service_name,
};
use serde_json::Value;

use super::pipeline::Gate;
use super::session::Session;

impl Session {
    /// The refusal of `call` by its tool's input check, if the registry
    /// `view` has one for the tool and it refuses. A check that fails or
    /// answers badly refuses (fail closed), naming the tool. Also the
    /// tool's own permission question ([`AskHint`]), when it has one.
    pub(super) async fn input_check(
        &self,
        view: &crate::plugins::HostView,
        call: &ToolCall,
    ) -> (Option<Gate>, Option<String>) {
        let name = service_name(call.name.as_str());
        let Some(service) = view.services.get(&name) else {
            return (None, None);
        };
        let request = CheckRequest {
            session_id: call.session.session_id.to_string(),
            cwd: call.session.cwd.to_string(),
            arguments: serde_json::from_str::<Value>(&call.arguments).unwrap_or(Value::Null),
        };
        let args = serde_json::to_string(&request).unwrap_or_default();
        let answer = service
            .call(RString::from(METHOD_CHECK), RString::from(args))
            .await
            .into_result()
            .map_err(String::from)
            .and_then(|a| {
                let hint = serde_json::from_str::<AskHint>(&a).unwrap_or_default();
                serde_json::from_str::<CheckAnswer>(&a)
                    .map(|answer| (answer, hint))
                    .map_err(|e| format!("bad answer: {e}"))
            });
        let refusal = match answer {
            Ok((CheckAnswer { refusal: None }, hint)) => return (None, hint.ask),
            Ok((CheckAnswer { refusal: Some(r) }, _)) => r,
            Err(e) => format!("the input check of `{}` failed: {e}", call.name),
        };
        let gate = Gate::Denied {
            reason: refusal,
            by: format!("{name} (input check)"),
        };
        (Some(gate), None)
    }
}
