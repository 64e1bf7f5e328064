//! Event constructors and names. Events are JSON objects with a `type`;
//! plugins may append their own types (e.g. `hook/invoked`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TurnEndReason {
    /// The model finished.
    Completed,
    /// Cancelled by the client or shut down.
    Aborted,
    /// A model, listener or internal failure.
    Error,
    /// The session or a plugin was disposed mid-turn.
    Disposed,
    /// The model ran out of tokens.
    MaxTokens,
    /// Every prompt of the turn was blocked.
    Rejected,
    /// Found open on load: the process died mid-turn.
    Interrupted,
}

impl TurnEndReason {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnEndReason::Completed => "completed",
            TurnEndReason::Aborted => "aborted",
            TurnEndReason::Error => "error",
            TurnEndReason::Disposed => "disposed",
            TurnEndReason::MaxTokens => "max-tokens",
            TurnEndReason::Rejected => "rejected",
            TurnEndReason::Interrupted => "interrupted",
        }
    }
}

/// `turn/start`.
pub fn turn_start(turn_id: &str, kind: &str) -> Value {
    json!({"type": "turn/start", "turn_id": turn_id, "kind": kind})
}

/// `turn/end`.
pub fn turn_end(turn_id: &str, reason: TurnEndReason, message: Option<&str>) -> Value {
    let mut v = json!({"type": "turn/end", "turn_id": turn_id, "reason": reason.as_str()});
    if let Some(m) = message {
        v["message"] = json!(m);
    }
    v
}

/// `step/start`.
pub fn step_start(step: u32) -> Value {
    json!({"type": "step/start", "step": step})
}

/// `step/end`.
pub fn step_end(step: u32) -> Value {
    json!({"type": "step/end", "step": step})
}

/// A message source as JSON: `{"kind": "user"}`, `{"kind": "plugin", "plugin": id}`.
pub fn source_json(source: &dsh_plugin_api::MessageSource) -> Value {
    match source {
        dsh_plugin_api::MessageSource::User => json!({"kind": "user"}),
        dsh_plugin_api::MessageSource::Plugin { plugin } => json!({"kind": "plugin", "plugin": plugin.as_str()}),
        dsh_plugin_api::MessageSource::Agent { session_id } => {
            json!({"kind": "agent", "session_id": session_id.as_str()})
        }
    }
}

/// `user/message`; `original` is the prompt as submitted when a plugin rewrote it.
pub fn user_message(content: &str, source: Value, original: Option<&str>) -> Value {
    let mut v = json!({"type": "user/message", "content": content, "source": source});
    if let Some(o) = original {
        v["original_content"] = json!(o);
    }
    v
}

/// `prompt/blocked`.
pub fn prompt_blocked(content: &str, source: Value, reason: &str, plugin: Option<&str>) -> Value {
    let mut v = json!({"type": "prompt/blocked", "content": content, "source": source, "reason": reason});
    if let Some(p) = plugin {
        v["plugin"] = json!(p);
    }
    v
}

/// `context/message`, attributed to a plugin.
pub fn context_message(content: &str, plugin: &str) -> Value {
    json!({"type": "context/message", "content": content, "source": {"kind": "plugin", "plugin": plugin}})
}

/// `steering/message`: model-facing text that forced another step.
pub fn steering_message(content: &str, plugin: Option<&str>) -> Value {
    let source = match plugin {
        Some(p) => json!({"kind": "plugin", "plugin": p}),
        None => json!({"kind": "user"}),
    };
    json!({"type": "steering/message", "content": content, "source": source})
}

/// `assistant/message`.
pub fn assistant_message(text: &str, tool_calls: &[crate::model::ModelToolCall]) -> Value {
    json!({"type": "assistant/message", "content": text, "tool_calls": tool_calls})
}

/// `tool/call`: the call as the model made it.
pub fn tool_call(call_id: &str, name: &str, arguments: &Value) -> Value {
    json!({"type": "tool/call", "call_id": call_id, "name": name, "arguments": arguments})
}

/// `tool/updated`: a plugin replaced the call's arguments as one unit.
pub fn tool_updated(call_id: &str, arguments: &Value, plugin: &str) -> Value {
    json!({"type": "tool/updated", "call_id": call_id, "arguments": arguments, "plugin": plugin})
}

/// `tool/denied`: the call did not run.
pub fn tool_denied(call_id: &str, reason: &str, by: &str) -> Value {
    json!({"type": "tool/denied", "call_id": call_id, "reason": reason, "by": by})
}

/// `tool/approval`: what the approval service decided.
pub fn tool_approval(call_id: &str, outcome: &str, reason: Option<&str>) -> Value {
    json!({"type": "tool/approval", "call_id": call_id, "outcome": outcome, "reason": reason})
}

/// `tool/result`.
pub fn tool_result(call_id: &str, name: &str, content: &str, is_error: bool, structured: Option<&Value>) -> Value {
    let mut v = json!({"type": "tool/result", "call_id": call_id, "name": name, "content": content, "is_error": is_error});
    if let Some(s) = structured {
        v["structured"] = s.clone();
    }
    v
}

/// `listener/failed`: a contained listener failure worth keeping.
pub fn listener_failed(seam: &str, plugin: &str, message: &str) -> Value {
    json!({"type": "listener/failed", "seam": seam, "plugin": plugin, "message": message})
}

/// The `type` of an event.
pub fn kind(event: &Value) -> &str {
    event.get("type").and_then(Value::as_str).unwrap_or("")
}
