//! Compaction: a session's history replaced by a summary the model writes,
//! as Claude Code's `/compact` does (recorded in `S90-*`,
//! `tools/recorder-scenarios/FINDINGS-compact.md`).
//!
//! A turn whose only prompt is `/compact [instructions]` compacts instead
//! of asking the model to answer (unless the prompt takes no commands, as
//! `codex exec`'s, [`super::Prompt::typed`]); a turn after which the provider reported
//! the context as full ([`crate::config::CompactionSettings`]) ends with an
//! automatic compaction (or, if it did not complete, the next turn in the
//! process starts with one). Either way, in order:
//!
//! 1. `agent/compact` (plugin API 1.5, Claude's `PreCompact`): a waterfall
//!    answered with a `PromptDecision`. `Block` keeps the history (a
//!    `/compact` turn ends `rejected` with the reason, its prompt logged as
//!    `prompt/blocked`); the context of an `Allow` joins the instructions.
//! 2. The summary request: the history up to the last answer (Claude Code
//!    keeps that, its preserved segment: [`history::preserved_from`];
//!    without an answer before it, `Not enough messages to compact.`), plus one user message
//!    holding Claude Code's summary prompt (its instructions under
//!    `Additional Instructions:`), offering no tools. Claude Code asks in a
//!    forked agent: a child session (agent type `""`) makes the request and
//!    keeps it in its log, and its end is `subagent/end` (Claude's
//!    SubagentStop, before SessionStart(compact)).
//! 3. `session/compacted {trigger, summary, content}` is logged: from there
//!    on the history starts with `content`, Claude Code's continuation
//!    message around the summary (its `<analysis>` dropped, its `<summary>`
//!    as `Summary:`), naming the session log as the transcript. A resumed
//!    or loaded session derives the same history from the log.
//! 4. `agent/session-start {compact}` (its context lands after the summary),
//!    then `agent/compacted` (Claude's `PostCompact`) with the model's
//!    whole answer.
//!
//! A session of the Codex style ([`CompactionStyle::Codex`], recorded
//! `C90-*`, `tools/recorder-scenarios/FINDINGS-ccompact.md`) asks with
//! Codex's checkpoint prompt instead, and its history afterwards is the
//! user's earlier prompts followed by Codex's summary message (the summary
//! after Codex's fixed preface); `agent/compacted` (Codex's `PostCompact`)
//! comes before `agent/session-start {compact}`, which a listener that
//! halted the turn there skips, as Codex never gets to it.

use std::sync::Arc;

use abi_stable::std_types::{RArc, ROption, RString};
use dsh_plugin_api::{
    CompactInput, CompactedInput, PromptDecision, SeamInput, SeamOutput, SessionStartInput,
    SessionStartSource, SubagentInfo,
};
use futures::FutureExt as _;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use super::turn::{authored, default_terminal, originator, unless_cancelled};
use crate::config::CompactionStyle;
use crate::model::ChatMessage;
use crate::seams::Traced;
use crate::session::{EventSource, SessionEvent, TurnEndReason, TurnKind, history, slash};

/// The prompt that asks for a compaction.
pub const COMMAND: &str = "/compact";

/// Claude Code's summary prompt up to where its instructions go (recorded
/// `S90-manual`, byte for byte).
const PROMPT_HEAD: &str = include_str!("compact_prompt.txt");

/// The summary prompt's last paragraph.
const PROMPT_REMINDER: &str = "REMINDER: Do NOT call any tools. Respond with plain text only — an <analysis> block followed by a <summary> block. Tool calls will be rejected and you will fail the task.";

/// Codex's checkpoint prompt (recorded `C90-mid-turn`, byte for byte).
const CODEX_PROMPT: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.\n\nInclude:\n- Current progress and key decisions made\n- Important context, constraints, or user preferences\n- What remains to be done (clear next steps)\n- Any critical data, examples, or references needed to continue\n\nBe concise, structured, and focused on helping the next LLM seamlessly continue the work.\n";

/// What Codex puts before the summary in the history after a compaction
/// (recorded `C90-mid-turn`), a newline between them.
const CODEX_SUMMARY_PREFACE: &str = "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:";

/// Claude Code's answer to `/compact` with no conversation to summarize.
pub const NOTHING_TO_COMPACT: &str = "Not enough messages to compact.";

/// `manual` (`/compact`) or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    Manual,
    Auto,
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Manual => "manual",
            Trigger::Auto => "auto",
        }
    }
}

/// Why a compaction did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotCompacted {
    /// `agent/compact` said no: the reason, and the plugin when known.
    Blocked(String, Option<String>),
    /// The summary could not be had.
    Failed(String),
    /// The turn was cancelled.
    Cancelled,
}

/// The instructions of a `/compact` prompt: `None` when `text` is not one,
/// `Some(None)` for a bare `/compact`.
pub(crate) fn command(text: &str) -> Option<Option<String>> {
    let rest = text.trim().strip_prefix(COMMAND)?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim();
    Some((!rest.is_empty()).then(|| rest.to_string()))
}

/// The summary prompt, with `instructions` as Claude Code adds them.
pub fn summary_prompt(instructions: Option<&str>) -> String {
    match instructions {
        Some(i) => format!("{PROMPT_HEAD}\n\nAdditional Instructions:\n{i}\n\n{PROMPT_REMINDER}"),
        None => format!("{PROMPT_HEAD}\n\n{PROMPT_REMINDER}"),
    }
}

/// Codex's checkpoint prompt; `instructions` (a `/compact` argument, which
/// Codex's exec has no command for) follow it on lines of their own.
pub fn codex_summary_prompt(instructions: Option<&str>) -> String {
    match instructions {
        Some(i) => format!("{CODEX_PROMPT}\nAdditional instructions:\n{i}\n"),
        None => CODEX_PROMPT.to_string(),
    }
}

/// Codex's budget for the user prompts it keeps after a compaction, in
/// approximate tokens (`COMPACT_USER_MESSAGE_MAX_TOKENS`).
pub const CODEX_KEPT_PROMPT_TOKENS: usize = 20_000;

/// The user prompts Codex keeps after a compaction (recorded `C120-*`):
/// newest first, each whole while it fits the budget, the first that does
/// not cut in the middle to what is left (`…N tokens truncated…`), none
/// older than that; in their order.
pub fn codex_kept(prompts: Vec<String>) -> Vec<String> {
    use dsh_hooks_codex::spill::{approx_token_count, truncate_middle};
    let mut left = CODEX_KEPT_PROMPT_TOKENS;
    let mut kept = Vec::new();
    for prompt in prompts.into_iter().rev() {
        if left == 0 {
            break;
        }
        let tokens = approx_token_count(&prompt);
        if tokens <= left {
            left -= tokens;
            kept.push(prompt);
        } else {
            kept.push(truncate_middle(&prompt, left));
            break;
        }
    }
    kept.reverse();
    kept
}

/// Codex's summary message: its preface, a newline, the model's answer.
pub fn codex_summary_message(answer: &str) -> String {
    format!("{CODEX_SUMMARY_PREFACE}\n{answer}")
}

/// The model's answer as the summary reads afterwards: the `<analysis>`
/// block dropped, the `<summary>` block's text after `Summary:`, runs of
/// blank lines squeezed, trimmed.
pub fn format_summary(answer: &str) -> String {
    let mut text = answer.to_string();
    if let (Some(a), Some(b)) = (text.find("<analysis>"), text.find("</analysis>"))
        && a < b
    {
        text.replace_range(a..b + "</analysis>".len(), "");
    }
    if let (Some(a), Some(b)) = (text.find("<summary>"), text.find("</summary>"))
        && a < b
    {
        let inner = text[a + "<summary>".len()..b].trim().to_string();
        text.replace_range(a..b + "</summary>".len(), &format!("Summary:\n{inner}"));
    }
    while text.contains("\n\n\n") {
        text = text.replace("\n\n\n", "\n\n");
    }
    text.trim().to_string()
}

/// The message that stands for the compacted history (Claude Code's,
/// recorded `S90-manual`), naming `transcript` as where the rest is.
pub fn continuation(summary: &str, transcript: &str) -> String {
    format!(
        "This session is being continued from a previous conversation that ran out of context. \
         The summary below covers the earlier portion of the conversation.\n\n{summary}\n\n\
         If you need specific details from before compaction (like exact code snippets, error \
         messages, or content you generated), read the full transcript at: {transcript}\n\
         Continue the conversation from where it left off without asking the user any further \
         questions. Resume directly — do not acknowledge the summary, do not recap what was \
         happening, do not preface with \"I'll continue\" or similar. Pick up the last task as \
         if the break never happened."
    )
}

/// Claude Code's summary request: the history with the summary prompt as
/// the last text block of its last user message (recorded `S90-custom`,
/// `S110-two-turns`: `and again\n` then the prompt). The user's own
/// message (or a command's) takes it as a part of its own; after a tool
/// result, or a plugin's message, it is a message of its own, as dsh keeps
/// text that follows a tool result.
pub fn with_prompt(mut messages: Vec<ChatMessage>, prompt: &str) -> Vec<ChatMessage> {
    match messages.pop() {
        Some(last) if last.role == "user" && last.source.is_none() => {
            let mut blocks = slash::blocks(&last);
            blocks.push(prompt.to_string());
            messages.push(slash::merged(blocks));
        }
        last => {
            messages.extend(last);
            messages.push(ChatMessage::new("user", prompt.to_string()));
        }
    }
    messages
}

/// The lines plugins added to the output of the command the current turn
/// runs (`command/display`, plugin API 1.7), in the order appended.
fn display_lines(events: &[crate::session::LoggedEvent]) -> Vec<String> {
    let start = events
        .iter()
        .rposition(|e| matches!(e.event, SessionEvent::TurnStart { .. }))
        .unwrap_or(0);
    events[start..]
        .iter()
        .filter_map(|e| match &e.event {
            SessionEvent::CommandDisplay { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// What `/compact` printed (Claude Code 2.1.197's `Compacted ` and the
/// display lines, one a line, as `claude -p --verbose` shows it; recorded
/// `S90-manual`, `S130-*`).
pub fn compacted_output(lines: &[String]) -> String {
    format!("Compacted {}", lines.join("\n"))
}

impl Session {
    /// Logs the `/compact` command's transcript (Claude's style only; Codex
    /// writes none): after a compaction its output names what plugins
    /// displayed; a blocked one says why; one with nothing to summarize
    /// says so. Any other failure writes nothing (not recorded).
    pub(crate) fn log_command_output(&self, args: Option<&str>, result: &Result<(), NotCompacted>) {
        if self.compaction.style != CompactionStyle::Claude {
            return;
        }
        let (stdout, compacted) = match result {
            Ok(()) => (compacted_output(&display_lines(self.log().events())), true),
            Err(NotCompacted::Blocked(reason, _)) => (reason.clone(), false),
            Err(NotCompacted::Failed(e)) if e == NOTHING_TO_COMPACT => (e.clone(), false),
            Err(_) => return,
        };
        self.append(SessionEvent::CommandOutput {
            command: COMMAND.into(),
            args: args.unwrap_or_default().into(),
            stdout,
            compacted,
        });
    }

    /// Whether the provider last reported the context as full enough for
    /// an automatic compaction (and there is a history to compact).
    pub(crate) fn auto_compaction_due(&self) -> bool {
        let usage = self.state().usage;
        usage.is_some_and(|(used, size)| self.compaction.due(used, size))
            && !history::derive(self.log().events()).is_empty()
    }

    /// Compacts the history (see the module doc).
    pub(crate) async fn compact(
        self: &Arc<Self>,
        trigger: Trigger,
        custom: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<(), NotCompacted> {
        let messages = history::derive(self.log().events());
        if messages.is_empty() {
            return Err(NotCompacted::Failed(NOTHING_TO_COMPACT.into()));
        }
        let extra = unless_cancelled(cancel, self.pre_compact(trigger, custom.clone()))
            .await
            .ok_or(NotCompacted::Cancelled)??;
        let instructions: Vec<String> = custom.into_iter().chain(extra).collect();
        let instructions = (!instructions.is_empty()).then(|| instructions.join("\n\n"));
        let style = self.compaction.style;
        // Claude Code summarizes all but the last answer, which stays.
        let (messages, preserved) = match style {
            CompactionStyle::Claude => match history::preserved_from(&messages) {
                Some(at) => (messages[..at].to_vec(), true),
                None => return Err(NotCompacted::Failed(NOTHING_TO_COMPACT.into())),
            },
            CompactionStyle::Codex => (messages, false),
        };
        let prompt = match style {
            CompactionStyle::Claude => summary_prompt(instructions.as_deref()),
            CompactionStyle::Codex => codex_summary_prompt(instructions.as_deref()),
        };
        let request = match style {
            CompactionStyle::Claude => with_prompt(messages, &prompt),
            CompactionStyle::Codex => {
                let mut request = messages;
                request.push(ChatMessage::new("user", prompt.clone()));
                request
            }
        };
        let asked = match style {
            CompactionStyle::Claude => self.ask_in_fork(request, prompt).boxed(),
            CompactionStyle::Codex => self.complete(request, Vec::new()).boxed(),
        };
        let reply = unless_cancelled(cancel, asked)
            .await
            .ok_or(NotCompacted::Cancelled)?
            .map_err(NotCompacted::Failed)?;
        if reply.text.trim().is_empty() {
            return Err(NotCompacted::Failed(
                "the model's summary of the conversation was empty".into(),
            ));
        }
        let (content, kept) = match style {
            CompactionStyle::Claude => {
                let transcript = self.log_path().to_string_lossy().into_owned();
                let content = continuation(&format_summary(&reply.text), &transcript);
                (content, Vec::new())
            }
            CompactionStyle::Codex => (
                codex_summary_message(&reply.text),
                codex_kept(history::user_prompts(self.log().events())),
            ),
        };
        self.append(SessionEvent::Compacted {
            trigger: trigger.as_str().into(),
            summary: reply.text.clone(),
            content,
            kept,
            preserved,
        });
        self.state().usage = None;
        self.written().await;
        match style {
            CompactionStyle::Claude => {
                self.session_start(SessionStartSource::Compact).await;
                self.compacted(trigger, reply.text).await;
            }
            CompactionStyle::Codex => {
                self.compacted(trigger, reply.text).await;
                if self.state().halt.is_none() {
                    // A resumed session's SessionStart(resume) comes after
                    // the compaction, before its own (`C90-text-then-resume`).
                    self.pending_session_start().await;
                    self.session_start(SessionStartSource::Compact).await;
                }
            }
        }
        Ok(())
    }

    /// Claude Code's summary request, made by a forked agent (`S90-*`): a
    /// child session of this one (no `agent_type`, no `subagent/start`)
    /// whose log keeps the summary prompt and the answer, ending with
    /// `subagent/end` (Claude's SubagentStop) once it answered. Without
    /// an agent to fork from (never in a running host) the session asks.
    async fn ask_in_fork(
        self: &Arc<Self>,
        request: Vec<ChatMessage>,
        prompt: String,
    ) -> Result<crate::model::ModelReply, String> {
        let Some(agent) = self.agent.get().and_then(std::sync::Weak::upgrade) else {
            return self.complete(request, Vec::new()).await;
        };
        let child = agent
            .create_child(
                &self.current_cwd(),
                None,
                Some(self.id.clone()),
                Some(String::new()),
            )
            .await
            .map_err(|e| format!("cannot start the agent that writes the summary: {e}"))?;
        let turn_id = super::session::new_id("turn");
        child.append(SessionEvent::turn_start(&turn_id, TurnKind::Prompt));
        child.append(SessionEvent::UserMessage {
            content: prompt.clone(),
            source: EventSource::Agent {
                session_id: self.id.clone(),
            },
            original_content: None,
            parts: Vec::new(),
        });
        let reply = child.complete(request, Vec::new()).await;
        let ended = match &reply {
            Ok(answer) => {
                child.append(SessionEvent::AssistantMessage {
                    content: answer.text.clone(),
                    tool_calls: crate::model::with_argument_values(&answer.tool_calls),
                });
                (TurnEndReason::Completed, None)
            }
            Err(e) => (TurnEndReason::Error, Some(e.as_str())),
        };
        child.append(SessionEvent::turn_end(&turn_id, ended.0, ended.1));
        child.written().await;
        if let Ok(answer) = &reply {
            let info = SubagentInfo {
                parent: self.session_ref(),
                child_session_id: RString::from(child.id.as_str()),
                child_log_path: RString::from(child.log_path().to_string_lossy().as_ref()),
                agent_type: RString::new(),
                description: RString::new(),
                prompt: RString::from(prompt),
                call_id: RString::new(),
                result: ROption::RSome(RString::from(answer.text.as_str())),
            };
            let failures = self
                .view()
                .bus
                .notify(SeamInput::SubagentEnd(RArc::new(info)))
                .await;
            self.note_listener_failures("subagent/end", &failures, false);
        }
        agent.close_session(&child.id, "other").await;
        reply
    }

    /// `agent/compacted`, with the model's whole answer.
    async fn compacted(self: &Arc<Self>, trigger: Trigger, summary: String) {
        let input = CompactedInput {
            session: self.session_ref(),
            trigger: RString::from(trigger.as_str()),
            summary: RString::from(summary),
        };
        let failures = self
            .view()
            .bus
            .notify(SeamInput::Compacted(RArc::new(input)))
            .await;
        self.note_listener_failures("agent/compacted", &failures, false);
    }

    /// Whether this session compacts as Codex does (within a turn, before
    /// the model is asked again, rather than when the turn ends).
    pub(crate) fn compacts_like_codex(&self) -> bool {
        self.compaction.style == CompactionStyle::Codex
    }

    /// Whose compaction this session reproduces.
    pub fn compaction_style(&self) -> CompactionStyle {
        self.compaction.style
    }

    /// `agent/compact`: the instructions its listeners added, or why not.
    async fn pre_compact(
        self: &Arc<Self>,
        trigger: Trigger,
        custom: Option<String>,
    ) -> Result<Option<String>, NotCompacted> {
        self.written().await;
        let input = CompactInput {
            session: self.session_ref(),
            trigger: RString::from(trigger.as_str()),
            custom_instructions: custom.map(RString::from).into(),
        };
        let terminal = default_terminal(SeamOutput::Prompt(PromptDecision::allow()));
        let Traced {
            answer,
            trace,
            timed_out,
        } = self
            .view()
            .bus
            .waterfall_traced(SeamInput::Compact(RArc::new(input)), terminal)
            .await;
        self.note_listener_failures("agent/compact", &timed_out, false);
        // A gate that failed or did not decide in time keeps the history.
        let answer = answer.into_result().map_err(|e| {
            NotCompacted::Blocked(
                format!("agent/compact failed: {e}"),
                timed_out.first().map(|f| f.plugin.to_string()),
            )
        })?;
        match &answer {
            SeamOutput::Prompt(
                allowed @ (PromptDecision::Allow { .. } | PromptDecision::AllowAuthored { .. }),
            ) => {
                let added: Vec<String> = authored(allowed.context())
                    .into_iter()
                    .map(|(_, text)| text)
                    .collect();
                Ok((!added.is_empty()).then(|| added.join("\n\n")))
            }
            SeamOutput::Prompt(PromptDecision::Block { reason }) => Err(NotCompacted::Blocked(
                reason.to_string(),
                originator(&trace, &answer),
            )),
            other => Err(NotCompacted::Failed(format!(
                "agent/compact answered with {other:?}"
            ))),
        }
    }

    /// The `agent/session-start` held back for a compaction, if any.
    pub(crate) async fn pending_session_start(self: &Arc<Self>) {
        let pending = self.state().pending_start.take();
        if let Some(source) = pending {
            self.session_start(source).await;
        }
    }

    /// `agent/session-start` within a turn (`compact`, or a held-back
    /// `resume`); what its listeners add lands after the summary.
    async fn session_start(self: &Arc<Self>, source: SessionStartSource) {
        let input = SessionStartInput {
            session: self.session_ref(),
            source,
        };
        let failures = self
            .view()
            .bus
            .notify(SeamInput::SessionStart(RArc::new(input)))
            .await;
        self.note_listener_failures("agent/session-start", &failures, true);
        self.flush_buffered();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_command_word_is_a_compaction() {
        assert_eq!(command("/compact"), Some(None));
        assert_eq!(command("  /compact  \n"), Some(None));
        assert_eq!(
            command("/compact keep the file names"),
            Some(Some("keep the file names".into()))
        );
        assert_eq!(command("/compaction"), None);
        assert_eq!(command("please /compact"), None);
        assert_eq!(command("/compactx y"), None);
    }

    #[test]
    fn the_prompt_carries_instructions_as_claude_code_does() {
        let plain = summary_prompt(None);
        assert!(plain.starts_with("CRITICAL: Respond with TEXT ONLY."));
        assert!(plain.ends_with("</example>\n\n\nREMINDER: Do NOT call any tools. Respond with plain text only — an <analysis> block followed by a <summary> block. Tool calls will be rejected and you will fail the task."));
        let with = summary_prompt(Some("keep X"));
        assert!(with.contains("</example>\n\n\nAdditional Instructions:\nkeep X\n\nREMINDER: "));
    }

    #[test]
    fn the_continuation_is_claude_codes_byte_for_byte() {
        // Recorded `S90-manual`: request 4's first user message.
        let recorded = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\nMARK_S90_SUMMARY_AGENTIC the user asked to run echo hi; it printed hi.\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: $HOME/.claude/projects/$PROJECT_SLUG/$SESSION_ID.jsonl\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened.";
        let answer = "<analysis>MARK_S90_ANALYSIS</analysis>\n<summary>MARK_S90_SUMMARY_AGENTIC the user asked to run echo hi; it printed hi.</summary>";
        assert_eq!(
            continuation(
                &format_summary(answer),
                "$HOME/.claude/projects/$PROJECT_SLUG/$SESSION_ID.jsonl"
            ),
            recorded
        );
    }

    #[test]
    fn codex_texts_are_codexs_byte_for_byte() {
        // Recorded `C90-mid-turn`: request 2's last item, request 3's last.
        assert!(codex_summary_prompt(None).starts_with(
            "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary"
        ));
        assert!(codex_summary_prompt(None).ends_with("continue the work.\n"));
        assert_eq!(
            codex_summary_message("SUMMARY: echoed hi"),
            "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\nSUMMARY: echoed hi"
        );
    }

    #[test]
    fn codex_keeps_the_newest_prompts_within_its_budget() {
        // Recorded `C120-two-prompts-over-cap`: a 60,021-byte prompt, then a
        // 30,025-byte one (7,507 tokens): the older is cut to the 12,493
        // tokens left, around `…2513 tokens truncated…`.
        let older = "o".repeat(60_021);
        let newer = "n".repeat(30_025);
        let kept = codex_kept(vec!["oldest".into(), older, newer.clone()]);
        assert_eq!(kept.len(), 2, "the prompt before the cut one is dropped");
        assert_eq!(kept[1], newer);
        let (head, tail) = kept[0].split_once("…2513 tokens truncated…").unwrap();
        assert_eq!((head.len(), tail.len()), (24_986, 24_986));
        // Within the budget, every prompt is kept whole.
        let small = vec!["a".to_string(), "b".to_string()];
        assert_eq!(codex_kept(small.clone()), small);
        // One prompt over the budget alone (`C120-one-prompt-over-cap`).
        let one = codex_kept(vec!["x".repeat(100_021)]);
        assert!(one[0].contains("…5006 tokens truncated…"));
        assert_eq!(one[0].len(), 80_000 + "…5006 tokens truncated…".len());
    }

    #[test]
    fn the_summary_prompt_joins_the_users_last_message() {
        // Recorded `S110-two-turns`: `and again\n`, then the prompt.
        let asked = with_prompt(
            vec![
                ChatMessage::new("user", "do it"),
                ChatMessage::new("assistant", "All done."),
                ChatMessage::new("user", "and again"),
            ],
            "PROMPT",
        );
        assert_eq!(asked.len(), 3);
        assert_eq!(asked[2].parts, ["and again\n", "PROMPT"]);
        // After a tool result (`S90-custom`) or a plugin's message: a
        // message of its own.
        let mut tool = ChatMessage::new("tool", "hi");
        tool.tool_call_id = Some("c1".into());
        let asked = with_prompt(vec![tool], "PROMPT");
        assert_eq!(asked.len(), 2);
        assert_eq!(
            (asked[1].role.as_str(), asked[1].content.as_str()),
            ("user", "PROMPT")
        );
        let mut context = ChatMessage::new("user", "ctx");
        context.source = Some(serde_json::json!({"kind": "plugin", "plugin": "p"}));
        let asked = with_prompt(vec![context], "PROMPT");
        assert_eq!(asked.len(), 2);
        assert!(asked[1].parts.is_empty());
    }

    #[test]
    fn the_output_names_this_turns_display_lines_only() {
        use crate::session::LoggedEvent;
        let ev = |v: serde_json::Value| LoggedEvent::from_value(v);
        let events = vec![
            ev(serde_json::json!({"type": "turn/start", "turn_id": "t1", "kind": "prompt"})),
            ev(serde_json::json!({"type": "command/display", "text": "an earlier turn's"})),
            ev(serde_json::json!({"type": "turn/start", "turn_id": "t2", "kind": "compact"})),
            ev(serde_json::json!({"type": "command/display", "text": "first"})),
            // Not a display line: a text that is not a string, a key more.
            ev(serde_json::json!({"type": "command/display", "text": 5})),
            ev(serde_json::json!({"type": "command/display", "text": "x", "extra": 1})),
            ev(serde_json::json!({"type": "command/display", "text": "second"})),
        ];
        let lines = display_lines(&events);
        assert_eq!(lines, ["first", "second"]);
        assert_eq!(compacted_output(&lines), "Compacted first\nsecond");
        // Recorded `S130-no-hooks`: nothing displayed.
        assert_eq!(compacted_output(&[]), "Compacted ");
    }

    #[test]
    fn the_summary_drops_the_analysis_and_names_itself() {
        assert_eq!(
            format_summary("<analysis>A</analysis>\n<summary>S one.\n</summary>"),
            "Summary:\nS one."
        );
        assert_eq!(format_summary("  plain text  "), "plain text");
        let c = continuation("Summary:\nS", "/s/x.jsonl");
        assert!(c.contains("conversation.\n\nSummary:\nS\n\nIf you need"));
        assert!(c.contains("read the full transcript at: /s/x.jsonl\nContinue the conversation"));
    }
}
