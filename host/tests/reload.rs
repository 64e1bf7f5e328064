//! Re-applying a changed manifest to a live host: what is disposed, what is
//! applied again, why a running turn keeps the plugins it started with, and
//! that a plugin registers only while it applies. (The atomic-swap
//! properties under concurrent turns are in the dsh-tests suite,
//! `reload_atomic`.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dsh_host::agent::{Agent, AgentOptions, Prompt};
use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost};
use dsh_plugin_api::Seam;

fn write_manifest(dir: &Path, with_hooks: bool, extra: &str) -> Manifest {
    let hooks = if with_hooks {
        "  - name: hooks-claude\n    config: {config_path: hooks.json}\n"
    } else {
        ""
    };
    let text = format!(
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {{script: script.yml}}\n{hooks}{extra}"
    );
    std::fs::write(dir.join("cordis.yml"), text).unwrap();
    Manifest::load(&dir.join("cordis.yml")).unwrap()
}

async fn wait_for_file(path: &Path) {
    tokio::time::timeout(Duration::from_secs(30), async {
        while !path.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} never appeared", path.display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_disposes_removed_plugins_and_applies_new_and_changed_ones() {
    let dir = tempfile::tempdir().unwrap();
    // A bridge with no usable hook is a config problem: give it one.
    std::fs::write(
        dir.path().join("hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("script.yml"), "[]").unwrap();
    let first = write_manifest(dir.path(), true, "");
    let core = HostCore::new(first.state_dir.clone(), tokio::runtime::Handle::current());
    let mut host = PluginHost::new(core.clone(), first.path.clone());
    host.load_manifest(&first);
    assert!(host.all_applied(), "{:?}", host.problems());
    assert!(!host.seams_of("hooks-claude").is_empty());

    let second = write_manifest(dir.path(), false, "  - name: tools-fs\n");
    let report = host.reload(&second);
    assert_eq!(report.removed, ["hooks-claude"]);
    assert_eq!(report.added, ["tools-fs"]);
    assert!(report.changed.is_empty(), "{report:?}");
    assert_eq!(report.unchanged, ["bash-local", "model"]);

    // A changed config is disposed and applied again.
    let third = write_manifest(
        dir.path(),
        false,
        "  - name: tools-fs\n    config: {max_read_bytes: 1000}\n",
    );
    assert_eq!(host.reload(&third).changed, ["tools-fs"]);
    assert!(host.seams_of("hooks-claude").is_empty());
    assert_eq!(core.view().bus.listener_count(Seam::PromptSubmit), 0);
    assert!(core.view().tools.get("Read").is_some());

    // A bad manifest never reaches `reload`: loading it fails and names the file.
    std::fs::write(dir.path().join("cordis.yml"), "plugins: [").unwrap();
    let err = Manifest::load(&dir.path().join("cordis.yml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("cordis.yml"), "{err}");
    assert!(core.view().tools.get("Read").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_turn_finishes_on_the_plugins_it_started_with() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let marker = d.join("post-hook-ran");
    std::fs::write(
        d.join("hooks.json"),
        format!(
            r#"{{"hooks": {{"PostToolUse": [{{"hooks": [{{"type": "command", "command": "echo run >> {}"}}]}}]}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
    let wait_cmd = format!(
        "touch {started}; while [ ! -f {go} ]; do sleep 0.02; done; echo released",
        started = d.join("started").display(),
        go = d.join("go").display()
    );
    let script = serde_json::json!([
        {"tool_calls": [{"name": "Bash", "arguments": {"command": wait_cmd}}]},
        {"text": "first turn done"},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo again"}}]},
        {"text": "second turn done"}
    ]);
    std::fs::write(
        d.join("script.yml"),
        serde_json::to_string(&script).unwrap(),
    )
    .unwrap();
    let manifest = write_manifest(d, true, "");
    let core = HostCore::new(
        manifest.state_dir.clone(),
        tokio::runtime::Handle::current(),
    );
    let agent = Agent::new(core.clone(), &manifest.state_dir, AgentOptions::default());
    let mut host = PluginHost::new(core, manifest.path.clone());
    host.load_manifest(&manifest);
    let session = agent.create_session(d, None).await.unwrap();

    let running = {
        let session = session.clone();
        tokio::spawn(async move { session.prompt(Prompt::user("first")).await })
    };
    wait_for_file(&d.join("started")).await;
    let report = host.reload(&write_manifest(d, false, ""));
    assert_eq!(report.removed, ["hooks-claude"]);
    std::fs::write(d.join("go"), "").unwrap();
    let first = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.message, None);
    // The bridge was removed mid-turn, yet that turn's PostToolUse ran.
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\n");

    let second = Arc::clone(&session).prompt(Prompt::user("second")).await;
    assert_eq!(second.message, None);
    // The next turn started after the reload: no bridge, no hook.
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "run\n");
}

/// A plugin that keeps its host handle, to try registering after `apply`.
struct Keeper;

static KEPT_HOST: std::sync::OnceLock<dsh_plugin_api::Host> = std::sync::OnceLock::new();

impl dsh_plugin_api::Plugin for Keeper {
    type Config = dsh_plugin_api::NoConfig;
    const NAME: &'static str = "keeper";
    const VERSION: &'static str = "0.0.0";

    fn apply(host: &dsh_plugin_api::Host, _config: Self::Config) -> Result<Self, String> {
        let _ = KEPT_HOST.set(host.clone());
        host.provide_service("kept", |_, _| async { Ok(serde_json::json!("kept")) })?;
        Ok(Keeper)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_registers_only_while_it_applies() {
    let dir = tempfile::tempdir().unwrap();
    let core = HostCore::new(dir.path().join("state"), tokio::runtime::Handle::current());
    let mut host = PluginHost::new(core.clone(), dir.path().join("cordis.yml"));
    host.load_module(
        "keeper",
        dsh_plugin_api::plugin_module::<Keeper>(),
        serde_json::json!({}),
    );
    assert!(host.all_applied(), "{:?}", host.problems());
    assert!(core.view().services.get("kept").is_some());
    let kept = KEPT_HOST.get().unwrap();
    // Looking services up still works; registering does not.
    assert!(kept.has_service("kept"));
    let late = kept
        .provide_service("late", |_, _| async { Ok(serde_json::json!(null)) })
        .unwrap_err();
    assert!(
        late.contains("keeper") && late.contains("only be registered while the plugin applies"),
        "{late}"
    );
    assert!(core.view().services.get("late").is_none());
}
