//! `dsh prompt` on a terminal: the `approval` service asks the user there.
//!
//! The question goes to stderr (stdout carries the turn's output) and the
//! answer is one line read from stdin: `y` allows the call once, `a` allows
//! it and every call like it for the rest of the session (a session rule,
//! recorded in the log), `n` or an empty line refuses it and stops the
//! turn, as a "No" in Claude Code's dialog does: the model reads Claude
//! Code's own refusal text with the next prompt (recorded, S34).

use std::io::{BufRead as _, Write as _};
use std::sync::Arc;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_host::agent::Agent;
use dsh_plugin_api::ffi::{Service, Service_TO};
use dsh_plugin_api::services::approval::{
    ApprovalAnswer, ApprovalRequest, METHOD_REQUEST, SERVICE,
};

use dsh_host::permissions::USER_REJECTED;

/// Asks on the terminal; one question at a time.
#[derive(Clone)]
struct TerminalApproval {
    asking: Arc<tokio::sync::Mutex<()>>,
}

/// Mounts the terminal `approval` service on the agent's core (owner
/// `terminal`); a failure only means asks are refused as headless.
pub(crate) fn mount_terminal_approval(agent: &Agent) {
    let service = Service_TO::from_ptr(
        RArc::new(TerminalApproval {
            asking: Arc::new(tokio::sync::Mutex::new(())),
        }),
        TD_Opaque,
    );
    if let Err(e) = agent.core().mount_service("terminal", SERVICE, service) {
        tracing::warn!("terminal approval is off: {e}");
    }
}

fn ask_blocking(request: &ApprovalRequest) -> ApprovalAnswer {
    let input = serde_json::to_string_pretty(&request.arguments).unwrap_or_default();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "\ndsh: permission needed: {}", request.name);
    let _ = writeln!(err, "  input: {}", input.replace('\n', "\n  "));
    if let Some(reason) = &request.reason {
        let _ = writeln!(err, "  reason: {reason}");
    }
    let _ = write!(
        err,
        "  allow? [y] once, [a] always for this session, [n] deny: "
    );
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => ApprovalAnswer::unavailable("the terminal closed before an answer"),
        Ok(_) => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => ApprovalAnswer::AllowOnce,
            "a" | "always" => ApprovalAnswer::AllowAlways,
            // As a "No" in Claude Code's dialog: refused, and the turn
            // stops for the user (S34-user-rejects).
            _ => ApprovalAnswer::Reject {
                reason: Some(USER_REJECTED.into()),
                interrupt: true,
            },
        },
    }
}

impl Service for TerminalApproval {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let this = self.clone();
        async move {
            if method.as_str() != METHOD_REQUEST {
                return RResult::RErr(format!("approval has no method `{method}`").into());
            }
            let answer = match serde_json::from_str::<ApprovalRequest>(&args) {
                Ok(request) => {
                    let _one_at_a_time = this.asking.lock().await;
                    tokio::task::spawn_blocking(move || ask_blocking(&request))
                        .await
                        .unwrap_or_else(|e| ApprovalAnswer::unavailable(e.to_string()))
                }
                Err(e) => ApprovalAnswer::unavailable(format!("malformed approval request: {e}")),
            };
            match serde_json::to_string(&answer) {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => RResult::RErr(e.to_string().into()),
            }
        }
        .into_ffi()
    }
}
