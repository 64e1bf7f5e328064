//! A host with real built-ins (bash-local, model-scripted) plus probes, in
//! a throwaway state dir and project folder.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_host::agent::{Agent, AgentOptions, Prompt, Session};
use dsh_host::plugins::{HostCore, PluginHost, builtin};
use dsh_plugin_api::plugin_module;
use serde_json::{Value, json};

use super::probe::Probe;

pub struct Harness {
    /// Keeps the temp folders alive as long as the harness.
    pub _dir: tempfile::TempDir,
    pub project: PathBuf,
    pub record: PathBuf,
    pub host: PluginHost,
    pub agent: Arc<Agent>,
}

impl Harness {
    /// bash-local, then each probe config (ids probe1, probe2, ...), then a
    /// scripted model answering `script`.
    pub fn new(script: Value, probes: &[Value]) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let record = dir.path().join("requests.jsonl");
        let state = dir.path().join("state");
        let core = HostCore::new(state.clone(), tokio::runtime::Handle::current());
        let agent = Agent::new(core.clone(), &state, AgentOptions::default());
        let mut host = PluginHost::new(core, dir.path().join("cordis.yml"));
        host.load_module(
            "bash-local",
            builtin::lookup("bash-local").unwrap(),
            json!({}),
        );
        for (i, config) in probes.iter().enumerate() {
            host.load_module(
                &format!("probe{}", i + 1),
                plugin_module::<Probe>(),
                config.clone(),
            );
        }
        let model = json!({"script": script, "record": record});
        host.load_module("model", builtin::lookup("model-scripted").unwrap(), model);
        assert!(host.problems().is_empty(), "{:?}", host.problems());
        Harness {
            _dir: dir,
            project,
            record,
            host,
            agent,
        }
    }

    pub async fn session(&self) -> Arc<Session> {
        self.agent
            .create_session(&self.project, None)
            .await
            .unwrap()
    }

    pub async fn run(&self, text: &str) -> (Arc<Session>, Outcome) {
        let session = self.session().await;
        let outcome = session.prompt(Prompt::user(text)).await;
        (session, outcome.into())
    }

    /// Every request the model received.
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.record.to_string_lossy())
    }
}

pub fn read_jsonl(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The `type`s of events, in order.
pub fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_string())
        .collect()
}

pub fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// Asserts every event of the log sits in exactly one open turn.
pub fn assert_balanced(events: &[Value]) {
    let mut open = false;
    for e in events {
        match e["type"].as_str().unwrap() {
            "turn/start" => {
                assert!(!open, "nested turn in {events:#?}");
                open = true;
            }
            "turn/end" => {
                assert!(open, "turn/end without start");
                open = false;
            }
            other => assert!(open, "`{other}` outside a turn"),
        }
    }
    assert!(!open, "turn left open");
}

pub fn bash(command: &str) -> Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {"command": command}}]})
}

pub fn text(t: &str) -> Value {
    json!({"text": t})
}

/// A turn's outcome with its events as their log lines' JSON, for
/// snapshotting whole wire values.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub reason: dsh_host::session::TurnEndReason,
    pub message: Option<String>,
    pub events: Vec<serde_json::Value>,
}

impl From<dsh_host::agent::TurnOutcome> for Outcome {
    fn from(o: dsh_host::agent::TurnOutcome) -> Self {
        Outcome {
            reason: o.reason,
            message: o.message,
            events: dsh_host::session::events::wire(&o.events),
        }
    }
}

/// A session's events as their log lines' JSON.
pub fn events_of(session: &dsh_host::agent::Session) -> Vec<serde_json::Value> {
    dsh_host::session::events::wire(&session.events())
}
