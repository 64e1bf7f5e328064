//! The one way tests boot an in-process agent: [`AgentHost`] is a real
//! host (`HostCore`, `PluginHost`, `Agent`) on the caller's tokio runtime,
//! with the built-in `bash-local`, the plugins a test names ([`Load`]: a
//! built-in, or a native plugin type such as a probe), then a model: by
//! default `model-scripted` answering a script and recording every request
//! it receives under the host's root.
//!
//! Everything lives under one root folder: `state/` (the session logs),
//! `project/` (a working folder for sessions), `cordis.yml` (the manifest
//! path plugins resolve relative paths against; never written) and
//! `requests.jsonl` (what the scripted model received).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_host::agent::{Agent, AgentOptions, Session};
use dsh_host::plugins::{HostCore, PluginHost, Severity, builtin};
use dsh_plugin_api::{Plugin, PluginModuleRef, plugin_module};
use serde_json::{Value, json};

use crate::events::read_jsonl;

/// One plugin to load: manifest id, root module, config.
pub struct Load {
    /// The plugin's id in the host.
    pub id: String,
    /// Its root module.
    pub module: PluginModuleRef,
    /// Its config.
    pub config: Value,
}

impl Load {
    /// The built-in plugin `name`, as `id`.
    pub fn builtin(id: &str, name: &str, config: Value) -> Load {
        Load {
            id: id.into(),
            module: builtin::lookup(name).unwrap_or_else(|| panic!("no built-in `{name}`")),
            config,
        }
    }

    /// The native plugin type `P`, as `id`.
    pub fn native<P: Plugin>(id: &str, config: Value) -> Load {
        Load {
            id: id.into(),
            module: plugin_module::<P>(),
            config,
        }
    }
}

/// An in-process host and agent under one root folder.
pub struct AgentHost {
    /// The root folder (owned by the caller).
    pub root: PathBuf,
    /// `root/project`, created: a working folder for sessions.
    pub project: PathBuf,
    /// `root/state`: the state directory.
    pub state: PathBuf,
    /// `root/requests.jsonl`: every request the scripted model received.
    pub record: PathBuf,
    /// The applied plugins (dropping them disposes them).
    pub plugins: PluginHost,
    /// The agent.
    pub agent: Arc<Agent>,
}

impl AgentHost {
    /// `bash-local`, then `loads` in order, then `model-scripted` (id
    /// `model`) answering `script` and recording to [`AgentHost::record`].
    /// Problems the plugins report are left for the test to judge: see
    /// [`AgentHost::problem_free`] and [`AgentHost::error_free`].
    pub fn scripted(root: &Path, loads: Vec<Load>, script: Value) -> AgentHost {
        let record = root.join("requests.jsonl");
        let model = Load::builtin(
            "model",
            "model-scripted",
            json!({"script": script, "record": record}),
        );
        AgentHost::with_model(root, loads, model)
    }

    /// `bash-local`, then `loads`, then `model` (any model provider).
    /// Must run inside a tokio runtime: the host lives on it.
    pub fn with_model(root: &Path, loads: Vec<Load>, model: Load) -> AgentHost {
        AgentHost::with_bash_config(root, json!({}), loads, model)
    }

    /// [`AgentHost::with_model`] with `bash-local` configured as `bash`.
    pub fn with_bash_config(root: &Path, bash: Value, loads: Vec<Load>, model: Load) -> AgentHost {
        AgentHost::with_options(root, bash, loads, model, AgentOptions::default())
    }

    /// [`AgentHost::with_bash_config`] with the agent built with `options`
    /// (the sessions' default permissions, ...).
    pub fn with_options(
        root: &Path,
        bash: Value,
        loads: Vec<Load>,
        model: Load,
        options: AgentOptions,
    ) -> AgentHost {
        let project = root.join("project");
        std::fs::create_dir_all(&project).expect("create the project folder");
        let state = root.join("state");
        let core = HostCore::new(state.clone(), tokio::runtime::Handle::current());
        let agent = Agent::new(core.clone(), &state, options);
        let mut plugins = PluginHost::new(core, root.join("cordis.yml"));
        let bash = Load::builtin("bash-local", "bash-local", bash);
        for l in std::iter::once(bash).chain(loads).chain([model]) {
            plugins.load_module(&l.id, l.module, l.config);
        }
        AgentHost {
            root: root.to_path_buf(),
            project,
            state,
            record: root.join("requests.jsonl"),
            plugins,
            agent,
        }
    }

    /// Fails the test on any problem a plugin reported.
    pub fn problem_free(self) -> AgentHost {
        let problems = self.plugins.problems();
        assert!(problems.is_empty(), "{problems:?}");
        self
    }

    /// Fails the test on any error problem; warnings (such as hooks for
    /// events dsh does not fire, expected of recorded configs) pass.
    pub fn error_free(self) -> AgentHost {
        let problems = self.plugins.problems();
        let errors: Vec<_> = problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        self
    }

    /// A new session in [`AgentHost::project`].
    pub async fn session(&self) -> Arc<Session> {
        self.session_in(&self.project).await
    }

    /// A new session working in `cwd`.
    pub async fn session_in(&self, cwd: &Path) -> Arc<Session> {
        self.agent
            .create_session(cwd, None)
            .await
            .unwrap_or_else(|e| panic!("create a session in {}: {e}", cwd.display()))
    }

    /// Every request the scripted model received, in order.
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.record)
    }
}
