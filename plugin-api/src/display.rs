//! `command/display` (since 1.7): a line a plugin adds to the output of the
//! command the session is running, such as `/compact`. Claude Code shows
//! one line per PreCompact and PostCompact hook run (`PreCompact
//! [<command>] completed successfully`) after `Compacted `, and writes that
//! output into the conversation (`<local-command-stdout>`, recorded
//! `S90-*`, `S130-*`); only the plugin that ran the hook knows the line. A
//! plugin appends the record with `Host::append_record` while it handles
//! `agent/compact` or `agent/compacted`; the host joins the lines of the
//! command's turn, in the order they were appended, one per line. A record,
//! not an ABI type: nothing crosses the boundary but its JSON, so a host
//! older than 1.7 keeps it in the log as a record it does not know and
//! shows it nowhere.

use serde::{Deserialize, Serialize};

/// The record's `type`.
pub const COMMAND_DISPLAY: &str = "command/display";

/// A `command/display` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandDisplay {
    /// Always [`COMMAND_DISPLAY`].
    #[serde(rename = "type")]
    pub kind: String,
    /// The line, without a line break.
    pub text: String,
}

impl CommandDisplay {
    /// A display line of `text`.
    pub fn new(text: impl Into<String>) -> CommandDisplay {
        CommandDisplay {
            kind: COMMAND_DISPLAY.to_string(),
            text: text.into(),
        }
    }

    /// The record as `Host::append_record` takes it.
    pub fn record(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_its_type_and_text() {
        let line = CommandDisplay::new("PreCompact [x] completed successfully");
        assert_eq!(
            line.record(),
            serde_json::json!({"type": "command/display", "text": "PreCompact [x] completed successfully"})
        );
        let back: CommandDisplay = serde_json::from_value(line.record()).unwrap();
        assert_eq!(back, line);
    }
}
