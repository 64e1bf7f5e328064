//! Who added which context: the host stamps authors as answers pass up a
//! waterfall.
//!
//! A decision that adds context carries it as [`AuthoredContext`] pieces
//! (plugin API 1.2). When a listener's answer passes through the chain the
//! host knows which plugin gave it and what `next` handed that listener, so
//! it keeps each piece handed down (same author, same text, each used once)
//! and stamps every other piece with the listener's own id: a listener
//! cannot claim another plugin's text. The answer travels on in the
//! authored form, and the host reads the authors off the chain's final
//! answer (ARCHITECTURE.md §3).
//!
//! A plugin built against 1.0 or 1.1 knows only the text form: it is handed
//! the pieces joined by [`CONTEXT_SEPARATOR`], and its text answer is read
//! back against what it was handed ([`from_text`]): that is the one place
//! context text is compared, and only for the text form.

use dsh_plugin_api::{
    AuthoredContext, CONTEXT_SEPARATOR, PostToolDecision, PromptDecision, SeamOutput, join_context,
};

/// The context pieces of a decision that can carry context, in order.
fn pieces(output: &SeamOutput) -> Option<Vec<AuthoredContext>> {
    match output {
        SeamOutput::Prompt(
            d @ (PromptDecision::Allow { .. } | PromptDecision::AllowAuthored { .. }),
        ) => Some(d.context()),
        SeamOutput::PostTool(d) => Some(d.context()),
        _ => None,
    }
}

fn is_text_form(output: &SeamOutput) -> bool {
    matches!(
        output,
        SeamOutput::Prompt(PromptDecision::Allow { .. })
            | SeamOutput::PostTool(
                PostToolDecision::Accept { .. } | PostToolDecision::Block { .. }
            )
    )
}

fn with_pieces(output: SeamOutput, context: Vec<AuthoredContext>) -> SeamOutput {
    match output {
        SeamOutput::Prompt(d) => SeamOutput::Prompt(d.with_pieces(context)),
        SeamOutput::PostTool(d) => SeamOutput::PostTool(d.with_pieces(context)),
        other => other,
    }
}

/// The pieces of a text-form answer `text` from `plugin`, which was handed
/// `handed`: unchanged, or with its own text folded before or after them,
/// or else all its own.
fn from_text(plugin: &str, text: &str, handed: &[AuthoredContext]) -> Vec<AuthoredContext> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let own = |t: &str| AuthoredContext::by(plugin, t);
    let Some(theirs) = join_context(handed, CONTEXT_SEPARATOR) else {
        return vec![own(text)];
    };
    if text == theirs {
        handed.to_vec()
    } else if let Some(head) = text.strip_suffix(theirs.as_str()) {
        std::iter::once(own(head.trim_end()))
            .chain(handed.iter().cloned())
            .collect()
    } else if let Some(tail) = text.strip_prefix(theirs.as_str()) {
        handed
            .iter()
            .cloned()
            .chain(std::iter::once(own(tail.trim_start())))
            .collect()
    } else {
        vec![own(text)]
    }
}

/// What the chain learnt from one listener's answer: the answer in the
/// authored form with every piece stamped, and its pieces.
pub(crate) struct Stamped {
    pub(crate) output: SeamOutput,
    pub(crate) pieces: Option<Vec<AuthoredContext>>,
}

/// Stamps `answer`, given by `plugin` (empty for the terminal) after its
/// `next` handed it `handed` (`None`: it did not call `next`).
pub(crate) fn stamp(
    plugin: &str,
    answer: SeamOutput,
    handed: Option<&[AuthoredContext]>,
) -> Stamped {
    let Some(given) = pieces(&answer) else {
        return Stamped {
            output: answer,
            pieces: None,
        };
    };
    let handed = handed.unwrap_or_default();
    let stamped: Vec<AuthoredContext> = if is_text_form(&answer) {
        let text = join_context(&given, CONTEXT_SEPARATOR).unwrap_or_default();
        from_text(plugin, &text, handed)
    } else {
        let mut left: Vec<&AuthoredContext> = handed.iter().collect();
        // An empty piece is kept: Codex sends an empty `additionalContext`
        // as an empty developer message (vector `C201-ups-context-empty`).
        given
            .into_iter()
            .map(|piece| {
                let kept = (!piece.plugin.is_empty())
                    .then(|| left.iter().position(|h| **h == piece))
                    .flatten();
                match kept {
                    Some(at) => {
                        left.remove(at);
                        piece
                    }
                    None => AuthoredContext::by(plugin, piece.text.as_str()),
                }
            })
            .collect()
    };
    // A text-form answer with no context stays as it was.
    let output = if stamped.is_empty() && is_text_form(&answer) {
        answer
    } else {
        with_pieces(answer, stamped.clone())
    };
    Stamped {
        output,
        pieces: Some(stamped),
    }
}

/// `answer` as the listener waiting on `next` can read it: the text form
/// for a plugin built before authored context.
pub(crate) fn for_caller(answer: SeamOutput, reads_authored: bool) -> SeamOutput {
    match answer {
        SeamOutput::Prompt(d) if !reads_authored => {
            SeamOutput::Prompt(d.into_text_form(CONTEXT_SEPARATOR))
        }
        SeamOutput::PostTool(d) if !reads_authored => {
            SeamOutput::PostTool(d.into_text_form(CONTEXT_SEPARATOR))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(pieces: &[(&str, &str)]) -> SeamOutput {
        SeamOutput::Prompt(
            PromptDecision::allow().with_pieces(
                pieces
                    .iter()
                    .map(|(p, t)| AuthoredContext::by(*p, *t))
                    .collect(),
            ),
        )
    }

    fn text(t: &str) -> SeamOutput {
        SeamOutput::Prompt(PromptDecision::Allow {
            content: None.into(),
            additional_context: Some(t.into()).into(),
        })
    }

    #[test]
    fn a_listener_keeps_what_it_was_handed_and_owns_the_rest() {
        let handed = [AuthoredContext::by("b", "ab")];
        // It claims b's text twice and c's once: only one is b's.
        let answer = allow(&[("c", "x"), ("b", "ab"), ("b", "ab"), ("", "mine")]);
        let got = stamp("a", answer, Some(&handed));
        assert_eq!(
            got.output,
            allow(&[("a", "x"), ("b", "ab"), ("a", "ab"), ("a", "mine")])
        );
    }

    #[test]
    fn the_text_form_is_read_back_against_what_was_handed() {
        let handed = [
            AuthoredContext::by("b", "one"),
            AuthoredContext::by("c", "two"),
        ];
        let got = |t: &str| stamp("a", text(t), Some(&handed)).output;
        assert_eq!(got("one\n\ntwo"), allow(&[("b", "one"), ("c", "two")]));
        assert_eq!(
            got("mine\none\n\ntwo"),
            allow(&[("a", "mine"), ("b", "one"), ("c", "two")])
        );
        assert_eq!(
            got("one\n\ntwo\n\nmine"),
            allow(&[("b", "one"), ("c", "two"), ("a", "mine")])
        );
        assert_eq!(got("other"), allow(&[("a", "other")]));
        assert_eq!(
            stamp(
                "a",
                SeamOutput::Prompt(PromptDecision::allow()),
                Some(&handed)
            )
            .output,
            SeamOutput::Prompt(PromptDecision::allow())
        );
    }

    #[test]
    fn an_old_caller_is_handed_the_text_form() {
        let answer = allow(&[("b", "one"), ("c", "two")]);
        assert_eq!(for_caller(answer.clone(), true), answer);
        assert_eq!(for_caller(answer, false), text("one\n\ntwo"));
    }
}
