//! Strategies for untrusted input: JSON values, hook answers near a valid
//! decision, and a [`HookHost`] that answers every hook from a queue instead
//! of spawning it (the codec is what is under test, not the shell).

use std::collections::VecDeque;
use std::sync::Mutex;

use dsh_hook_protocol::runner::{BoxFuture, HookHost, RunAnswer, RunRequest};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Hook event names, a few wrong ones included.
pub const EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "PermissionRequest",
    "pretooluse",
    "",
];

/// Any JSON value, a few levels deep.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        // Quarters print and read back exactly.
        any::<i32>().prop_map(|i| Value::from(f64::from(i) / 4.0)),
        ".{0,24}".prop_map(Value::from),
        prop::sample::select(vec!["allow", "deny", "ask", "block", "approve", ""])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(".{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value for one of the keys hooks answer with: mostly the right type.
fn field(key: &'static str) -> BoxedStrategy<Value> {
    let typed: BoxedStrategy<Value> = match key {
        "continue" | "suppressOutput" => any::<bool>().prop_map(Value::from).boxed(),
        "decision" => prop::sample::select(vec!["block", "approve", "allow", "deny", ""])
            .prop_map(Value::from)
            .boxed(),
        "permissionDecision" => prop::sample::select(vec!["allow", "deny", "ask", "maybe"])
            .prop_map(Value::from)
            .boxed(),
        "hookEventName" => prop::sample::select(EVENTS.to_vec())
            .prop_map(Value::from)
            .boxed(),
        "updatedInput" => {
            prop_oneof![json_value(), ".{0,16}".prop_map(|c| json!({"command": c})),].boxed()
        }
        _ => ".{0,40}".prop_map(Value::from).boxed(),
    };
    prop_oneof![4 => typed, 1 => json_value()].boxed()
}

/// A JSON object made of the keys a decision may carry, each present or not.
pub fn decision_object() -> impl Strategy<Value = Value> {
    const TOP: &[&str] = &[
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
        "decision",
        "reason",
    ];
    const SPECIFIC: &[&str] = &[
        "hookEventName",
        "permissionDecision",
        "permissionDecisionReason",
        "updatedInput",
        "additionalContext",
    ];
    let top: Vec<_> = TOP
        .iter()
        .map(|k| prop::option::of(field(k)).prop_map(move |v| (*k, v)))
        .collect();
    let specific: Vec<_> = SPECIFIC
        .iter()
        .map(|k| prop::option::of(field(k)).prop_map(move |v| (*k, v)))
        .collect();
    (top, prop::option::of(specific)).prop_map(|(top, specific)| {
        let mut m: Map<String, Value> = top
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v?)))
            .collect();
        if let Some(specific) = specific {
            let s: Map<String, Value> = specific
                .into_iter()
                .filter_map(|(k, v)| Some((k.to_string(), v?)))
                .collect();
            m.insert("hookSpecificOutput".into(), Value::Object(s));
        }
        Value::Object(m)
    })
}

/// What a hook may print on stdout: noise, a decision, or a decision damaged
/// (cut short, a byte flipped, text around it).
pub fn stdout() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => any::<String>(),
        3 => decision_object().prop_map(|v| v.to_string()),
        2 => (decision_object(), any::<prop::sample::Index>()).prop_map(|(v, i)| {
            let s = v.to_string();
            let mut cut = i.index(s.len() + 1);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s[..cut].to_string()
        }),
        1 => (decision_object(), any::<prop::sample::Index>(), any::<char>()).prop_map(
            |(v, i, c)| {
                let mut chars: Vec<char> = v.to_string().chars().collect();
                let at = i.index(chars.len());
                chars[at] = c;
                chars.into_iter().collect()
            }
        ),
        1 => (".{0,8}", decision_object(), ".{0,8}")
            .prop_map(|(a, v, b)| format!("{a}{v}{b}")),
        1 => json_value().prop_map(|v| v.to_string()),
    ]
}

/// One finished (or failed) hook run.
pub fn answer() -> impl Strategy<Value = RunAnswer> {
    let exit = prop_oneof![
        4 => Just(Some(0)),
        2 => Just(Some(2)),
        1 => Just(Some(1)),
        1 => any::<i32>().prop_map(Some),
        1 => Just(None),
    ];
    (
        exit,
        prop::option::of(1..64i32),
        stdout(),
        any::<String>(),
        any::<bool>(),
        prop::option::weighted(0.05, ".{0,16}"),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.02),
    )
        .prop_map(
            |(exit_code, signal, stdout, stderr, truncated, spawn_error, timed_out, over_limit)| {
                RunAnswer {
                    exit_code,
                    signal: if exit_code.is_none() { signal } else { None },
                    stdout,
                    stderr,
                    stdout_truncated: truncated,
                    stderr_truncated: false,
                    timed_out,
                    spawn_error,
                    output_limit_exceeded: over_limit,
                    duration_ms: 1,
                    interrupted: false,
                }
            },
        )
}

/// The answer of a hook that denies cleanly, in a shape both CLIs accept.
pub fn clean_deny(event: &str) -> RunAnswer {
    RunAnswer {
        exit_code: Some(0),
        stdout: json!({"hookSpecificOutput": {
            "hookEventName": event,
            "permissionDecision": "deny",
            "permissionDecisionReason": "MARK clean deny",
        }})
        .to_string(),
        ..RunAnswer::default()
    }
}

/// A [`HookHost`] whose hooks answer from a queue (an empty queue answers
/// exit 0 with no output) and which counts what the bridge did.
#[derive(Default)]
pub struct Canned {
    answers: Mutex<VecDeque<RunAnswer>>,
    /// Texts injected as context.
    pub contexts: Mutex<Vec<String>>,
}

impl Canned {
    /// Queues the answers of the next hooks, dropping any left over.
    pub fn answer_with(&self, answers: Vec<RunAnswer>) {
        *self.answers.lock().unwrap() = answers.into();
        self.contexts.lock().unwrap().clear();
    }
}

impl HookHost for Canned {
    fn run(&self, _request: RunRequest) -> BoxFuture<RunAnswer> {
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(RunAnswer {
                exit_code: Some(0),
                ..RunAnswer::default()
            });
        Box::pin(async move { answer })
    }

    fn inject_context(&self, _session_id: &str, text: &str) -> Result<(), String> {
        self.contexts.lock().unwrap().push(text.to_string());
        Ok(())
    }

    fn append_record(&self, _session_id: &str, record: &Value) -> Result<(), String> {
        // A record must always be serializable JSON.
        serde_json::to_string(record)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn halt_turn(&self, _session_id: &str, _reason: &str) -> Result<(), String> {
        Ok(())
    }

    fn warn(&self, _message: &str) {}

    fn report_problem(&self, _problem: dsh_plugin_api::ConfigProblem) {}
}
