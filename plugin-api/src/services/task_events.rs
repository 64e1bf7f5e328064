//! The `task-events` service: a task list's tool asks whoever watches
//! task lists (the Claude Code bridge's TaskCreated and TaskCompleted
//! hooks) whether a task may be created or completed.
//!
//! The tool (the host's `tools-tasks`: `TaskCreate`, `TaskUpdate`) calls
//! [`METHOD_CREATED`] once a new task has its id, before the call answers,
//! and [`METHOD_COMPLETED`] before a task's status becomes `completed`. An
//! answer with [`TaskVerdict::feedback`] refuses it: the tool undoes the
//! creation (or leaves the status as it was) and the model reads that text.
//! Without the service (no bridge, or a bridge with no such hooks) nothing
//! is asked. The contract is JSON only: no ABI type changed for it.

use serde::{Deserialize, Serialize};

use crate::SessionRef;

/// The service's name.
pub const SERVICE: &str = "task-events";
/// The contract's version.
pub const VERSION: u32 = 1;
/// A task was created: [`TaskEvent`] → [`TaskVerdict`].
pub const METHOD_CREATED: &str = "created";
/// A task is about to be completed: [`TaskEvent`] → [`TaskVerdict`].
pub const METHOD_COMPLETED: &str = "completed";

/// The session a tool call ran in, as JSON ([`SessionRef`]'s fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct EventSession {
    /// Session id.
    pub session_id: String,
    /// Working directory.
    pub cwd: String,
    /// The session's log file.
    pub log_path: String,
    /// Permission mode name.
    #[serde(default)]
    pub permission_mode: String,
    /// The open turn's id.
    #[serde(default)]
    pub turn_id: String,
    /// The id of the prompt that opened the turn.
    #[serde(default)]
    pub prompt_id: String,
    /// The parent session of a subagent.
    #[serde(default)]
    pub parent_session_id: Option<String>,
    /// A subagent's agent type.
    #[serde(default)]
    pub agent_type: Option<String>,
}

impl EventSession {
    /// The JSON form of `session`.
    pub fn of(session: &SessionRef) -> Self {
        EventSession {
            session_id: session.session_id.to_string(),
            cwd: session.cwd.to_string(),
            log_path: session.log_path.to_string(),
            permission_mode: session.permission_mode.to_string(),
            turn_id: session.turn_id.to_string(),
            prompt_id: session.prompt_id.to_string(),
            parent_session_id: session
                .parent_session_id
                .as_ref()
                .into_option()
                .map(|s| s.to_string()),
            agent_type: session
                .agent_type
                .as_ref()
                .into_option()
                .map(|s| s.to_string()),
        }
    }

    /// The session as the ABI type.
    pub fn to_ref(&self) -> SessionRef {
        SessionRef {
            session_id: self.session_id.as_str().into(),
            cwd: self.cwd.as_str().into(),
            log_path: self.log_path.as_str().into(),
            permission_mode: self.permission_mode.as_str().into(),
            turn_id: self.turn_id.as_str().into(),
            prompt_id: self.prompt_id.as_str().into(),
            parent_session_id: self.parent_session_id.as_deref().map(Into::into).into(),
            agent_type: self.agent_type.as_deref().map(Into::into).into(),
        }
    }
}

/// One task created or about to be completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskEvent {
    /// The session whose tool call it is.
    pub session: EventSession,
    /// The tool call's id.
    #[serde(default)]
    pub call_id: String,
    /// The task's id (`"1"`, `"2"`, …).
    pub task_id: String,
    /// Its subject.
    pub subject: String,
    /// Its description.
    pub description: String,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TaskVerdict {
    /// Set: refused, with the text the model reads. `None`: go on.
    #[serde(default)]
    pub feedback: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_crosses_as_json_and_back() {
        let s = EventSession {
            session_id: "s".into(),
            cwd: "/p".into(),
            log_path: "/l".into(),
            permission_mode: "default".into(),
            turn_id: "t".into(),
            prompt_id: "p".into(),
            parent_session_id: Some("parent".into()),
            agent_type: None,
        };
        let json = serde_json::to_value(&s).unwrap();
        let back: EventSession = serde_json::from_value(json).unwrap();
        assert_eq!(EventSession::of(&back.to_ref()), s);
        let v: TaskVerdict = serde_json::from_str("{}").unwrap();
        assert_eq!(v.feedback, None);
    }
}
