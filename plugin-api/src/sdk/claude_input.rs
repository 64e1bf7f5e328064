//! Claude Code's input validation texts, from a tool's JSON schema.
//!
//! Claude Code checks a call's arguments against the tool's input schema
//! (zod) before any hook hears of the call, and a refusal reads
//! `<tool_use_error>InputValidationError: …</tool_use_error>`. Simple
//! issues are told in lines (`<tool> failed due to the following issue:`,
//! then each of: `The required parameter \`x\` is missing`, `An unexpected
//! parameter \`x\` was provided`, `The parameter \`x\` type is expected as
//! \`string\` but provided as \`number\``); any other issue (a value outside
//! an enum, a union no branch of which takes the value) as zod's issue list,
//! JSON with a two-space indent. Recorded: `S220-invalid` (task tools),
//! `S239-*` (`Bash`, `Read`, `Write`, `Edit`), `S230-*`/`S234-*` (worktree
//! tools). A tool whose plugin provides the service `input-check/<tool>`
//! ([`crate::services::input_check`]) refuses such calls before any
//! listener hears of them; [`provide_check`] provides one from a schema.
//!
//! The schema keywords read are those Claude Code's tool schemas use at
//! the top level: `properties`, `required`, `additionalProperties: false`,
//! `type`, `enum`, `const`, `anyOf`. Anything else is not checked here.

use serde_json::{Map, Value, json};

/// Why `args` does not fit `schema`, in Claude Code's words; `None` when
/// it fits. The `lenient` properties also take their value in a string, as
/// Claude Code's do: a number (`Bash`'s `timeout: "5"`, `Read`'s `offset`)
/// or `"true"`/`"false"` (`Edit`'s `replace_all`; S239-*).
pub fn refusal(tool: &str, schema: &Value, args: &Value, lenient: &[&str]) -> Option<String> {
    let body = issues(tool, schema, args, lenient)?;
    Some(format!(
        "<tool_use_error>InputValidationError: {body}</tool_use_error>"
    ))
}

/// The refusal's body: the issue lines, or zod's issue list.
fn issues(tool: &str, schema: &Value, args: &Value, lenient: &[&str]) -> Option<String> {
    let Value::Object(map) = args else {
        let line = format!(
            "The input is expected as `object` but provided as `{}`",
            js_type(args)
        );
        return Some(lines(tool, &[line]));
    };
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut missing = Vec::new();
    let mut mismatched = Vec::new();
    let mut listed = Vec::new();
    for (name, property) in properties {
        match map.get(name) {
            None if required.contains(&name.as_str()) => {
                missing.push(format!("The required parameter `{name}` is missing"));
            }
            None => {}
            Some(Value::String(s))
                if lenient.contains(&name.as_str())
                    && in_string(&property["type"], s).is_some() => {}
            Some(value) => match property_issue(property, value) {
                None => {}
                Some(Problem::Type(want)) => mismatched.push(format!(
                    "The parameter `{name}` type is expected as `{want}` but provided as `{}`",
                    js_type(value)
                )),
                Some(Problem::Listed(mut issue)) => {
                    issue["path"] = json!([name]);
                    listed.push(with_message_last(issue));
                }
            },
        }
    }
    let closed = schema["additionalProperties"] == Value::Bool(false);
    let unexpected: Vec<String> = map
        .keys()
        .filter(|k| closed && !properties.contains_key(k.as_str()))
        .map(|k| format!("An unexpected parameter `{k}` was provided"))
        .collect();
    let simple: Vec<String> = missing
        .into_iter()
        .chain(unexpected)
        .chain(mismatched)
        .collect();
    if !simple.is_empty() {
        return Some(lines(tool, &simple));
    }
    if listed.is_empty() {
        return None;
    }
    serde_json::to_string_pretty(&Value::Array(listed)).ok()
}

/// `<tool> failed due to the following issue(s):` and the lines.
fn lines(tool: &str, lines: &[String]) -> String {
    let word = if lines.len() > 1 { "issues" } else { "issue" };
    format!(
        "{tool} failed due to the following {word}:\n{}",
        lines.join("\n")
    )
}

/// What is wrong with one property's value.
enum Problem {
    /// Not of the schema's one type (told in a line).
    Type(&'static str),
    /// A zod issue (told in the list); its `path` is set by the caller.
    Listed(Value),
}

fn property_issue(schema: &Value, value: &Value) -> Option<Problem> {
    if let Some(branches) = schema["anyOf"].as_array() {
        let mut errors = Vec::new();
        for branch in branches {
            match branch_issue(branch, value) {
                None => return None,
                Some(issue) => errors.push(json!([issue])),
            }
        }
        return Some(Problem::Listed(json!({
            "code": "invalid_union", "errors": errors, "path": [], "message": "Invalid input"
        })));
    }
    if let Some(want) = schema["type"].as_str()
        && !is_type(want, value)
    {
        return Some(Problem::Type(js_name(want)));
    }
    value_issue(schema, value).map(Problem::Listed)
}

/// One `anyOf` branch's issue with `value` (its path relative: `[]`).
fn branch_issue(schema: &Value, value: &Value) -> Option<Value> {
    if let Some(want) = schema["type"].as_str()
        && !is_type(want, value)
    {
        return Some(json!({
            "expected": js_name(want), "code": "invalid_type", "path": [],
            "message": format!("Invalid input: expected {}, received {}", js_name(want), js_type(value))
        }));
    }
    value_issue(schema, value)
}

/// An `enum` or `const` the value is not (zod's `invalid_value`).
fn value_issue(schema: &Value, value: &Value) -> Option<Value> {
    if let Some(options) = schema["enum"].as_array() {
        if options.contains(value) {
            return None;
        }
        let quoted: Vec<String> = options.iter().map(Value::to_string).collect();
        return Some(json!({
            "code": "invalid_value", "values": options, "path": [],
            "message": format!("Invalid option: expected one of {}", quoted.join("|"))
        }));
    }
    match schema.get("const") {
        Some(c) if c != value => Some(json!({
            "code": "invalid_value", "values": [c], "path": [],
            "message": format!("Invalid input: expected {c}")
        })),
        _ => None,
    }
}

/// zod writes `message` after `path`: moved there once `path` is set.
fn with_message_last(mut issue: Value) -> Value {
    if let Some(map) = issue.as_object_mut()
        && let Some(message) = map.remove("message")
    {
        map.insert("message".into(), message);
    }
    issue
}

/// A string JavaScript's `Number()` reads as a finite number.
pub fn is_number(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty() && t.parse::<f64>().is_ok_and(f64::is_finite)
}

/// The value a lenient property's string stands for, given the property's
/// schema `type`: a number, or `true`/`false`; `None` when it stands for
/// none.
pub fn in_string(kind: &Value, s: &str) -> Option<Value> {
    match kind.as_str()? {
        "number" | "integer" if is_number(s) => {
            s.trim()
                .parse::<f64>()
                .ok()
                .map(|f| match f.fract() == 0.0 && f.abs() < 9.0e15 {
                    // Written as JavaScript writes it: `5`, not `5.0`.
                    true => Value::from(f as i64),
                    false => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
                })
        }
        "boolean" if s == "true" => Some(Value::Bool(true)),
        "boolean" if s == "false" => Some(Value::Bool(false)),
        _ => None,
    }
}

/// The properties of Claude Code 2.1.197's built-in tools that also take
/// their value in a string (recorded `S239-*`), by name.
pub fn builtin_lenient(tool: &str) -> &'static [&'static str] {
    match tool {
        "Bash" => &["timeout", "run_in_background", "dangerouslyDisableSandbox"],
        "Read" => &["offset", "limit"],
        "Edit" => &["replace_all"],
        "Grep" => &[
            "-B",
            "-A",
            "-C",
            "context",
            "-n",
            "-i",
            "-o",
            "head_limit",
            "offset",
            "multiline",
        ],
        _ => &[],
    }
}

/// The type Claude Code reads a built-in tool's lenient property's string
/// as ([`builtin_lenient`]): `number` for a count or a time, else
/// `boolean`.
fn builtin_kind(name: &str) -> &'static str {
    match name {
        "timeout" | "offset" | "limit" | "-B" | "-A" | "-C" | "context" | "head_limit" => "number",
        _ => "boolean",
    }
}

/// `map` (a call's arguments) with each of `tool`'s lenient properties'
/// strings turned into what they stand for, in place (what Claude Code's
/// tools and hooks read, S239-numbers).
pub fn coerce_builtin(tool: &str, map: &mut serde_json::Map<String, Value>) {
    for name in builtin_lenient(tool) {
        if let Some(Value::String(s)) = map.get(*name)
            && let Some(v) = in_string(&Value::from(builtin_kind(name)), s)
        {
            map.insert((*name).to_string(), v);
        }
    }
}

/// `args` with `tool`'s lenient properties' strings read as what they
/// stand for ([`coerce_builtin`]).
pub fn coerced(tool: &str, args: &Value) -> Value {
    let mut args = args.clone();
    if let Some(map) = args.as_object_mut() {
        coerce_builtin(tool, map);
    }
    args
}

/// A Claude-shaped tool as advertised to the model: `schema` (the input
/// schema its calls are checked against) with the JSON-Schema dialect
/// named, and Claude Code's `description`.
pub fn tool_spec(name: &str, description: &str, mut schema: Value) -> crate::ToolSpec {
    schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    crate::ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// Provides `input-check/<tool>` for `tool` with its input `schema`:
/// calls whose arguments do not fit are refused in Claude Code's words
/// before any listener hears of them.
pub fn provide_check(
    host: &super::Host,
    tool: &str,
    schema: Value,
    lenient: &'static [&'static str],
) -> Result<(), String> {
    use crate::services::input_check::{self, CheckAnswer, CheckRequest};
    let name = tool.to_string();
    host.provide_service(
        &input_check::service_name(tool),
        move |method: String, args: Value| {
            let answer = match method.as_str() {
                input_check::METHOD_CHECK => serde_json::from_value::<CheckRequest>(args)
                    .map(|req| refusal(&name, &schema, &req.arguments, lenient))
                    .map(|refusal| json!(CheckAnswer { refusal }))
                    .map_err(|e| format!("{name}: bad check request: {e}")),
                _ => Err(format!("{name}: no method `{method}`")),
            };
            async move { answer }
        },
    )
}

fn is_type(want: &str, value: &Value) -> bool {
    match want {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// zod's name for a JSON-schema type.
fn js_name(want: &str) -> &'static str {
    match want {
        "string" => "string",
        "integer" | "number" => "number",
        "boolean" => "boolean",
        "array" => "array",
        "null" => "null",
        _ => "object",
    }
}

/// JavaScript's name for the type of `v` (`null`, `array` and `object`
/// apart), as Claude Code's checks word it.
pub fn js_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `TaskUpdate`'s schema as Claude Code 2.1.197 advertises it.
    fn update_schema() -> Value {
        json!({"type": "object", "properties": {
            "taskId": {"type": "string"}, "subject": {"type": "string"},
            "description": {"type": "string"}, "activeForm": {"type": "string"},
            "status": {"anyOf": [{"type": "string", "enum": ["pending", "in_progress", "completed"]},
                {"type": "string", "const": "deleted"}]},
            "addBlocks": {"type": "array", "items": {"type": "string"}},
            "addBlockedBy": {"type": "array", "items": {"type": "string"}},
            "owner": {"type": "string"}, "metadata": {"type": "object"}},
            "required": ["taskId"], "additionalProperties": false})
    }

    #[test]
    fn a_status_outside_the_union_is_zods_issue_list_s220() {
        let got = refusal(
            "TaskUpdate",
            &update_schema(),
            &json!({"taskId": "1", "status": "done"}),
            &[],
        )
        .unwrap();
        let want = "<tool_use_error>InputValidationError: [\n  {\n    \"code\": \"invalid_union\",\n    \"errors\": [\n      [\n        {\n          \"code\": \"invalid_value\",\n          \"values\": [\n            \"pending\",\n            \"in_progress\",\n            \"completed\"\n          ],\n          \"path\": [],\n          \"message\": \"Invalid option: expected one of \\\"pending\\\"|\\\"in_progress\\\"|\\\"completed\\\"\"\n        }\n      ],\n      [\n        {\n          \"code\": \"invalid_value\",\n          \"values\": [\n            \"deleted\"\n          ],\n          \"path\": [],\n          \"message\": \"Invalid input: expected \\\"deleted\\\"\"\n        }\n      ]\n    ],\n    \"path\": [\n      \"status\"\n    ],\n    \"message\": \"Invalid input\"\n  }\n]</tool_use_error>";
        assert_eq!(got, want);
    }

    #[test]
    fn a_numeric_property_takes_a_number_in_a_string_s239() {
        let schema = json!({"type": "object", "properties": {"command": {"type": "string"},
            "timeout": {"type": "number"}}, "required": ["command"], "additionalProperties": false});
        let args = json!({"command": "true", "timeout": "5"});
        assert_eq!(refusal("Bash", &schema, &args, &["timeout"]), None);
        assert!(refusal("Bash", &schema, &args, &[]).is_some());
        let args = json!({"command": "true", "timeout": "x"});
        assert_eq!(
            refusal("Bash", &schema, &args, &["timeout"]).as_deref(),
            Some(
                "<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe parameter `timeout` type is expected as `number` but provided as `string`</tool_use_error>"
            )
        );
    }

    #[test]
    fn simple_issues_are_lines_missing_first() {
        let schema = update_schema();
        assert_eq!(
            refusal("TaskGet", &json!({"type": "object", "properties": {"taskId": {"type": "string"}},
                "required": ["taskId"], "additionalProperties": false}), &json!({}), &[]),
            Some("<tool_use_error>InputValidationError: TaskGet failed due to the following issue:\nThe required parameter `taskId` is missing</tool_use_error>".into())
        );
        let got = refusal(
            "TaskUpdate",
            &schema,
            &json!({"subject": 3, "bogus": true}),
            &[],
        )
        .unwrap();
        assert_eq!(
            got,
            "<tool_use_error>InputValidationError: TaskUpdate failed due to the following issues:\n\
             The required parameter `taskId` is missing\n\
             An unexpected parameter `bogus` was provided\n\
             The parameter `subject` type is expected as `string` but provided as `number`</tool_use_error>"
        );
        assert_eq!(
            refusal(
                "TaskUpdate",
                &schema,
                &json!({"taskId": "1", "status": "deleted"}),
                &[]
            ),
            None
        );
    }
}
