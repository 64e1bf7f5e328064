//! Steering in parts across plugin minors: a continuation's
//! `ContinueParts` (plugin API 1.6) as a listener built before it reads it,
//! and back.
//!
//! A listener built against 1.0–1.5 cannot decode `ContinueParts`: it is
//! handed `Continue` with the parts joined by [`STEERING_PART_SEPARATOR`]
//! ([`for_caller`]). If it answers exactly that text, the parts it was
//! handed are kept ([`restore`]); any other answer is its own, one part.
//! That is the only place steering text is compared.

use dsh_plugin_api::{ContinuationDecision, STEERING_PART_SEPARATOR, SeamOutput};

/// The parts of a several-part continue, if `output` is one.
pub(crate) fn parts(output: &SeamOutput) -> Option<Vec<String>> {
    match output {
        SeamOutput::Continuation(d @ ContinuationDecision::ContinueParts { .. }) => {
            d.steering_parts()
        }
        _ => None,
    }
}

/// The answer of a listener that was handed the text form of `handed`:
/// its unchanged text keeps the parts.
pub(crate) fn restore(answer: SeamOutput, handed: Option<Vec<String>>) -> SeamOutput {
    let Some(handed) = handed else {
        return answer;
    };
    match &answer {
        SeamOutput::Continuation(ContinuationDecision::Continue { reason })
            if reason.as_ref().into_option().map(|r| r.as_str())
                == Some(handed.join(STEERING_PART_SEPARATOR).as_str()) =>
        {
            SeamOutput::Continuation(ContinuationDecision::steer(handed))
        }
        _ => answer,
    }
}

/// `answer` as the listener waiting on `next` can read it: the text form
/// for a plugin built before steering parts.
pub(crate) fn for_caller(answer: SeamOutput, reads_parts: bool) -> SeamOutput {
    match answer {
        SeamOutput::Continuation(d) if !reads_parts => SeamOutput::Continuation(d.into_text_form()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_plugin_api::abi_stable::std_types::{ROption, RString};

    fn two() -> Vec<String> {
        vec!["one\n".to_string(), "two".to_string()]
    }

    fn reason(text: &str) -> SeamOutput {
        SeamOutput::Continuation(ContinuationDecision::Continue {
            reason: ROption::RSome(RString::from(text)),
        })
    }

    #[test]
    fn an_older_listener_reads_the_parts_joined_and_its_unchanged_answer_keeps_them() {
        let parts = SeamOutput::Continuation(ContinuationDecision::steer(two()));
        let handed = for_caller(parts.clone(), false);
        assert_eq!(handed, reason("one\n\ntwo"));
        assert_eq!(for_caller(parts.clone(), true), parts);
        assert_eq!(restore(handed, super::parts(&parts)), parts);
    }

    #[test]
    fn an_older_listeners_own_text_is_one_part() {
        let own = reason("mine");
        assert_eq!(restore(own.clone(), Some(two())), own);
        let stop = SeamOutput::Continuation(ContinuationDecision::Stop);
        assert_eq!(restore(stop.clone(), Some(two())), stop);
        assert_eq!(super::parts(&own), None);
    }
}
