//! The shape Claude Code requires of a command hook's JSON answer.
//!
//! Claude Code checks every JSON object a hook prints against one schema
//! (zod) before it reads any field, and an object that does not fit is not
//! read at all: the hook counts as a non-blocking error ("Hook JSON output
//! validation failed"), whatever its exit code, so not even an exit 2
//! blocks (vectors `S270-deny-upper`, `S270-maybe`, `S270-no-event-name`,
//! `S275-continue-string`, `S275-reason-number`, `S275-context-number`,
//! `S275-updated-input-string`, `S185-taskcreated-context`, `S277-*`).
//!
//! The schema: top-level `continue` and `suppressOutput` booleans,
//! `stopReason`, `reason`, `systemMessage` and `terminalSequence` strings,
//! `decision` `"approve"` or `"block"`, every one optional (a `null` does
//! not count as absent); unknown keys are allowed anywhere
//! (`S270-unknown-keys`, `S275-updated-input-unknown-key`).
//! `hookSpecificOutput`, when present, must be an object whose
//! `hookEventName` is one of the events that take one, with that event's
//! fields of the right types ([`specific_issue`]); an event outside that
//! list (TaskCreated, PreCompact, ...) cannot answer with one at all.
//! `{"async": true}` (with an optional numeric `asyncTimeout`) is the
//! other accepted shape: an acknowledgement that carries no answer.

use serde_json::{Map, Value};

/// What a JSON answer that fits the schema is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// An answer to read.
    Answer,
    /// `{"async": true}`: nothing to read.
    Async,
}

/// Why an answer does not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Claude Code's own text, byte for byte: what `/compact`'s output
    /// shows for a PreCompact hook (vector `S282-pre-block-upper`).
    /// Claude Code names no key (`(root): Invalid input`).
    pub text: String,
    /// dsh's account: the first offending key and what it holds.
    pub issue: String,
}

impl Rejection {
    /// Both, for the hook's record.
    pub fn detail(&self) -> String {
        format!("{}\n\n(dsh: {})", self.text, self.issue)
    }
}

/// The schema Claude Code prints after a validation error (2.1.197's text).
const EXPECTED_SCHEMA: &str = include_str!("expected_schema.json");

/// Checks `output` against Claude Code's schema.
pub fn check(output: &Map<String, Value>) -> Result<Shape, Rejection> {
    if output.get("async") == Some(&Value::Bool(true))
        && output.get("asyncTimeout").is_none_or(Value::is_number)
    {
        return Ok(Shape::Async);
    }
    let Some(issue) = first_issue(output) else {
        return Ok(Shape::Answer);
    };
    // Claude Code's message: its zod union fails as a whole at the root,
    // except that a hookSpecificOutput object without hookEventName is
    // named.
    let unnamed = output
        .get("hookSpecificOutput")
        .and_then(Value::as_object)
        .is_some_and(|h| !h.contains_key("hookEventName"));
    let first = if unnamed {
        MISSING_EVENT_NAME
    } else {
        "(root): Invalid input"
    };
    let text = format!(
        "Hook JSON output validation failed \u{2014} {first}\n\nThe hook's output was: {}\n\n\
         Expected schema:\n{EXPECTED_SCHEMA}",
        serde_json::to_string_pretty(output).unwrap_or_default()
    );
    Err(Rejection { text, issue })
}

/// Claude Code's words for a `hookSpecificOutput` without `hookEventName`.
const MISSING_EVENT_NAME: &str = "hookSpecificOutput is missing required field \"hookEventName\"";

/// The kinds of value a field takes.
#[derive(Clone, Copy)]
enum Kind {
    Bool,
    Str,
    /// A JSON object (zod's `record`).
    Object,
    /// An array of strings.
    Strings,
    /// Anything.
    Any,
    /// One of these strings.
    OneOf(&'static [&'static str]),
}

fn fits(kind: Kind, value: &Value) -> bool {
    match kind {
        Kind::Bool => value.is_boolean(),
        Kind::Str => value.is_string(),
        Kind::Object => value.is_object(),
        Kind::Strings => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string)),
        Kind::Any => true,
        Kind::OneOf(options) => value.as_str().is_some_and(|s| options.contains(&s)),
    }
}

fn expected(kind: Kind) -> String {
    match kind {
        Kind::Bool => "a boolean".into(),
        Kind::Str => "a string".into(),
        Kind::Object => "an object".into(),
        Kind::Strings => "an array of strings".into(),
        Kind::Any => "anything".into(),
        Kind::OneOf(options) => format!("one of {}", options.join(", ")),
    }
}

/// `path: expected …, got …` for the first field of `fields` in `map`
/// that has the wrong kind (a field absent is fine unless `required`).
fn field_issue(
    map: &Map<String, Value>,
    prefix: &str,
    fields: &[(&str, Kind)],
    required: &[&str],
) -> Option<String> {
    for (name, kind) in fields {
        match map.get(*name) {
            None if required.contains(name) => {
                return Some(format!("{prefix}{name}: required, missing"));
            }
            None => {}
            Some(value) if fits(*kind, value) => {}
            Some(value) => {
                let got = match value {
                    Value::String(s) => format!("\"{s}\""),
                    other => dsh_plugin_api::sdk::claude_input::js_type(other).to_string(),
                };
                return Some(format!(
                    "{prefix}{name}: expected {}, got {got}",
                    expected(*kind)
                ));
            }
        }
    }
    None
}

const TOP: &[(&str, Kind)] = &[
    ("continue", Kind::Bool),
    ("suppressOutput", Kind::Bool),
    ("stopReason", Kind::Str),
    ("decision", Kind::OneOf(&["approve", "block"])),
    ("reason", Kind::Str),
    ("systemMessage", Kind::Str),
    ("terminalSequence", Kind::Str),
];

fn first_issue(output: &Map<String, Value>) -> Option<String> {
    if let Some(issue) = field_issue(output, "", TOP, &[]) {
        return Some(issue);
    }
    match output.get("hookSpecificOutput") {
        None => None,
        Some(Value::Object(specific)) => specific_issue(specific),
        Some(other) => Some(format!(
            "hookSpecificOutput: expected an object, got {}",
            dsh_plugin_api::sdk::claude_input::js_type(other)
        )),
    }
}

const CONTEXT: &[(&str, Kind)] = &[("additionalContext", Kind::Str)];
const WATCH: &[(&str, Kind)] = &[("watchPaths", Kind::Strings)];
const ELICITATION: &[(&str, Kind)] = &[
    ("action", Kind::OneOf(&["accept", "decline", "cancel"])),
    ("content", Kind::Object),
];

/// What is wrong with a `hookSpecificOutput` object, per its
/// `hookEventName` (Claude Code 2.1.197's list).
fn specific_issue(specific: &Map<String, Value>) -> Option<String> {
    let p = "hookSpecificOutput.";
    let Some(name) = specific.get("hookEventName") else {
        return Some(MISSING_EVENT_NAME.into());
    };
    let fields: &[(&str, Kind)] = match name.as_str() {
        Some("PreToolUse") => &[
            (
                "permissionDecision",
                Kind::OneOf(&["allow", "deny", "ask", "defer"]),
            ),
            ("permissionDecisionReason", Kind::Str),
            ("updatedInput", Kind::Object),
            ("additionalContext", Kind::Str),
        ],
        Some("UserPromptSubmit") => &[
            ("additionalContext", Kind::Str),
            ("sessionTitle", Kind::Str),
            ("suppressOriginalPrompt", Kind::Bool),
        ],
        Some(
            "UserPromptExpansion"
            | "Setup"
            | "SubagentStart"
            | "PostToolUseFailure"
            | "PostToolBatch"
            | "Stop"
            | "SubagentStop"
            | "Notification",
        ) => CONTEXT,
        Some("SessionStart") => &[
            ("additionalContext", Kind::Str),
            ("initialUserMessage", Kind::Str),
            ("sessionTitle", Kind::Str),
            ("watchPaths", Kind::Strings),
            ("reloadSkills", Kind::Bool),
        ],
        Some("PostToolUse") => &[
            ("additionalContext", Kind::Str),
            ("updatedToolOutput", Kind::Any),
            ("updatedMCPToolOutput", Kind::Any),
        ],
        Some("PermissionDenied") => &[("retry", Kind::Bool)],
        Some("PermissionRequest") => return permission_request_issue(specific),
        Some("Elicitation" | "ElicitationResult") => ELICITATION,
        Some("CwdChanged" | "FileChanged") => WATCH,
        Some("WorktreeCreate") => {
            return field_issue(
                specific,
                p,
                &[("worktreePath", Kind::Str)],
                &["worktreePath"],
            );
        }
        Some("MessageDisplay") => &[("displayContent", Kind::Str)],
        _ => {
            return Some(format!(
                "hookSpecificOutput.hookEventName: {name} is not an event that takes \
                 hookSpecificOutput"
            ));
        }
    };
    field_issue(specific, p, fields, &[])
}

/// PermissionRequest's `decision` is required: `{behavior: "allow",
/// updatedInput?, updatedPermissions?}` or `{behavior: "deny", message?,
/// interrupt?}`.
fn permission_request_issue(specific: &Map<String, Value>) -> Option<String> {
    let p = "hookSpecificOutput.decision.";
    let Some(decision) = specific.get("decision") else {
        return Some("hookSpecificOutput.decision: required, missing".into());
    };
    let Value::Object(decision) = decision else {
        return Some(format!(
            "hookSpecificOutput.decision: expected an object, got {}",
            dsh_plugin_api::sdk::claude_input::js_type(decision)
        ));
    };
    match decision.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            if let Some(rules) = decision.get("updatedPermissions")
                && !rules.is_array()
            {
                return Some(format!(
                    "{p}updatedPermissions: expected an array, got {}",
                    dsh_plugin_api::sdk::claude_input::js_type(rules)
                ));
            }
            field_issue(decision, p, &[("updatedInput", Kind::Object)], &[])
        }
        Some("deny") => field_issue(
            decision,
            p,
            &[("message", Kind::Str), ("interrupt", Kind::Bool)],
            &[],
        ),
        _ => Some(format!("{p}behavior: expected one of allow, deny")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check_value(v: Value) -> Result<Shape, Rejection> {
        match v {
            Value::Object(m) => check(&m),
            _ => panic!("object expected"),
        }
    }

    #[test]
    fn what_the_recorded_answers_fit() {
        for ok in [
            json!({}),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no"},
                "MARK_bogus": 1, "other": {"x": [1]}}),
            json!({"decision": "approve", "reason": "r", "hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny"}}),
            json!({"continue": false, "stopReason": "s", "suppressOutput": true,
                "systemMessage": "m"}),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "updatedInput": {"command": "x", "bogus": 1}}}),
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedPermissions": []}}}),
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart",
                "watchPaths": ["/a"], "additionalContext": "c"}}),
        ] {
            assert_eq!(check_value(ok.clone()), Ok(Shape::Answer), "{ok}");
        }
        assert_eq!(
            check_value(json!({"async": true, "asyncTimeout": 5, "decision": "block"})),
            Ok(Shape::Async)
        );
        // Not the async shape, so an answer whose unknown keys are allowed.
        assert_eq!(
            check_value(json!({"async": true, "asyncTimeout": "5"})),
            Ok(Shape::Answer)
        );
    }

    #[test]
    fn what_the_recorded_answers_do_not_fit() {
        for (bad, says) in [
            (
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "DENY"}}),
                "hookSpecificOutput.permissionDecision: expected one of allow, deny, ask, defer, got \"DENY\"",
            ),
            (
                json!({"hookSpecificOutput": {"permissionDecision": "deny"}}),
                "hookSpecificOutput is missing required field \"hookEventName\"",
            ),
            (
                json!({"continue": "false"}),
                "continue: expected a boolean, got \"false\"",
            ),
            (
                json!({"reason": null}),
                "reason: expected a string, got null",
            ),
            (
                json!({"decision": "BLOCK"}),
                "decision: expected one of approve, block",
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": 42}}),
                "hookSpecificOutput.additionalContext: expected a string, got number",
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": "echo"}}),
                "hookSpecificOutput.updatedInput: expected an object",
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "TaskCreated", "additionalContext": "c"}}),
                "TaskCreated",
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest"}}),
                "hookSpecificOutput.decision: required",
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "WorktreeCreate"}}),
                "worktreePath: required",
            ),
            (json!({"hookSpecificOutput": [1]}), "expected an object"),
        ] {
            let err = check_value(bad.clone()).expect_err(&bad.to_string());
            assert!(err.issue.contains(says), "{bad}: {}", err.issue);
            assert!(
                err.text
                    .starts_with("Hook JSON output validation failed \u{2014} "),
                "{}",
                err.text
            );
            assert!(
                err.text.contains("The hook's output was: {"),
                "{}",
                err.text
            );
            assert!(err.detail().contains(says));
        }
    }

    #[test]
    fn the_text_is_claude_codes_own() {
        // Recorded `S275-context-number` (cli_hook_responses[0].stderr).
        let err = check_value(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "additionalContext": 5}}))
        .expect_err("a number is no context");
        assert!(
            err.text.starts_with(
                "Hook JSON output validation failed \u{2014} (root): Invalid input\n\n\
                 The hook's output was: {\n  \"hookSpecificOutput\": {\n    \
                 \"hookEventName\": \"PreToolUse\",\n    \"additionalContext\": 5\n  }\n}\n\n\
                 Expected schema:\n{\n  \"continue\": \"boolean (optional)\","
            ),
            "{}",
            err.text
        );
        assert!(
            err.text
                .ends_with("so the model can act on it\"\n    }\n  }\n}")
        );
        // No hookEventName is named, whatever else is wrong.
        let err = check_value(json!({"continue": "x", "hookSpecificOutput": {}}))
            .expect_err("two faults");
        assert!(err.text.starts_with(
            "Hook JSON output validation failed \u{2014} hookSpecificOutput is missing required \
             field \"hookEventName\"\n\n"
        ));
    }
}
