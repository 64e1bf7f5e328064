//! ABI-stable building blocks shared by every seam: content blocks, message
//! sources and the session reference every snapshot carries.

// `WithNonExhaustive` generates its storage and interface types with
// impls inside anonymous consts; nothing a plugin author can act on.
#![allow(non_local_definitions)]

use abi_stable::{
    StableAbi,
    nonexhaustive_enum::NonExhaustive,
    std_types::{ROption, RString, RVec},
};

/// One block of message content. Every container holds blocks in their
/// boundary form, [`ContentBlock_NE`], so a minor may add kinds of content;
/// the constructors return that form, and `block.as_enum()` gives the
/// block back when this build knows its kind.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 16],
    traits(Clone, Debug, PartialEq, Eq)
)))]
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
    pub fn text(text: impl Into<String>) -> ContentBlock_NE {
        NonExhaustive::new(ContentBlock::Text {
            text: RString::from(text.into()),
        })
    }

    /// An image block: MIME type and base64 payload.
    pub fn image(mime_type: impl Into<String>, data: impl Into<String>) -> ContentBlock_NE {
        NonExhaustive::new(ContentBlock::Image {
            mime_type: RString::from(mime_type.into()),
            data: RString::from(data.into()),
        })
    }
}

impl From<ContentBlock> for ContentBlock_NE {
    fn from(block: ContentBlock) -> Self {
        NonExhaustive::new(block)
    }
}

/// Joins the text of every text block with newlines; blocks of other or
/// unknown kinds are skipped.
pub fn blocks_text(blocks: &[ContentBlock_NE]) -> String {
    let mut out = String::new();
    for block in blocks {
        if let Ok(ContentBlock::Text { text }) = block.as_enum() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
    }
    out
}

/// Who put a message into the conversation. Crosses the boundary as
/// [`MessageSource_NE`], so a minor may add sources.
#[repr(u8)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
#[sabi(kind(WithNonExhaustive(
    size = [usize; 8],
    traits(Clone, Debug, PartialEq, Eq)
)))]
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

impl From<MessageSource> for MessageSource_NE {
    fn from(source: MessageSource) -> Self {
        NonExhaustive::new(source)
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

/// How serious a [`ConfigProblem`] is (since 1.1): a number with named
/// constants, like [`LogLevel`], so a minor may add one.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProblemSeverity(u8);

// Named like the enum variants they replace.
#[allow(non_upper_case_globals)]
impl ProblemSeverity {
    /// Something is off but nothing the user asked for is lost (an
    /// unknown key the real tool also ignores, say).
    pub const Warning: ProblemSeverity = ProblemSeverity(0);
    /// Part of the configuration is not in effect (a file that does not
    /// load, a hook that will never run): `dsh check` exits 1.
    pub const Error: ProblemSeverity = ProblemSeverity(1);
}

/// A problem with a plugin's configuration, or with a file its
/// configuration names, reported while the plugin applies
/// ([`crate::Host::report_problem`]; since 1.1). `dsh check` and `dsh plugins` print
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

/// Severity of a message a plugin logs through the host: a number with
/// named constants (like [`Seam`](crate::Seam)), so a minor may add one.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogLevel(u8);

// Named like the enum variants they replace.
#[allow(non_upper_case_globals)]
impl LogLevel {
    /// Diagnostic detail.
    pub const Debug: LogLevel = LogLevel(0);
    /// Lifecycle.
    pub const Info: LogLevel = LogLevel(1);
    /// Degraded but working.
    pub const Warn: LogLevel = LogLevel(2);
    /// An operator must act.
    pub const Error: LogLevel = LogLevel(3);
}
