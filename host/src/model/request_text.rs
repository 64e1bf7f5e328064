//! A model request as the loop sends it, written straight to text
//! (issue 15).
//!
//! The loop used to type every tool's schema (a spec's JSON text) as a
//! `serde_json::Value` for each request, only to write it back to text
//! with the rest of the [`ModelRequest`](super::ModelRequest): a tree of
//! values built, written and freed per tool, twice a turn. [`ToolText`]
//! holds a schema's compact text instead, made once per distinct schema
//! the way the `Value` route made it (parsed, then written: key order
//! kept, duplicate keys and number forms resolved as before, a schema that
//! is not JSON sent as `{"type":"object"}`), and [`RequestText`] writes
//! exactly the text `serde_json::to_string` of the same `ModelRequest`
//! writes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::{ChatMessage, ModelTool};

/// Distinct schemas kept at most; past it the cache starts over (tools
/// come and go with reloads and MCP servers).
const MAX_SCHEMAS: usize = 1024;

/// What a schema that is not JSON is sent as (as before).
const FALLBACK_SCHEMA: &str = r#"{"type":"object"}"#;

/// A schema's compact JSON text, written as it is.
#[derive(Debug, Clone)]
struct Schema(Arc<RawValue>);

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.as_ref().serialize(serializer)
    }
}

/// The compact text of the spec schema `text`, from the cache or made now.
fn schema(text: &str) -> Schema {
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Arc<RawValue>>>> = OnceLock::new();
    let cache = SCHEMAS.get_or_init(Mutex::default);
    if let Some(known) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(text) {
        return Schema(known.clone());
    }
    let value: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    let compact = serde_json::to_string(&value).unwrap_or_else(|_| FALLBACK_SCHEMA.to_string());
    let raw: Arc<RawValue> = match RawValue::from_string(compact) {
        Ok(raw) => Arc::from(raw),
        // Unreachable: serde_json wrote it. Still, nothing panics here.
        Err(_) => match RawValue::from_string(FALLBACK_SCHEMA.to_string()) {
            Ok(raw) => Arc::from(raw),
            Err(_) => return Schema(Arc::from(RawValue::NULL.to_owned())),
        },
    };
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= MAX_SCHEMAS {
        cache.clear();
    }
    cache.insert(text.to_string(), raw.clone());
    Schema(raw)
}

/// A tool offered to the model, as [`ModelTool`](super::ModelTool) writes.
#[derive(Debug, Clone, Serialize)]
pub struct ToolText {
    name: String,
    description: String,
    input_schema: Schema,
}

impl ToolText {
    /// The tool `name` with `description` and the JSON Schema text of a
    /// tool spec.
    pub fn new(name: &str, description: &str, input_schema: &str) -> ToolText {
        ToolText {
            name: name.to_string(),
            description: description.to_string(),
            input_schema: schema(input_schema),
        }
    }

    /// A tool as a provider read it from a request's text: the schema
    /// written as the `Value` it would have been typed as writes.
    pub fn from_raw(name: String, description: String, input_schema: &RawValue) -> ToolText {
        ToolText {
            name,
            description,
            input_schema: schema(input_schema.get()),
        }
    }

    /// A typed tool, its schema written once.
    pub fn from_tool(tool: ModelTool) -> ToolText {
        let text = serde_json::to_string(&tool.input_schema)
            .unwrap_or_else(|_| FALLBACK_SCHEMA.to_string());
        ToolText {
            name: tool.name,
            description: tool.description,
            input_schema: schema(&text),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Its JSON Schema, as compact text.
    pub fn input_schema(&self) -> &RawValue {
        &self.input_schema.0
    }
}

/// A tool as a request's text holds it, its schema left as text (what
/// [`ModelTool`] reads, but for the schema's type).
#[derive(Debug, Deserialize)]
pub struct IncomingTool {
    name: String,
    description: String,
    input_schema: Box<RawValue>,
}

impl IncomingTool {
    /// The tool, its schema written as [`ToolText::from_raw`] writes it.
    pub fn into_text(self) -> ToolText {
        ToolText::from_raw(self.name, self.description, &self.input_schema)
    }
}

/// A [`ModelRequest`](super::ModelRequest) of borrowed parts, written as
/// it writes.
#[derive(Debug, Serialize)]
pub struct RequestText<'a> {
    /// The session asking.
    pub session_id: &'a str,
    /// History derived from the session log.
    pub messages: &'a [ChatMessage],
    /// Tools the model may call.
    pub tools: &'a [ToolText],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelRequest;

    /// The text the loop wrote before: each schema typed as a `Value`.
    fn value_route(messages: &[ChatMessage], tools: &[(&str, &str, &str)]) -> String {
        let request = ModelRequest {
            session_id: "ses_1".into(),
            messages: messages.to_vec(),
            tools: tools
                .iter()
                .map(|(name, description, schema)| ModelTool {
                    name: name.to_string(),
                    description: description.to_string(),
                    input_schema: serde_json::from_str(schema)
                        .unwrap_or(serde_json::json!({"type": "object"})),
                })
                .collect(),
        };
        serde_json::to_string(&request).unwrap()
    }

    #[test]
    fn a_request_text_is_what_the_value_route_writes() {
        let messages = vec![
            ChatMessage::new("user", "hi \u{e9} \"quoted\"\n"),
            ChatMessage::new("assistant", ""),
        ];
        let tools = [
            // Pretty-printed, keys out of order: kept in order, compacted.
            (
                "Bash",
                "Runs a command.",
                "{\n  \"type\": \"object\",\n  \"properties\": {\"z\": {}, \"a\": {\"type\": \"string\"}},\n  \"required\": [\"a\"]\n}",
            ),
            // Duplicate keys (the last wins), number forms, escapes.
            (
                "Odd",
                "d\u{e9}scription",
                r#"{"a": 1, "a": 2.50, "b": 1e3, "c": "\u00e9\/", "d": -0}"#,
            ),
            // Not JSON: sent as an object schema.
            ("Broken", "", "{not json"),
            // The same schema twice (from the cache the second time).
            ("Bash2", "x", r#"{"type":"object"}"#),
            ("Bash3", "x", r#"{"type":"object"}"#),
        ];
        let texts: Vec<ToolText> = tools
            .iter()
            .map(|(n, d, s)| ToolText::new(n, d, s))
            .collect();
        // Twice: the second time every schema comes from the cache.
        for _ in 0..2 {
            let written = serde_json::to_string(&RequestText {
                session_id: "ses_1",
                messages: &messages,
                tools: &texts,
            })
            .unwrap();
            assert_eq!(written, value_route(&messages, &tools));
        }
        let none = serde_json::to_string(&RequestText {
            session_id: "ses_1",
            messages: &messages,
            tools: &[],
        })
        .unwrap();
        assert_eq!(none, value_route(&messages, &[]));
    }
}
