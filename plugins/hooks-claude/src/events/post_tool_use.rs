//! PostToolUse and PostToolUseFailure (`tools/post-execute`).
//!
//! A call that was denied before it ran fires neither (vector `S2-exit2`).
//! A result with `is_error` fires PostToolUseFailure (payload `error`,
//! `is_interrupt`), any other PostToolUse (payload `tool_response`: the
//! tool's structured response when it has one, else its text).
//!
//! An MCP tool (`mcp__<server>__<tool>`, whose structured part is the
//! server's answer) shows its content blocks as `tool_response`, or its
//! `structuredContent` as one JSON string when it has one (vectors
//! `S75-*`); `updatedMCPToolOutput` replaces what the model reads of it
//! (vectors `S76-updated_output*`).
//!
//! Any other result stays as it is (vector `S5-updated-mcp-output`: not
//! even `updatedMCPToolOutput` on a built-in tool replaces it). Blocking
//! feedback (exit 2: `[command]: stderr`; `decision: "block"`: the reason)
//! and `additionalContext` are added after it as Claude Code's
//! `<system-reminder>` blocks (vectors `S5-*`), a context over 10,000
//! characters saved and replaced ([`crate::persist`]); plain stdout is
//! ignored (vectors `S172-*`: the same for PostToolUseFailure, whose
//! feedback and context follow the error result, a failing Bash's or a
//! `Read` of a missing file's).
//! PostToolUse's `continue: false` ends the turn after this step;
//! PostToolUseFailure's is ignored (vector `S173-failure-continue-false`).

use std::future::Future;

use dsh_hook_protocol::point::Outcome;
use dsh_plugin_api::{
    AuthoredContext, ContentBlock, ContentBlock_NE, PostExecuteInput, PostToolDecision, ROption,
    RVec,
};
use serde_json::Value;

use super::pre_tool_use::tool_input;
use super::{
    JsonCount, capped_context, claude_tool_name, completion, effort, head, permission_mode,
    prompt_id, quoted_stderr, read, text_blocks, tool_subjects,
};
use crate::ClaudeBridge;

/// The event of a successful call.
pub const EVENT: &str = "PostToolUse";
/// The event of a call that ended in error.
pub const FAILURE: &str = "PostToolUseFailure";

/// The event `input` fires, if any.
pub fn event_of(input: &PostExecuteInput) -> Option<&'static str> {
    match (input.denied, input.result.is_error) {
        (true, _) => None,
        (false, true) => Some(FAILURE),
        (false, false) => Some(EVENT),
    }
}

/// The tool's response as Claude Code reports it.
fn tool_response(input: &PostExecuteInput) -> Value {
    let structured: Option<Value> = input
        .result
        .structured
        .as_ref()
        .into_option()
        .and_then(|s| serde_json::from_str(s).ok());
    if let Some(mcp) = structured.as_ref().filter(|_| is_mcp(&input.call.name)) {
        if let Some(s) = mcp.get("structuredContent") {
            return Value::String(s.to_string());
        }
        if let Some(content) = mcp.get("content") {
            return content.clone();
        }
    }
    structured.unwrap_or_else(|| Value::String(input.result.text_content()))
}

/// Whether `name` is an MCP server's tool.
fn is_mcp(name: &str) -> bool {
    name.starts_with("mcp__")
}

/// `updatedMCPToolOutput` as what the model reads: a string as it is,
/// content blocks as their text.
fn mcp_output(value: &Value) -> Option<Vec<ContentBlock_NE>> {
    match value {
        Value::String(s) => Some(vec![ContentBlock::text(s.clone())]),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .map(|b| match b.get("text").and_then(Value::as_str) {
                    Some(t) => ContentBlock::text(t),
                    None => ContentBlock::text(b.to_string()),
                })
                .collect(),
        ),
        Value::Null => None,
        other => Some(vec![ContentBlock::text(other.to_string())]),
    }
}

/// `decision` with the content the model reads replaced by `content`.
fn replaced(decision: PostToolDecision, content: Vec<ContentBlock_NE>) -> PostToolDecision {
    let content = ROption::RSome(RVec::from(content));
    match decision {
        PostToolDecision::Accept {
            additional_context, ..
        } => PostToolDecision::Accept {
            content,
            additional_context,
        },
        PostToolDecision::AcceptAuthored { context, .. } => {
            PostToolDecision::AcceptAuthored { content, context }
        }
        other => other,
    }
}

/// `input` with its result's answer (the first text block, and the
/// structured response's `content`) replaced by `text`.
fn failed_answer(input: &PostExecuteInput, text: &str) -> PostExecuteInput {
    let mut out = input.clone();
    let mut content: Vec<ContentBlock_NE> = out.result.content.iter().cloned().collect();
    match content.first_mut() {
        Some(first) => *first = ContentBlock::text(text),
        None => content.push(ContentBlock::text(text)),
    }
    out.result.content = RVec::from(content);
    let structured: Option<Value> = out
        .result
        .structured
        .as_ref()
        .into_option()
        .and_then(|s| serde_json::from_str(s).ok());
    if let Some(mut v) = structured {
        v["content"] = serde_json::json!([{"type": "text", "text": text}]);
        out.result.structured = ROption::RSome(v.to_string().into());
    }
    out
}

/// The stdin payload of `event` ([`EVENT`] or [`FAILURE`]).
pub fn payload(
    input: &PostExecuteInput,
    event: &str,
    effort_level: Option<&str>,
    duration_ms: u64,
) -> Value {
    let call = &input.call;
    let mut m = head(&call.session);
    prompt_id(&mut m, &call.session);
    permission_mode(&mut m, &call.session);
    effort(&mut m, effort_level);
    m.insert("hook_event_name".into(), event.into());
    m.insert("tool_name".into(), claude_tool_name(&call.name).into());
    m.insert("tool_input".into(), tool_input(call));
    if event == FAILURE {
        m.insert("tool_use_id".into(), call.call_id.as_str().into());
        m.insert("error".into(), input.result.text_content().into());
        m.insert("is_interrupt".into(), false.into());
    } else {
        m.insert("tool_response".into(), tool_response(input));
        m.insert("tool_use_id".into(), call.call_id.as_str().into());
    }
    m.insert("duration_ms".into(), duration_ms.into());
    Value::Object(m)
}

fn reminder(text: &str) -> String {
    format!("<system-reminder>\n{text}\n</system-reminder>")
}
impl ClaudeBridge {
    /// Runs the PostToolUse (or PostToolUseFailure) hooks after the rest of
    /// the waterfall and adds their feedback and context to its decision.
    pub async fn on_post_tool_use<F, Fut>(
        &self,
        input: &PostExecuteInput,
        next: F,
    ) -> Result<PostToolDecision, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<PostToolDecision, String>>,
    {
        let duration_ms = self.take_duration_ms(&input.call.call_id);
        // A settings file the call changed fires ConfigChange first
        // (vector `S184-config-change-bypass`).
        if !input.denied {
            self.on_settings_maybe_changed(&input.call.session).await;
            // A watched file it changed, FileChanged (`S184-file-changed`).
            self.on_watched_maybe_changed(&input.call.session).await;
        }
        // An Agent call whose subagent a failed model request ended answers
        // Claude Code's text for the error (vectors `S180-*`): the hooks,
        // PostToolBatch and the model all read that.
        let failed = self.failed_agent_answer(&input.call.call_id);
        let answered;
        let input = match &failed {
            Some(text) => {
                answered = failed_answer(input, text);
                &answered
            }
            None => input,
        };
        let with_answer = |decision: PostToolDecision| match &failed {
            Some(_) => replaced(decision, input.result.content.iter().cloned().collect()),
            None => decision,
        };
        self.note_batch_call(input);
        // Memory files a `Read` brings (S240).
        self.on_read_nested_memory(input);
        let Some(event) = event_of(input).filter(|e| self.has_hooks(&input.call.session, e)) else {
            return next().await.map(with_answer);
        };
        let call = &input.call;
        let tool = claude_tool_name(&call.name);
        let payload = payload(input, event, self.effort.as_deref(), duration_ms);
        let mut runs = self
            .fire(event, &call.session, &tool_subjects(tool), &payload)
            .await;
        // Each hook's block, then its context, as text blocks in the order
        // the hooks finished (vector `S53-post-block-plus-context`).
        let mut pieces = Vec::new();
        let mut blocked_any = false;
        let mut halt: Option<String> = None;
        let mut mcp_replacement: Option<Vec<ContentBlock_NE>> = None;
        let spill = self.spill(
            &call.session.session_id,
            &call.session.log_path,
            &call.call_id,
        );
        let mut answers = JsonCount::default();
        for i in completion(&runs) {
            let run = &mut runs[i];
            let reading = read(run, event);
            let nth = answers.count(&reading);
            let context = capped_context(&spill, &reading, nth)
                .map(|ctx| reminder(&format!("{event}:{tool} hook additional context: {ctx}")));
            let why = if reading.blocked {
                Some(quoted_stderr(run))
            } else if reading.decision() == Some("block") {
                run.outcome = Outcome::Blocked;
                Some(reading.reason().unwrap_or_default().to_string())
            } else {
                None
            };
            if let Some(why) = why {
                blocked_any = true;
                pieces.push(reminder(&format!(
                    "{event}:{tool} hook blocking error from command: \"{}\": {why}",
                    run.command
                )));
            }
            pieces.extend(context);
            if is_mcp(&call.name)
                && let Some(out) = reading
                    .json
                    .as_ref()
                    .and_then(|j| j.get("hookSpecificOutput"))
                    .and_then(|h| h.get("updatedMCPToolOutput"))
                    .and_then(mcp_output)
            {
                mcp_replacement = Some(out);
            }
            // PostToolUseFailure's `continue: false` is ignored: the turn
            // goes on (vector `S173-failure-continue-false`).
            if let Some(reason) = reading.stop().filter(|_| event == EVENT) {
                halt.get_or_insert_with(|| reason.unwrap_or_default().to_string());
            }
        }
        self.record(&call.session, event, &runs);
        if let Some(reason) = halt {
            self.halt(&call.session.session_id, &reason);
        }
        let mut decision = with_answer(next().await?);
        if let Some(content) = mcp_replacement {
            decision = replaced(decision, content);
        }
        if pieces.is_empty() {
            return Ok(decision);
        }
        // Ours come first, each its own piece; then the rest of the
        // chain's feedback and context.
        let mut ours = text_blocks(pieces).into_iter();
        let theirs_feedback = decision.feedback().map(|f| f.to_string());
        let mut context: Vec<AuthoredContext> = Vec::new();
        let feedback = if blocked_any || theirs_feedback.is_some() {
            let first = ours.next().or_else(|| theirs_feedback.clone());
            context.extend(ours.map(AuthoredContext::new));
            if blocked_any {
                context.extend(theirs_feedback.map(AuthoredContext::new));
            }
            first
        } else {
            context.extend(ours.map(AuthoredContext::new));
            None
        };
        context.extend(decision.context());
        Ok(match (feedback, decision) {
            (Some(feedback), _) => PostToolDecision::BlockAuthored {
                feedback: feedback.into(),
                context: context.into(),
            },
            (None, decision) => decision.with_pieces(context),
        })
    }
}
