//! `model-scripted`: a model that answers from a script. The default
//! manifest's model (so dsh runs offline) and the model of every test.
//!
//! Config: `script`, either a list of replies or the path (relative to the
//! manifest's folder when not absolute) of a YAML or JSON file holding one; each reply is `{text}` and/or `{tool_calls: [{name, arguments}]}`,
//! optionally with the `model` name and the `usage` accounting a provider would report.
//! `record`: a file (relative paths as for `script`) to which every request is appended as one JSON line.
//! A `"$AGENT_ID"` string in a call's arguments stands for the `agent_id`
//! the newest tool result of the request names (a `spawn_agent` answer);
//! a `"$BG_ID"` string for the id the newest tool result naming one gave
//! (`… with ID: <id>.`: a background `Bash` call's answer); a
//! `"$EXEC_SESSION"` string for the number of the newest `Process running
//! with session ID <n>` (an `exec_command` still running).
//! `subagent_script` (same forms as `script`): the replies for every
//! session but the first that asks, so a sub-agent running beside its
//! parent gets its own in order.
//! A reply may also carry `context: {used, size}` (sent as the provider's
//! `stream/usage` report before the reply: tokens in use against the
//! window) or be `error: {status, message}` (the request fails with that
//! HTTP status, as a provider's refusal).
//! Running out of replies is an error that fails the turn.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_plugin_api::services::model::METHOD_COMPLETE;
use dsh_plugin_api::{Host, Plugin};
use serde::{Deserialize, Serialize};

use super::MODEL_SERVICE;
use super::wire::{
    ModelError, ModelErrorKind, ModelReply, ModelRequest, ModelToolCall, StopReason,
};

/// One scripted reply.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedReply {
    /// Text to answer with.
    #[serde(default)]
    pub text: Option<String>,
    /// Tool calls to make.
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    /// The model name the reply says answered (a provider's `model`).
    #[serde(default)]
    pub model: Option<String>,
    /// The token accounting the reply reports (a provider's `usage`).
    #[serde(default)]
    pub usage: Option<serde_json::Value>,
    /// The context in use to report with this reply (`stream/usage`).
    #[serde(default)]
    pub context: Option<ScriptedUsage>,
    /// Fail the request instead of answering.
    #[serde(default)]
    pub error: Option<ScriptedError>,
}

/// A scripted usage report (`stream/usage`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedUsage {
    /// Tokens in use.
    pub used: u64,
    /// The context window.
    pub size: u64,
}

/// A scripted failure: the endpoint answered `status`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedError {
    /// The HTTP status.
    pub status: u16,
    /// The server's message.
    pub message: String,
}

/// One scripted tool call.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Tool name.
    pub name: String,
    /// Arguments: an object, or JSON text in a string (handed to the tool
    /// as written, as `model-openai` hands over the model's own text).
    #[serde(default)]
    pub arguments: serde_json::Value,
}

/// A script inline or in a file.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ScriptSource {
    /// Replies inline.
    Inline(Vec<ScriptedReply>),
    /// A YAML or JSON file of replies.
    File(PathBuf),
}

impl Default for ScriptSource {
    fn default() -> Self {
        ScriptSource::Inline(Vec::new())
    }
}

/// `model-scripted` config.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedConfig {
    /// The replies, in order.
    pub script: ScriptSource,
    /// Append every request here as one JSON line.
    pub record: Option<PathBuf>,
    /// Replies for every session but the first that asks (sub-agents that
    /// run beside their parent), in order; without it every session takes
    /// from `script`.
    pub subagent_script: Option<ScriptSource>,
}

/// The scripted model plugin.
pub struct ScriptedModel;

struct Script {
    replies: Vec<ScriptedReply>,
    next: AtomicUsize,
    record: Option<Mutex<PathBuf>>,
    /// `subagent_script`'s replies and the session `script` answers.
    sub: Option<(Vec<ScriptedReply>, AtomicUsize, Mutex<Option<String>>)>,
}

impl Script {
    fn answer(
        &self,
        request: &ModelRequest,
    ) -> Result<(ModelReply, Option<ScriptedUsage>), ModelError> {
        if let Some(record) = &self.record {
            let other = |m: String| ModelError::new(ModelErrorKind::Other, m);
            let path = record
                .lock()
                .map_err(|_| other("record lock poisoned".to_string()))?;
            let line = serde_json::json!({"messages": request.messages, "tools": request.tools,
                "session_id": request.session_id});
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&*path)
                .map_err(|e| other(format!("cannot open record file {}: {e}", path.display())))?;
            writeln!(file, "{line}")
                .map_err(|e| other(format!("cannot write record file {}: {e}", path.display())))?;
        }
        let (replies, next, lane) = match &self.sub {
            Some((replies, next, main)) => {
                let mut main = main.lock().map_err(|_| {
                    ModelError::new(ModelErrorKind::Other, "script lock poisoned".to_string())
                })?;
                let first = main.get_or_insert_with(|| request.session_id.clone());
                if *first == request.session_id {
                    (&self.replies, &self.next, "")
                } else {
                    (replies, next, "s")
                }
            }
            None => (&self.replies, &self.next, ""),
        };
        let index = next.fetch_add(1, Ordering::SeqCst);
        let Some(reply) = replies.get(index) else {
            return Err(ModelError::new(
                ModelErrorKind::Other,
                format!(
                    "scripted model is out of replies: the script has {} and request {} asked for another",
                    replies.len(),
                    index + 1
                ),
            ));
        };
        if let Some(e) = &reply.error {
            return Err(ModelError::new(
                ModelErrorKind::Status { code: e.status },
                e.message.clone(),
            ));
        }
        let tool_calls: Vec<ModelToolCall> = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| ModelToolCall {
                // A sub-agent's calls are numbered apart (`call_s1_1`).
                id: format!("call_{lane}{}_{}", index + 1, i + 1),
                name: c.name.clone(),
                arguments: if c.arguments.is_null() {
                    serde_json::json!({})
                } else {
                    with_placeholders(&c.arguments, request)
                },
            })
            .collect();
        let answer = ModelReply {
            text: reply.text.clone().unwrap_or_default(),
            stop_reason: if tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            },
            tool_calls,
            model: reply.model.clone(),
            usage: reply.usage.clone(),
        };
        Ok((answer, reply.context))
    }
}

/// What a placeholder stands for, found in one tool result's content.
type FindValue = fn(&str) -> Option<serde_json::Value>;

/// The placeholders a call's arguments may hold, each bound to what the
/// newest tool result of the request that names one says, as a model
/// would quote it:
/// - `"$AGENT_ID"`: the `agent_id` of a `spawn_agent` answer (a string);
/// - `"$BG_ID"`: the id of `Command running in background with ID: <id>.`
///   (a background `Bash` call's answer; a string);
/// - `"$EXEC_SESSION"`: the number of `Process running with session ID
///   <n>` (an `exec_command` still running; a number, as `write_stdin`
///   takes it).
const PLACEHOLDERS: [(&str, FindValue); 3] = [
    ("$AGENT_ID", |content| {
        let v: serde_json::Value = serde_json::from_str(content).ok()?;
        v.get("agent_id")?.as_str().map(serde_json::Value::from)
    }),
    ("$BG_ID", |content| {
        let (_, rest) = content.split_once(" with ID: ")?;
        let id: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        (!id.is_empty()).then(|| serde_json::Value::from(id))
    }),
    ("$EXEC_SESSION", |content| {
        let (_, rest) = content.split_once("Process running with session ID ")?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<i64>().ok().map(serde_json::Value::from)
    }),
];

/// `arguments` with every placeholder string ([`PLACEHOLDERS`]) replaced.
/// Arguments given as JSON text (a string, as a provider hands over the
/// model's own text) keep their text: the quoted placeholder in it is
/// replaced by the value's JSON.
fn with_placeholders(arguments: &serde_json::Value, request: &ModelRequest) -> serde_json::Value {
    use serde_json::Value;
    fn replace(v: &Value, name: &str, with: &Value) -> Value {
        match v {
            Value::String(s) if s == name => with.clone(),
            Value::Array(a) => Value::Array(a.iter().map(|x| replace(x, name, with)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), replace(x, name, with)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let text_form = match arguments {
        Value::String(text) if serde_json::from_str::<Value>(text).is_ok() => Some(text),
        _ => None,
    };
    let text = text_form.cloned().unwrap_or_else(|| arguments.to_string());
    let mut out = arguments.clone();
    for (name, find) in PLACEHOLDERS {
        let quoted = format!("\"{name}\"");
        if !text.contains(&quoted) {
            continue;
        }
        let found = request
            .messages
            .iter()
            .rev()
            .filter(|m| m.role == "tool")
            .find_map(|m| find(&m.content));
        if let Some(value) = found {
            out = match &out {
                Value::String(t) if text_form.is_some() => {
                    Value::String(t.replace(&quoted, &value.to_string()))
                }
                other => replace(other, name, &value),
            };
        }
    }
    out
}

/// The largest script file read; a longer one is refused unparsed.
const MAX_SCRIPT_BYTES: u64 = 64 << 20;

fn read_script(path: &Path) -> Result<Vec<ScriptedReply>, String> {
    use std::io::Read as _;
    use std::os::unix::fs::FileTypeExt as _;
    let cannot = |e: String| format!("key `script`: cannot read {}: {e}", path.display());
    // A FIFO is read as a pipe, waiting for its writer (tests hold a
    // reload in apply that way); a device is refused: /dev/zero never ends.
    let meta = std::fs::metadata(path).map_err(|e| cannot(e.to_string()))?;
    if !meta.is_file() && !meta.file_type().is_fifo() {
        return Err(cannot("not a regular file".into()));
    }
    let file = std::fs::File::open(path).map_err(|e| cannot(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCRIPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot(e.to_string()))?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(cannot(format!("larger than {MAX_SCRIPT_BYTES} bytes")));
    }
    let text = String::from_utf8(bytes).map_err(|e| cannot(format!("not UTF-8: {e}")))?;
    serde_yaml::from_str(&text).map_err(|e| format!("key `script`: {}: {e}", path.display()))
}

impl Plugin for ScriptedModel {
    type Config = ScriptedConfig;
    const NAME: &'static str = "model-scripted";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn apply(host: &Host, config: ScriptedConfig) -> Result<Self, String> {
        let replies = match &config.script {
            ScriptSource::Inline(replies) => replies.clone(),
            ScriptSource::File(path) => read_script(&host.resolve_path(path))?,
        };
        let sub = match &config.subagent_script {
            None => None,
            Some(ScriptSource::Inline(r)) => Some(r.clone()),
            Some(ScriptSource::File(path)) => Some(
                read_script(&host.resolve_path(path))
                    .map_err(|e| e.replacen("key `script`", "key `subagent_script`", 1))?,
            ),
        };
        let script = std::sync::Arc::new(Script {
            replies,
            next: AtomicUsize::new(0),
            record: config.record.map(|p| Mutex::new(host.resolve_path(p))),
            sub: sub.map(|r| (r, AtomicUsize::new(0), Mutex::new(None))),
        });
        let streams = host.clone();
        host.provide_service(MODEL_SERVICE, move |method, args| {
            let script = script.clone();
            let host = streams.clone();
            async move {
                let request = read_request(&method, args).map_err(|e| e.to_wire())?;
                let (reply, usage) = script.answer(&request).map_err(|e| e.to_wire())?;
                if let Some(u) = usage {
                    let event =
                        serde_json::json!({"type": "stream/usage", "used": u.used, "size": u.size});
                    if let Err(e) = host.stream_event(&request.session_id, &event) {
                        tracing::debug!("stream event dropped: {e}");
                    }
                }
                serde_json::to_value(reply)
                    .map_err(|e| ModelError::new(ModelErrorKind::Other, e.to_string()).to_wire())
            }
        })?;
        Ok(ScriptedModel)
    }
}

/// Reads a `complete` call's arguments (shared by the built-in providers):
/// a wrong method or malformed arguments are [`ModelErrorKind::Request`].
pub(crate) fn read_request(
    method: &str,
    args: serde_json::Value,
) -> Result<ModelRequest, ModelError> {
    if method != METHOD_COMPLETE {
        return Err(ModelError::new(
            ModelErrorKind::Request,
            format!("the model service has no method `{method}`"),
        ));
    }
    serde_json::from_value(args).map_err(|e| {
        ModelError::new(
            ModelErrorKind::Request,
            format!("malformed model request: {e}"),
        )
    })
}
