//! Codex's `wait_agent` (C180-*, C185c): waits for the first of its
//! targets to reach a final status and returns
//! `{"status":{<id>:<status>},"timed_out":false}` (a closed agent's status
//! `"not_found"`), or `{"status":{},"timed_out":true}` when the time runs
//! out (its default 30 s, clamped to 10 s–1 h, as Codex's description
//! says). An id no agent ever had is an error result.

use std::sync::Arc;
use std::time::Duration;

use abi_stable::std_types::RArc;
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignalBox, ToolBody};
use dsh_plugin_api::{ToolCall, ToolResult};
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::codex_subagent::{Children, is_final};

/// The `wait_agent` tool.
pub(super) struct WaitTool {
    pub(super) children: Arc<Children>,
}

impl ToolBody for WaitTool {
    fn run(&self, call: RArc<ToolCall>, signal: AbortSignalBox) -> FfiFuture<ToolResult> {
        let children = self.children.clone();
        async move { wait(&children, &call, signal).await }.into_ffi()
    }
}

/// `timeout_ms` as Codex takes it: 30 s when absent, within 10 s–1 h.
fn timeout(args: &Value) -> Duration {
    let ms = args
        .get("timeout_ms")
        .and_then(Value::as_f64)
        .unwrap_or(30_000.0)
        .clamp(10_000.0, 3_600_000.0);
    Duration::from_millis(ms as u64)
}

async fn wait(children: &Children, call: &ToolCall, signal: AbortSignalBox) -> ToolResult {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let Some(targets) = args.get("targets").and_then(Value::as_array) else {
        return ToolResult::error("wait_agent needs `targets`, a list of agent ids");
    };
    // Each target's status as it stands; a closed agent is "not_found".
    let mut watched: Vec<(String, Option<watch::Receiver<Value>>)> = Vec::new();
    for t in targets {
        let Some(id) = t.as_str() else {
            return ToolResult::error("wait_agent: every target must be an agent id (a string)");
        };
        let parent = call.session.session_id.as_str();
        match children.open(id, parent) {
            Some(child) => watched.push((id.to_string(), Some(child.status.subscribe()))),
            None if children.is_closed(id, parent) => watched.push((id.to_string(), None)),
            None => return ToolResult::error(format!("wait_agent: no agent with id {id}")),
        }
    }
    if watched.is_empty() {
        return ToolResult::error("wait_agent needs at least one target");
    }
    let finals = |watched: &[(String, Option<watch::Receiver<Value>>)]| {
        let mut status = Map::new();
        for (id, rx) in watched {
            match rx {
                None => {
                    status.insert(id.clone(), json!("not_found"));
                }
                Some(rx) => {
                    let s = rx.borrow().clone();
                    if is_final(&s) {
                        status.insert(id.clone(), s);
                    }
                }
            }
        }
        status
    };
    let any_done = async {
        let waits = watched
            .iter()
            .filter_map(|(_, rx)| rx.clone())
            .map(|mut rx| {
                Box::pin(async move {
                    let _ = rx.wait_for(is_final).await;
                })
            });
        let waits: Vec<_> = waits.collect();
        if waits.is_empty() {
            return;
        }
        futures::future::select_all(waits).await;
    };
    let timed_out = if finals(&watched).is_empty() {
        tokio::select! {
            _ = any_done => false,
            _ = tokio::time::sleep(timeout(&args)) => true,
            _ = signal.aborted() => return ToolResult::error("wait_agent was interrupted"),
        }
    } else {
        false
    };
    let status = finals(&watched);
    let mut answer = Map::new();
    let timed_out = timed_out && status.is_empty();
    answer.insert("status".into(), Value::Object(status));
    answer.insert("timed_out".into(), timed_out.into());
    ToolResult::text(Value::Object(answer).to_string())
}
