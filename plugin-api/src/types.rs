//! ABI-stable building blocks shared by every seam: content blocks, message
//! sources and the session reference every snapshot carries.

use abi_stable::{
    StableAbi,
    std_types::{ROption, RString, RVec},
};

/// One block of message content.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: RString,
    },
    /// An image, base64 encoded.
    Image {
        /// MIME type, e.g. `image/png`.
        mime_type: RString,
        /// Base64 payload.
        data: RString,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: RString::from(text.into()),
        }
    }
}

/// Joins the text of every text block with newlines.
pub fn blocks_text(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in blocks {
        if let ContentBlock::Text { text } = block {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
    }
    out
}

/// Who put a message into the conversation.
#[repr(C, u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub enum MessageSource {
    /// The human user (an editor, the CLI).
    User,
    /// A plugin, by name; a plugin's text is never recorded as the user's.
    Plugin {
        /// The plugin's manifest id.
        plugin: RString,
    },
    /// A parent agent starting a subagent.
    Agent {
        /// The parent session id.
        session_id: RString,
    },
}

impl MessageSource {
    /// The source of text a plugin injects.
    pub fn plugin(name: impl Into<String>) -> Self {
        MessageSource::Plugin {
            plugin: RString::from(name.into()),
        }
    }
}

/// Where a session is and what it is, carried by every seam snapshot.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct SessionRef {
    /// Session id.
    pub session_id: RString,
    /// The session's working directory: tools and hooks run here.
    pub cwd: RString,
    /// The session's log file (the "transcript").
    pub log_path: RString,
    /// Permission mode name, `default` unless configured.
    pub permission_mode: RString,
    /// Id of the open turn, empty outside a turn.
    pub turn_id: RString,
    /// Id of the prompt that opened the current turn, empty outside a turn.
    pub prompt_id: RString,
    /// The parent session when this session is a subagent.
    pub parent_session_id: ROption<RString>,
    /// The agent type when this session is a subagent.
    pub agent_type: ROption<RString>,
}

/// A tool the model may call, as advertised to it.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ToolSpec {
    /// Tool name, e.g. `Bash`.
    pub name: RString,
    /// One-paragraph description for the model.
    pub description: RString,
    /// JSON Schema of the arguments, as canonical JSON text.
    pub input_schema: RString,
    /// Other names that resolve to this tool (e.g. `Task` for `Agent`).
    pub aliases: RVec<RString>,
}

/// Severity of a message a plugin logs through the host.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    /// Diagnostic detail.
    Debug,
    /// Lifecycle.
    Info,
    /// Degraded but working.
    Warn,
    /// An operator must act.
    Error,
}
