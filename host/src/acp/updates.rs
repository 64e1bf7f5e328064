//! Translation between dsh and ACP shapes, with no I/O: session-log events
//! become `session/update` payloads, ACP prompt blocks become dsh content,
//! and a turn's end becomes a stop reason (or an error).
//!
//! One [`Translator`] follows one stream of events (a live turn, or a
//! replayed log). Text reaches the client once: a step whose provider
//! streamed `stream/text` deltas has already shown its text, so its
//! `assistant/message` adds nothing.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    Content, ContentBlock, ContentChunk, EmbeddedResourceResource, Notice, NoticeSeverity,
    SessionUpdate, StopReason, Terminal, TextContent, ToolCall, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use dsh_plugin_api::ContentBlock as DshBlock;
use serde_json::Value;

use super::error::AcpError;
use super::tool_view::{diff_content, keeps_diff, locations, plan, task_plan};
use crate::agent::TurnOutcome;
use crate::session::{SessionEvent, TurnEndReason};

/// Which events a [`Translator`] sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A running turn: the client already shows its own prompt.
    Live,
    /// `session/load`: the whole conversation, user messages included.
    Replay,
}

/// Turns session events into `session/update` payloads.
pub(crate) struct Translator {
    mode: Mode,
    /// The current step streamed text deltas.
    streamed: bool,
    /// Calls already reported failed by `tool/denied`.
    denied: HashSet<String>,
    /// Tool names by call id, for titles of rewritten calls.
    names: HashMap<String, String>,
    /// The arguments of calls whose result is shown from them (`TodoWrite`:
    /// its plan), by call id.
    arguments: HashMap<String, Value>,
    /// Calls whose command runs in an editor's terminal: the terminal stays
    /// their content when they finish.
    terminals: HashSet<String>,
    /// The session's working directory: relative paths resolve against it.
    cwd: PathBuf,
    /// The client shows session notices: hook text for the user goes there
    /// rather than into the agent's message.
    notices: bool,
}

fn text_chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

fn text_content(text: &str) -> Vec<ToolCallContent> {
    vec![ToolCallContent::Content(Content::new(ContentBlock::Text(
        TextContent::new(text),
    )))]
}

/// The ACP kind of a dsh tool.
pub(crate) fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Bash" | "exec_command" | "write_stdin" => ToolKind::Execute,
        "Read" => ToolKind::Read,
        "Write" | "Edit" | "NotebookEdit" => ToolKind::Edit,
        "Glob" | "Grep" => ToolKind::Search,
        "WebFetch" => ToolKind::Fetch,
        "TodoWrite" | "TaskCreate" | "TaskGet" | "TaskList" | "TaskUpdate" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// A one-line title: `Bash: <command>`, `Read: <file_path>`, or the name.
pub(crate) fn tool_title(name: &str, arguments: &Value) -> String {
    let detail = match name {
        "Bash" => arguments.get("command"),
        "exec_command" => arguments.get("cmd"),
        "Glob" | "Grep" => arguments.get("pattern"),
        "NotebookEdit" => arguments.get("notebook_path"),
        "Skill" => arguments.get("skill"),
        _ => arguments.get("file_path"),
    };
    match detail.and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{name}: {d}"),
        _ => name.to_string(),
    }
}

impl Translator {
    pub(crate) fn new(mode: Mode) -> Self {
        Translator {
            mode,
            streamed: false,
            denied: HashSet::new(),
            names: HashMap::new(),
            arguments: HashMap::new(),
            terminals: HashSet::new(),
            cwd: PathBuf::new(),
            notices: false,
        }
    }

    /// Sends user-only text as `notice` updates (the client advertised
    /// `session.notices`).
    pub(crate) fn with_notices(mut self, notices: bool) -> Self {
        self.notices = notices;
        self
    }

    /// Resolves relative tool paths against `cwd` (so every location the
    /// editor gets is absolute).
    pub(crate) fn in_cwd(mut self, cwd: PathBuf) -> Self {
        self.cwd = cwd;
        self
    }

    /// The updates one event produces (often none).
    pub(crate) fn updates(&mut self, event: &SessionEvent) -> Vec<SessionUpdate> {
        match event {
            SessionEvent::UserMessage { content, .. } if self.mode == Mode::Replay => {
                vec![SessionUpdate::UserMessageChunk(text_chunk(content))]
            }
            // A blocked prompt: the user reads why (the turn ends `refusal`).
            SessionEvent::PromptBlocked {
                content, reason, ..
            } => {
                let mut out = Vec::new();
                if self.mode == Mode::Replay {
                    out.push(SessionUpdate::UserMessageChunk(text_chunk(content)));
                }
                if !reason.is_empty() {
                    out.push(SessionUpdate::AgentMessageChunk(text_chunk(reason)));
                }
                out
            }
            // The history was replaced by a summary (`/compact`): the user
            // reads that it happened, as Claude Code answers `Compacted`.
            SessionEvent::Compacted { .. } => {
                vec![SessionUpdate::AgentMessageChunk(text_chunk("Compacted"))]
            }
            // A turn that ended well with words for the user (`/compact`
            // with nothing to summarize: Claude Code's run succeeds with
            // `Not enough messages to compact.`).
            SessionEvent::TurnEnd {
                reason: TurnEndReason::Completed,
                message: Some(text),
                ..
            } if !text.is_empty() => {
                vec![SessionUpdate::AgentMessageChunk(text_chunk(text))]
            }
            SessionEvent::StreamThought { text } if !text.is_empty() => {
                vec![SessionUpdate::AgentThoughtChunk(text_chunk(text))]
            }
            SessionEvent::StreamUsage { used, size } => {
                vec![SessionUpdate::UsageUpdate(UsageUpdate::new(*used, *size))]
            }
            // Hook text for the user only (`systemMessage`, `stopReason`).
            SessionEvent::UserNotice { text, source } if !text.is_empty() => {
                if self.notices {
                    let notice = Notice::new(NoticeSeverity::Info, text.clone())
                        .description(format!("from the {source}"));
                    vec![SessionUpdate::Notice(notice)]
                } else {
                    vec![SessionUpdate::AgentMessageChunk(text_chunk(text))]
                }
            }
            SessionEvent::StepStart { .. } => {
                self.streamed = false;
                Vec::new()
            }
            SessionEvent::StreamText { text } => {
                if text.is_empty() {
                    return Vec::new();
                }
                self.streamed = true;
                vec![SessionUpdate::AgentMessageChunk(text_chunk(text))]
            }
            SessionEvent::AssistantMessage { content, .. } => {
                let already_shown = std::mem::take(&mut self.streamed);
                if already_shown || content.is_empty() {
                    return Vec::new();
                }
                vec![SessionUpdate::AgentMessageChunk(text_chunk(content))]
            }
            SessionEvent::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                self.names.insert(call_id.clone(), name.clone());
                if plan(name, arguments).is_some() {
                    self.arguments.insert(call_id.clone(), arguments.clone());
                }
                let call = ToolCall::new(call_id.clone(), tool_title(name, arguments))
                    .kind(tool_kind(name))
                    .status(ToolCallStatus::InProgress)
                    .content(diff_content(name, arguments, &self.cwd))
                    .locations(locations(name, arguments, &self.cwd))
                    .raw_input(arguments.clone());
                vec![SessionUpdate::ToolCall(call)]
            }
            SessionEvent::ToolUpdated {
                call_id, arguments, ..
            } => {
                // A plugin rewrote the arguments; the title follows them.
                let name = self
                    .names
                    .get(call_id)
                    .map(String::as_str)
                    .unwrap_or_default();
                let mut fields = ToolCallUpdateFields::new().title(tool_title(name, arguments));
                let places = locations(name, arguments, &self.cwd);
                if !places.is_empty() {
                    fields = fields.locations(places);
                }
                let diff = diff_content(name, arguments, &self.cwd);
                if !diff.is_empty() {
                    fields = fields.content(diff);
                }
                if self.arguments.contains_key(call_id) {
                    self.arguments.insert(call_id.clone(), arguments.clone());
                }
                let fields = fields.raw_input(arguments.clone());
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                ))]
            }
            // The command runs in the editor's terminal: show it in place.
            SessionEvent::StreamTerminal {
                call_id,
                terminal_id,
            } => {
                self.terminals.insert(call_id.clone());
                let content = vec![ToolCallContent::Terminal(Terminal::new(
                    terminal_id.clone(),
                ))];
                let fields = ToolCallUpdateFields::new().content(content);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                ))]
            }
            // Allowed after waiting for approval (`pending` in the
            // permission request): it runs now.
            SessionEvent::ToolApproval {
                call_id, outcome, ..
            } if outcome == "allow_once" || outcome == "allow_always" => {
                let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                ))]
            }
            SessionEvent::ToolDenied {
                call_id, reason, ..
            } => {
                self.denied.insert(call_id.clone());
                let fields = ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Failed)
                    .content(text_content(reason));
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                ))]
            }
            SessionEvent::ToolResult {
                call_id,
                content,
                is_error,
                structured,
                images,
                ..
            } => {
                if self.denied.remove(call_id) {
                    self.arguments.remove(call_id);
                    self.terminals.remove(call_id);
                    // Its failure (and reason) was already reported.
                    return Vec::new();
                }
                let raw = RawOutput {
                    content,
                    is_error: *is_error,
                    structured: structured.as_ref(),
                };
                let mut fields = ToolCallUpdateFields::new()
                    .status(if *is_error {
                        ToolCallStatus::Failed
                    } else {
                        ToolCallStatus::Completed
                    })
                    .raw_output(serde_json::to_value(raw).unwrap_or(Value::Null));
                // A finished edit keeps its diff on screen.
                let name = self
                    .names
                    .get(call_id)
                    .map(String::as_str)
                    .unwrap_or_default();
                // A terminal stays on screen, with the whole run in it.
                let in_terminal = self.terminals.remove(call_id);
                if !in_terminal && (*is_error || !keeps_diff(name)) {
                    // An image read (`Read` of a PNG) shows the image.
                    let mut shown = if content.is_empty() && !images.is_empty() {
                        Vec::new()
                    } else {
                        text_content(content)
                    };
                    shown.extend(images.iter().map(|i| {
                        ToolCallContent::Content(Content::new(ContentBlock::Image(
                            agent_client_protocol::v1::schema::ImageContent::new(
                                i.data.as_str(),
                                i.mime_type.as_str(),
                            ),
                        )))
                    }));
                    fields = fields.content(shown);
                }
                let mut out = vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                ))];
                // A plan the model wrote (`TodoWrite`) becomes the session's plan.
                let planned = self.arguments.remove(call_id);
                let written = planned.filter(|_| !*is_error).and_then(|a| plan(name, &a));
                if let Some(entries) = written {
                    out.push(SessionUpdate::Plan(entries));
                }
                out
            }
            // The task tools' list after a change (`tools-tasks`).
            SessionEvent::Other(record) => task_plan(record)
                .map(SessionUpdate::Plan)
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A tool call's `rawOutput`: the result as the log keeps it.
#[derive(serde::Serialize)]
struct RawOutput<'a> {
    content: &'a str,
    is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    structured: Option<&'a Value>,
}

/// dsh content for an ACP prompt: text as is, resource links as markdown
/// links, embedded text resources inside a `<context>` block. Images, audio
/// and binary resources are refused (the agent does not advertise them).
pub(crate) fn prompt_content(
    blocks: &[ContentBlock],
) -> Result<Vec<dsh_plugin_api::ContentBlock_NE>, AcpError> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        let text = match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::ResourceLink(link) => format!("[@{}]({})", link.name, link.uri),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    format!("<context ref=\"{}\">\n{}\n</context>", r.uri, r.text)
                }
                _ => {
                    return Err(AcpError::UnsupportedContent {
                        kind: "blob resource",
                    });
                }
            },
            ContentBlock::Image(_) => return Err(AcpError::UnsupportedContent { kind: "image" }),
            ContentBlock::Audio(_) => return Err(AcpError::UnsupportedContent { kind: "audio" }),
            _ => return Err(AcpError::UnsupportedContent { kind: "unknown" }),
        };
        out.push(DshBlock::text(text));
    }
    Ok(out)
}

/// The answer to `session/prompt` for a finished turn. A client that sent
/// `session/cancel` gets `cancelled` whatever happened after, as ACP asks;
/// a turn whose prompt a hook or plugin blocked is a `refusal` (`cancelled`
/// is kept for the client's own cancel).
pub(crate) fn stop_reason(
    outcome: &TurnOutcome,
    cancel_requested: bool,
) -> Result<StopReason, AcpError> {
    if cancel_requested {
        return Ok(StopReason::Cancelled);
    }
    match outcome.reason {
        TurnEndReason::Completed => Ok(StopReason::EndTurn),
        TurnEndReason::MaxTokens => Ok(StopReason::MaxTokens),
        TurnEndReason::Rejected => Ok(StopReason::Refusal),
        TurnEndReason::Aborted | TurnEndReason::Disposed | TurnEndReason::Interrupted => {
            Ok(StopReason::Cancelled)
        }
        TurnEndReason::Error => Err(AcpError::TurnFailed {
            message: outcome
                .message
                .clone()
                .unwrap_or_else(|| "the turn failed".into()),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn ev(line: Value) -> SessionEvent {
        let event = SessionEvent::from_value(line);
        assert!(!matches!(event, SessionEvent::Other(_)), "{event:?}");
        event
    }

    #[test]
    fn the_file_tools_have_kinds_and_titles_naming_what_they_touch() {
        assert_eq!(tool_kind("Grep"), ToolKind::Search);
        assert_eq!(tool_kind("NotebookEdit"), ToolKind::Edit);
        assert_eq!(
            tool_title("Grep", &json!({"pattern": "fn main"})),
            "Grep: fn main"
        );
        assert_eq!(
            tool_title("NotebookEdit", &json!({"notebook_path": "/p/nb.ipynb"})),
            "NotebookEdit: /p/nb.ipynb"
        );
        assert_eq!(
            tool_title("Skill", &json!({"skill": "greet"})),
            "Skill: greet"
        );
        assert_eq!(tool_title("Glob", &json!({})), "Glob");
    }

    fn wire(updates: Vec<SessionUpdate>) -> Vec<Value> {
        updates
            .into_iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect()
    }

    #[test]
    fn streamed_steps_do_not_repeat_their_text() {
        let mut t = Translator::new(Mode::Live);
        let mut out = Vec::new();
        for event in [
            json!({"type": "step/start", "step": 1}),
            json!({"type": "stream/text", "text": "Hel"}),
            json!({"type": "stream/text", "text": "lo"}),
            json!({"type": "assistant/message", "content": "Hello", "tool_calls": []}),
            json!({"type": "step/start", "step": 2}),
            json!({"type": "assistant/message", "content": "unstreamed", "tool_calls": []}),
        ] {
            out.extend(wire(t.updates(&ev(event))));
        }
        let texts: Vec<&str> = out
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["Hel", "lo", "unstreamed"]);
    }

    #[test]
    fn tool_events_become_a_call_and_its_final_update() {
        let mut t = Translator::new(Mode::Live);
        let call = ev(
            json!({"type": "tool/call", "call_id": "c1", "name": "Bash", "arguments": {"command": "ls"}}),
        );
        let result = ev(
            json!({"type": "tool/result", "call_id": "c1", "name": "Bash", "content": "a\nb", "is_error": false}),
        );
        assert_eq!(
            wire(t.updates(&call)),
            [json!({
                "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Bash: ls",
                "kind": "execute", "status": "in_progress", "rawInput": {"command": "ls"}
            })]
        );
        assert_eq!(
            wire(t.updates(&result)),
            [json!({
                "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "a\nb"}}],
                "rawOutput": {"content": "a\nb", "is_error": false}
            })]
        );
    }

    #[test]
    fn an_image_read_shows_the_image() {
        let mut t = Translator::new(Mode::Live);
        let call = ev(
            json!({"type": "tool/call", "call_id": "c1", "name": "Read", "arguments": {"file_path": "d.png"}}),
        );
        let result = ev(
            json!({"type": "tool/result", "call_id": "c1", "name": "Read",
            "content": "", "is_error": false,
            "images": [{"mime_type": "image/png", "data": "iVBO"}]}),
        );
        t.updates(&call);
        let update = &wire(t.updates(&result))[0];
        assert_eq!(
            update["content"],
            json!([{"type": "content", "content": {"type": "image", "data": "iVBO", "mimeType": "image/png"}}]),
            "{update}"
        );
    }

    #[test]
    fn a_terminal_is_shown_in_its_call_and_stays_when_the_call_ends() {
        let mut t = Translator::new(Mode::Live);
        t.updates(&ev(
            json!({"type": "tool/call", "call_id": "c1", "name": "Bash", "arguments": {"command": "ls"}}),
        ));
        let shown = SessionEvent::StreamTerminal {
            call_id: "c1".into(),
            terminal_id: "t1".into(),
        };
        assert_eq!(
            wire(t.updates(&shown)),
            [json!({
                "sessionUpdate": "tool_call_update", "toolCallId": "c1",
                "content": [{"type": "terminal", "terminalId": "t1"}]
            })]
        );
        let failed = ev(
            json!({"type": "tool/result", "call_id": "c1", "name": "Bash", "content": "Exit code 1", "is_error": true}),
        );
        let last = wire(t.updates(&failed));
        assert_eq!(last[0]["status"], "failed");
        assert!(last[0].get("content").is_none(), "{last:#?}");
    }

    #[test]
    fn a_todo_list_becomes_a_plan_once_the_call_succeeds() {
        let todos = json!({"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]});
        let mut t = Translator::new(Mode::Replay);
        for (id, is_error) in [("c1", true), ("c2", false)] {
            t.updates(&ev(
                json!({"type": "tool/call", "call_id": id, "name": "TodoWrite", "arguments": todos}),
            ));
            let out = wire(t.updates(&ev(json!({
                "type": "tool/result", "call_id": id, "name": "TodoWrite",
                "content": "x", "is_error": is_error
            }))));
            let plans: Vec<&Value> = out
                .iter()
                .filter(|u| u["sessionUpdate"] == "plan")
                .collect();
            if is_error {
                assert!(plans.is_empty(), "{out:#?}");
            } else {
                assert_eq!(
                    plans,
                    [&json!({"sessionUpdate": "plan", "entries": [
                        {"content": "a", "priority": "medium", "status": "pending"}
                    ]})]
                );
            }
        }
    }

    #[test]
    fn a_task_list_record_becomes_the_plan() {
        let mut t = Translator::new(Mode::Live);
        let record = SessionEvent::from_value(json!({"type": "tasks/plan", "entries": [
            {"content": "first", "status": "in_progress"}]}));
        assert!(matches!(record, SessionEvent::Other(_)), "{record:?}");
        let out = wire(t.updates(&record));
        assert_eq!(
            out,
            [json!({"sessionUpdate": "plan", "entries": [
                {"content": "first", "priority": "medium", "status": "in_progress"}]})]
        );
    }

    #[test]
    fn a_rewritten_call_gets_a_new_title_and_input() {
        let mut t = Translator::new(Mode::Live);
        t.updates(&ev(
            json!({"type": "tool/call", "call_id": "c1", "name": "Bash", "arguments": {"command": "rm -rf /"}}),
        ));
        let rewritten = ev(
            json!({"type": "tool/updated", "call_id": "c1", "arguments": {"command": "echo no"}, "plugin": "p"}),
        );
        assert_eq!(
            wire(t.updates(&rewritten)),
            [json!({
                "sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Bash: echo no",
                "rawInput": {"command": "echo no"}
            })]
        );
    }

    #[test]
    fn a_denied_call_fails_once_with_its_reason() {
        let mut t = Translator::new(Mode::Live);
        let denied = ev(json!({"type": "tool/denied", "call_id": "c1", "reason": "no", "by": "p"}));
        let result = ev(
            json!({"type": "tool/result", "call_id": "c1", "name": "Bash", "content": "no", "is_error": true}),
        );
        let first = wire(t.updates(&denied));
        assert_eq!(first[0]["status"], "failed");
        assert_eq!(first[0]["content"][0]["content"]["text"], "no");
        assert!(t.updates(&result).is_empty());
    }

    #[test]
    fn a_blocked_prompt_tells_why_and_a_notice_reaches_the_user() {
        let blocked = ev(json!({
            "type": "prompt/blocked", "content": "do it", "source": {"kind": "user"},
            "reason": "blocked by hook: no"
        }));
        assert_eq!(
            wire(Translator::new(Mode::Live).updates(&blocked)),
            [
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "blocked by hook: no"}})
            ]
        );
        let replayed = wire(Translator::new(Mode::Replay).updates(&blocked));
        assert_eq!(replayed[0]["sessionUpdate"], "user_message_chunk");
        assert_eq!(replayed[1]["content"]["text"], "blocked by hook: no");
        let notice = ev(json!({"type": "user/notice", "text": "heads up", "source": "Stop hook"}));
        assert_eq!(
            wire(Translator::new(Mode::Live).updates(&notice)),
            [
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "heads up"}})
            ]
        );
    }

    #[test]
    fn a_rejected_turn_is_a_refusal_unless_the_client_cancelled() {
        let outcome = |reason| TurnOutcome {
            turn_id: "t".into(),
            reason,
            message: None,
            events: Vec::new(),
        };
        assert_eq!(
            stop_reason(&outcome(TurnEndReason::Rejected), false).unwrap(),
            StopReason::Refusal
        );
        assert_eq!(
            stop_reason(&outcome(TurnEndReason::Rejected), true).unwrap(),
            StopReason::Cancelled
        );
        assert_eq!(
            stop_reason(&outcome(TurnEndReason::Aborted), false).unwrap(),
            StopReason::Cancelled
        );
    }

    #[test]
    fn user_messages_only_replay() {
        let user = ev(json!({"type": "user/message", "content": "hi", "source": {"kind": "user"}}));
        assert!(Translator::new(Mode::Live).updates(&user).is_empty());
        let replayed = wire(Translator::new(Mode::Replay).updates(&user));
        assert_eq!(replayed[0]["sessionUpdate"], "user_message_chunk");
    }

    #[test]
    fn images_are_refused_and_links_become_text() {
        let link = ContentBlock::ResourceLink(
            agent_client_protocol::v1::schema::ResourceLink::new("a.rs", "file:///a.rs"),
        );
        let out = prompt_content(&[ContentBlock::Text(TextContent::new("see")), link]).unwrap();
        assert_eq!(
            dsh_plugin_api::blocks_text(&out),
            "see\n[@a.rs](file:///a.rs)"
        );
        let image = ContentBlock::Image(agent_client_protocol::v1::schema::ImageContent::new(
            "AAAA",
            "image/png",
        ));
        assert!(matches!(
            prompt_content(&[image]),
            Err(AcpError::UnsupportedContent { kind: "image" })
        ));
    }
}
