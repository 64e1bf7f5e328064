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
//! `S230-*`/`S234-*` (worktree tools).
//!
//! The schema keywords read are those Claude Code's tool schemas use at
//! the top level: `properties`, `required`, `additionalProperties: false`,
//! `type`, `enum`, `const`, `anyOf`. Anything else is not checked here.

use serde_json::{Map, Value, json};

/// Why `args` does not fit `schema`, in Claude Code's words; `None` when
/// it fits.
pub fn refusal(tool: &str, schema: &Value, args: &Value) -> Option<String> {
    let body = issues(tool, schema, args)?;
    Some(format!(
        "<tool_use_error>InputValidationError: {body}</tool_use_error>"
    ))
}

/// The refusal's body: the issue lines, or zod's issue list.
fn issues(tool: &str, schema: &Value, args: &Value) -> Option<String> {
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

/// JavaScript's name for the type of `v`.
fn js_type(v: &Value) -> &'static str {
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

    fn update_schema() -> Value {
        serde_json::from_str(include_str!("tasks/schemas/update.json")).unwrap()
    }

    #[test]
    fn a_status_outside_the_union_is_zods_issue_list_s220() {
        let got = refusal(
            "TaskUpdate",
            &update_schema(),
            &json!({"taskId": "1", "status": "done"}),
        )
        .unwrap();
        let want = "<tool_use_error>InputValidationError: [\n  {\n    \"code\": \"invalid_union\",\n    \"errors\": [\n      [\n        {\n          \"code\": \"invalid_value\",\n          \"values\": [\n            \"pending\",\n            \"in_progress\",\n            \"completed\"\n          ],\n          \"path\": [],\n          \"message\": \"Invalid option: expected one of \\\"pending\\\"|\\\"in_progress\\\"|\\\"completed\\\"\"\n        }\n      ],\n      [\n        {\n          \"code\": \"invalid_value\",\n          \"values\": [\n            \"deleted\"\n          ],\n          \"path\": [],\n          \"message\": \"Invalid input: expected \\\"deleted\\\"\"\n        }\n      ]\n    ],\n    \"path\": [\n      \"status\"\n    ],\n    \"message\": \"Invalid input\"\n  }\n]</tool_use_error>";
        assert_eq!(got, want);
    }

    #[test]
    fn simple_issues_are_lines_missing_first() {
        let schema = update_schema();
        assert_eq!(
            refusal("TaskGet", &json!({"type": "object", "properties": {"taskId": {"type": "string"}},
                "required": ["taskId"], "additionalProperties": false}), &json!({})),
            Some("<tool_use_error>InputValidationError: TaskGet failed due to the following issue:\nThe required parameter `taskId` is missing</tool_use_error>".into())
        );
        let got = refusal("TaskUpdate", &schema, &json!({"subject": 3, "bogus": true})).unwrap();
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
                &json!({"taskId": "1", "status": "deleted"})
            ),
            None
        );
    }
}
