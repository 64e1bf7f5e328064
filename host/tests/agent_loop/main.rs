//! The agent loop end to end: real loop, real `Bash`, scripted model,
//! native listeners only (no hook bridges).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod background;
mod cwd;
mod harness;
mod permissions;
mod probe;
mod runtime;

use harness::{
    Harness, Outcome, assert_balanced, bash, events_of, kinds, of_kind, read_jsonl, text,
};
use serde_json::{Value, json};

use dsh_host::agent::Prompt;
use dsh_host::session::{TurnEndReason, history, read_log};

fn user_texts(request: &Value) -> Vec<(String, Value)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            (
                m["content"].as_str().unwrap().to_string(),
                m.get("source").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegating_prompt_submit_leaves_the_user_message_unchanged() {
    let h = Harness::new(json!([text("hi")]), &[json!({})]);
    let (_, out) = h.run("hello there").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    let users = of_kind(&out.events, "user/message");
    assert_eq!(users.len(), 1);
    assert_eq!(users[0]["content"], "hello there");
    assert!(users[0].get("original_content").is_none());
    assert_eq!(
        user_texts(&h.requests()[0]),
        [("hello there".to_string(), Value::Null)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_with_content_replaces_the_prompt_in_log_and_request() {
    let h = Harness::new(
        json!([text("ok")]),
        &[json!({"prompt": "rewrite:the rewritten prompt"})],
    );
    let (_, out) = h.run("original prompt").await;
    let user = of_kind(&out.events, "user/message")[0];
    assert_eq!(user["content"], "the rewritten prompt");
    assert_eq!(user["original_content"], "original prompt");
    assert_eq!(user_texts(&h.requests()[0])[0].0, "the rewritten prompt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_with_context_adds_a_plugin_sourced_context_message_the_model_sees() {
    let h = Harness::new(
        json!([text("ok")]),
        &[json!({"prompt": "context:remember the style guide"})],
    );
    let (_, out) = h.run("do it").await;
    let ctx = of_kind(&out.events, "context/message");
    assert_eq!(ctx.len(), 1);
    assert_eq!(ctx[0]["content"], "remember the style guide");
    assert_eq!(
        ctx[0]["source"],
        json!({"kind": "plugin", "plugin": "probe1"})
    );
    // The context is its own message, after the prompt, never the user's.
    assert_eq!(of_kind(&out.events, "user/message")[0]["content"], "do it");
    let users = user_texts(&h.requests()[0]);
    assert_eq!(users[0], ("do it".to_string(), Value::Null));
    assert_eq!(users[1].0, "remember the style guide");
    assert_eq!(users[1].1, json!({"kind": "plugin", "plugin": "probe1"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_and_context_are_in_history_before_the_first_step() {
    let h = Harness::new(
        json!([text("ok")]),
        &[
            json!({"prompt": "fold:folded context"}),
            json!({"prompt": "rewrite:rewritten"}),
        ],
    );
    let (_, out) = h.run("raw").await;
    let k = kinds(&out.events);
    let first_step = k.iter().position(|t| t == "step/start").unwrap();
    let user = k.iter().position(|t| t == "user/message").unwrap();
    let ctx = k.iter().position(|t| t == "context/message").unwrap();
    assert!(user < first_step && ctx < first_step, "{k:?}");
    let users = user_texts(&h.requests()[0]);
    assert_eq!(users[0].0, "rewritten");
    assert_eq!(
        users[1],
        (
            "folded context".to_string(),
            json!({"kind": "plugin", "plugin": "probe1"})
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_the_only_prompt_rejects_a_zero_step_turn() {
    let h = Harness::new(
        json!([text("never")]),
        &[json!({"prompt": "block:not today"})],
    );
    let (session, out) = h.run("please").await;
    assert_eq!(out.reason, TurnEndReason::Rejected);
    assert_eq!(out.message.as_deref(), Some("not today"));
    assert!(h.requests().is_empty(), "the model must not be called");
    assert_eq!(
        kinds(&out.events),
        ["turn/start", "prompt/blocked", "turn/end"]
    );
    let blocked = &out.events[1];
    assert_eq!(blocked["content"], "please");
    assert_eq!(blocked["reason"], "not today");
    assert_eq!(blocked["plugin"], "probe1");
    assert_eq!(out.events[2]["reason"], "rejected");
    assert_eq!(out.events[2]["message"], "not today");
    assert_balanced(&events_of(&session));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_batch_is_not_rejected() {
    let h = Harness::new(
        json!([text("fine")]),
        &[json!({"prompt": "block-if:rm -rf"})],
    );
    let session = h.session().await;
    session.enqueue(Prompt::user("rm -rf / please"));
    session.enqueue(Prompt::user("list files"));
    let out: Outcome = session.run_turn().await.into();
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_eq!(of_kind(&out.events, "user/message").len(), 1);
    assert_eq!(of_kind(&out.events, "prompt/blocked").len(), 1);
    assert_eq!(user_texts(&h.requests()[0])[0].0, "list files");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_prompt_listener_fails_one_balanced_turn_and_the_next_prompt_runs() {
    let h = Harness::new(
        json!([text("second works")]),
        &[
            json!({"prompt": "block-if:never"}),
            json!({"prompt": "panic"}),
        ],
    );
    let session = h.session().await;
    let out: Outcome = session.prompt(Prompt::user("first")).await.into();
    assert_eq!(out.reason, TurnEndReason::Error);
    let msg = out.message.clone().unwrap();
    assert!(msg.contains("probe2") && msg.contains("panicked"), "{msg}");
    assert_eq!(kinds(&out.events), ["turn/start", "turn/end"]);
    assert!(h.requests().is_empty());
    // The panic is per prompt: the second turn goes through the same listener.
    h.plugins.core().dispose("probe2");
    let out: Outcome = session.prompt(Prompt::user("second")).await.into();
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_balanced(&events_of(&session));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_fires_once_before_any_turn_and_its_context_reaches_the_first_request() {
    let seen = tempfile::NamedTempFile::new().unwrap();
    let seen_path = seen.path().to_string_lossy().into_owned();
    let h = Harness::new(
        json!([text("a"), text("b")]),
        &[
            json!({"session_start": "panic"}),
            json!({"seen": seen_path, "session_start": "inject:project uses tabs"}),
        ],
    );
    let session = h.session().await; // the panicking listener does not break creation
    session.prompt(Prompt::user("one")).await;
    session.prompt(Prompt::user("two")).await;
    let starts: Vec<Value> = read_jsonl(&seen_path)
        .into_iter()
        .filter(|e| e["seam"] == "session-start")
        .collect();
    assert_eq!(
        starts,
        [json!({"seam": "session-start", "source": "startup"})]
    );
    let events = events_of(&session);
    assert_balanced(&events);
    let k = kinds(&events);
    let first_prompt = k.iter().position(|t| t == "user/message").unwrap();
    let ctx = k.iter().position(|t| t == "context/message").unwrap();
    assert!(ctx < first_prompt, "{k:?}");
    assert_eq!(events[ctx]["source"]["plugin"], "probe2");
    assert_eq!(of_kind(&events, "listener/failed")[0]["plugin"], "probe1");
    let first = user_texts(&h.requests()[0]);
    assert!(
        first.contains(&(
            "project uses tabs".to_string(),
            json!({"kind": "plugin", "plugin": "probe2"})
        )),
        "{first:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_with_reason_runs_a_second_step_with_steering() {
    let h = Harness::new(
        json!([text("first"), text("second")]),
        &[json!({"cont": "continue-once:also check the tests"})],
    );
    let (_, out) = h.run("go").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_eq!(of_kind(&out.events, "step/start").len(), 2);
    assert_eq!(of_kind(&out.events, "turn/start").len(), 1);
    let k = kinds(&out.events);
    let second_step = k.iter().rposition(|t| t == "step/start").unwrap();
    assert_eq!(k[second_step + 1], "steering/message");
    assert_eq!(
        out.events[second_step + 1]["content"],
        "also check the tests"
    );
    let requests = h.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "also check the tests");
    assert_eq!(last["source"]["kind"], "steering");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_after_a_tool_call_makes_one_request() {
    let h = Harness::new(
        json!([bash("echo hi"), text("never asked")]),
        &[json!({"cont": "stop"})],
    );
    let (_, out) = h.run("go").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_eq!(h.requests().len(), 1);
    assert_eq!(of_kind(&out.events, "tool/result")[0]["content"], "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_tool_context_follows_every_result_of_the_step_in_call_order() {
    let two = json!({"tool_calls": [
        {"name": "Bash", "arguments": {"command": "echo one"}},
        {"name": "Bash", "arguments": {"command": "echo two"}}
    ]});
    let h = Harness::new(
        json!([two, text("done")]),
        &[json!({"post": "context:note"})],
    );
    let (_, out) = h.run("go").await;
    let k = kinds(&out.events);
    let step_end = k.iter().position(|t| t == "step/end").unwrap();
    let slice: Vec<&str> = k[..step_end]
        .iter()
        .filter(|t| ["tool/result", "context/message"].contains(&t.as_str()))
        .map(String::as_str)
        .collect();
    assert_eq!(
        slice,
        [
            "tool/result",
            "tool/result",
            "context/message",
            "context/message"
        ]
    );
    let ctx = of_kind(&out.events, "context/message");
    assert_eq!(ctx[0]["content"], "note after echo one");
    assert_eq!(ctx[1]["content"], "note after echo two");
    // The second request sees results, then contexts.
    let roles: Vec<String> = h.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "user"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_execute_deny_never_runs_the_body_and_returns_an_error_result() {
    let h = Harness::new(
        json!([bash("touch made.txt"), text("ok")]),
        &[json!({"pre": "deny:no touching"})],
    );
    let (_, out) = h.run("go").await;
    assert!(!h.project.join("made.txt").exists());
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(result["content"], "no touching");
    assert_eq!(of_kind(&out.events, "tool/denied")[0]["by"], "probe1");
    let tool_msg = h.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool_msg["is_error"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_denies_what_pre_execute_allowed_and_nothing_re_allows() {
    let h = Harness::new(
        json!([bash("touch secret.txt"), text("ok")]),
        &[
            json!({"pre": "allow"}),
            json!({"guard": "deny-if:secret"}),
            json!({"pre": "allow"}),
        ],
    );
    let (_, out) = h.run("go").await;
    assert!(!h.project.join("secret.txt").exists());
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(result["content"], "guard: `secret` is not allowed");
    assert_eq!(of_kind(&out.events, "tool/denied")[0]["by"], "probe2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guards_decide_before_anyone_is_asked_to_approve() {
    // Pre-execute asks, a guard denies: the guard's denial stands and the
    // approval step (here: none mounted, which would deny on its own) is
    // never reached.
    let h = Harness::new(
        json!([bash("touch secret.txt"), text("ok")]),
        &[json!({"pre": "ask"}), json!({"guard": "deny-if:secret"})],
    );
    let (_, out) = h.run("go").await;
    assert!(!h.project.join("secret.txt").exists());
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(result["content"], "guard: `secret` is not allowed");
    assert_eq!(of_kind(&out.events, "tool/denied")[0]["by"], "probe2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_around_dispatch_wrapper_can_short_circuit_dispatch() {
    let h = Harness::new(
        json!([bash("touch ran.txt"), text("ok")]),
        &[json!({"execute": "own:wrapped answer"})],
    );
    let (_, out) = h.run("go").await;
    assert!(!h.project.join("ran.txt").exists());
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["content"], "wrapped answer");
    assert_eq!(result["is_error"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tool_result_observer_changes_nothing() {
    let seen = tempfile::NamedTempFile::new().unwrap();
    let seen_path = seen.path().to_string_lossy().into_owned();
    let h = Harness::new(
        json!([bash("echo fine"), text("ok")]),
        &[json!({"result": "panic"}), json!({"seen": seen_path})],
    );
    let (session, out) = h.run("go").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["content"], "fine");
    assert_eq!(result["is_error"], false);
    // The later observer still saw exactly what the model got.
    let observed: Vec<Value> = read_jsonl(&seen_path)
        .into_iter()
        .filter(|e| e["seam"] == "tool-result")
        .collect();
    assert_eq!(observed[0]["text"], "fine");
    assert_eq!(
        of_kind(&out.events, "listener/failed")[0]["plugin"],
        "probe1"
    );
    assert_balanced(&events_of(&session));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_end_as_error_results() {
    let call = json!({"tool_calls": [{"name": "Teleport", "arguments": {}}]});
    let h = Harness::new(json!([call, text("ok")]), &[]);
    let (_, out) = h.run("go").await;
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .starts_with("unknown tool `Teleport`")
    );
    assert_eq!(out.reason, TurnEndReason::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_without_an_approval_service_is_refused_as_claude_p_refuses_it() {
    let h = Harness::new(
        json!([bash("touch asked.txt"), text("ok")]),
        &[json!({"pre": "ask"})],
    );
    let (_, out) = h.run("go").await;
    assert!(!h.project.join("asked.txt").exists());
    // An ask without a reason reads as Claude Code's headless text.
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(
        result["content"],
        "Claude requested permissions to use Bash, but you haven't granted it yet."
    );
    let approval = of_kind(&out.events, "tool/approval")[0];
    assert_eq!(approval["outcome"], "unavailable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_guard_plugin_blocks_denies_and_audits_without_hook_records_and_disposes_cleanly()
{
    let audit = tempfile::NamedTempFile::new().unwrap();
    let audit_path = audit.path().to_string_lossy().into_owned();
    let gate = json!({"seen": audit_path, "prompt": "block-if:rm -rf", "guard": "deny-if:rm -rf"});
    let h = Harness::new(json!([bash("rm -rf build"), text("ok")]), &[gate]);
    let session = h.session().await;
    let blocked: Outcome = session
        .prompt(Prompt::user("rm -rf everything"))
        .await
        .into();
    assert_eq!(blocked.reason, TurnEndReason::Rejected);
    let out: Outcome = session.prompt(Prompt::user("clean up")).await.into();
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["content"], "guard: `rm -rf` is not allowed");
    let audited: Vec<Value> = read_jsonl(&audit_path)
        .into_iter()
        .filter(|e| e["seam"] == "tool-result")
        .collect();
    assert_eq!(audited.len(), 1);
    assert_eq!(audited[0]["is_error"], true);
    let events = events_of(&session);
    assert!(
        kinds(&events).iter().all(|k| !k.starts_with("hook/")),
        "{:?}",
        kinds(&events)
    );
    // Dispose removes every listener and guard it had.
    let mut host = h.host.plugins;
    assert!(!host.seams_of("probe1").is_empty());
    assert!(host.dispose("probe1"));
    assert!(host.seams_of("probe1").is_empty());
    assert_eq!(
        host.core()
            .view()
            .bus
            .listener_count(dsh_plugin_api::Seam::Guard),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_log_replays_to_the_same_history() {
    let h = Harness::new(
        json!([bash("echo replay"), text("done")]),
        &[
            json!({"prompt": "context:ctx"}),
            json!({"post": "context:post"}),
        ],
    );
    let (session, _) = h.run("go").await;
    let live = history::derive(&session.events());
    // The live session holds the log's lock: read it as it stands.
    let reloaded = read_log(&session.log_path()).unwrap();
    assert_eq!(history::derive(&reloaded.events), live);
    // And the model's last request is exactly that history minus its reply.
    let last_request: Vec<dsh_host::model::ChatMessage> =
        serde_json::from_value(h.requests().last().unwrap()["messages"].clone()).unwrap();
    assert_eq!(last_request[..], live[..live.len() - 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_script_is_a_clear_turn_error() {
    let h = Harness::new(json!([]), &[]);
    let (session, out) = h.run("go").await;
    assert_eq!(out.reason, TurnEndReason::Error);
    assert!(out.message.unwrap().contains("out of replies"));
    assert_balanced(&events_of(&session));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_tool_runs_a_linked_child_session_between_subagent_seams() {
    let seen = tempfile::NamedTempFile::new().unwrap();
    let seen_path = seen.path().to_string_lossy().into_owned();
    let spawn = json!({"tool_calls": [{"name": "Task", "arguments": {
        "description": "Count files", "prompt": "count the files", "subagent_type": "counter"}}]});
    let h = Harness::new(
        json!([
            spawn,
            bash("echo 3"),
            // What a provider reports of its answer: the model and usage.
            json!({"text": "there are 3", "model": "model-7",
                "usage": {"prompt_tokens": 7, "completion_tokens": 3}}),
            text("the child says 3")
        ]),
        &[json!({"seen": seen_path})],
    );
    let (session, out) = h.run("delegate").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    let result = of_kind(&out.events, "tool/result")[0];
    assert_eq!(result["name"], "Task");
    // Claude Code's two blocks (S1-all-events): the answer, then the note.
    let child_id = result["structured"]["agentId"]
        .as_str()
        .unwrap()
        .to_string();
    let content = result["content"].as_str().unwrap();
    let note = format!(
        "there are 3\nagentId: {child_id} (use SendMessage with to: '{child_id}', summary: '<5-10 word recap>' to continue this agent)\n<usage>subagent_tokens: 10\ntool_uses: 1\nduration_ms: "
    );
    assert!(
        content.starts_with(&note) && content.ends_with("</usage>"),
        "{content}"
    );
    let structured = &result["structured"];
    assert_eq!(structured["agentType"], "counter");
    assert_eq!(structured["resolvedModel"], "model-7");
    assert_eq!(structured["totalTokens"], 10);
    assert_eq!(structured["totalToolUseCount"], 1);
    assert_eq!(structured["usage"]["input_tokens"], 7);
    assert_eq!(structured["usage"]["output_tokens"], 3);
    assert_eq!(
        structured["content"],
        json!([{"type": "text", "text": "there are 3"}])
    );
    let seen: Vec<Value> = read_jsonl(&seen_path)
        .into_iter()
        .filter(|e| !["session-start", "prompt-submit"].contains(&e["seam"].as_str().unwrap()))
        .collect();
    let order: Vec<&str> = seen.iter().map(|e| e["seam"].as_str().unwrap()).collect();
    assert_eq!(
        order,
        [
            "pre-execute",
            "subagent-start",
            "pre-execute",
            "tool-result",
            "subagent-end",
            "tool-result"
        ]
    );
    let child = seen[1]["child"].as_str().unwrap();
    assert_eq!(seen[2]["session"], child);
    // The child's call names its parent call only by an opaque token.
    let token = seen[2]["parent"].as_str().unwrap();
    assert!(token.contains(&session.id), "{token}");
    assert_eq!(seen[0]["parent"], Value::Null);
    assert_eq!(seen[4]["result"], "there are 3");
    // The child has its own log, linked to the parent.
    let child_log = read_log(&session.log_path().with_file_name(format!("{child}.jsonl"))).unwrap();
    assert_eq!(
        child_log.header.unwrap().parent_session_id.as_deref(),
        Some(session.id.as_str())
    );
    assert_balanced(&dsh_host::session::events::wire(&child_log.events));
    assert_balanced(&events_of(&session));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_context_piece_is_logged_as_its_authors_even_reordered_overlapping_or_claimed() {
    // Outermost first: probe1 reverses the rest's pieces; probe2 adds a piece
    // claiming to be probe4's, word for word what probe4 added; probe3
    // folds `ab`, a prefix of what probe4 adds, before it.
    let h = Harness::new(
        json!([text("ok")]),
        &[
            json!({"prompt": "reverse"}),
            json!({"prompt": "forge:probe4:abc"}),
            json!({"prompt": "fold:ab"}),
            json!({"prompt": "context:abc"}),
        ],
    );
    let (_, out) = h.run("go").await;
    let got: Vec<(Value, Value)> = of_kind(&out.events, "context/message")
        .iter()
        .map(|e| (e["content"].clone(), e["source"]["plugin"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (json!("abc"), json!("probe2")),
            (json!("abc"), json!("probe4")),
            (json!("ab"), json!("probe3")),
        ]
    );
    // The model reads the same pieces, in the same order, from the same
    // authors.
    let users = user_texts(&h.requests()[0]);
    assert_eq!(
        users[1..],
        [
            (
                "abc".to_string(),
                json!({"kind": "plugin", "plugin": "probe2"})
            ),
            (
                "abc".to_string(),
                json!({"kind": "plugin", "plugin": "probe4"})
            ),
            (
                "ab".to_string(),
                json!({"kind": "plugin", "plugin": "probe3"})
            ),
        ]
    );
}
