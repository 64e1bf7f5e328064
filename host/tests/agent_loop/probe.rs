//! `probe`: a native test plugin whose behaviour on every seam comes from
//! its config, and which writes what it saw to a JSONL file.

use std::io::Write;
use std::sync::Arc;

use dsh_plugin_api::abi_stable::std_types::{RArc, RString};
use dsh_plugin_api::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ProbeConfig {
    /// Where to write what it saw.
    pub seen: Option<String>,
    /// `rewrite:T`, `context:T`, `block:R`, `block-if:WORD`, `panic`, `fold:T`,
    /// `reverse` (of the rest's context), `forge:PLUGIN:T`.
    pub prompt: Option<String>,
    /// `deny:R`, `ask`, `allow-then-guard`.
    pub pre: Option<String>,
    /// `deny-if:WORD`.
    pub guard: Option<String>,
    /// `own:T` (short-circuit dispatch).
    pub execute: Option<String>,
    /// `context:T` (prefixed with the call's command).
    pub post: Option<String>,
    /// `panic`.
    pub result: Option<String>,
    /// `continue-once:R`, `stop`.
    pub cont: Option<String>,
    /// `inject:T`, `panic`.
    pub session_start: Option<String>,
}

pub struct Probe {
    host: Host,
    config: ProbeConfig,
    continued: std::sync::atomic::AtomicBool,
}

impl Probe {
    fn saw(&self, what: serde_json::Value) {
        if let Some(path) = &self.config.seen {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            writeln!(f, "{what}").unwrap();
        }
    }
}

fn arg(spec: &Option<String>, verb: &str) -> Option<String> {
    spec.as_deref()?
        .strip_prefix(verb)?
        .strip_prefix(':')
        .map(str::to_string)
}

impl Plugin for Probe {
    type Config = ProbeConfig;
    const NAME: &'static str = "probe";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &Host, config: ProbeConfig) -> Result<Self, String> {
        if let Some(word) = arg(&config.guard, "deny-if") {
            host.add_guard(move |call: &ToolCall| {
                if call.arguments.contains(&word) {
                    GuardDecision::Deny {
                        reason: format!("guard: `{word}` is not allowed").into(),
                    }
                } else {
                    GuardDecision::Abstain
                }
            })?;
        }
        Ok(Probe {
            host: host.clone(),
            config,
            continued: Default::default(),
        })
    }

    async fn session_start(self: Arc<Self>, input: RArc<SessionStartInput>) -> Result<(), String> {
        self.saw(serde_json::json!({"seam": "session-start", "source": input.source.as_str()}));
        if self.config.session_start.as_deref() == Some("panic") {
            panic!("probe panics in session-start");
        }
        if let Some(text) = arg(&self.config.session_start, "inject") {
            self.host.inject_context(&input.session.session_id, text)?;
        }
        Ok(())
    }

    async fn prompt_submit(
        self: Arc<Self>,
        input: RArc<PromptSubmitInput>,
        next: Next<PromptDecision>,
    ) -> Result<PromptDecision, String> {
        let text = blocks_text(&input.content);
        self.saw(serde_json::json!({"seam": "prompt-submit", "text": text}));
        let spec = &self.config.prompt;
        if spec.as_deref() == Some("panic") {
            panic!("probe panics in prompt-submit");
        }
        if let Some(t) = arg(spec, "rewrite") {
            return Ok(PromptDecision::Allow {
                content: Some(vec![ContentBlock::text(t)].into()).into(),
                additional_context: None.into(),
            });
        }
        if let Some(t) = arg(spec, "context") {
            return Ok(PromptDecision::Allow {
                content: None.into(),
                additional_context: Some(RString::from(t)).into(),
            });
        }
        if let Some(word) = arg(spec, "block-after-if") {
            // A gate that lets the rest of the chain decide first.
            let theirs = next.run().await?;
            if text.contains(&word) {
                return Ok(PromptDecision::Block {
                    reason: format!("prompts containing `{word}` are not allowed").into(),
                });
            }
            return Ok(theirs);
        }
        if let Some(r) = arg(spec, "block") {
            return Ok(PromptDecision::Block { reason: r.into() });
        }
        if let Some(word) = arg(spec, "block-if")
            && text.contains(&word)
        {
            return Ok(PromptDecision::Block {
                reason: format!("prompts containing `{word}` are not allowed").into(),
            });
        }
        if let Some(t) = arg(spec, "fold") {
            // Context-only, like a hook bridge: delegate, then add ours first.
            return Ok(next.run().await?.with_context_first(t));
        }
        if spec.as_deref() == Some("reverse") {
            // Reorders what the rest of the chain added, adding nothing.
            let theirs = next.run().await?;
            let mut pieces = theirs.context();
            pieces.reverse();
            return Ok(theirs.with_pieces(pieces));
        }
        if let Some(claim) = arg(spec, "forge") {
            // Adds a piece in another plugin's name, after the rest's.
            let (plugin, text) = claim.split_once(':').unwrap_or(("", &claim));
            let theirs = next.run().await?;
            let mut pieces = theirs.context();
            pieces.push(AuthoredContext::by(plugin, text));
            return Ok(theirs.with_pieces(pieces));
        }
        next.run().await
    }

    async fn pre_execute(
        self: Arc<Self>,
        call: RArc<ToolCall>,
        next: Next<PreToolDecision>,
    ) -> Result<PreToolDecision, String> {
        self.saw(serde_json::json!({
            "seam": "pre-execute",
            "name": call.name.as_str(),
            "session": call.session.session_id.as_str(),
            "parent": call.parent.as_ref().map(|p| p.to_string()).into_option(),
        }));
        if let Some(r) = arg(&self.config.pre, "deny") {
            return Ok(PreToolDecision::Deny { reason: r.into() });
        }
        if self.config.pre.as_deref() == Some("ask") {
            return Ok(PreToolDecision::Ask {
                reason: None.into(),
            });
        }
        if self.config.pre.as_deref() == Some("allow") {
            return Ok(PreToolDecision::allow());
        }
        next.run().await
    }

    async fn execute(
        self: Arc<Self>,
        input: RArc<ExecuteInput>,
        next: ExecuteNext,
    ) -> Result<ToolResult, String> {
        if let Some(t) = arg(&self.config.execute, "own") {
            return Ok(ToolResult::text(t));
        }
        let _ = &input;
        next.run(None).await
    }

    async fn post_execute(
        self: Arc<Self>,
        input: RArc<PostExecuteInput>,
        next: Next<PostToolDecision>,
    ) -> Result<PostToolDecision, String> {
        if let Some(t) = arg(&self.config.post, "context") {
            let args: serde_json::Value =
                serde_json::from_str(&input.call.arguments).unwrap_or_default();
            let cmd = args["command"].as_str().unwrap_or("?").to_string();
            return Ok(PostToolDecision::Accept {
                content: None.into(),
                additional_context: Some(RString::from(format!("{t} after {cmd}"))).into(),
            });
        }
        next.run().await
    }

    async fn tool_result(self: Arc<Self>, input: RArc<PostExecuteInput>) -> Result<(), String> {
        self.saw(serde_json::json!({
            "seam": "tool-result",
            "call": input.call.call_id.as_str(),
            "is_error": input.result.is_error,
            "text": input.result.text_content(),
        }));
        if self.config.result.as_deref() == Some("panic") {
            panic!("probe panics in tools/result");
        }
        Ok(())
    }

    async fn subagent_start(self: Arc<Self>, input: RArc<SubagentInfo>) -> Result<(), String> {
        self.saw(serde_json::json!({
            "seam": "subagent-start",
            "child": input.child_session_id.as_str(),
            "agent_type": input.agent_type.as_str(),
        }));
        Ok(())
    }

    async fn subagent_end(self: Arc<Self>, input: RArc<SubagentInfo>) -> Result<(), String> {
        self.saw(serde_json::json!({
            "seam": "subagent-end",
            "child": input.child_session_id.as_str(),
            "result": input.result.as_ref().map(|r| r.to_string()).into_option(),
        }));
        Ok(())
    }

    async fn turn_continuation(
        self: Arc<Self>,
        input: RArc<ContinuationInput>,
        next: Next<ContinuationDecision>,
    ) -> Result<ContinuationDecision, String> {
        if let Some(reason) = arg(&self.config.cont, "continue-once")
            && input.default == ContinuationDecision::Stop
            && !self
                .continued
                .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return Ok(ContinuationDecision::Continue {
                reason: Some(RString::from(reason)).into(),
            });
        }
        if self.config.cont.as_deref() == Some("stop") {
            return Ok(ContinuationDecision::Stop);
        }
        next.run().await
    }
}
