//! Added context, piece by piece, with the plugin that added each piece.
//!
//! A decision that adds context to what the model reads (`agent/prompt-submit`'s
//! [`PromptDecision::AllowAuthored`], `tools/post-execute`'s
//! [`PostToolDecision::AcceptAuthored`] and [`PostToolDecision::BlockAuthored`])
//! carries it as an ordered list of [`AuthoredContext`] pieces. A listener
//! that folds its context onto `next`'s answer adds a piece (the helpers
//! below) and keeps, drops or reorders the pieces it got; it never
//! concatenates strings. The host stamps every piece a listener's answer
//! brings that is not one `next` handed it with that listener's plugin id as
//! the answer passes up the chain, so a plugin cannot claim another's text:
//! a piece naming a plugin the rest of the chain did not answer with, word
//! for word, is stamped as its own. The session log records each piece as a
//! `context/message` from its author, in the decision's order.
//!
//! Plugins built against 1.0 or 1.1 know only the text form
//! (`additional_context`); the host hands them the pieces joined by
//! [`CONTEXT_SEPARATOR`] and reads their answer back (ARCHITECTURE.md §3).

use abi_stable::{
    StableAbi,
    std_types::{ROption, RString, RVec},
};

use crate::decisions::{PostToolDecision, PromptDecision};

/// One piece of added context and the plugin that added it.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct AuthoredContext {
    /// The plugin that added the piece, stamped by the host; a listener
    /// leaves it empty for a piece of its own.
    pub plugin: RString,
    /// The text the model reads.
    pub text: RString,
}

impl AuthoredContext {
    /// A piece of the answering listener's own (the host stamps it).
    pub fn new(text: impl Into<String>) -> Self {
        AuthoredContext {
            plugin: RString::new(),
            text: RString::from(text.into()),
        }
    }

    /// A piece stamped with `plugin` (what the host does).
    pub fn by(plugin: impl Into<String>, text: impl Into<String>) -> Self {
        AuthoredContext {
            plugin: RString::from(plugin.into()),
            text: RString::from(text.into()),
        }
    }
}

/// What joins the pieces when a plugin built against 1.0 or 1.1 is handed
/// the text form.
pub const CONTEXT_SEPARATOR: &str = "\n\n";

/// Whether a plugin built against `api_version` reads the authored form
/// (1.2 and later); an older one gets the text form.
pub fn reads_authored_context(api_version: &str) -> bool {
    let mut parts = api_version.split('.').map(|p| p.parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => major > 1 || minor >= 2,
        _ => false,
    }
}

/// The pieces' texts joined by `separator`; `None` when there is none.
pub fn join_context(pieces: &[AuthoredContext], separator: &str) -> Option<String> {
    let texts: Vec<&str> = pieces
        .iter()
        .map(|p| p.text.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join(separator))
}

fn text_piece(text: &ROption<RString>) -> Vec<AuthoredContext> {
    match text {
        ROption::RSome(t) if !t.is_empty() => vec![AuthoredContext::new(t.as_str())],
        _ => Vec::new(),
    }
}

fn text_form(pieces: &[AuthoredContext], separator: &str) -> ROption<RString> {
    join_context(pieces, separator).map(RString::from).into()
}

impl PromptDecision {
    /// Allow unchanged, with `text` as this listener's context.
    pub fn allow_with_context(text: impl Into<String>) -> Self {
        PromptDecision::allow().with_context_last(text)
    }

    /// The added context, in order. The text form's context is one piece
    /// with no author; `Block` has none.
    pub fn context(&self) -> Vec<AuthoredContext> {
        match self {
            PromptDecision::Allow {
                additional_context, ..
            } => text_piece(additional_context),
            PromptDecision::AllowAuthored { context, .. } => context.to_vec(),
            PromptDecision::Block { .. } => Vec::new(),
        }
    }

    /// The added context as one text, pieces joined by `separator`.
    pub fn context_text(&self, separator: &str) -> Option<String> {
        join_context(&self.context(), separator)
    }

    /// The same decision with `context` as its pieces, in the authored
    /// form; `Block` is returned unchanged.
    pub fn with_pieces(self, context: Vec<AuthoredContext>) -> Self {
        match self {
            PromptDecision::Allow { content, .. }
            | PromptDecision::AllowAuthored { content, .. } => PromptDecision::AllowAuthored {
                content,
                context: RVec::from(context),
            },
            block @ PromptDecision::Block { .. } => block,
        }
    }

    /// Adds `text` as this listener's piece before the context already
    /// there: how a listener folds onto `next`'s answer. Empty text changes
    /// nothing; `Block` is returned unchanged.
    pub fn with_context_first(self, text: impl Into<String>) -> Self {
        let text = text.into();
        if text.is_empty() {
            return self;
        }
        let mut pieces = self.context();
        pieces.insert(0, AuthoredContext::new(text));
        self.with_pieces(pieces)
    }

    /// Adds `text` (if not empty) as this listener's piece after the
    /// context already there.
    pub fn with_context_last(self, text: impl Into<String>) -> Self {
        let text = text.into();
        if text.is_empty() {
            return self;
        }
        let mut pieces = self.context();
        pieces.push(AuthoredContext::new(text));
        self.with_pieces(pieces)
    }

    /// The text form (`Allow`), pieces joined by `separator`: what a plugin
    /// built against 1.0 or 1.1 can read.
    pub fn into_text_form(self, separator: &str) -> Self {
        match self {
            PromptDecision::AllowAuthored { content, context } => PromptDecision::Allow {
                content,
                additional_context: text_form(&context, separator),
            },
            other => other,
        }
    }
}

impl PostToolDecision {
    /// Accept unchanged, with `text` as this listener's context.
    pub fn accept_with_context(text: impl Into<String>) -> Self {
        PostToolDecision::accept().with_context_last(text)
    }

    /// The added context, in order. The text form's context is one piece
    /// with no author.
    pub fn context(&self) -> Vec<AuthoredContext> {
        match self {
            PostToolDecision::Accept {
                additional_context, ..
            }
            | PostToolDecision::Block {
                additional_context, ..
            } => text_piece(additional_context),
            PostToolDecision::AcceptAuthored { context, .. }
            | PostToolDecision::BlockAuthored { context, .. } => context.to_vec(),
        }
    }

    /// The added context as one text, pieces joined by `separator`.
    pub fn context_text(&self, separator: &str) -> Option<String> {
        join_context(&self.context(), separator)
    }

    /// The same decision with `context` as its pieces, in the authored form.
    pub fn with_pieces(self, context: Vec<AuthoredContext>) -> Self {
        let context = RVec::from(context);
        match self {
            PostToolDecision::Accept { content, .. }
            | PostToolDecision::AcceptAuthored { content, .. } => {
                PostToolDecision::AcceptAuthored { content, context }
            }
            PostToolDecision::Block { feedback, .. }
            | PostToolDecision::BlockAuthored { feedback, .. } => {
                PostToolDecision::BlockAuthored { feedback, context }
            }
        }
    }

    /// Adds `text` (if not empty) as this listener's piece before the
    /// context already there.
    pub fn with_context_first(self, text: impl Into<String>) -> Self {
        let text = text.into();
        if text.is_empty() {
            return self;
        }
        let mut pieces = self.context();
        pieces.insert(0, AuthoredContext::new(text));
        self.with_pieces(pieces)
    }

    /// Adds `text` (if not empty) as this listener's piece after the
    /// context already there.
    pub fn with_context_last(self, text: impl Into<String>) -> Self {
        let text = text.into();
        if text.is_empty() {
            return self;
        }
        let mut pieces = self.context();
        pieces.push(AuthoredContext::new(text));
        self.with_pieces(pieces)
    }

    /// The feedback of a `Block` in either form.
    pub fn feedback(&self) -> Option<&RString> {
        match self {
            PostToolDecision::Block { feedback, .. }
            | PostToolDecision::BlockAuthored { feedback, .. } => Some(feedback),
            _ => None,
        }
    }

    /// The replacement content of an `Accept` in either form.
    pub fn replaced_content(&self) -> Option<&RVec<crate::types::ContentBlock_NE>> {
        match self {
            PostToolDecision::Accept { content, .. }
            | PostToolDecision::AcceptAuthored { content, .. } => content.as_ref().into_option(),
            _ => None,
        }
    }

    /// The text form (`Accept`/`Block`), pieces joined by `separator`: what
    /// a plugin built against 1.0 or 1.1 can read.
    pub fn into_text_form(self, separator: &str) -> Self {
        match self {
            PostToolDecision::AcceptAuthored { content, context } => PostToolDecision::Accept {
                content,
                additional_context: text_form(&context, separator),
            },
            PostToolDecision::BlockAuthored { feedback, context } => PostToolDecision::Block {
                feedback,
                additional_context: text_form(&context, separator),
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authored_context_is_read_from_1_2_on() {
        assert!(!reads_authored_context("1.0.0"));
        assert!(!reads_authored_context("1.1.3"));
        assert!(reads_authored_context("1.2.0"));
        assert!(reads_authored_context(crate::API_VERSION));
        assert!(!reads_authored_context("garbage"));
    }

    #[test]
    fn folding_adds_a_piece_and_keeps_the_others_in_order() {
        let theirs = PromptDecision::allow().with_pieces(vec![AuthoredContext::by("b", "same")]);
        assert_eq!(theirs.clone().with_context_last(""), theirs);
        let ours = theirs.with_context_first("same");
        assert_eq!(
            ours.context(),
            [
                AuthoredContext::new("same"),
                AuthoredContext::by("b", "same")
            ]
        );
        assert_eq!(ours.context_text("|").as_deref(), Some("same|same"));
        assert_eq!(
            ours.into_text_form("\n\n"),
            PromptDecision::Allow {
                content: ROption::RNone,
                additional_context: ROption::RSome("same\n\nsame".into()),
            }
        );
        let block = PromptDecision::Block {
            reason: "no".into(),
        };
        assert_eq!(block.clone().with_context_first("x"), block);
        let post = PostToolDecision::Block {
            feedback: "f".into(),
            additional_context: ROption::RSome("t".into()),
        }
        .with_context_last("u");
        assert_eq!(
            post,
            PostToolDecision::BlockAuthored {
                feedback: "f".into(),
                context: RVec::from(vec![AuthoredContext::new("t"), AuthoredContext::new("u")]),
            }
        );
    }
}
