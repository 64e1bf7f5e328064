//! The ABI can grow without breaking a `.so`, as the compatibility policy in
//! the `dsh-plugin-api` docs says:
//!
//! - `frozen-v1`, built against the frozen copy of plugin API 1.0
//!   (`tests/fixtures/plugins/frozen-api-1.0`), loads in this host through
//!   the real loader, next to `current`, built against this host's API;
//! - in a real turn (real `Bash`, scripted model) its listeners fire, its
//!   decisions and its guard take effect, its tool runs and its calls to 1.0
//!   host methods land in the session log;
//! - what 1.1 added works from a `.so` (`agent/turn-end`, `Host::sessions`,
//!   the root-module `description`), and the 1.0 plugin never sees it: it is
//!   not registered on the new seam, and handed a 1.1 input anyway, its SDK
//!   delegates;
//! - `future-minor`, built against the next minor, is refused naming both
//!   versions.

use dsh_host::session::LoggedEvent;
use dsh_host::session::events::wire;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_host::agent::{Agent, AgentOptions, Prompt, Session, TurnOutcome};
use dsh_host::config::Manifest;
use dsh_host::plugins::loader::{PluginLoadError, load_library};
use dsh_host::plugins::{HostCore, PluginHost, PluginRecord, PluginStatus};
use dsh_plugin_api::abi_stable::sabi_trait::TD_Opaque;
use dsh_plugin_api::async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{
    AbortSignalBox, GuardBox, HostContext, HostContext_TO, ListenerBox, NextCall, NextCall_TO,
    ServiceBox, ToolBodyBox, WireResult, typed_result,
};
use dsh_plugin_api::{
    API_VERSION, LogLevel, PreToolDecision, RArc, ROption, RResult, RStr, RString, Seam, SeamInput,
    SeamOutput, ToolSpec, TurnEndInput,
};
use dsh_tests::host::{session, tool_call};
use dsh_tests::{TestHost, fixture, temp_dir};
use serde_json::{Value, json};

/// How long one turn may take before the test fails.
const TURN_TIMEOUT: Duration = Duration::from_secs(60);

/// A host with an agent, booted from a manifest that loads bash-local, the
/// two fixture plugins and a scripted model answering `script`.
struct AgentHost {
    runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    host: PluginHost,
    agent: Arc<Agent>,
}

impl AgentHost {
    fn boot(script: Value) -> AgentHost {
        AgentHost::boot_with(script, json!({}), json!({}))
    }

    /// [`AgentHost::boot`] with `frozen` and `current` config keys added;
    /// the scripted model records its requests (`requests.jsonl`).
    fn boot_with(script: Value, frozen: Value, current: Value) -> AgentHost {
        let dir = temp_dir();
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).expect("project dir");
        let mut plugins = json!([
            {"name": "bash-local"},
            {"id": "frozen", "path": fixture("frozen-v1"), "config": {
                "deny": "forbidden-word",
                "guard": "guarded-word",
                "context": "frozen-v1 context",
            }},
            {"id": "current", "path": fixture("current"), "config": {
                "path": dir.path().join("turns.jsonl"),
            }},
            {"name": "model-scripted", "config": {
                "script": script,
                "record": dir.path().join("requests.jsonl"),
            }},
        ]);
        for (at, extra) in [(1, frozen), (2, current)] {
            if let (Some(config), Some(extra)) =
                (plugins[at]["config"].as_object_mut(), extra.as_object())
            {
                config.extend(extra.clone());
            }
        }
        // JSON is YAML.
        let text = json!({"state_dir": "state", "plugins": plugins}).to_string();
        let path = dir.path().join("cordis.yml");
        std::fs::write(&path, &text).expect("write the manifest");
        let manifest = Manifest::from_yaml(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let core = HostCore::new(manifest.state_dir.clone(), runtime.handle().clone());
        let agent = {
            let _entered = runtime.enter();
            Agent::new(core.clone(), &manifest.state_dir, AgentOptions::default())
        };
        let mut host = PluginHost::new(core, manifest.path.clone());
        runtime.block_on(async { host.load_manifest(&manifest) });
        assert!(host.problems().is_empty(), "{:?}", host.problems());
        AgentHost {
            runtime,
            dir,
            host,
            agent,
        }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn record(&self, id: &str) -> &PluginRecord {
        let records = self.host.records();
        records
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("no plugin `{id}` in {records:?}"))
    }

    fn session(&self) -> Arc<Session> {
        let project = self.project();
        self.block_on(self.agent.create_session(&project, None))
            .expect("a session")
    }

    fn turn(&self, session: &Arc<Session>, text: &str) -> TurnOutcome {
        self.block_on(session.prompt(Prompt::user(text)))
    }

    fn block_on<F: std::future::Future>(&self, fut: F) -> F::Output {
        self.runtime.block_on(async {
            tokio::time::timeout(TURN_TIMEOUT, fut)
                .await
                .unwrap_or_else(|_| panic!("not done within {TURN_TIMEOUT:?}"))
        })
    }

    /// The lines `current` wrote, one per ended turn.
    fn turn_lines(&self) -> Vec<Value> {
        self.all_lines()
            .into_iter()
            .filter(|l| l.get("model_request").is_none() && l.get("elicitation").is_none())
            .collect()
    }

    /// The `mcp/elicitation` lines (1.10).
    fn elicitation_lines(&self) -> Vec<Value> {
        self.all_lines()
            .into_iter()
            .filter_map(|l| l.get("elicitation").cloned())
            .collect()
    }

    /// The `agent/model-request` lines (1.4).
    fn model_request_lines(&self) -> Vec<Value> {
        self.all_lines()
            .into_iter()
            .filter_map(|l| l.get("model_request").cloned())
            .collect()
    }

    fn all_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("turns.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }
}

fn of_kind(events: &[LoggedEvent], kind: &str) -> Vec<Value> {
    wire(events)
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

fn bash(command: &str) -> Value {
    json!({"name": "Bash", "arguments": {"command": command}})
}

#[test]
fn a_plugin_built_against_the_frozen_1_0_api_loads_next_to_a_current_one() {
    let h = AgentHost::boot(json!([{"text": "hi"}]));
    let frozen = h.record("frozen");
    assert_eq!(frozen.status, PluginStatus::Applied);
    assert_eq!(frozen.name, "frozen-v1");
    // The seams it overrides, its guard and its tool, as the host sees them.
    assert_eq!(
        frozen.seams,
        [
            "agent/prompt-submit",
            "tools/pre-execute",
            "tools/guard",
            "tools/result",
            "agent/turn-continuation"
        ]
    );
    assert_eq!(frozen.tools, ["FrozenEcho"]);
    // Its root module has no `description` (a 1.1 field): read as none.
    assert_eq!(frozen.description, None);
    let as_json = serde_json::to_value(frozen).expect("a record is JSON");
    assert!(as_json.get("description").is_none(), "{as_json}");

    let current = h.record("current");
    assert_eq!(current.status, PluginStatus::Applied);
    assert_eq!(
        current.seams,
        [
            "agent/turn-continuation",
            "agent/turn-end",
            "agent/cwd-changed",
            "agent/model-request",
            "tools/permission-request",
            "agent/compact",
            "agent/compacted",
            "mcp/elicitation"
        ]
    );
    assert_eq!(
        current.description.as_deref(),
        Some("Writes one JSON line per ended turn, with the open sessions")
    );
    // Only the plugin that knows the new seam listens on it.
    let view = h.host.core().view();
    assert_eq!(view.bus.listener_count(Seam::TurnEnd), 1);
    assert!(!h.host.seams_of("frozen").contains(&Seam::TurnEnd));
}

#[test]
fn the_frozen_plugin_decides_guards_and_calls_1_0_host_methods_in_a_real_turn() {
    let h = AgentHost::boot(json!([
        {"tool_calls": [
            bash("echo plain"),
            bash("echo forbidden-word"),
            bash("echo guarded-word"),
            {"name": "FrozenEcho", "arguments": {"text": "hello"}},
        ]},
        {"text": "done"},
    ]));
    let session = h.session();
    let out = h.turn(&session, "go");
    assert_eq!(out.reason.as_str(), "completed", "{:#?}", out.events);
    // The calls' ids, in the order the model made them.
    let ids: Vec<Value> = of_kind(&out.events, "tool/call")
        .iter()
        .map(|e| e["call_id"].clone())
        .collect();
    assert_eq!(ids.len(), 4, "{:#?}", out.events);
    let (c1, c2, c3, c4) = (&ids[0], &ids[1], &ids[2], &ids[3]);

    // prompt-submit: its context follows the prompt, attributed to it.
    let context: Vec<(Value, Value)> = of_kind(&out.events, "context/message")
        .iter()
        .map(|e| (e["content"].clone(), e["source"].clone()))
        .collect();
    assert_eq!(
        context,
        [(
            json!("frozen-v1 context"),
            json!({"kind": "plugin", "plugin": "frozen"})
        )]
    );
    // pre-execute and the guard: both denials reached the pipeline.
    let denied: Vec<(Value, Value, Value)> = of_kind(&out.events, "tool/denied")
        .iter()
        .map(|e| (e["call_id"].clone(), e["reason"].clone(), e["by"].clone()))
        .collect();
    assert_eq!(
        denied,
        [
            (
                c2.clone(),
                json!("frozen-v1 (plugin API 1.0.0) denies `forbidden-word`"),
                json!("frozen")
            ),
            (
                c3.clone(),
                json!("frozen-v1 guard: `guarded-word` is not allowed"),
                json!("frozen")
            ),
        ]
    );
    // What ran: the allowed command, and the frozen plugin's own tool.
    let results: Vec<(Value, Value)> = of_kind(&out.events, "tool/result")
        .iter()
        .map(|e| (e["call_id"].clone(), e["is_error"].clone()))
        .collect();
    assert_eq!(
        results,
        [
            (c1.clone(), json!(false)),
            (c2.clone(), json!(true)),
            (c3.clone(), json!(true)),
            (c4.clone(), json!(false)),
        ]
    );
    let echo = of_kind(&out.events, "tool/result")[3].clone();
    assert_eq!(echo["content"], "frozen-v1 echo: hello");
    // tools/result fired for every call, and its `append_record` (a 1.0
    // host method) wrote to the log, saying which API the plugin has.
    let records: Vec<(Value, Value, Value)> = of_kind(&out.events, "frozen-v1/tool-result")
        .iter()
        .map(|e| (e["call_id"].clone(), e["denied"].clone(), e["api"].clone()))
        .collect();
    assert_eq!(
        records,
        [
            (c1.clone(), json!(false), json!("1.0.0")),
            (c2.clone(), json!(true), json!("1.0.0")),
            (c3.clone(), json!(true), json!("1.0.0")),
            (c4.clone(), json!(false), json!("1.0.0")),
        ]
    );
}

/// Plugin API 1.6: `current` steers in two parts; the model gets one user
/// message with both parts, the log keeps them, and `frozen-v1` upstream
/// (built against 1.0, which knows only one reason) reads them joined and,
/// passing that text on unchanged, loses nothing.
#[test]
fn steering_in_parts_reaches_the_model_whole_and_a_1_0_listener_reads_it_joined() {
    let parts = ["first part\n", "second part"];
    let h = AgentHost::boot_with(
        json!([{"text": "one"}, {"text": "two"}]),
        json!({"steer_log": true}),
        json!({"steer": parts}),
    );
    let session = h.session();
    let out = h.turn(&session, "go");
    assert_eq!(out.reason, dsh_host::session::TurnEndReason::Completed);
    let joined = parts.join("\n");
    let steering: Vec<Value> = of_kind(&out.events, "steering/message")
        .into_iter()
        .map(|mut e| {
            if let Some(o) = e.as_object_mut() {
                o.retain(|k, _| k != "ts");
            }
            e
        })
        .collect();
    assert_eq!(
        steering,
        [
            json!({"type": "steering/message", "content": joined, "parts": parts,
            "source": {"kind": "plugin", "plugin": "current"}})
        ],
        "{:?}",
        wire(&out.events)
    );
    let read: Vec<Value> = of_kind(&out.events, "frozen-v1/continuation")
        .into_iter()
        .map(|r| r["reason"].clone())
        .collect();
    assert_eq!(read, [json!(joined), json!("stop")]);
    let requests: Vec<Value> = std::fs::read_to_string(h.dir.path().join("requests.jsonl"))
        .expect("the scripted model recorded its requests")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(requests.len(), 2);
    let last = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["parts"], json!(parts), "{last}");
    assert_eq!(last["content"], json!(joined), "{last}");
    let messages = requests[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let answer = &messages[messages.len() - 2];
    assert_eq!(answer["role"], "assistant", "{answer}");
    assert_eq!(answer["content"], "one", "{answer}");
}

/// Plugin API 1.7: `current` (a `.so`, not the Claude bridge) adds lines to
/// `/compact`'s output with `command/display` records, on `agent/compact`
/// and `agent/compacted`; the next request has Claude Code's transcript of
/// the command with `Compacted ` and those lines, one a line, in the order
/// appended, then the synthetic answer.
#[test]
fn a_plugins_display_lines_are_the_output_of_compact() {
    let h = AgentHost::boot_with(
        json!([
            {"text": "one"},
            {"text": "two"},
            {"text": "<analysis>A</analysis><summary>S</summary>"},
            {"text": "after"}
        ]),
        json!({}),
        json!({"display": ["first line", "second line"]}),
    );
    let session = h.session();
    assert_eq!(h.turn(&session, "a").reason.as_str(), "completed");
    assert_eq!(h.turn(&session, "b").reason.as_str(), "completed");
    let compact = h.turn(&session, "/compact keep it short");
    assert_eq!(
        compact.reason.as_str(),
        "completed",
        "{:?}",
        compact.message
    );
    let lines: Vec<Value> = of_kind(&compact.events, "command/display")
        .into_iter()
        .map(|e| e["text"].clone())
        .collect();
    assert_eq!(
        lines,
        [
            json!("first line"),
            json!("second line"),
            json!("compacted manual")
        ]
    );
    assert_eq!(h.turn(&session, "what now?").reason.as_str(), "completed");
    let requests: Vec<Value> = std::fs::read_to_string(h.dir.path().join("requests.jsonl"))
        .expect("the scripted model recorded its requests")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(requests.len(), 4);
    let messages = requests[3]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let shown: Vec<(Value, Value, Value)> = messages
        .iter()
        .map(|m| (m["role"].clone(), m["content"].clone(), m["parts"].clone()))
        .collect();
    let command = json!([
        "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>\n",
        "<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args>keep it short</command-args>\n",
        "<local-command-stdout>Compacted first line\nsecond line\ncompacted manual</local-command-stdout>\n",
        "what now?",
    ]);
    // The summary, the kept answer, the command with the prompt (the same
    // process goes on: Claude Code's one-process shape, `S131-same-process`),
    // `frozen`'s context for it.
    assert_eq!(shown.len(), 4, "{messages:?}");
    assert_eq!(shown[3].1, "frozen-v1 context");
    assert_eq!(shown[1], (json!("assistant"), json!("two"), Value::Null));
    assert_eq!(shown[2].0, "user");
    assert_eq!(shown[2].2, command, "{:?}", shown[2]);
}

#[test]
fn a_current_plugin_hears_turn_end_and_lists_the_hosts_sessions() {
    // One turn that completes, then one the model cannot answer.
    let h = AgentHost::boot(json!([{"text": "hi"}]));
    let session = h.session();
    let other = h.session();
    let first = h.turn(&session, "one");
    let second = h.turn(&session, "two");
    assert_eq!(second.reason.as_str(), "error");
    let mut ids = [session.id.clone(), other.id.clone()];
    ids.sort();
    let sessions: Vec<Value> = ids
        .iter()
        .map(|id| json!({"session_id": id, "cwd": h.project()}))
        .collect();
    let lines = h.turn_lines();
    assert_eq!(
        lines,
        [
            json!({"api": API_VERSION, "session_id": session.id, "turn_id": first.turn_id,
                   "reason": "completed", "message": null, "sessions": sessions}),
            json!({"api": API_VERSION, "session_id": session.id, "turn_id": second.turn_id,
                   "reason": "error", "message": second.message, "sessions": sessions}),
        ]
    );
    assert!(second.message.is_some());
}

#[test]
fn a_current_plugin_hears_cwd_changed_when_bash_moves_the_session() {
    let h = AgentHost::boot(json!([
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "mkdir sub && cd sub"}}]},
        {"text": "moved"}
    ]));
    let session = h.session();
    let turn = h.turn(&session, "go");
    assert_eq!(turn.reason.as_str(), "completed");
    let project = std::fs::canonicalize(h.project()).expect("project");
    let sub = project.join("sub");
    let lines = h.turn_lines();
    assert_eq!(
        lines[0],
        json!({"cwd_changed": {"session_id": session.id, "cwd": sub,
               "old_cwd": h.project(), "new_cwd": sub}})
    );
    assert_eq!(lines[1]["reason"], "completed");
    assert_eq!(lines.len(), 2);
}

#[test]
fn a_current_plugin_hears_each_model_request_before_it_goes_out() {
    let h = AgentHost::boot(json!([
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "true"}}]},
        {"text": "done"}
    ]));
    let session = h.session();
    let turn = h.turn(&session, "go");
    assert_eq!(turn.reason.as_str(), "completed");
    let lines = h.model_request_lines();
    let steps: Vec<(Value, Value, Value)> = lines
        .iter()
        .map(|l| {
            (
                l["session_id"].clone(),
                l["step"].clone(),
                l["attempt"].clone(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (json!(session.id), json!(1), json!(1)),
            (json!(session.id), json!(2), json!(1))
        ]
    );
    assert_ne!(
        lines[0]["request_id"], lines[1]["request_id"],
        "fresh per request"
    );
}

/// An `approval` service that refuses everything: a call it is asked
/// about does not run.
#[derive(Clone)]
struct RefuseAll;

impl dsh_plugin_api::ffi::Service for RefuseAll {
    fn call(&self, _method: RString, _args: RString) -> FfiFuture<RResult<RString, RString>> {
        async {
            RResult::ROk(RString::from(
                r#"{"outcome":"reject","reason":"refused by the test"}"#,
            ))
        }
        .into_ffi()
    }
}

#[test]
fn a_current_plugin_decides_on_permission_request_before_anyone_is_asked() {
    let h = AgentHost::boot(json!([
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "touch fixture-allows.txt"}}]},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "touch refused.txt"}}]},
        {"text": "done"}
    ]));
    let service = dsh_plugin_api::ffi::Service_TO::from_ptr(RArc::new(RefuseAll), TD_Opaque);
    h.agent
        .core()
        .mount_service("test", "approval", service)
        .expect("mount approval");
    let session = h.session();
    // Managed: a command that is not read-only asks.
    session.set_permission_mode(dsh_host::permissions::PermissionMode::Default, "test");
    let turn = h.turn(&session, "go");
    assert_eq!(turn.reason.as_str(), "completed");
    assert!(
        h.project().join("fixture-allows.txt").exists(),
        "the .so allowed it"
    );
    assert!(
        !h.project().join("refused.txt").exists(),
        "the approval service refused it"
    );
    let lines = h.turn_lines();
    let project = h.project().display().to_string();
    let reason = format!(
        "touch in '{project}/fixture-allows.txt' was blocked. For security, Claude Code may only \
         create or modify files in the allowed working directories for this session: '{project}'."
    );
    assert_eq!(
        lines[0],
        json!({"permission_request": {"tool": "Bash", "reason": reason,
            "suggestions": [{"type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": "touch fixture-allows.txt"}],
                "behavior": "allow", "destination": "localSettings"}]}})
    );
    assert_eq!(
        lines[1]["permission_request"]["suggestions"][0]["rules"][0]["ruleContent"],
        "touch refused.txt"
    );
    assert_eq!(lines[2]["reason"], "completed");
    assert_eq!(lines.len(), 3);
}

#[test]
fn a_current_plugin_answers_an_mcp_servers_elicitation() {
    let elicit = |text: &str| json!({"tool_calls": [{"name": "mcp__srv__elicit", "arguments": {"text": text}}]});
    let h = AgentHost::boot(json!([
        elicit("fixture-accepts"),
        elicit("nobody answers"),
        {"text": "done"}
    ]));
    let session = h.session();
    let server = dsh_tests::workspace_root().join("tests/fixtures/vectors/mcp_server.py");
    let spec = dsh_host::mcp::McpServerSpec::from_manifest(
        "srv",
        &json!({"command": "python3", "args": [server, "--elicit"]}),
    )
    .expect("a server spec");
    let failed = h.block_on(h.agent.connect_mcp(&session, vec![spec]));
    assert!(failed.is_empty(), "{failed:?}");
    let turn = h.turn(&session, "go");
    assert_eq!(turn.reason.as_str(), "completed");
    let results: Vec<Value> = wire(&turn.events)
        .into_iter()
        .filter(|e| e["type"] == "tool/result")
        .map(|e| e["content"].clone())
        .collect();
    // The server's tool says what it got back: the .so's answer, then the
    // seam's default.
    assert_eq!(
        results,
        [
            json!(r#"elicitation result: {"action": "accept", "content": {"name": "from-so"}}"#),
            json!(r#"elicitation result: {"action": "cancel"}"#),
        ]
    );
    let lines = h.elicitation_lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0],
        json!({"session_id": session.id, "server": "srv",
               "message": "MARK_ELICIT fixture-accepts", "mode": "form",
               "requested_schema": {"type": "object", "properties": {
                   "name": {"type": "string", "description": "Your name"},
                   "ok": {"type": "boolean", "description": "Proceed?"}},
                   "required": ["name"]}})
    );
}

/// A host context that keeps what a plugin registers, for calling a `.so`'s
/// listener directly.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Listeners>>);

/// Listeners by seam, in registration order.
type Listeners = Vec<(Seam, Arc<ListenerBox>)>;

impl HostContext for Capture {
    fn plugin_id(&self) -> RString {
        "captured".into()
    }
    fn listen(&self, seam: Seam, listener: ListenerBox) -> RResult<(), RString> {
        self.0.lock().unwrap().push((seam, Arc::new(listener)));
        RResult::ROk(())
    }
    fn guard(&self, _guard: GuardBox) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn register_tool(&self, _spec: ToolSpec, _body: ToolBodyBox) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn provide_service(&self, _name: RString, _service: ServiceBox) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn service(&self, _name: RStr<'_>) -> ROption<ServiceBox> {
        ROption::RNone
    }
    fn log(&self, _level: LogLevel, _message: RString) {}
    fn sleep(&self, _millis: u64) -> FfiFuture<()> {
        async {}.into_ffi()
    }
    fn inject_context(&self, _session_id: RString, _text: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn append_record(&self, _session_id: RString, _record: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn halt_turn(&self, _session_id: RString, _reason: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn state_dir(&self) -> RString {
        "/nonexistent".into()
    }
    fn stream_event(&self, _session_id: RString, _event: RString) -> RResult<(), RString> {
        RResult::ROk(())
    }
    fn config_dir(&self) -> RString {
        "/nonexistent".into()
    }
}

/// The rest of a chain: allows, and counts how often it ran.
#[derive(Clone, Default)]
struct CountingNext(Arc<Mutex<u32>>);

impl NextCall for CountingNext {
    fn run(&self, _signal: ROption<AbortSignalBox>) -> FfiFuture<WireResult> {
        *self.0.lock().unwrap() += 1;
        async { RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()).into()) }.into_ffi()
    }
}

#[test]
fn handed_an_input_it_does_not_know_the_1_0_plugin_delegates() {
    let module = load_library(&fixture("frozen-v1")).expect("the 1.0 plugin loads");
    assert_eq!(module.api_version().as_str(), "1.0.0");
    let captured = Capture::default();
    let ctx = HostContext_TO::from_ptr(RArc::new(captured.clone()), TD_Opaque);
    let applied = (module.apply())(ctx, json!({"deny": "x"}).to_string().into());
    assert_eq!(applied, RResult::ROk(()));
    let listener = {
        let listeners = captured.0.lock().unwrap();
        let (_, listener) = listeners
            .iter()
            .find(|(s, _)| *s == Seam::PreExecute)
            .expect("a pre-execute listener");
        listener.clone()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let call = |input: SeamInput| {
        let next = CountingNext::default();
        let answer = runtime.block_on(async {
            tokio::time::timeout(
                TURN_TIMEOUT,
                listener.call(
                    input.into(),
                    NextCall_TO::from_value(next.clone(), TD_Opaque),
                ),
            )
            .await
            .expect("the listener answers")
        });
        let calls = *next.0.lock().unwrap();
        (typed_result(answer), calls)
    };
    // An input it knows: it decides.
    let (answer, nexts) = call(SeamInput::PreExecute(tool_call(
        "c1",
        "Bash",
        json!({"command": "x"}),
    )));
    assert_eq!(
        answer,
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::Deny {
            reason: "frozen-v1 (plugin API 1.0.0) denies `x`".into()
        }))
    );
    assert_eq!(nexts, 0);
    // A 1.1 input, which its 1.0 SDK cannot decode: as if not listening.
    let turn_end = TurnEndInput {
        session: session(),
        reason: "completed".into(),
        message: ROption::RNone,
    };
    let (answer, nexts) = call(SeamInput::TurnEnd(RArc::new(turn_end)));
    assert_eq!(
        answer,
        RResult::ROk(SeamOutput::PreTool(PreToolDecision::allow()))
    );
    assert_eq!(nexts, 1);
}

#[test]
fn a_plugin_built_against_a_newer_minor_is_refused_naming_both_versions() {
    let refused = load_library(&fixture("future-minor"))
        .map(|_| ())
        .expect_err("a newer minor is refused");
    assert!(
        matches!(&refused, PluginLoadError::ApiVersion { found, expected, .. }
            if found == dsh_plugin_api::FIXTURE_FUTURE_API_VERSION && *expected == API_VERSION),
        "{refused:?}"
    );
    // Through a manifest: that one entry fails, the 1.0 plugin next to it
    // loads.
    let entry = |id: &str, path: &Path| format!("  - {{id: {id}, path: {}}}\n", path.display());
    let host = TestHost::load(&format!(
        "plugins:\n{}{}",
        entry("future", &fixture("future-minor")),
        entry("frozen", &fixture("frozen-v1"))
    ));
    assert_eq!(
        host.record("future").status,
        PluginStatus::Failed(format!(
            "{}: refused: built against plugin API {}, this host speaks {API_VERSION}",
            fixture("future-minor").display(),
            dsh_plugin_api::FIXTURE_FUTURE_API_VERSION
        ))
    );
    assert_eq!(host.record("frozen").status, PluginStatus::Applied);
}
