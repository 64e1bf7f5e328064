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

/// How serious a [`ConfigProblem`] is.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemSeverity {
    /// Something is off but nothing the user asked for is lost (an
    /// unknown key the real tool also ignores, say).
    Warning,
    /// Part of the configuration is not in effect (a file that does not
    /// load, a hook that will never run): `dsh check` exits 1.
    Error,
}

/// A problem with a plugin's configuration, or with a file its
/// configuration names, reported while the plugin applies
/// ([`crate::Host::report_problem`]). `dsh check` and `dsh plugins` print
/// it; `serve` and `prompt` log it as a warning.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ConfigProblem {
    /// How serious it is.
    pub severity: ProblemSeverity,
    /// The file at fault; empty for the plugin's own config.
    pub file: RString,
    /// The key at fault, as a path such as `hooks.PreToolUse[0].matcher`;
    /// empty for the whole file.
    pub key: RString,
    /// What is wrong, one line.
    pub message: RString,
}

impl ConfigProblem {
    /// An error about `key` of `file`.
    pub fn error(
        file: impl Into<String>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(ProblemSeverity::Error, file, key, message)
    }

    /// A warning about `key` of `file`.
    pub fn warning(
        file: impl Into<String>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(ProblemSeverity::Warning, file, key, message)
    }

    fn new(
        severity: ProblemSeverity,
        file: impl Into<String>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ConfigProblem {
            severity,
            file: file.into().into(),
            key: key.into().into(),
            message: message.into().into(),
        }
    }
}

impl std::fmt::Display for ConfigProblem {
    /// `<file>: key `<key>`: <message>`, leaving out what is empty.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.file.is_empty() {
            write!(f, "{}: ", self.file)?;
        }
        if !self.key.is_empty() {
            write!(f, "key `{}`: ", self.key)?;
        }
        f.write_str(&self.message)
    }
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
