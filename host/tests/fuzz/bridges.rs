//! Both bridges' decision codecs under arbitrary hook answers.
//!
//! Three hooks sit on every gate event; each case answers them with
//! generated runs. Whatever they print, a bridge returns a decision (never
//! an error, never a panic), any context it injects is bounded by what the
//! hooks printed, a rewrite it passes on is a JSON object, and a hook that
//! denies cleanly (in the shape both CLIs accept) always wins.

use std::sync::Arc;

use dsh_hooks_claude::ClaudeBridge;
use dsh_hooks_codex::CodexBridge;
use dsh_plugin_api::abi_stable::std_types::{RArc, ROption, RVec};
use dsh_plugin_api::*;
use futures::executor::block_on;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::answers::{Canned, answer, clean_deny};

const HOOKS_PER_EVENT: usize = 3;
const EVENTS: [&str; 5] = [
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
];

/// A bridge's hook file: three commands on every event (never run: the
/// canned host answers for them).
fn hooks_file(dir: &std::path::Path, matcher: Option<&str>) -> String {
    let mut events = serde_json::Map::new();
    for event in EVENTS {
        let hooks: Vec<Value> = (0..HOOKS_PER_EVENT)
            .map(|i| json!({"type": "command", "command": format!("hook-{event}-{i}")}))
            .collect();
        let mut group = json!({ "hooks": hooks });
        if let Some(m) = matcher {
            group["matcher"] = m.into();
        }
        events.insert(event.into(), json!([group]));
    }
    let path = dir.join("hooks.json");
    std::fs::write(&path, json!({ "hooks": events }).to_string()).unwrap();
    path.display().to_string()
}

fn session(cwd: &str) -> SessionRef {
    SessionRef {
        session_id: "sess".into(),
        cwd: cwd.into(),
        log_path: "/log.jsonl".into(),
        permission_mode: "default".into(),
        turn_id: "turn".into(),
        prompt_id: "prompt".into(),
        parent_session_id: ROption::RNone,
        agent_type: ROption::RNone,
    }
}

fn call(cwd: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        session: session(cwd),
        call_id: "call-1".into(),
        name: name.into(),
        arguments: arguments.into(),
        parent: ROption::RNone,
    }
}

fn prompt(cwd: &str) -> PromptSubmitInput {
    PromptSubmitInput {
        session: session(cwd),
        content: RVec::from(vec![ContentBlock::text("do it")]),
        source: MessageSource::User.into(),
    }
}

fn post(cwd: &str, call: ToolCall) -> PostExecuteInput {
    let _ = cwd;
    PostExecuteInput {
        call: RArc::new(call),
        result: ToolResult {
            content: RVec::from(vec![ContentBlock::text("hi\n")]),
            is_error: false,
            structured: ROption::RNone,
        },
        denied: false,
    }
}

fn stop(cwd: &str) -> ContinuationInput {
    ContinuationInput {
        session: session(cwd),
        step_count: 1,
        default: ContinuationDecision::Stop.into(),
        consecutive_continues: 0,
        last_assistant_message: "done".into(),
    }
}

/// How many bytes of hook output there were to inject, at most.
fn printed(answers: &[dsh_hook_protocol::RunAnswer]) -> usize {
    answers
        .iter()
        .map(|a| a.stdout.len() + a.stderr.len())
        .sum()
}

/// Every gate a bridge has, driven with `answers`; `deny_at` replaces one
/// PreToolUse answer with a clean deny.
trait Gates {
    fn pre_tool_use(&self, call: &ToolCall) -> Result<PreToolDecision, String>;
    fn prompt_submit(&self, input: &PromptSubmitInput) -> Result<PromptDecision, String>;
    fn post_tool_use(&self, input: &PostExecuteInput) -> Result<PostToolDecision, String>;
    fn stop(&self, input: &ContinuationInput) -> Result<ContinuationDecision, String>;
    fn session_start(&self, input: &SessionStartInput);
}

macro_rules! gates {
    ($bridge:ty) => {
        impl Gates for $bridge {
            fn pre_tool_use(&self, call: &ToolCall) -> Result<PreToolDecision, String> {
                block_on(self.on_pre_tool_use(call, || async { Ok(PreToolDecision::allow()) }))
            }
            fn prompt_submit(&self, input: &PromptSubmitInput) -> Result<PromptDecision, String> {
                block_on(self.on_prompt_submit(input, || async {
                    Ok(PromptDecision::Allow {
                        content: ROption::RNone,
                        additional_context: ROption::RNone,
                    })
                }))
            }
            fn post_tool_use(&self, input: &PostExecuteInput) -> Result<PostToolDecision, String> {
                block_on(self.on_post_tool_use(input, || async {
                    Ok(PostToolDecision::Accept {
                        content: ROption::RNone,
                        additional_context: ROption::RNone,
                    })
                }))
            }
            fn stop(&self, input: &ContinuationInput) -> Result<ContinuationDecision, String> {
                block_on(self.on_stop(input, || async { Ok(ContinuationDecision::Stop) }))
            }
            fn session_start(&self, input: &SessionStartInput) {
                block_on(self.on_session_start(input))
            }
        }
    };
}
gates!(ClaudeBridge);
gates!(CodexBridge);

struct Fixture<B> {
    _dir: tempfile::TempDir,
    cwd: String,
    host: Arc<Canned>,
    bridge: B,
    tool: (&'static str, &'static str),
}

fn claude() -> Fixture<ClaudeBridge> {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().display().to_string();
    let host = Arc::new(Canned::default());
    let bridge = ClaudeBridge::new(
        dsh_hooks_claude::Config {
            config_path: dsh_hooks_claude::ConfigPaths::One(hooks_file(dir.path(), Some("*"))),
            ..Default::default()
        },
        host.clone(),
    );
    assert_eq!(bridge.hooks().len(), HOOKS_PER_EVENT * EVENTS.len());
    Fixture {
        _dir: dir,
        cwd,
        host,
        bridge,
        tool: ("Bash", r#"{"command":"echo hi"}"#),
    }
}

fn codex() -> Fixture<CodexBridge> {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().display().to_string();
    let host = Arc::new(Canned::default());
    let bridge = CodexBridge::new(
        dsh_hooks_codex::Config {
            config_path: dsh_hooks_codex::ConfigPaths::One(hooks_file(dir.path(), None)),
            model: "m".into(),
            ..Default::default()
        },
        host.clone(),
    );
    assert_eq!(bridge.hooks().len(), HOOKS_PER_EVENT * EVENTS.len());
    Fixture {
        _dir: dir,
        cwd,
        host,
        bridge,
        tool: ("exec_command", r#"{"cmd":"echo hi"}"#),
    }
}

fn answers() -> impl Strategy<Value = Vec<dsh_hook_protocol::RunAnswer>> {
    prop::collection::vec(answer(), HOOKS_PER_EVENT)
}

/// The properties, for either bridge.
fn check_gates<B: Gates>(
    f: &Fixture<B>,
    answers: Vec<dsh_hook_protocol::RunAnswer>,
    deny_at: Option<prop::sample::Index>,
) -> Result<(), TestCaseError> {
    let (tool, args) = f.tool;
    let call = call(&f.cwd, tool, args);
    let bound = printed(&answers) + 4096;

    let mut pre = answers.clone();
    if let Some(i) = deny_at {
        pre[i.index(HOOKS_PER_EVENT)] = clean_deny("PreToolUse");
    }
    f.host.answer_with(pre);
    let decision = f.bridge.pre_tool_use(&call);
    prop_assert!(decision.is_ok(), "pre-tool-use failed: {decision:?}");
    match decision.unwrap() {
        PreToolDecision::Deny { .. } => {}
        other => {
            prop_assert!(deny_at.is_none(), "a clean deny lost to {other:?}");
            if let PreToolDecision::Allow {
                updated_arguments: ROption::RSome(rewritten),
            } = &other
            {
                let parsed: Result<Value, _> = serde_json::from_str(rewritten);
                prop_assert!(
                    matches!(parsed, Ok(Value::Object(_))),
                    "a rewrite that is not a JSON object: {rewritten}"
                );
            }
        }
    }
    let injected: usize = f
        .host
        .contexts
        .lock()
        .unwrap()
        .iter()
        .map(String::len)
        .sum();
    prop_assert!(injected <= bound, "{injected} bytes injected from {bound}");

    f.host.answer_with(answers.clone());
    prop_assert!(f.bridge.prompt_submit(&prompt(&f.cwd)).is_ok());
    f.host.answer_with(answers.clone());
    prop_assert!(f.bridge.post_tool_use(&post(&f.cwd, call)).is_ok());
    f.host.answer_with(answers.clone());
    prop_assert!(f.bridge.stop(&stop(&f.cwd)).is_ok());
    f.host.answer_with(answers);
    f.bridge.session_start(&SessionStartInput {
        session: session(&f.cwd),
        source: SessionStartSource::Startup,
    });
    Ok(())
}

#[test]
fn claude_gates_read_any_hook_answer() {
    let f = claude();
    proptest!(|(answers in answers(), deny_at in prop::option::of(any::<prop::sample::Index>()))| {
        check_gates(&f, answers, deny_at)?;
    });
}

#[test]
fn codex_gates_read_any_hook_answer() {
    let f = codex();
    proptest!(|(answers in answers(), deny_at in prop::option::of(any::<prop::sample::Index>()))| {
        check_gates(&f, answers, deny_at)?;
    });
}

#[test]
fn claude_exit_2_always_blocks_a_prompt_and_a_tool() {
    // Claude Code: exit 2 blocks whatever stdout says (vectors S2-*),
    // unless stdout is a JSON object, which is read first: one that fails
    // its schema blocks nothing (S277-pre-exit2-json-invalid), so this
    // hook's stdout is anything but an object.
    let f = claude();
    proptest!(|(mut answers in answers(), at in any::<prop::sample::Index>(), stderr in ".{1,40}", stdout in "[^{]{0,40}")| {
        let i = at.index(HOOKS_PER_EVENT);
        answers[i] = dsh_hook_protocol::RunAnswer {
            exit_code: Some(2),
            stderr,
            stdout,
            ..answers[i].clone()
        };
        answers[i].spawn_error = None;
        answers[i].timed_out = false;
        answers[i].output_limit_exceeded = false;
        let (tool, args) = f.tool;
        f.host.answer_with(answers.clone());
        let d = f.bridge.pre_tool_use(&call(&f.cwd, tool, args)).unwrap();
        prop_assert!(matches!(d, PreToolDecision::Deny { .. }), "{d:?}");
        f.host.answer_with(answers);
        let d = f.bridge.prompt_submit(&prompt(&f.cwd)).unwrap();
        prop_assert!(matches!(d, PromptDecision::Block { .. }), "{d:?}");
    });
}

#[test]
fn stdout_json_objects_round_trip_through_the_codec() {
    use dsh_hook_protocol::{Dialect, Stdout};
    proptest!(|(v in crate::answers::decision_object(), pad in "[ \t\n]{0,3}")| {
        let text = format!("{pad}{v}{pad}");
        for dialect in [Dialect::Claude, Dialect::Codex] {
            match Stdout::parse(&text, dialect) {
                Stdout::Json(map) => prop_assert_eq!(Value::Object(map), v.clone()),
                other => prop_assert!(false, "{other:?}"),
            }
        }
    });
}

#[test]
fn stdout_classification_never_panics() {
    use dsh_hook_protocol::{Dialect, Stdout};
    proptest!(|(text in crate::answers::stdout())| {
        for dialect in [Dialect::Claude, Dialect::Codex] {
            let _ = Stdout::parse(&text, dialect);
        }
    });
}
