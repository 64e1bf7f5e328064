//! The session events: one enum, [`SessionEvent`], written and read through
//! the same type by the log, the history builder, ACP updates and the CLI.
//!
//! On disk an event is one JSON object per line: `type` first, then the
//! variant's fields in declaration order, then `ts` (ms since the epoch,
//! stamped by the log on append; [`LoggedEvent`]). That is byte for byte the
//! format dsh wrote before the events were typed.
//!
//! Nothing in a log is lost by reading it: a line is a typed variant only
//! when the variant, written back, says exactly what the line says (same
//! keys, same values, same order). Anything else, an event type this dsh
//! does not know (from a newer dsh, or a plugin record such as the hook
//! bridges' `hook/invoked` and `hook/result`, or a provider's `stream/*`
//! beyond `stream/text`), or a known type with a field it does not expect,
//! is [`SessionEvent::Other`], kept as the JSON it was and written back
//! unchanged. Plugin records stay `Other` on purpose: their shape belongs
//! to the plugin that writes them, and the host never acts on them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::model::ModelToolCall;

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

/// What opened a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnKind {
    /// Prompts from the inbox.
    Prompt,
    /// Context or records written while no turn was open.
    Injection,
    /// A compaction (the `/compact` prompt): no prompt reaches the model.
    Compact,
}

/// Who a message came from: `{"kind": "user"}`,
/// `{"kind": "plugin", "plugin": id}`, `{"kind": "agent", "session_id": id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum EventSource {
    /// The user (or the client acting for them).
    User,
    /// A plugin.
    Plugin {
        /// Its id.
        plugin: String,
    },
    /// A parent agent session (a subagent's prompt).
    Agent {
        /// The parent session.
        session_id: String,
    },
}

/// The role a `context/message` reaches the model in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextRole {
    /// As a user-role message tagged with its source (most context).
    #[default]
    User,
    /// As a system-role message at its place in the conversation (Claude
    /// Code's background-task notifications, recorded S83).
    System,
    /// As a developer-role message at its place in the conversation
    /// (Codex's hook context: every `developer message` of its vectors).
    Developer,
}

impl std::str::FromStr for ContextRole {
    type Err = String;

    fn from_str(role: &str) -> Result<Self, String> {
        match role {
            "user" => Ok(ContextRole::User),
            "system" => Ok(ContextRole::System),
            "developer" => Ok(ContextRole::Developer),
            other => Err(format!(
                "unknown context role `{other}` (expected `user`, `developer` or `system`)"
            )),
        }
    }
}

impl ContextRole {
    /// Whether this is the default role (not written to the log).
    pub fn is_user(&self) -> bool {
        *self == ContextRole::User
    }

    /// The model-facing role name.
    pub fn as_str(&self) -> &'static str {
        match self {
            ContextRole::User => "user",
            ContextRole::System => "system",
            ContextRole::Developer => "developer",
        }
    }
}

impl EventSource {
    /// The source a plugin's text carries.
    pub fn plugin(id: impl Into<String>) -> Self {
        EventSource::Plugin { plugin: id.into() }
    }
}

impl From<&dsh_plugin_api::MessageSource> for EventSource {
    fn from(source: &dsh_plugin_api::MessageSource) -> Self {
        match source {
            dsh_plugin_api::MessageSource::User => EventSource::User,
            dsh_plugin_api::MessageSource::Plugin { plugin } => {
                EventSource::plugin(plugin.as_str())
            }
            dsh_plugin_api::MessageSource::Agent { session_id } => EventSource::Agent {
                session_id: session_id.to_string(),
            },
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `Some` of whatever JSON is there, `null` included (a tool may answer
/// with structured `null`; a missing key is `None`).
fn some_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// One session event. Field order is the on-disk key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SessionEvent {
    /// `turn/start`: every other event lives inside a turn.
    #[serde(rename = "turn/start")]
    TurnStart {
        /// The turn.
        turn_id: String,
        /// What opened it.
        kind: TurnKind,
        /// The first turn of a process that loaded the session from its log
        /// (`dsh prompt --session`, ACP `session/load`): Claude Code's
        /// `--continue` run. After a `/compact` the history differs from one
        /// continued in the same process (recorded `S131-*`).
        #[serde(default, skip_serializing_if = "is_false")]
        loaded: bool,
    },
    /// `turn/end`.
    #[serde(rename = "turn/end")]
    TurnEnd {
        /// The turn.
        turn_id: String,
        /// Why it ended.
        reason: TurnEndReason,
        /// The rejection or error reason, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// `step/start`: one model request and its tool calls.
    #[serde(rename = "step/start")]
    StepStart {
        /// From 1.
        step: u32,
    },
    /// `step/end`.
    #[serde(rename = "step/end")]
    StepEnd {
        /// From 1.
        step: u32,
    },
    /// `user/message`: a prompt that went through.
    #[serde(rename = "user/message")]
    UserMessage {
        /// The text the model sees.
        content: String,
        /// Who sent it.
        source: EventSource,
        /// The prompt as submitted, when a plugin rewrote it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        original_content: Option<String>,
        /// The text as several parts of one message, in order, when a
        /// plugin rewrote the prompt into several text blocks (Claude
        /// Code's project slash command, S185): `content` is them joined by
        /// [`dsh_plugin_api::STEERING_PART_SEPARATOR`]; empty: one part.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<String>,
    },
    /// `prompt/blocked`: a prompt that never reached the model.
    #[serde(rename = "prompt/blocked")]
    PromptBlocked {
        /// The prompt.
        content: String,
        /// Who sent it.
        source: EventSource,
        /// Why it was blocked.
        reason: String,
        /// The plugin that blocked it, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plugin: Option<String>,
    },
    /// `context/message`: text a plugin added for the model.
    #[serde(rename = "context/message")]
    ContextMessage {
        /// The text.
        content: String,
        /// The plugin that added it (always a plugin source).
        source: EventSource,
        /// The role the model reads it in: `user` (not written, as in
        /// logs from before plugin API 1.7) or `system` (a background
        /// task's notification, `HostContext::inject_system_context`).
        #[serde(default, skip_serializing_if = "ContextRole::is_user")]
        role: ContextRole,
    },
    /// `steering/message`: model-facing text that forced another step.
    #[serde(rename = "steering/message")]
    SteeringMessage {
        /// The text (several parts: joined by
        /// [`dsh_plugin_api::STEERING_PART_SEPARATOR`]).
        content: String,
        /// The plugin that forced the step, or the user.
        source: EventSource,
        /// The text as several parts of one message, in order (plugin API
        /// 1.6, several hooks' blocks); empty: one part, `content`. Logs
        /// written before it have none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<String>,
    },
    /// `assistant/message`: the model's reply.
    #[serde(rename = "assistant/message")]
    AssistantMessage {
        /// Its text.
        content: String,
        /// Its tool calls, as the model made them.
        tool_calls: Vec<ModelToolCall>,
    },
    /// `tool/call`: the call as the model made it, arguments materialized.
    #[serde(rename = "tool/call")]
    ToolCall {
        /// The call.
        call_id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// `tool/updated`: a plugin replaced the call's arguments as one unit.
    #[serde(rename = "tool/updated")]
    ToolUpdated {
        /// The call.
        call_id: String,
        /// The new arguments.
        arguments: Value,
        /// The plugin that rewrote them.
        plugin: String,
    },
    /// `tool/denied`: the call did not run.
    #[serde(rename = "tool/denied")]
    ToolDenied {
        /// The call.
        call_id: String,
        /// Why.
        reason: String,
        /// The plugin, `approval` or `error`.
        by: String,
    },
    /// `tool/approval`: what the approval service decided.
    #[serde(rename = "tool/approval")]
    ToolApproval {
        /// The call.
        call_id: String,
        /// `allow_once`, `reject`, `unavailable`, ...
        outcome: String,
        /// Its reason (written as `null` when none).
        reason: Option<String>,
    },
    /// `tool/result`: what the model gets back.
    #[serde(rename = "tool/result")]
    ToolResult {
        /// The call.
        call_id: String,
        /// The tool.
        name: String,
        /// The text.
        content: String,
        /// Whether it failed.
        is_error: bool,
        /// The structured part, if any.
        #[serde(
            default,
            deserialize_with = "some_value",
            skip_serializing_if = "Option::is_none"
        )]
        structured: Option<Value>,
        /// The result's image blocks, after the text (`Read` of a PNG);
        /// written only when there are some.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<crate::model::MessageImage>,
    },
    /// `listener/failed`: a contained listener failure worth keeping.
    #[serde(rename = "listener/failed")]
    ListenerFailed {
        /// The seam.
        seam: String,
        /// The plugin.
        plugin: String,
        /// What went wrong.
        message: String,
    },
    /// `permission/mode`: the session's permission mode changed (an editor's
    /// `session/set_mode`); a resumed session starts in the last one.
    #[serde(rename = "permission/mode")]
    PermissionMode {
        /// Claude Code's spelling (`acceptEdits`, ...).
        mode: String,
        /// Who changed it (`acp`, `cli`).
        by: String,
    },
    /// `permission/rule`: a rule the session gave itself ("allow always",
    /// a hook's `updatedPermissions`); a resumed session keeps it.
    #[serde(rename = "permission/rule")]
    PermissionRule {
        /// `allow`, `ask` or `deny`.
        behavior: String,
        /// The rule, in Claude Code's syntax.
        rule: String,
        /// The call whose answer added it.
        call_id: String,
    },
    /// `user/notice`: text for the user only (a hook's `systemMessage`),
    /// appended by a plugin (`dsh_plugin_api::notice`).
    #[serde(rename = "user/notice")]
    UserNotice {
        /// What the user reads.
        text: String,
        /// Where it came from.
        source: String,
    },
    /// `session/compacted`: the history before this point was replaced by
    /// a summary (`/compact`, or the context window filled up); from here
    /// on the model sees `content` in its place.
    #[serde(rename = "session/compacted")]
    Compacted {
        /// `manual` or `auto`.
        trigger: String,
        /// The model's whole answer to the summary request.
        summary: String,
        /// The message that stands for the history before this point.
        content: String,
        /// User prompts kept before `content` (a Codex-style compaction
        /// keeps the user's earlier prompts; none for Claude's).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kept: Vec<String>,
        /// The last answer stays after `content`: the history from the
        /// last assistant message on (Claude Code's preserved segment,
        /// `S90-*`; absent for Codex's and in older logs).
        #[serde(default, skip_serializing_if = "is_false")]
        preserved: bool,
    },
    /// `command/display`: a line a plugin added to the output of the
    /// command the turn runs (plugin API 1.7,
    /// `dsh_plugin_api::display::CommandDisplay`; the Claude bridge's one
    /// per PreCompact and PostCompact hook run). A `/compact` turn's lines
    /// become its [`SessionEvent::CommandOutput`].
    #[serde(rename = "command/display")]
    CommandDisplay {
        /// The line.
        text: String,
    },
    /// `command/output`: a slash command (`/compact`) and its output, as
    /// Claude Code writes them into the conversation (recorded `S90-*`,
    /// `S110-*`, `S130-*`; [`super::history`] renders them).
    #[serde(rename = "command/output")]
    CommandOutput {
        /// The command (`/compact`).
        command: String,
        /// The text after it (`""` for none).
        args: String,
        /// What it printed (`Compacted ...`, `Compaction blocked by ...`).
        stdout: String,
        /// It compacted the history: Claude Code then finds the turn
        /// interrupted and the output stays in the command's message;
        /// otherwise the output goes with the next prompt.
        #[serde(default, skip_serializing_if = "is_false")]
        compacted: bool,
    },
    /// `context/usage`: the context in use against the window, as the model
    /// provider last reported it (`stream/usage`), kept when a turn ends
    /// with a report no compaction answered, so that the session loaded in
    /// another process compacts as this one would have (Codex's rollout
    /// keeps it too, `C90-text-then-resume`). A later `session/compacted`
    /// answers it.
    #[serde(rename = "context/usage")]
    ContextUsage {
        /// Tokens in use.
        used: u64,
        /// The window.
        size: u64,
    },
    /// `stream/text`: a text delta a provider streams while a request runs
    /// (live only, never logged).
    #[serde(rename = "stream/text")]
    StreamText {
        /// The delta.
        text: String,
    },
    /// `stream/thought`: a piece of the model's reasoning, streamed while a
    /// request runs (live only, never logged, never sent back).
    #[serde(rename = "stream/thought")]
    StreamThought {
        /// The delta.
        text: String,
    },
    /// `stream/usage`: how much of the context window a request used (live
    /// only, never logged).
    #[serde(rename = "stream/usage")]
    StreamUsage {
        /// Tokens in use.
        used: u64,
        /// The window.
        size: u64,
    },
    /// `stream/terminal`: a tool call's command runs in the editor's
    /// terminal `terminal_id` (live only, never logged: the terminal is
    /// released when the call ends).
    #[serde(rename = "stream/terminal")]
    StreamTerminal {
        /// The tool call.
        call_id: String,
        /// The editor's terminal.
        terminal_id: String,
    },
    /// Any other event, kept as the JSON object it was (see the module doc).
    #[serde(untagged)]
    Other(Value),
}

/// The `type` of every typed variant (each variant's `rename`; a test
/// checks this list against them).
const TYPED_KINDS: &[&str] = &[
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "user/message",
    "prompt/blocked",
    "context/message",
    "steering/message",
    "assistant/message",
    "tool/call",
    "tool/updated",
    "tool/denied",
    "tool/approval",
    "tool/result",
    "listener/failed",
    "permission/mode",
    "permission/rule",
    "user/notice",
    "session/compacted",
    "command/display",
    "command/output",
    "context/usage",
    "stream/text",
    "stream/thought",
    "stream/usage",
    "stream/terminal",
];

impl SessionEvent {
    /// Reads an event from JSON, losing nothing: the typed variant when it
    /// says exactly what `value` says, else [`SessionEvent::Other`].
    pub fn from_value(value: Value) -> SessionEvent {
        // A `type` no variant is named for can only be `Other`: a plugin
        // record (every hook run appends two) or a newer dsh's event is
        // kept without a typing attempt and without a copy of its JSON.
        if !value
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|kind| TYPED_KINDS.contains(&kind))
        {
            return SessionEvent::Other(value);
        }
        match SessionEvent::deserialize(&value) {
            Ok(SessionEvent::Other(_)) | Err(_) => SessionEvent::Other(value),
            Ok(typed) => {
                let same = serde_json::to_string(&typed).ok() == serde_json::to_string(&value).ok();
                if same {
                    typed
                } else {
                    SessionEvent::Other(value)
                }
            }
        }
    }

    /// The event's `type` (`""` for an `Other` without a string `type`).
    pub fn kind(&self) -> &str {
        match self {
            SessionEvent::TurnStart { .. } => "turn/start",
            SessionEvent::TurnEnd { .. } => "turn/end",
            SessionEvent::StepStart { .. } => "step/start",
            SessionEvent::StepEnd { .. } => "step/end",
            SessionEvent::UserMessage { .. } => "user/message",
            SessionEvent::PromptBlocked { .. } => "prompt/blocked",
            SessionEvent::ContextMessage { .. } => "context/message",
            SessionEvent::SteeringMessage { .. } => "steering/message",
            SessionEvent::AssistantMessage { .. } => "assistant/message",
            SessionEvent::ToolCall { .. } => "tool/call",
            SessionEvent::ToolUpdated { .. } => "tool/updated",
            SessionEvent::ToolDenied { .. } => "tool/denied",
            SessionEvent::ToolApproval { .. } => "tool/approval",
            SessionEvent::ToolResult { .. } => "tool/result",
            SessionEvent::ListenerFailed { .. } => "listener/failed",
            SessionEvent::PermissionMode { .. } => "permission/mode",
            SessionEvent::PermissionRule { .. } => "permission/rule",
            SessionEvent::StreamText { .. } => "stream/text",
            SessionEvent::UserNotice { .. } => "user/notice",
            SessionEvent::Compacted { .. } => "session/compacted",
            SessionEvent::ContextUsage { .. } => "context/usage",
            SessionEvent::CommandDisplay { .. } => "command/display",
            SessionEvent::CommandOutput { .. } => "command/output",
            SessionEvent::StreamThought { .. } => "stream/thought",
            SessionEvent::StreamUsage { .. } => "stream/usage",
            SessionEvent::StreamTerminal { .. } => "stream/terminal",
            SessionEvent::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// `turn/start`.
    pub fn turn_start(turn_id: &str, kind: TurnKind) -> Self {
        SessionEvent::TurnStart {
            turn_id: turn_id.into(),
            kind,
            loaded: false,
        }
    }

    /// `turn/end`.
    pub fn turn_end(turn_id: &str, reason: TurnEndReason, message: Option<&str>) -> Self {
        SessionEvent::TurnEnd {
            turn_id: turn_id.into(),
            reason,
            message: message.map(str::to_string),
        }
    }

    /// `context/message` attributed to `plugin`.
    pub fn context(content: impl Into<String>, plugin: impl Into<String>) -> Self {
        SessionEvent::context_as(content, plugin, ContextRole::User)
    }

    /// `context/message` attributed to `plugin`, read by the model in
    /// `role`.
    pub fn context_as(
        content: impl Into<String>,
        plugin: impl Into<String>,
        role: ContextRole,
    ) -> Self {
        SessionEvent::ContextMessage {
            content: content.into(),
            source: EventSource::plugin(plugin),
            role,
        }
    }

    /// `listener/failed`.
    pub fn listener_failed(seam: &str, plugin: &str, message: &str) -> Self {
        SessionEvent::ListenerFailed {
            seam: seam.into(),
            plugin: plugin.into(),
            message: message.into(),
        }
    }
}

/// An event as the log holds it: the event and the time it was appended.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    /// The event.
    pub event: SessionEvent,
    /// When it was appended, ms since the epoch (`None` for live-only
    /// events, and for an `Other` line whose `ts` was not where dsh puts it:
    /// then it stays inside the kept JSON).
    pub ts: Option<u64>,
}

impl LoggedEvent {
    /// An event not (yet) stamped.
    pub fn live(event: SessionEvent) -> Self {
        LoggedEvent { event, ts: None }
    }

    /// Reads one log line's JSON, losing nothing: a `ts` that is the last
    /// key and a whole number is the stamp; the rest is the event.
    pub fn from_value(mut value: Value) -> Self {
        let ts = match value.as_object_mut() {
            Some(map) if map.keys().next_back().is_some_and(|k| k == "ts") => {
                match map.get("ts").and_then(Value::as_u64) {
                    Some(ts) => {
                        map.shift_remove("ts");
                        Some(ts)
                    }
                    None => None,
                }
            }
            _ => None,
        };
        LoggedEvent {
            event: SessionEvent::from_value(value),
            ts,
        }
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        self.event.kind()
    }

    /// The line as JSON (what [`Serialize`] writes).
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::to_value(&self.event).unwrap_or(Value::Null);
        if let (Some(ts), Some(map)) = (self.ts, value.as_object_mut()) {
            map.insert("ts".into(), Value::from(ts));
        }
        value
    }
}

/// Events as their log lines' JSON (what a snapshot or `--json` shows).
pub fn wire(events: &[LoggedEvent]) -> Vec<Value> {
    events.iter().map(LoggedEvent::to_value).collect()
}

impl Serialize for LoggedEvent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LoggedEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(LoggedEvent::from_value)
    }
}

impl LoggedEvent {
    /// The log line, without its newline: exactly what [`Self::to_value`]
    /// writes, serialized straight from the event rather than through a
    /// `Value` copy of it (the log writes one per event). The stamp goes
    /// last, where `to_value` inserts it: before the closing brace of an
    /// object that has no `ts` of its own.
    pub fn line(&self) -> String {
        let has_own_ts = match &self.event {
            SessionEvent::Other(value) => value.get("ts").is_some(),
            _ => false,
        };
        let Some(ts) = self.ts else {
            return serde_json::to_string(&self.event)
                .unwrap_or_else(|_| self.to_value().to_string());
        };
        if has_own_ts {
            // `to_value` overwrites it in place (no log line reads back so).
            return self.to_value().to_string();
        }
        match serde_json::to_string(&self.event) {
            Ok(mut line) if line.ends_with('}') => {
                line.pop();
                if !line.ends_with('{') {
                    line.push(',');
                }
                line.push_str("\"ts\":");
                line.push_str(&ts.to_string());
                line.push('}');
                line
            }
            _ => self.to_value().to_string(),
        }
    }
}

impl std::fmt::Display for LoggedEvent {
    /// The log line, without its newline.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// Lines exactly as the previous (untyped, `json!`-built) format wrote
    /// them, one of each kind, with the optional fields both ways.
    const PREVIOUS_FORMAT: &str = r#"{"type":"turn/start","turn_id":"turn_1","kind":"prompt","ts":1700000000001}
{"type":"prompt/blocked","content":"nope","source":{"kind":"user"},"reason":"no","ts":1700000000002}
{"type":"prompt/blocked","content":"nope","source":{"kind":"user"},"reason":"no","plugin":"gate","ts":1700000000002}
{"type":"user/message","content":"hi","source":{"kind":"user"},"ts":1700000000003}
{"type":"user/message","content":"hi!","source":{"kind":"agent","session_id":"ses_1"},"original_content":"hi","ts":1700000000003}
{"type":"context/message","content":"ctx","source":{"kind":"plugin","plugin":"gate"},"ts":1700000000004}
{"type":"step/start","step":1,"ts":1700000000005}
{"type":"steering/message","content":"go on","source":{"kind":"user"},"ts":1700000000006}
{"type":"steering/message","content":"go on","source":{"kind":"plugin","plugin":"stopper"},"ts":1700000000006}
{"type":"assistant/message","content":"","tool_calls":[{"id":"c1","name":"Bash","arguments":{"command":"ls"}}],"ts":1700000000007}
{"type":"tool/call","call_id":"c1","name":"Bash","arguments":{"command":"ls"},"ts":1700000000008}
{"type":"tool/updated","call_id":"c1","arguments":{"command":"ls -a"},"plugin":"gate","ts":1700000000009}
{"type":"tool/approval","call_id":"c1","outcome":"unavailable","reason":null,"ts":1700000000010}
{"type":"tool/approval","call_id":"c1","outcome":"reject","reason":"no","ts":1700000000010}
{"type":"tool/denied","call_id":"c1","reason":"no","by":"approval","ts":1700000000011}
{"type":"tool/result","call_id":"c1","name":"Bash","content":"a b","is_error":false,"ts":1700000000012}
{"type":"tool/result","call_id":"c1","name":"Bash","content":"a b","is_error":false,"structured":null,"ts":1700000000012}
{"type":"tool/result","call_id":"c1","name":"Bash","content":"a","is_error":true,"structured":{"exit":1},"ts":1700000000012}
{"type":"listener/failed","seam":"tools/result","plugin":"p","message":"boom","ts":1700000000013}
{"type":"step/end","step":1,"ts":1700000000014}
{"type":"turn/end","turn_id":"turn_1","reason":"completed","ts":1700000000015}
{"type":"turn/end","turn_id":"turn_1","reason":"rejected","message":"not today","ts":1700000000015}"#;

    #[test]
    fn the_previous_format_reads_typed_and_writes_back_byte_for_byte() {
        for line in PREVIOUS_FORMAT.lines() {
            let event: LoggedEvent = serde_json::from_str(line).unwrap();
            assert!(
                !matches!(event.event, SessionEvent::Other(_)),
                "read untyped: {line}"
            );
            assert!(event.ts.is_some());
            assert_eq!(serde_json::to_string(&event).unwrap(), line);
        }
    }

    #[test]
    fn system_context_reads_typed_and_writes_back_byte_for_byte() {
        let line = r#"{"type":"context/message","content":"woke","source":{"kind":"plugin","plugin":"hooks-claude"},"role":"system","ts":5}"#;
        let event: LoggedEvent = serde_json::from_str(line).unwrap();
        let SessionEvent::ContextMessage { role, .. } = &event.event else {
            panic!("read untyped: {line}");
        };
        assert_eq!(*role, ContextRole::System);
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
        assert_eq!(
            SessionEvent::context_as("woke", "hooks-claude", ContextRole::System),
            event.event
        );
    }

    #[test]
    fn developer_context_reads_typed_and_writes_back_byte_for_byte() {
        let line = r#"{"type":"context/message","content":"ctx","source":{"kind":"plugin","plugin":"hooks-codex"},"role":"developer","ts":5}"#;
        let event: LoggedEvent = serde_json::from_str(line).unwrap();
        assert_eq!(
            SessionEvent::context_as("ctx", "hooks-codex", ContextRole::Developer),
            event.event
        );
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }

    #[test]
    fn context_roles_parse_by_name_and_refuse_others_by_name() {
        for role in [
            ContextRole::User,
            ContextRole::System,
            ContextRole::Developer,
        ] {
            assert_eq!(role.as_str().parse::<ContextRole>(), Ok(role));
        }
        let err = "boss".parse::<ContextRole>().unwrap_err();
        assert!(
            err.contains("`boss`") && err.contains("`developer`"),
            "{err}"
        );
    }

    #[test]
    fn unknown_and_unexpected_events_round_trip_unchanged() {
        for line in [
            // A plugin record and a newer dsh's event.
            r#"{"type":"hook/invoked","plugin":"claude-hooks","event":"PreToolUse","ts":5}"#,
            r#"{"type":"turn/paused","turn_id":"t","ts":5}"#,
            // Known types saying more, or otherwise, than this dsh's variant.
            r#"{"type":"turn/start","turn_id":"t","kind":"prompt","extra":1,"ts":5}"#,
            r#"{"type":"turn/end","turn_id":"t","reason":"timed-out","ts":5}"#,
            r#"{"type":"user/message","turn_id":"t","content":[{"type":"text","text":"x"}]}"#,
            r#"{"kind":"prompt","type":"turn/start","turn_id":"t","ts":5}"#,
            r#"{"type":"step/start","ts":"late","step":1}"#,
            r#"{"no_type":true}"#,
        ] {
            let event: LoggedEvent = serde_json::from_str(line).unwrap();
            assert!(
                matches!(event.event, SessionEvent::Other(_)),
                "typed: {line}"
            );
            assert_eq!(serde_json::to_string(&event).unwrap(), line);
        }
        let record = LoggedEvent::from_value(json!({"type": "hook/result", "ok": true}));
        assert_eq!(record.kind(), "hook/result");
    }

    #[test]
    fn every_typed_variant_is_in_the_typed_kinds() {
        // Each variant's `rename` in this file's source: a variant missing
        // from the list would be read back as `Other`.
        let source = include_str!("events.rs");
        let enum_body = &source[source.find("pub enum SessionEvent {").unwrap()..];
        let enum_body = &enum_body[..enum_body.find("\n}\n").unwrap()];
        let renames: Vec<&str> = enum_body
            .split("#[serde(rename = \"")
            .skip(1)
            .map(|rest| &rest[..rest.find('"').unwrap()])
            .collect();
        assert_eq!(renames, TYPED_KINDS);
        for line in PREVIOUS_FORMAT.lines() {
            let value: Value = serde_json::from_str(line).unwrap();
            let kind = value["type"].as_str().unwrap();
            assert!(TYPED_KINDS.contains(&kind), "{kind}");
        }
    }

    #[test]
    fn a_line_is_what_the_value_route_writes() {
        let mut events: Vec<LoggedEvent> = PREVIOUS_FORMAT
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for value in [
            json!({"type": "hook/invoked", "text": "é \u{1} \"q\" }", "n": [1.5, -2, {"z": null}]}),
            json!({"type": "x", "ts": "kept inside", "after": 1}),
            json!({}),
            json!({"no_type": {"nested": {"ts": 3}}}),
            json!("a string}"),
            json!([1, {"a": "}"}]),
        ] {
            events.push(LoggedEvent {
                event: SessionEvent::Other(value.clone()),
                ts: Some(42),
            });
            events.push(LoggedEvent::live(SessionEvent::Other(value)));
        }
        events.push(LoggedEvent::live(SessionEvent::turn_start(
            "t",
            TurnKind::Prompt,
        )));
        for event in &events {
            assert_eq!(event.line(), event.to_value().to_string(), "{event:?}");
            assert_eq!(event.to_string(), event.line());
        }
    }
}
