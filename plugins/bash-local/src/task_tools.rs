//! `TaskOutput` and `TaskStop`: Claude Code 2.1.197's tools for background
//! shells ([`crate::background`]), offered with `Bash` as Claude Code
//! offers them in every run (names, descriptions and schemas copied from
//! the recorded request: `task_schemas/`).
//!
//! Their answers are Claude Code's (recorded `S260-*`): `TaskOutput` reads
//! `<retrieval_status>…</retrieval_status>\n\n<task_id>…` with
//! `tool_response` `{retrieval_status, task: {task_id, task_type,
//! status, description, output, exitCode}}`; it waits (`block`, default
//! true) at most `timeout` ms (default 30000). `TaskStop` answers
//! `{message, task_id, task_type, command}` as JSON text. An id the
//! session has no job for (never started, stopped, or forgotten after its
//! notification reached the model) is refused before any hook, as Claude
//! Code's `validateInput` refuses it: `<tool_use_error>No task found with
//! ID: …</tool_use_error>` (the `input-check/<tool>` services).

use std::sync::Arc;
use std::time::Duration;

use dsh_plugin_api::sdk::claude_input;
use dsh_plugin_api::services::input_check::{self, CheckAnswer, CheckRequest};
use dsh_plugin_api::{Host, ToolCall, ToolResult, ToolSpec};
use serde_json::{Value, json};

use crate::background::{self, Jobs};

/// `TaskOutput`'s name.
pub const OUTPUT_TOOL: &str = "TaskOutput";
/// `TaskStop`'s name.
pub const STOP_TOOL: &str = "TaskStop";
/// `TaskOutput`'s wait when the model gives no `timeout`.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// The longest wait `TaskOutput` takes.
pub const MAX_WAIT_MS: u64 = 600_000;

const OUTPUT_SCHEMA: &str = include_str!("task_schemas/TaskOutput.json");
const STOP_SCHEMA: &str = include_str!("task_schemas/TaskStop.json");

fn recorded(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn spec_of(name: &str, recorded: &Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: recorded["description"].as_str().unwrap_or_default().into(),
        input_schema: recorded["input_schema"].to_string().into(),
        aliases: Default::default(),
    }
}

/// `TaskOutput` as advertised.
pub fn output_spec() -> ToolSpec {
    spec_of(OUTPUT_TOOL, &recorded(OUTPUT_SCHEMA))
}

/// `TaskStop` as advertised.
pub fn stop_spec() -> ToolSpec {
    spec_of(STOP_TOOL, &recorded(STOP_SCHEMA))
}

/// The schema a call is checked against: as advertised, with the
/// properties that have defaults not required (zod fills them in).
fn check_schema(recorded: &Value) -> Value {
    let mut schema = recorded["input_schema"].clone();
    let defaults: Vec<String> = schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, p)| p.get("default").is_some())
        .map(|(k, _)| k.clone())
        .collect();
    if let Some(required) = schema["required"].as_array_mut() {
        required.retain(|r| r.as_str().is_none_or(|r| !defaults.iter().any(|d| d == r)));
    }
    schema
}

/// The id a call names: `task_id`, else `TaskStop`'s deprecated
/// `shell_id`.
fn task_id(args: &Value) -> Option<&str> {
    args.get("task_id")
        .and_then(Value::as_str)
        .or_else(|| args.get("shell_id").and_then(Value::as_str))
}

/// Why a call is refused before any hook, in Claude Code's words.
pub fn refusal(tool: &str, jobs: &Jobs, session_id: &str, args: &Value) -> Option<String> {
    let schema = match tool {
        OUTPUT_TOOL => check_schema(&recorded(OUTPUT_SCHEMA)),
        _ => check_schema(&recorded(STOP_SCHEMA)),
    };
    let lenient: &[&str] = if tool == OUTPUT_TOOL {
        &["block", "timeout"]
    } else {
        &[]
    };
    if let Some(refusal) = claude_input::refusal(tool, &schema, args, lenient) {
        return Some(refusal);
    }
    let Some(id) = task_id(args) else {
        return Some("<tool_use_error>Missing required parameter: task_id</tool_use_error>".into());
    };
    match jobs.get(session_id, id) {
        Some(_) => None,
        None => Some(background::not_found(id)),
    }
}

/// Provides `input-check/TaskOutput` and `input-check/TaskStop`.
pub fn provide_checks(host: &Host, jobs: &Arc<Jobs>) -> Result<(), String> {
    for tool in [OUTPUT_TOOL, STOP_TOOL] {
        let jobs = jobs.clone();
        host.provide_service(
            &input_check::service_name(tool),
            move |method: String, args: Value| {
                let answer = match method.as_str() {
                    input_check::METHOD_CHECK => serde_json::from_value::<CheckRequest>(args)
                        .map(|req| refusal(tool, &jobs, &req.session_id, &req.arguments))
                        .map(|refusal| json!(CheckAnswer { refusal }))
                        .map_err(|e| format!("{tool}: bad check request: {e}")),
                    _ => Err(format!("{tool}: no method `{method}`")),
                };
                async move { answer }
            },
        )?;
    }
    Ok(())
}

fn args_of(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or(Value::Null)
}

/// Reads a boolean given as one or as `"true"`/`"false"`.
fn flag(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        Value::String(s) if s == "false" => Some(false),
        _ => None,
    }
}

/// Reads a number given as one or in a string.
fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `TaskOutput`.
pub async fn output(call: &ToolCall, jobs: &Jobs) -> ToolResult {
    let args = args_of(call);
    let session = call.session.session_id.as_str();
    let Some(id) = task_id(&args) else {
        return ToolResult::error(
            "<tool_use_error>Missing required parameter: task_id</tool_use_error>",
        );
    };
    let Some(job) = jobs.get(session, id) else {
        return ToolResult::error(background::not_found(id));
    };
    let block = flag(args.get("block")).unwrap_or(true);
    let wait_ms = number(args.get("timeout"))
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map_or(DEFAULT_WAIT_MS, |ms| (ms.round() as u64).min(MAX_WAIT_MS));
    let (state, waited_out) = if block {
        let state = job.wait(Duration::from_millis(wait_ms)).await;
        (state, state == background::JobState::Running)
    } else {
        (job.state(), false)
    };
    let (text, response) = background::output_answer(&job, state, waited_out);
    ToolResult::text(text).with_structured(json!(response).to_string())
}

/// `TaskStop`.
pub async fn stop(call: &ToolCall, jobs: &Jobs) -> ToolResult {
    let args = args_of(call);
    let session = call.session.session_id.as_str();
    let Some(id) = task_id(&args) else {
        return ToolResult::error(
            "<tool_use_error>Missing required parameter: task_id</tool_use_error>",
        );
    };
    match jobs.stop(session, id).await {
        Some(job) => {
            let answer = json!(background::stop_answer(&job)).to_string();
            ToolResult::text(answer.clone()).with_structured(answer)
        }
        None => ToolResult::error(background::not_found(id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_schemas_parse() {
        let output = output_spec();
        let schema: Value = serde_json::from_str(&output.input_schema).expect("json");
        assert_eq!(schema["required"], json!(["task_id", "block", "timeout"]));
        assert!(output.description.starts_with("DEPRECATED"));
        let stop: Value = serde_json::from_str(&stop_spec().input_schema).expect("json");
        assert!(stop["properties"]["shell_id"].is_object());
    }

    #[test]
    fn defaults_are_not_required_when_checking() {
        let schema = check_schema(&recorded(OUTPUT_SCHEMA));
        assert_eq!(schema["required"], json!(["task_id"]));
    }

    #[test]
    fn an_unknown_id_is_refused_in_claude_codes_words() {
        let jobs = Jobs::new(std::env::temp_dir());
        assert_eq!(
            refusal(
                OUTPUT_TOOL,
                &jobs,
                "s",
                &json!({"task_id": "nosuch", "block": true})
            ),
            Some("<tool_use_error>No task found with ID: nosuch</tool_use_error>".into())
        );
        assert_eq!(
            refusal(STOP_TOOL, &jobs, "s", &json!({"task_id": "nosuch"})),
            Some("<tool_use_error>No task found with ID: nosuch</tool_use_error>".into())
        );
        let bad = refusal(OUTPUT_TOOL, &jobs, "s", &json!({"block": true})).expect("refused");
        assert!(bad.contains("`task_id` is missing"), "{bad}");
    }
}
