//! Who added which context in a waterfall.
//!
//! A decision's `additional_context` travels up the chain: a listener may
//! pass on what `next` returned, replace it, or fold its own text onto it.
//! Reading the trace from the innermost listener outwards, a listener
//! contributed whatever its context adds to the context its `next` returned.

use dsh_plugin_api::{PostToolDecision, PromptDecision, SeamOutput};

use crate::seams::TraceEntry;

fn context_of(output: &SeamOutput) -> Option<String> {
    let ctx = match output {
        SeamOutput::Prompt(PromptDecision::Allow { additional_context, .. }) => additional_context.clone(),
        SeamOutput::PostTool(
            PostToolDecision::Accept { additional_context, .. } | PostToolDecision::Block { additional_context, .. },
        ) => additional_context.clone(),
        _ => return None,
    };
    ctx.into_option().map(String::from).filter(|s| !s.is_empty())
}

/// `(plugin, text)` for every listener that added context, outermost first.
pub fn contributions(trace: &[TraceEntry]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (pos, entry) in trace.iter().enumerate() {
        if entry.plugin.is_empty() {
            continue;
        }
        let Some(mine) = context_of(&entry.output) else { continue };
        // The answer of this listener's `next`, if it called it.
        let downstream = trace
            .get(pos + 1)
            .filter(|next| next.index == entry.index + 1)
            .and_then(|next| context_of(&next.output));
        let added = match downstream {
            None => mine,
            Some(theirs) if theirs == mine => continue,
            Some(theirs) => match mine.find(&theirs) {
                Some(at) => {
                    let before = mine[..at].trim_end();
                    let after = mine[at + theirs.len()..].trim_start();
                    [before, after].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("\n")
                }
                None => mine,
            },
        };
        if !added.is_empty() {
            out.push((entry.plugin.to_string(), added));
        }
    }
    out
}
