//! Deriving the conversation the model sees from the log's events.
//!
//! User messages, plugin context and steering become user-role messages
//! (context and steering tagged with their source kind), but for context a
//! plugin added with the system role (plugin API 1.7), which becomes a
//! system-role message at its place, or, logged before the session's first
//! prompt (Claude Code's SessionStart hook context), right after that
//! prompt, where Claude Code puts its system message; the assistant's
//! text and calls become assistant messages, with arguments as last
//! rewritten (`tool/updated`); results become tool messages. Blocked prompts,
//! hook records and bookkeeping never reach the model.
//!
//! A `session/compacted` event replaces everything before it with its
//! summary message (and, for Claude Code's, keeps the last answer after it:
//! [`preserved_from`]). A `command/output` event is the slash command's
//! transcript as Claude Code writes it ([`super::slash`]): a message of the
//! command and a synthetic answer, its output in the command's message
//! after a compaction, else merged into the next prompt's message. After a
//! compaction, a next prompt in the same process (no `turn/start` marked
//! `loaded` before it) joins the command's message instead, with no
//! `Continue from where you left off.` and no answer (recorded
//! `S131-same-process`).
//!
//! Every assistant tool call is answered before the conversation goes on,
//! as OpenAI-compatible APIs require: a call whose result is missing from
//! the log (a log written before crashed turns were closed with results)
//! gets a synthetic error result right after the results that exist, and a
//! result that answers no open call is left out.

use super::events::{ContextRole, LoggedEvent, SessionEvent};
use super::log::INTERRUPTED_TOOL_RESULT;
use super::slash;
use crate::model::ChatMessage;

/// A command's output still waiting for the next prompt's message: a
/// message of its own when something else comes first.
fn flush_output(messages: &mut Vec<ChatMessage>, output: &mut Option<String>) {
    if let Some(text) = output.take() {
        messages.push(ChatMessage::new("user", text));
    }
}

/// A compacting command's transcript waiting for what comes next: its
/// blocks (caveat, command, output) and the context logged after the
/// compaction.
struct Held {
    blocks: Vec<String>,
    after: Vec<ChatMessage>,
}

/// The held transcript as a `--continue` run finds it (the process ended
/// after the command): the command's message ends with
/// [`slash::RESUME_PROMPT`], the context follows it, then
/// [`slash::NO_RESPONSE`] (recorded `S90-*`, `S131-hook-output`).
fn flush_held(messages: &mut Vec<ChatMessage>, held: &mut Option<Held>) {
    if let Some(Held { mut blocks, after }) = held.take() {
        blocks.push(slash::RESUME_PROMPT.to_string());
        messages.push(slash::merged(blocks));
        messages.extend(after);
        messages.push(ChatMessage::new("assistant", slash::NO_RESPONSE));
    }
}

/// Answers every call still waiting with a synthetic error result.
fn answer_pending(messages: &mut Vec<ChatMessage>, pending: &mut Vec<String>) {
    for id in pending.drain(..) {
        let mut m = ChatMessage::new("tool", INTERRUPTED_TOOL_RESULT.to_string());
        m.tool_call_id = Some(id);
        m.is_error = true;
        messages.push(m);
    }
}

/// The source a history message carries: the event's own, or for
/// steering `{"kind": "steering", "from": <source>}`.
fn source_json(source: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(source).unwrap_or(serde_json::Value::Null)
}

/// The user's prompts in the model-facing history of `events`, in order:
/// those a compaction kept and those since; no compaction's own message,
/// no context, no steering (what a Codex-style compaction keeps).
pub fn user_prompts(events: &[LoggedEvent]) -> Vec<String> {
    let mut prompts = Vec::new();
    for logged in events {
        match &logged.event {
            SessionEvent::UserMessage { content, .. } => prompts.push(content.clone()),
            SessionEvent::Compacted { kept, .. } => prompts.clone_from(kept),
            _ => {}
        }
    }
    prompts
}

/// Where Claude Code's preserved segment starts in `messages`: `/compact`
/// splits the conversation into one group per model response (a group
/// starts at each assistant message), keeps the last and summarizes the
/// rest. `None` when the rest holds no answer: Claude Code then has "Not
/// enough messages to compact." (`fUn`, recorded `S90-*`, `S110-*`).
pub fn preserved_from(messages: &[ChatMessage]) -> Option<usize> {
    let last = messages.iter().rposition(|m| m.role == "assistant")?;
    messages[..last]
        .iter()
        .any(|m| m.role == "assistant")
        .then_some(last)
}

/// The model-facing history of `events`.
pub fn derive(events: &[LoggedEvent]) -> Vec<ChatMessage> {
    let mut messages: Vec<ChatMessage> = Vec::new();
    // Calls of the last assistant message that have no result yet.
    let mut pending: Vec<String> = Vec::new();
    // The output of a command that changed nothing, for the next prompt.
    let mut output: Option<String> = None;
    // Where the history after the last compaction ends (its summary and
    // preserved answer): what comes after it until the command's output is
    // SessionStart(compact)'s context.
    let mut compacted_at: Option<usize> = None;
    // A compacting command's transcript, until the next prompt (same
    // process) or a process that loaded the session (`--continue`).
    let mut held: Option<Held> = None;
    // System-role context logged before the first prompt, for right after
    // it (`None` once a prompt was seen).
    let mut leading: Option<Vec<ChatMessage>> = Some(Vec::new());
    for logged in events {
        if let Some(early) = &mut leading {
            match &logged.event {
                SessionEvent::ContextMessage {
                    content,
                    source,
                    role: ContextRole::System,
                } => {
                    let mut m = ChatMessage::new("system", content.clone());
                    m.source = Some(source_json(source));
                    early.push(m);
                    continue;
                }
                SessionEvent::UserMessage { content, parts, .. } => {
                    answer_pending(&mut messages, &mut pending);
                    let mut m = ChatMessage::new("user", content.clone());
                    m.parts.clone_from(parts);
                    messages.push(m);
                    messages.append(early);
                    leading = None;
                    continue;
                }
                // User-role context stays before the prompt; anything else
                // that is a message comes first: the held context stays at
                // its place.
                SessionEvent::ContextMessage { .. } => {}
                event if is_message(event) => {
                    messages.append(early);
                    leading = None;
                }
                _ => {}
            }
        }
        let loaded = matches!(&logged.event, SessionEvent::TurnStart { loaded: true, .. });
        if held.is_some()
            && (loaded
                || (is_message(&logged.event)
                    && !matches!(&logged.event, SessionEvent::UserMessage { .. })))
        {
            flush_held(&mut messages, &mut held);
        }
        if output.is_some()
            && is_message(&logged.event)
            && !matches!(&logged.event, SessionEvent::UserMessage { .. })
        {
            answer_pending(&mut messages, &mut pending);
            flush_output(&mut messages, &mut output);
        }
        match &logged.event {
            SessionEvent::UserMessage { content, .. } => {
                answer_pending(&mut messages, &mut pending);
                // In the process that compacted, the command's texts and
                // the prompt are one message, the context after it
                // (recorded `S131-same-process`).
                if let Some(Held { mut blocks, after }) = held.take() {
                    blocks.push(content.clone());
                    messages.push(slash::merged(blocks));
                    messages.extend(after);
                    continue;
                }
                match output.take() {
                    Some(text) => messages.push(slash::merged(vec![text, content.clone()])),
                    None => {
                        let mut m = ChatMessage::new("user", content.clone());
                        if let SessionEvent::UserMessage { parts, .. } = &logged.event {
                            m.parts.clone_from(parts);
                        }
                        messages.push(m);
                    }
                }
            }
            SessionEvent::CommandOutput {
                command,
                args,
                stdout,
                compacted,
            } => {
                answer_pending(&mut messages, &mut pending);
                let at = compacted_at.take();
                if *compacted {
                    // The context logged after the compaction goes with the
                    // command's texts (Claude Code ends its system message
                    // with it, `S131-*`).
                    let after = match at {
                        Some(at) if at <= messages.len() => messages.split_off(at),
                        _ => Vec::new(),
                    };
                    held = Some(Held {
                        blocks: slash::compacted_blocks(command, args, stdout),
                        after,
                    });
                    continue;
                }
                let (message, answer, rest) = slash::transcript(command, args, stdout, false);
                messages.push(message);
                messages.push(answer);
                output = rest;
            }
            // Everything before a compaction is its summary now, but for
            // the last answer when it was preserved (its calls, if any, are
            // still the ones waiting).
            SessionEvent::Compacted {
                content,
                kept,
                preserved,
                ..
            } => {
                let tail = match preserved_from(&messages) {
                    Some(at) if *preserved => messages.split_off(at),
                    _ => {
                        pending.clear();
                        Vec::new()
                    }
                };
                messages.clear();
                for prompt in kept {
                    messages.push(ChatMessage::new("user", prompt.clone()));
                }
                messages.push(ChatMessage::new("user", content.clone()));
                messages.extend(tail);
                compacted_at = Some(messages.len());
            }
            SessionEvent::ContextMessage {
                content,
                source,
                role,
            } => {
                answer_pending(&mut messages, &mut pending);
                let mut m = ChatMessage::new(role.as_str(), content.clone());
                m.source = Some(source_json(source));
                messages.push(m);
            }
            SessionEvent::SteeringMessage {
                content,
                source,
                parts,
            } => {
                answer_pending(&mut messages, &mut pending);
                let mut m = ChatMessage::new("user", content.clone());
                m.parts.clone_from(parts);
                m.source = Some(source_json(&Steering {
                    kind: "steering",
                    from: source,
                }));
                messages.push(m);
            }
            SessionEvent::AssistantMessage {
                content,
                tool_calls,
            } => {
                answer_pending(&mut messages, &mut pending);
                let mut m = ChatMessage::new("assistant", content.clone());
                m.tool_calls = tool_calls.clone();
                pending = m.tool_calls.iter().map(|c| c.id.clone()).collect();
                messages.push(m);
            }
            SessionEvent::ToolUpdated {
                call_id, arguments, ..
            } => {
                if let Some(call) = messages
                    .iter_mut()
                    .rev()
                    .filter(|m| m.role == "assistant")
                    .flat_map(|m| m.tool_calls.iter_mut())
                    .find(|c| c.id == *call_id)
                {
                    call.arguments = arguments.clone();
                }
            }
            SessionEvent::ToolResult {
                call_id,
                content,
                is_error,
                images,
                ..
            } => {
                let Some(at) = pending.iter().position(|p| p == call_id) else {
                    tracing::debug!(call = %call_id, "a tool result that answers no open call is left out of the history");
                    continue;
                };
                pending.remove(at);
                let mut m = ChatMessage::new("tool", content.clone());
                m.tool_call_id = Some(call_id.clone());
                m.is_error = *is_error;
                m.images.clone_from(images);
                messages.push(m);
            }
            _ => {}
        }
    }
    answer_pending(&mut messages, &mut pending);
    flush_output(&mut messages, &mut output);
    flush_held(&mut messages, &mut held);
    messages.extend(leading.unwrap_or_default());
    messages
}

/// Whether `event` adds a message to the history (or replaces it).
fn is_message(event: &SessionEvent) -> bool {
    matches!(
        event,
        SessionEvent::UserMessage { .. }
            | SessionEvent::Compacted { .. }
            | SessionEvent::ContextMessage { .. }
            | SessionEvent::SteeringMessage { .. }
            | SessionEvent::AssistantMessage { .. }
            | SessionEvent::CommandOutput { .. }
    )
}

/// A steering message's history source.
#[derive(serde::Serialize)]
struct Steering<'a> {
    kind: &'static str,
    from: &'a super::events::EventSource,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelToolCall;
    use serde_json::{Value, json};

    /// A typed event from its log line's JSON.
    fn ev(line: Value) -> LoggedEvent {
        let event = LoggedEvent::from_value(line);
        assert!(!matches!(event.event, SessionEvent::Other(_)), "{event}");
        event
    }

    fn user(text: &str) -> LoggedEvent {
        ev(json!({"type": "user/message", "content": text, "source": {"kind": "user"}}))
    }

    fn assistant(calls: &[ModelToolCall]) -> LoggedEvent {
        ev(json!({"type": "assistant/message", "content": "", "tool_calls": calls}))
    }

    fn result(id: &str, content: &str) -> LoggedEvent {
        ev(
            json!({"type": "tool/result", "call_id": id, "name": "Bash", "content": content, "is_error": false}),
        )
    }

    #[test]
    fn derives_roles_sources_and_rewrites() {
        let calls = vec![ModelToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({"command": "ls"}),
        }];
        let events = vec![
            ev(json!({"type": "turn/start", "turn_id": "t", "kind": "prompt"})),
            ev(
                json!({"type": "prompt/blocked", "content": "nope", "source": {"kind": "user"}, "reason": "no"}),
            ),
            user("hi"),
            ev(
                json!({"type": "context/message", "content": "ctx", "source": {"kind": "plugin", "plugin": "gate"}}),
            ),
            assistant(&calls),
            ev(
                json!({"type": "tool/call", "call_id": "c1", "name": "Bash", "arguments": {"command": "ls"}}),
            ),
            ev(
                json!({"type": "tool/updated", "call_id": "c1", "arguments": {"command": "ls -a"}, "plugin": "gate"}),
            ),
            result("c1", "a b"),
            ev(
                json!({"type": "steering/message", "content": "keep going", "source": {"kind": "plugin", "plugin": "stopper"}}),
            ),
        ];
        let h = derive(&events);
        let roles: Vec<&str> = h.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "user", "assistant", "tool", "user"]);
        assert_eq!(
            h[1].source,
            Some(json!({"kind": "plugin", "plugin": "gate"}))
        );
        assert_eq!(h[2].tool_calls[0].arguments, json!({"command": "ls -a"}));
        assert_eq!(
            h[4].source,
            Some(json!({"kind": "steering", "from": {"kind": "plugin", "plugin": "stopper"}}))
        );
    }

    fn system_context(text: &str) -> LoggedEvent {
        ev(
            json!({"type": "context/message", "content": text, "source": {"kind": "plugin", "plugin": "hooks-claude"}, "role": "system"}),
        )
    }

    fn contents(h: &[ChatMessage]) -> Vec<(&str, &str)> {
        h.iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect()
    }

    #[test]
    fn system_context_before_the_first_prompt_follows_it() {
        // Claude Code's SessionStart text is in its system message after the
        // prompt (S7-plain-stdout); user-role context stays at its place.
        let events = vec![
            system_context("ss"),
            ev(
                json!({"type": "context/message", "content": "plain", "source": {"kind": "plugin", "plugin": "p"}}),
            ),
            user("hi"),
            system_context("ups"),
            ev(json!({"type": "assistant/message", "content": "ok", "tool_calls": []})),
            user("again"),
        ];
        assert_eq!(
            contents(&derive(&events)),
            [
                ("user", "plain"),
                ("user", "hi"),
                ("system", "ss"),
                ("system", "ups"),
                ("assistant", "ok"),
                ("user", "again"),
            ]
        );
        // With no prompt yet it is still in the history, and an answer
        // before any prompt does not wait for one.
        assert_eq!(
            contents(&derive(&[system_context("ss")])),
            [("system", "ss")]
        );
        let events = vec![
            system_context("ss"),
            ev(json!({"type": "assistant/message", "content": "ok", "tool_calls": []})),
            user("hi"),
        ];
        assert_eq!(
            contents(&derive(&events)),
            [("system", "ss"), ("assistant", "ok"), ("user", "hi")]
        );
    }

    #[test]
    fn system_context_is_a_system_message_at_its_place() {
        let calls = vec![ModelToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({"command": "ls"}),
        }];
        let events = vec![
            user("hi"),
            assistant(&calls),
            result("c1", "a b"),
            ev(
                json!({"type": "context/message", "content": "woke", "source": {"kind": "plugin", "plugin": "hooks-claude"}, "role": "system"}),
            ),
        ];
        let h = derive(&events);
        let roles: Vec<&str> = h.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "system"]);
        assert_eq!(h[3].content, "woke");
        assert_eq!(
            h[3].source,
            Some(json!({"kind": "plugin", "plugin": "hooks-claude"}))
        );
    }

    #[test]
    fn steering_in_parts_keeps_its_parts_and_an_old_line_has_none() {
        let events = vec![
            user("hi"),
            ev(
                json!({"type": "steering/message", "content": "a\n\nb", "source": {"kind": "plugin", "plugin": "hooks-claude"}, "parts": ["a\n", "b"]}),
            ),
            ev(
                json!({"type": "steering/message", "content": "go on", "source": {"kind": "plugin", "plugin": "stopper"}}),
            ),
        ];
        let h = derive(&events);
        assert_eq!(h[1].content, "a\n\nb");
        assert_eq!(h[1].parts, ["a\n", "b"]);
        assert_eq!(h[2].content, "go on");
        assert!(h[2].parts.is_empty());
    }

    #[test]
    fn every_call_is_answered_before_the_conversation_goes_on() {
        let calls = |ids: &[&str]| -> Vec<ModelToolCall> {
            ids.iter()
                .map(|id| ModelToolCall {
                    id: (*id).into(),
                    name: "Bash".into(),
                    arguments: json!({}),
                })
                .collect()
        };
        // A log closed `interrupted` by an older dsh: c2 and c3 never got results.
        let events = vec![
            user("go"),
            assistant(&calls(&["c1", "c2"])),
            result("c1", "ok"),
            ev(json!({"type": "turn/end", "turn_id": "t", "reason": "interrupted"})),
            user("again"),
            result("stray", "late"),
            assistant(&calls(&["c3"])),
        ];
        let h = derive(&events);
        let shape: Vec<(&str, Option<&str>, bool)> = h
            .iter()
            .map(|m| (m.role.as_str(), m.tool_call_id.as_deref(), m.is_error))
            .collect();
        assert_eq!(
            shape,
            [
                ("user", None, false),
                ("assistant", None, false),
                ("tool", Some("c1"), false),
                ("tool", Some("c2"), true),
                ("user", None, false),
                ("assistant", None, false),
                ("tool", Some("c3"), true),
            ]
        );
        assert_eq!(h[3].content, INTERRUPTED_TOOL_RESULT);
    }

    #[test]
    fn a_compaction_replaces_everything_before_it_with_its_summary() {
        let call = ModelToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({}),
        };
        let events = vec![
            user("first"),
            assistant(std::slice::from_ref(&call)),
            result("c1", "hi"),
            ev(
                json!({"type": "session/compacted", "trigger": "manual", "summary": "<summary>S</summary>", "content": "continued: S"}),
            ),
            user("next"),
        ];
        let messages = derive(&events);
        let shown: Vec<(&str, &str)> = messages
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        assert_eq!(shown, vec![("user", "continued: S"), ("user", "next")]);
    }

    /// The first turn of a process that loaded the session (`--continue`).
    fn loaded_turn() -> LoggedEvent {
        ev(json!({"type": "turn/start", "turn_id": "t9", "kind": "prompt", "loaded": true}))
    }

    #[test]
    fn in_the_process_that_compacted_the_next_prompt_joins_the_command() {
        // Recorded `S131-same-process`: summary, kept answer, one message of
        // caveat, command, output and the prompt, then SessionStart(compact)'s
        // text; no `Continue from where you left off.`, no answer.
        let events = vec![
            user("do it"),
            ev(json!({"type": "assistant/message", "content": "one", "tool_calls": []})),
            user("again"),
            ev(json!({"type": "assistant/message", "content": "All done.", "tool_calls": []})),
            ev(
                json!({"type": "session/compacted", "trigger": "manual", "summary": "S", "content": "continued: S", "preserved": true}),
            ),
            ev(
                json!({"type": "context/message", "content": "SessionStart:compact hook success: X", "source": {"kind": "plugin", "plugin": "hooks-claude"}}),
            ),
            output("Compacted ", true),
            ev(json!({"type": "turn/start", "turn_id": "t3", "kind": "prompt"})),
            user("what now?"),
        ];
        let h = derive(&events);
        let shown: Vec<(&str, &str)> = h
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        assert_eq!(shown.len(), 4, "{shown:?}");
        assert_eq!(shown[1], ("assistant", "All done."));
        assert_eq!(
            h[2].parts,
            [
                format!("{}\n", slash::CAVEAT),
                format!("{}\n", slash::command_text("/compact", "")),
                "<local-command-stdout>Compacted </local-command-stdout>\n".to_string(),
                "what now?".to_string(),
            ]
        );
        assert_eq!(shown[3], ("user", "SessionStart:compact hook success: X"));
        // Until the prompt comes, and once a process loads the session,
        // it is the `--continue` shape.
        let waiting = derive(&events[..7]);
        assert_eq!(
            waiting.last().map(|m| m.content.as_str()),
            Some("No response requested.")
        );
        let mut resumed = events.clone();
        resumed.insert(7, loaded_turn());
        let h = derive(&resumed);
        assert_eq!(h.len(), 6);
        assert_eq!(
            h[2].parts.last().map(String::as_str),
            Some("Continue from where you left off.")
        );
        assert_eq!(h[4].content, "No response requested.");
    }

    fn output(stdout: &str, compacted: bool) -> LoggedEvent {
        let mut line =
            json!({"type": "command/output", "command": "/compact", "args": "", "stdout": stdout});
        if compacted {
            line["compacted"] = json!(true);
        }
        ev(line)
    }

    #[test]
    fn a_command_that_changed_nothing_gives_its_output_to_the_next_prompt() {
        // Recorded `S90-pre-exit2`: caveat + command, the synthetic answer,
        // then the output and the next prompt in one message.
        let events = vec![
            user("one"),
            ev(json!({"type": "assistant/message", "content": "first", "tool_calls": []})),
            output("blocked", false),
            user("two"),
        ];
        let h = derive(&events);
        let shown: Vec<(&str, &str)> = h
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        assert_eq!(shown.len(), 5, "{shown:?}");
        assert_eq!(h[2].parts.len(), 2);
        assert!(h[2].parts[0].starts_with("<local-command-caveat>"));
        assert_eq!(shown[3], ("assistant", "No response requested."));
        assert_eq!(
            h[4].parts,
            [
                "<local-command-stdout>blocked</local-command-stdout>\n",
                "two"
            ]
        );
        // With nothing after it, or something else first, the output is a
        // message of its own.
        let alone = derive(&[user("one"), output("blocked", false)]);
        assert_eq!(
            alone.last().map(|m| m.content.as_str()),
            Some("<local-command-stdout>blocked</local-command-stdout>")
        );
        let context = derive(&[
            output("blocked", false),
            ev(
                json!({"type": "context/message", "content": "ctx", "source": {"kind": "plugin", "plugin": "p"}}),
            ),
            user("two"),
        ]);
        let contents: Vec<&str> = context.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(
            contents[2..],
            [
                "<local-command-stdout>blocked</local-command-stdout>",
                "ctx",
                "two"
            ]
        );
    }

    #[test]
    fn a_compaction_keeps_its_command_after_the_kept_answer() {
        // Recorded `S90-manual`: summary, kept answer, the command with its
        // output and `Continue from where you left off.`, the answer.
        let events = vec![
            user("do it"),
            ev(json!({"type": "assistant/message", "content": "one", "tool_calls": []})),
            user("again"),
            ev(json!({"type": "assistant/message", "content": "All done.", "tool_calls": []})),
            ev(
                json!({"type": "session/compacted", "trigger": "manual", "summary": "S", "content": "continued: S", "preserved": true}),
            ),
            output("Compacted ", true),
            loaded_turn(),
            user("what now?"),
        ];
        let h = derive(&events);
        let roles: Vec<&str> = h.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
        assert_eq!(h[1].content, "All done.");
        assert_eq!(h[2].parts.len(), 4);
        assert_eq!(
            h[2].parts[2],
            "<local-command-stdout>Compacted </local-command-stdout>\n"
        );
        assert_eq!(h[2].parts[3], "Continue from where you left off.");
        assert_eq!(h[3].content, "No response requested.");
        assert_eq!(h[4].content, "what now?");
        assert!(h[4].parts.is_empty());
    }

    #[test]
    fn session_start_context_after_a_compaction_follows_the_command() {
        // Recorded `S131-hook-output`: SessionStart(compact)'s text ends the
        // system message after the command's message, before the answer.
        let ctx = |text: &str| {
            ev(
                json!({"type": "context/message", "content": text, "source": {"kind": "plugin", "plugin": "hooks-claude"}}),
            )
        };
        let events = vec![
            user("do it"),
            ev(json!({"type": "assistant/message", "content": "one", "tool_calls": []})),
            user("again"),
            ev(json!({"type": "assistant/message", "content": "All done.", "tool_calls": []})),
            ev(
                json!({"type": "session/compacted", "trigger": "manual", "summary": "S", "content": "continued: S", "preserved": true}),
            ),
            ctx("SessionStart:compact hook success: X"),
            output("Compacted ", true),
            loaded_turn(),
            user("what now?"),
        ];
        let h = derive(&events);
        let shown: Vec<(&str, &str)> = h
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        assert_eq!(shown.len(), 6, "{shown:?}");
        assert_eq!(shown[1], ("assistant", "All done."));
        assert_eq!(h[2].parts.len(), 4);
        assert_eq!(shown[3], ("user", "SessionStart:compact hook success: X"));
        assert!(h[3].source.is_some());
        assert_eq!(shown[4], ("assistant", "No response requested."));
        assert_eq!(shown[5], ("user", "what now?"));
        // An automatic compaction has no command: its context stays after
        // the summary, and a later command that compacted nothing moves
        // nothing.
        let auto = derive(&[
            user("do it"),
            ev(json!({"type": "assistant/message", "content": "one", "tool_calls": []})),
            ev(
                json!({"type": "session/compacted", "trigger": "auto", "summary": "S", "content": "continued: S"}),
            ),
            ctx("SessionStart:compact hook success: X"),
            user("next"),
            ev(json!({"type": "assistant/message", "content": "two", "tool_calls": []})),
            output("blocked", false),
        ]);
        let contents: Vec<&str> = auto.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(
            contents[..4],
            [
                "continued: S",
                "SessionStart:compact hook success: X",
                "next",
                "two"
            ]
        );
    }

    #[test]
    fn a_codex_compaction_keeps_the_prompts_before_its_summary() {
        let events = vec![
            user("first"),
            assistant(&[]),
            ev(
                json!({"type": "session/compacted", "trigger": "auto", "summary": "S1", "content": "summary: S1", "kept": ["first"]}),
            ),
            user("second"),
        ];
        let shown: Vec<String> = derive(&events).into_iter().map(|m| m.content).collect();
        assert_eq!(shown, ["first", "summary: S1", "second"]);
        // A later compaction keeps both prompts, never a summary message.
        assert_eq!(user_prompts(&events), ["first", "second"]);
    }
}
