//! One named test per bridge behaviour the loop must get right, each with
//! real shell hooks written to a temp folder and a session whose cwd is
//! not the test process's.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dsh_host::agent::{Prompt, Session};
use dsh_host::session::{TurnEndReason, history, read_log};
use serde_json::{Value, json};

use crate::probe::Probe;
use crate::support::{AgentHost, Load, Outcome, kinds, of_kind, script, wait_for, within};

const TURN: Duration = Duration::from_secs(60);

/// The capture folder: hook scripts live and write there.
pub(crate) struct Cap(pub(crate) PathBuf);

impl Cap {
    /// An executable hook script; `$CAP` in `body` is this folder.
    pub(crate) fn hook(&self, name: &str, body: &str) -> String {
        let path = self.0.join(name);
        script(&path, &body.replace("$CAP", &self.0.display().to_string()));
        path.display().to_string()
    }

    pub(crate) fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap_or_default()
    }
}

pub(crate) struct Case {
    _dir: tempfile::TempDir,
    pub(crate) cap: Cap,
    pub(crate) project: PathBuf,
    pub(crate) host: AgentHost,
}

impl Case {
    /// A host with `bridge` reading the hooks `hooks` returns (`{Event:
    /// [groups]}`, scripts made through the [`Cap`]), then one probe per
    /// config, then the scripted model.
    pub(crate) fn new(
        bridge: &str,
        probes: &[Value],
        model: Value,
        hooks: impl FnOnce(&Cap) -> Value,
    ) -> Case {
        Case::configured(bridge, json!({}), probes, model, hooks)
    }

    /// [`Case::new`] with more keys of the bridge's config.
    fn configured(
        bridge: &str,
        extra: Value,
        probes: &[Value],
        model: Value,
        hooks: impl FnOnce(&Cap) -> Value,
    ) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let cap = Cap(root.join("cap"));
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::create_dir_all(&cap.0).unwrap();
        let file = project.join(".claude/settings.json");
        std::fs::write(&file, json!({ "hooks": hooks(&cap) }).to_string()).unwrap();
        let mut config = json!({ "config_path": file });
        if bridge == "hooks-codex" {
            config["model"] = json!("mock-model");
        }
        for (k, v) in extra.as_object().into_iter().flatten() {
            config[k] = v.clone();
        }
        let mut loads = vec![Load::builtin(bridge, bridge, config)];
        for (i, p) in probes.iter().enumerate() {
            // `{"first": true, ...}`: listens before the bridge.
            let mut config = p.clone();
            let first = config
                .as_object_mut()
                .and_then(|o| o.remove("first"))
                .is_some_and(|f| f == true);
            let probe = Load::native::<Probe>(&format!("probe{}", i + 1), config);
            if first {
                loads.insert(0, probe);
            } else {
                loads.push(probe);
            }
        }
        let host = AgentHost::scripted(&root, loads, model).error_free();
        Case {
            _dir: dir,
            cap,
            project,
            host,
        }
    }

    pub(crate) fn claude(model: Value, hooks: impl FnOnce(&Cap) -> Value) -> Case {
        Case::new("hooks-claude", &[], model, hooks)
    }

    /// A `hooks-claude` case whose bridge config also has `extra`.
    pub(crate) fn claude_with(
        extra: Value,
        model: Value,
        hooks: impl FnOnce(&Cap) -> Value,
    ) -> Case {
        Case::configured("hooks-claude", extra, &[], model, hooks)
    }

    pub(crate) async fn session(&self) -> Arc<Session> {
        self.host.session_in(&self.project).await
    }

    pub(crate) async fn run(&self, prompt: &str) -> (Arc<Session>, Outcome) {
        let session = self.session().await;
        let out = within("the turn", TURN, session.prompt(Prompt::user(prompt))).await;
        (session, out.into())
    }
}

fn group(matcher: Option<&str>, command: &str) -> Value {
    let mut g = json!({"hooks": [{"type": "command", "command": command}]});
    if let Some(m) = matcher {
        g["matcher"] = json!(m);
    }
    json!([g])
}

pub(crate) fn bash(command: &str) -> Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]})
}

pub(crate) fn text(t: &str) -> Value {
    json!({"text": t})
}

/// Every message of a request: `(role, content, source)`.
fn roles(request: &Value) -> Vec<(String, String, Value)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
                m.get("source").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn from(id: &str) -> Value {
    json!({"kind": "plugin", "plugin": id})
}

/// The turn's events of `kind`, each without its timestamp.
fn events(out: &Outcome, kind: &str) -> Vec<Value> {
    of_kind(&out.events, kind)
        .into_iter()
        .map(untimed)
        .collect()
}

fn untimed(e: &Value) -> Value {
    let mut e = e.clone();
    assert!(e["ts"].is_u64(), "{e}");
    e.as_object_mut().unwrap().shift_remove("ts");
    e
}

/// The `hook/result` records of a turn, their duration checked and removed.
fn hook_results(out: &Outcome) -> Vec<Value> {
    events(out, "hook/result")
        .into_iter()
        .map(|mut r| {
            assert!(r["duration_ms"].is_u64(), "{r}");
            r.as_object_mut().unwrap().shift_remove("duration_ms");
            r
        })
        .collect()
}

fn call_id(out: &Outcome) -> String {
    of_kind(&out.events, "tool/call")[0]["call_id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_prompt_makes_no_model_request_and_rejects_the_turn() {
    let mut hook = String::new();
    let c = Case::claude(json!([text("never")]), |cap| {
        hook = cap.hook(
            "ups.sh",
            "cat >/dev/null; echo 'no prompts today' >&2; exit 2",
        );
        json!({"UserPromptSubmit": group(None, &hook)})
    });
    let (_, out) = c.run("please").await;
    let reason = format!(
        "UserPromptSubmit operation blocked by hook:\n[{hook}]: no prompts today\n\n\nOriginal prompt: please"
    );
    assert_eq!(
        (out.reason, out.message.as_deref()),
        (TurnEndReason::Rejected, Some(reason.as_str()))
    );
    assert!(c.host.requests().is_empty(), "the model must not be called");
    assert_eq!(
        kinds(&out.events),
        [
            "turn/start",
            "hook/invoked",
            "hook/result",
            "prompt/blocked",
            "turn/end"
        ]
    );
    assert_eq!(
        untimed(&out.events[3]),
        json!({"type": "prompt/blocked", "content": "please", "source": {"kind": "user"},
               "reason": reason, "plugin": "hooks-claude"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_only_prompt_hook_still_lets_a_later_plugin_block() {
    let c = Case::new(
        "hooks-claude",
        &[json!({"prompt": "block:native says no"})],
        json!([text("never")]),
        |cap| json!({"UserPromptSubmit": group(None, &cap.hook("ups.sh", "cat >/dev/null; echo 'some context'"))}),
    );
    let (_, out) = c.run("please").await;
    assert_eq!(
        (out.reason, out.message.as_deref()),
        (TurnEndReason::Rejected, Some("native says no"))
    );
    assert!(c.host.requests().is_empty(), "the model must not be called");
    let blocked = events(&out, "prompt/blocked");
    assert_eq!(
        blocked[0],
        json!({"type": "prompt/blocked", "content": "please", "source": {"kind": "user"},
               "reason": "native says no", "plugin": "probe1"})
    );
    assert!(of_kind(&out.events, "context/message").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_context_and_a_downstream_rewrite_both_survive() {
    let c = Case::new(
        "hooks-claude",
        &[json!({"prompt": "rewrite:the rewritten prompt"})],
        json!([text("ok")]),
        |cap| {
            let out = r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"house rules"}}"#;
            json!({"UserPromptSubmit": group(None, &cap.hook("ups.sh", &format!("cat >/dev/null; echo '{out}'")))})
        },
    );
    let (_, out) = c.run("original").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    let user = &events(&out, "user/message")[0];
    assert_eq!(
        *user,
        json!({"type": "user/message", "content": "the rewritten prompt", "source": {"kind": "user"},
               "original_content": "original"})
    );
    // The hook's context is Claude Code's system message, right after the
    // (rewritten) prompt.
    assert_eq!(
        roles(&c.host.requests()[0]),
        [
            (
                "user".to_string(),
                "the rewritten prompt".to_string(),
                Value::Null
            ),
            (
                "system".to_string(),
                "UserPromptSubmit hook additional context: house rules".to_string(),
                from("hooks-claude")
            ),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_a_gate_before_the_bridge_blocks_leaves_no_hook_context() {
    // The gate lets the bridge run (its hook adds context for the first
    // prompt only), then blocks that prompt: as in Claude Code, a blocked
    // prompt's hook context reaches no model, in this turn or a later one.
    let c = Case::new(
        "hooks-claude",
        &[json!({"first": true, "prompt": "block-after-if:first"})],
        json!([text("ok")]),
        |cap| {
            let out = r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"house rules"}}"#;
            let script = format!("if grep -q first; then echo '{out}'; fi");
            json!({"UserPromptSubmit": group(None, &cap.hook("ups.sh", &script))})
        },
    );
    let (session, out) = c.run("first").await;
    assert_eq!(out.reason, TurnEndReason::Rejected);
    assert!(c.host.requests().is_empty());
    let next: Outcome = within("the turn", TURN, session.prompt(Prompt::user("second")))
        .await
        .into();
    assert_eq!(next.reason, TurnEndReason::Completed);
    assert_eq!(
        roles(&c.host.requests()[0]),
        [("user".to_string(), "second".to_string(), Value::Null)],
        "the blocked prompt's hook context reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_literal_pre_tool_use_matcher_does_not_fire_for_another_tool() {
    let c = Case::claude(
        json!([bash("echo ran"), text("done")]),
        |cap| json!({"PreToolUse": group(Some("Write"), &cap.hook("pre.sh", "cat > $CAP/pre.stdin; exit 2"))}),
    );
    let (_, out) = c.run("go").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert!(
        !c.cap.0.join("pre.stdin").exists(),
        "the Write hook ran for Bash"
    );
    assert!(of_kind(&out.events, "hook/invoked").is_empty());
    assert_eq!(of_kind(&out.events, "tool/result")[0]["content"], "ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_run_in_the_session_cwd_not_the_daemons() {
    let c = Case::claude(
        json!([bash("true"), text("done")]),
        |cap| json!({"PreToolUse": group(None, &cap.hook("pre.sh", "cat >/dev/null; pwd -P > $CAP/cwd"))}),
    );
    let here = std::env::current_dir().unwrap().canonicalize().unwrap();
    assert_ne!(
        here, c.project,
        "the session cwd must differ from the process cwd"
    );
    c.run("go").await;
    assert_eq!(
        c.cap.read("cwd").trim_end(),
        c.project.display().to_string()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_config_file_loads_nothing_and_the_turn_runs() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere/settings.json");
    let host = AgentHost::scripted(
        dir.path(),
        vec![Load::builtin(
            "hooks-claude",
            "hooks-claude",
            json!({"config_path": missing}),
        )],
        json!([bash("echo fine"), text("done")]),
    );
    // A problem for the operator (`dsh check` fails), not a dead host.
    let problems: Vec<String> = host
        .plugins
        .problems()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with(&format!(
            "plugin `hooks-claude`: {}: cannot read the hooks file",
            missing.display()
        )),
        "{problems:?}"
    );
    assert!(!host.plugins.all_applied());
    let session = host.session_in(dir.path()).await;
    let out: Outcome = within("the turn", TURN, session.prompt(Prompt::user("go")))
        .await
        .into();
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_eq!(of_kind(&out.events, "tool/result")[0]["content"], "fine");
    assert!(of_kind(&out.events, "hook/invoked").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_stderr_is_summarized_in_hook_result() {
    let long = "e".repeat(600);
    let mut hook = String::new();
    let c = Case::claude(json!([bash("true"), text("done")]), |cap| {
        hook = cap.hook(
            "pre.sh",
            &format!("cat >/dev/null; printf '{long}' >&2; exit 1"),
        );
        json!({"PreToolUse": group(None, &hook)})
    });
    let (_, out) = c.run("go").await;
    assert_eq!(
        hook_results(&out),
        [
            json!({"type": "hook/result", "dialect": "claude", "event": "PreToolUse", "command": hook,
                "index": 0, "outcome": "non_blocking_error", "exit_code": 1, "signal": null,
                "timed_out": false, "spawn_error": null, "stdout": "", "stdout_truncated": false,
                "stderr": format!("{}…[360 more chars]", "e".repeat(240)), "stderr_truncated": false,
                "detail": null})
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_127_is_a_non_blocking_error() {
    let c = Case::claude(
        json!([bash("echo still ran"), text("done")]),
        |_| json!({"PreToolUse": group(None, "cat >/dev/null; no-such-command-dsh-e2e")}),
    );
    let (_, out) = c.run("go").await;
    let r = &hook_results(&out)[0];
    assert_eq!(
        (&r["outcome"], &r["exit_code"]),
        (&json!("non_blocking_error"), &json!(127))
    );
    assert!(of_kind(&out.events, "tool/denied").is_empty());
    assert_eq!(
        of_kind(&out.events, "tool/result")[0]["content"],
        "still ran"
    );
    assert_eq!(out.reason, TurnEndReason::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updated_input_rewrites_the_call_as_one_unit() {
    let c = Case::claude(json!([bash("echo original"), text("done")]), |cap| {
        let out = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}"#;
        json!({"PreToolUse": group(Some("Bash"), &cap.hook("pre.sh", &format!("cat >/dev/null; echo '{out}'")))})
    });
    let (_, out) = c.run("go").await;
    let id = call_id(&out);
    assert_eq!(
        events(&out, "tool/call")[0],
        json!({"type": "tool/call", "call_id": id, "name": "Bash", "arguments": {"command": "echo original"}})
    );
    assert_eq!(
        events(&out, "tool/updated")[0],
        json!({"type": "tool/updated", "call_id": id, "arguments": {"command": "echo rewritten"},
               "plugin": "hooks-claude"})
    );
    assert_eq!(
        of_kind(&out.events, "tool/result")[0]["content"],
        "rewritten"
    );
    // The next request shows the call as it ran, not as the model made it.
    let second = &c.host.requests()[1];
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        assistant["tool_calls"],
        json!([{"id": id, "name": "Bash", "arguments": {"command": "echo rewritten"}}])
    );
}

/// A Stop hook that blocks its first `n` calls and saves every payload.
fn block_n_times(cap: &Cap, n: u32) -> String {
    cap.hook(
        "stop.sh",
        &format!(
            "k=$(ls $CAP | grep -c '^stop\\.[0-9]*$'); k=$((k+1)); cat > $CAP/stop.$k
             if [ $k -le {n} ]; then echo '{{\"decision\":\"block\",\"reason\":\"again '$k'\"}}'; fi"
        ),
    )
}

fn stop_payloads(cap: &Cap, count: usize) -> Vec<Value> {
    (1..=count)
        .map(|k| serde_json::from_str(&cap.read(&format!("stop.{k}"))).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_stop_blocks_steer_the_same_turn_and_are_capped_at_eight() {
    let replies: Vec<Value> = (1..=12).map(|i| text(&format!("answer {i}"))).collect();
    let c = Case::claude(
        json!(replies),
        |cap| json!({"Stop": group(None, &block_n_times(cap, 100))}),
    );
    let (_, out) = c.run("go").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    // 8 honoured blocks, the 9th overridden: 9 requests in one turn.
    assert_eq!(c.host.requests().len(), 9);
    assert_eq!(of_kind(&out.events, "turn/start").len(), 1);
    let steering = events(&out, "steering/message");
    let want: Vec<Value> = (1..=8)
        .map(|k| {
            json!({"type": "steering/message", "content": format!("Stop hook feedback:\nagain {k}"),
                        "source": from("hooks-claude")})
        })
        .collect();
    assert_eq!(steering, want);
    let active: Vec<bool> = stop_payloads(&c.cap, 9)
        .iter()
        .map(|p| p["stop_hook_active"] == true)
        .collect();
    assert_eq!(
        active,
        [false, true, true, true, true, true, true, true, true]
    );
    let last = &hook_results(&out)[8];
    assert_eq!(
        last["detail"],
        "block overridden: 8 consecutive Stop blocks already honoured"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_stop_blocks_are_not_capped() {
    let replies: Vec<Value> = (1..=14).map(|i| text(&format!("answer {i}"))).collect();
    let c = Case::new(
        "hooks-codex",
        &[],
        json!(replies),
        |cap| json!({"Stop": group(None, &block_n_times(cap, 10))}),
    );
    let (_, out) = c.run("go").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_eq!(
        c.host.requests().len(),
        11,
        "ten blocks honoured, then the turn ends"
    );
    let steering = of_kind(&out.events, "steering/message");
    assert_eq!(steering.len(), 10);
    let source = c.project.join(".claude/settings.json");
    assert_eq!(
        steering[9]["content"],
        format!(
            "<hook_prompt hook_run_id=\"stop:0:{}\">again 10</hook_prompt>",
            source.display()
        )
    );
    let active: Vec<bool> = stop_payloads(&c.cap, 11)
        .iter()
        .map(|p| p["stop_hook_active"] == true)
        .collect();
    assert_eq!(active, [vec![false], vec![true; 10]].concat());
}

async fn continue_false_ends_the_turn_after_the_result(event: &str) {
    let c = Case::claude(json!([bash("echo the result"), text("never")]), |cap| {
        let out = r#"{"continue":false,"stopReason":"enough for today"}"#;
        json!({event: group(Some("Bash"), &cap.hook("h.sh", &format!("cat >/dev/null; echo '{out}'")))})
    });
    let (_, out) = c.run("go").await;
    assert_eq!(
        c.host.requests().len(),
        1,
        "no model request after the halt"
    );
    assert_eq!(
        (out.reason, out.message.as_deref()),
        (
            TurnEndReason::Completed,
            Some("halted by plugin `hooks-claude`: enough for today")
        )
    );
    let result = &events(&out, "tool/result")[0];
    assert_eq!(
        *result,
        json!({"type": "tool/result", "call_id": call_id(&out), "name": "Bash", "content": "the result",
               "is_error": false, "structured": result["structured"]})
    );
    let k = kinds(&out.events);
    assert_eq!(&k[k.len() - 3..], ["tool/result", "step/end", "turn/end"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_false_on_pre_tool_use_lets_the_result_stand_and_ends_the_turn() {
    continue_false_ends_the_turn_after_the_result("PreToolUse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_false_on_post_tool_use_lets_the_result_stand_and_ends_the_turn() {
    continue_false_ends_the_turn_after_the_result("PostToolUse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_context_reaches_the_first_request() {
    let c = Case::claude(
        json!([text("hello")]),
        |cap| json!({"SessionStart": group(None, &cap.hook("ss.sh", "cat >/dev/null; echo 'project facts'"))}),
    );
    let (session, _) = c.run("hi").await;
    // Claude Code's system message, right after the prompt (S7-plain-stdout),
    // though it was logged before the prompt's turn.
    assert_eq!(
        roles(&c.host.requests()[0]),
        [
            ("user".to_string(), "hi".to_string(), Value::Null),
            (
                "system".to_string(),
                "SessionStart:startup hook success: project facts".to_string(),
                from("hooks-claude")
            ),
        ]
    );
    // The log replays to what the model saw: the context logged before the
    // turn still lands after the prompt.
    let logged = history::derive(&read_log(&session.log_path()).unwrap().events);
    let sent: Vec<dsh_host::model::ChatMessage> =
        serde_json::from_value(c.host.requests()[0]["messages"].clone()).unwrap();
    assert_eq!(sent[..], logged[..logged.len() - 1]);
}

fn alive(pid: i32) -> bool {
    // A zombie has exited; only its parent's reaping is left.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// `PluginHost::dispose` ends the bridge's call in flight: the hook process
/// dies with it, and the pre-execute chain it was gating fails closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disposing_the_bridge_kills_its_running_hooks() {
    let mut c = Case::claude(
        json!([bash("echo after"), text("done")]),
        |cap| json!({"PreToolUse": group(None, &cap.hook("pre.sh", "cat >/dev/null; echo $$ > $CAP/pid.tmp; mv $CAP/pid.tmp $CAP/pid; exec sleep 300"))}),
    );
    let session = c.session().await;
    let turn = tokio::spawn({
        let session = session.clone();
        async move { session.prompt(Prompt::user("go")).await }
    });
    wait_for("the hook to start", TURN, || c.cap.0.join("pid").exists()).await;
    let pid: i32 = c.cap.read("pid").trim().parse().unwrap();
    assert!(alive(pid));
    assert!(c.host.plugins.dispose("hooks-claude"));
    wait_for("the hook process to die", Duration::from_secs(10), || {
        !alive(pid)
    })
    .await;
    let out: Outcome = within("the turn", TURN, turn).await.unwrap().into();
    // What happens: the listener's call ends with the plugin, the pipeline
    // denies the call it was gating, and the turn goes on without the bridge.
    assert_eq!(out.reason, TurnEndReason::Completed, "{:?}", out.message);
    let denied = of_kind(&out.events, "tool/denied");
    assert_eq!(denied.len(), 1, "{:?}", kinds(&out.events));
}
