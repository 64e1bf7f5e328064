//! The `approval` service: ask whoever owns a session whether one tool
//! call may run (the loop calls it when a pre-tool guard answers `ask`).
//!
//! Method [`METHOD_REQUEST`] takes an [`ApprovalRequest`] and answers an
//! [`ApprovalAnswer`]. A provider that cannot ask anyone answers
//! [`ApprovalAnswer::Unavailable`] rather than failing the call; a caller
//! treats a failed call, or an outcome it does not know, as unavailable,
//! and every outcome but an allow denies the tool.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The service's name.
pub const SERVICE: &str = "approval";
/// Its one method.
pub const METHOD_REQUEST: &str = "request";
/// The contract's version (see the [evolution rule](super#evolution-rule)).
pub const VERSION: u32 = 1;

/// One tool call waiting for a yes or no.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The session the call belongs to.
    pub session_id: String,
    /// The call's id.
    #[serde(default)]
    pub call_id: String,
    /// The tool's name.
    #[serde(default)]
    pub name: String,
    /// The call's arguments (`null` when they are not JSON).
    #[serde(default)]
    pub arguments: Value,
    /// Why a guard asked, if it said.
    #[serde(default)]
    pub reason: Option<String>,
}

/// The answer. Tagged by `outcome`; unknown outcomes do not decode, and a
/// caller then treats them as unavailable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Run this call (`allow` is read as this too).
    #[serde(alias = "allow")]
    AllowOnce,
    /// Run this call; the asker may remember the choice.
    AllowAlways,
    /// The user said no.
    Reject {
        /// Why, if the provider said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The user also stopped the turn, as a "No" in Claude Code's
        /// dialog does (recorded, S34): the model is not asked again until
        /// the next prompt. Absent means `false` (plugin API 1.4).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        interrupt: bool,
    },
    /// The request was cancelled before anyone answered.
    Cancelled,
    /// Nobody could be asked (no client attached, the client failed).
    Unavailable {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl ApprovalAnswer {
    /// The `outcome` tag, as recorded in the session log.
    pub fn outcome(&self) -> &'static str {
        match self {
            ApprovalAnswer::AllowOnce => "allow_once",
            ApprovalAnswer::AllowAlways => "allow_always",
            ApprovalAnswer::Reject { .. } => "reject",
            ApprovalAnswer::Cancelled => "cancelled",
            ApprovalAnswer::Unavailable { .. } => "unavailable",
        }
    }

    /// The reason given with the outcome, if any.
    pub fn reason(&self) -> Option<&str> {
        match self {
            ApprovalAnswer::Reject { reason, .. } | ApprovalAnswer::Unavailable { reason } => {
                reason.as_deref()
            }
            _ => None,
        }
    }

    /// Whether the call may run.
    pub fn allows(&self) -> bool {
        matches!(
            self,
            ApprovalAnswer::AllowOnce | ApprovalAnswer::AllowAlways
        )
    }

    /// An `unavailable` answer with a reason.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        ApprovalAnswer::Unavailable {
            reason: Some(reason.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_round_trips() {
        let req = ApprovalRequest {
            session_id: "s".into(),
            call_id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({"command": "ls"}),
            reason: Some("asked".into()),
        };
        let json = serde_json::to_value(&req).unwrap();
        assert_eq!(
            json,
            json!({"session_id": "s", "call_id": "c1", "name": "Bash",
                "arguments": {"command": "ls"}, "reason": "asked"})
        );
        assert_eq!(
            serde_json::from_value::<ApprovalRequest>(json).unwrap(),
            req
        );
    }

    #[test]
    fn every_answer_round_trips_under_its_outcome_tag() {
        for (answer, wire) in [
            (ApprovalAnswer::AllowOnce, json!({"outcome": "allow_once"})),
            (
                ApprovalAnswer::AllowAlways,
                json!({"outcome": "allow_always"}),
            ),
            (
                ApprovalAnswer::Reject {
                    reason: Some("no".into()),
                    interrupt: false,
                },
                json!({"outcome": "reject", "reason": "no"}),
            ),
            (
                ApprovalAnswer::Reject {
                    reason: None,
                    interrupt: true,
                },
                json!({"outcome": "reject", "interrupt": true}),
            ),
            (ApprovalAnswer::Cancelled, json!({"outcome": "cancelled"})),
            (
                ApprovalAnswer::unavailable("gone"),
                json!({"outcome": "unavailable", "reason": "gone"}),
            ),
        ] {
            assert_eq!(serde_json::to_value(&answer).unwrap(), wire);
            assert_eq!(wire["outcome"], answer.outcome());
            assert_eq!(
                serde_json::from_value::<ApprovalAnswer>(wire).unwrap(),
                answer
            );
        }
        let allow: ApprovalAnswer = serde_json::from_value(json!({"outcome": "allow"})).unwrap();
        assert!(allow.allows());
        assert!(serde_json::from_value::<ApprovalAnswer>(json!({"outcome": "maybe"})).is_err());
    }
}
