//! Codex's JSON output schemas, one per event, strict: an unknown key
//! anywhere makes the whole output invalid, and an invalid output is a
//! non-blocking error (the hook fails open). The event-specific rules on
//! top (a block needs a non-empty reason, `ask` is unsupported, ...) live in
//! the event modules. `hookSpecificOutput` must name an event
//! (`hookEventName`), though not necessarily its own.

use serde::Deserialize;
use serde_json::{Map, Value};

/// `decision` of UserPromptSubmit, PostToolUse and Stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Block {
    /// Block.
    Block,
}

/// Legacy `decision` of PreToolUse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PreDecision {
    /// Unsupported by Codex (ignored as invalid).
    Approve,
    /// Block with `reason`.
    Block,
}

/// `permissionDecision` of PreToolUse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDecision {
    /// Allow (only meaningful with `updatedInput`).
    Allow,
    /// Deny (needs a non-empty `permissionDecisionReason`).
    Deny,
    /// Unsupported by Codex.
    Ask,
}

fn yes() -> bool {
    true
}

/// `hookSpecificOutput` of events that can only add context.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextSpecific {
    /// Required (without it the whole output is invalid: vectors
    /// `C195-*-hso-no-event-name`) but not checked against the event
    /// (vectors `C2-pd-deny-wrong-event-name`, `C195-*-wrong-event-name`).
    pub hook_event_name: String,
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// `hookSpecificOutput` of PreToolUse.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PreSpecific {
    /// Required, not checked against the event (see [`ContextSpecific`]).
    pub hook_event_name: String,
    /// allow / deny / ask.
    pub permission_decision: Option<PermissionDecision>,
    /// The deny reason.
    pub permission_decision_reason: Option<String>,
    /// The rewritten input (with `allow`).
    pub updated_input: Option<Value>,
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// `hookSpecificOutput` of PostToolUse.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PostSpecific {
    /// Required, not checked against the event (see [`ContextSpecific`]).
    pub hook_event_name: String,
    /// Context for the model.
    pub additional_context: Option<String>,
    /// Only for MCP tools; ignored for built-in ones (vector
    /// `C4-updated-mcp-output`).
    #[serde(rename = "updatedMCPToolOutput")]
    pub updated_mcp_tool_output: Option<Value>,
}

macro_rules! wire {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub struct $name {
            /// `continue` (default true).
            #[serde(rename = "continue", default = "yes")]
            pub proceed: bool,
            /// `stopReason`.
            pub stop_reason: Option<String>,
            /// `suppressOutput`.
            #[serde(default)]
            pub suppress_output: bool,
            /// `systemMessage`: shown to the user, never to the model.
            pub system_message: Option<String>,
            $(
                #[allow(missing_docs)]
                pub $field: $ty,
            )*
        }
    };
}

wire!(
    /// SessionStart output.
    SessionStartOutput { hook_specific_output: Option<ContextSpecific> }
);
wire!(
    /// UserPromptSubmit output.
    PromptOutput { decision: Option<Block>, reason: Option<String>, hook_specific_output: Option<ContextSpecific> }
);
wire!(
    /// PreToolUse output.
    PreOutput { decision: Option<PreDecision>, reason: Option<String>, hook_specific_output: Option<PreSpecific> }
);
wire!(
    /// PostToolUse output.
    PostOutput { decision: Option<Block>, reason: Option<String>, hook_specific_output: Option<PostSpecific> }
);
wire!(
    /// Stop output.
    StopOutput { decision: Option<Block>, reason: Option<String> }
);

wire!(
    /// PreCompact and PostCompact output: the universal fields only.
    CompactOutput {}
);

/// Decodes a JSON object against an event's schema.
pub fn decode<T: for<'de> Deserialize<'de>>(json: &Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(json.clone()))
        .map_err(|e| format!("invalid hook output: {e}"))
}

/// A reason trimmed, `None` when blank.
pub fn trimmed(reason: Option<&str>) -> Option<String> {
    reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn unknown_keys_invalidate_the_output() {
        assert!(
            decode::<StopOutput>(&obj(
                json!({"decision": "block", "reason": "r", "extra": 1})
            ))
            .is_err()
        );
        assert!(decode::<PreOutput>(&obj(json!({"hookSpecificOutput": {"nope": true}}))).is_err());
        // hookEventName is required (vector `C195-pd-no-event-name`).
        assert!(
            decode::<PreOutput>(&obj(
                json!({"hookSpecificOutput": {"permissionDecision": "deny"}})
            ))
            .is_err()
        );
        assert!(
            decode::<PostOutput>(&obj(
                json!({"hookSpecificOutput": {"additionalContext": "c"}})
            ))
            .is_err()
        );
        let ok: StopOutput = decode(&obj(json!({"decision": "block", "reason": "r"}))).unwrap();
        assert_eq!(ok.decision, Some(Block::Block));
        assert!(ok.proceed);
    }

    #[test]
    fn universal_fields_and_enums() {
        let o: PreOutput = decode(&obj(json!({
            "continue": false, "stopReason": "s", "systemMessage": "m",
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "ask"}
        })))
        .unwrap();
        assert!(!o.proceed);
        assert_eq!(
            o.hook_specific_output.unwrap().permission_decision,
            Some(PermissionDecision::Ask)
        );
        assert!(decode::<StopOutput>(&obj(json!({"decision": "approve"}))).is_err());
    }

    #[test]
    fn trimmed_reasons() {
        assert_eq!(trimmed(Some("  x \n")), Some("x".into()));
        assert_eq!(trimmed(Some(" \n")), None);
        assert_eq!(trimmed(None), None);
    }
}
