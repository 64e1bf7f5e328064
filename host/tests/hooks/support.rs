//! A real host in-process: `bash-local`, the plugins a test names (a hook
//! bridge, probes), then `model-scripted` recording every request; plus
//! timed waits and small log helpers.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use dsh_host::agent::{Agent, AgentOptions, Session};
use dsh_host::plugins::{HostCore, PluginHost, Severity, builtin};
use dsh_plugin_api::{Host, Plugin, PluginModuleRef, plugin_module};
use serde_json::{Value, json};

/// One plugin to load: manifest id, root module, config.
pub struct Load {
    pub id: String,
    pub module: PluginModuleRef,
    pub config: Value,
}

impl Load {
    pub fn builtin(id: &str, name: &str, config: Value) -> Load {
        Load {
            id: id.into(),
            module: builtin::lookup(name).unwrap(),
            config,
        }
    }

    pub fn native<P: Plugin>(id: &str, config: Value) -> Load {
        Load {
            id: id.into(),
            module: plugin_module::<P>(),
            config,
        }
    }
}

/// A host whose state lives under `root/state`.
pub struct TestHost {
    pub state: PathBuf,
    pub record: PathBuf,
    pub plugins: PluginHost,
    pub agent: Arc<Agent>,
}

impl TestHost {
    /// bash-local, then `loads` in order, then a scripted model answering
    /// `script` and recording every request under `root`. Fails on any
    /// error problem (warnings, such as hooks for events dsh does not
    /// fire, are expected of recorded configs).
    pub fn new(root: &Path, loads: Vec<Load>, script: Value) -> TestHost {
        let host = TestHost::with_problems(root, loads, script);
        let errors: Vec<_> = host
            .plugins
            .problems()
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        host
    }

    /// [`TestHost::new`], whatever problems the plugins report.
    pub fn with_problems(root: &Path, loads: Vec<Load>, script: Value) -> TestHost {
        let state = root.join("state");
        let record = root.join("requests.jsonl");
        let core = HostCore::new(state.clone(), tokio::runtime::Handle::current());
        let agent = Agent::new(core.clone(), &state, AgentOptions::default());
        let mut plugins = PluginHost::new(core, root.join("cordis.yml"));
        plugins.load_module(
            "bash-local",
            builtin::lookup("bash-local").unwrap(),
            json!({}),
        );
        for l in loads {
            plugins.load_module(&l.id, l.module, l.config);
        }
        let model = json!({"script": script, "record": record});
        plugins.load_module("model", builtin::lookup("model-scripted").unwrap(), model);
        TestHost {
            state,
            record,
            plugins,
            agent,
        }
    }

    pub async fn session(&self, cwd: &Path) -> Arc<Session> {
        self.agent.create_session(cwd, None).await.unwrap()
    }

    /// Every request the model received, in order.
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.record)
    }
}

pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

pub fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Polls `done` until it holds; fails after `limit`.
pub async fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Awaits `fut`, failing the test after `limit`.
pub async fn within<T>(
    what: &str,
    limit: Duration,
    fut: impl std::future::Future<Output = T>,
) -> T {
    match tokio::time::timeout(limit, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {limit:?} waiting for {what}"),
    }
}

/// An executable shell script at `path`.
pub fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `claude -p`'s approval policy, as a native plugin: there is nobody to
/// ask, so every `ask` is refused and the model reads the hook's reason
/// (vectors `S3-ask*`). dsh itself mounts no approval service headless.
pub struct HeadlessApproval;

/// A plugin config with no keys.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct NoConfig {}

impl Plugin for HeadlessApproval {
    type Config = NoConfig;
    const NAME: &'static str = "headless-approval";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &Host, _config: Self::Config) -> Result<Self, String> {
        host.provide_service("approval", |_method, args| async move {
            Ok(json!({"outcome": "reject", "reason": args["reason"]}))
        })?;
        Ok(HeadlessApproval)
    }
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
