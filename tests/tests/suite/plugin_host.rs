//! The plugin host over real `.so` files: what it refuses, how it contains
//! plugins that panic or miss a service, drop-in folders, and dispose.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dsh_host::plugins::PluginStatus;
use dsh_host::plugins::loader::{PluginLoadError, load_library};
use dsh_plugin_api::{PreToolDecision, Seam, ToolResult};
use dsh_tests::host::tool_call;
use dsh_tests::{TestHost, copy_with_mode, example, fixture, temp_dir};
use serde_json::json;

/// A tiny C shared library: loadable, but without the dsh root module.
fn c_library(dir: &Path) -> PathBuf {
    let source = dir.join("plain.c");
    std::fs::write(&source, "int answer(void) { return 42; }\n").expect("write C source");
    let lib = dir.join("libplain_c.so");
    let mut cc = Command::new("cc");
    cc.args(["-shared", "-fPIC", "-o"]).arg(&lib).arg(&source);
    let outcome = dsh_tests::run(cc, Duration::from_secs(120));
    assert_eq!(outcome.code, Some(0), "cc failed: {}", outcome.stderr);
    lib
}

fn failed_message(host: &TestHost, id: &str) -> String {
    match &host.record(id).status {
        PluginStatus::Failed(message) => message.clone(),
        other => panic!("plugin `{id}` should have been refused, is {other:?}"),
    }
}

#[test]
fn bad_files_are_refused_naming_file_and_reason_while_the_rest_load() {
    let dir = temp_dir();
    let text = dir.path().join("x.so");
    std::fs::write(&text, "not a library\n").expect("write x.so");
    let c_lib = c_library(dir.path());
    let writable = copy_with_mode(&fixture("delegate"), dir.path(), "libwritable.so", 0o666);
    let readonly = copy_with_mode(&fixture("delegate"), dir.path(), "libreadonly.so", 0o644);
    let entries = [
        ("gate", example("policy-gate")),
        ("text", text.clone()),
        ("c-lib", c_lib.clone()),
        ("no-root", fixture("no-root")),
        ("writable", writable.clone()),
        ("abi-changed", fixture("abi-changed")),
        ("api-major-2", fixture("api-major-2")),
        ("readonly", readonly),
    ];
    let yaml: String = entries
        .iter()
        .map(|(id, path)| format!("  - {{id: {id}, path: {}}}\n", path.display()))
        .collect();
    let host = TestHost::load(&format!("plugins:\n{yaml}"));

    for id in ["gate", "readonly"] {
        assert_eq!(host.record(id).status, PluginStatus::Applied, "{id}");
    }
    let refused = |path: &Path| format!("{}: refused: ", path.display());
    let text_msg = failed_message(&host, "text");
    assert!(
        text_msg.starts_with(&format!(
            "{}not a loadable shared library: ",
            refused(&text)
        )),
        "{text_msg}"
    );
    let no_root =
        "no dsh plugin root module in this library (a plugin exports one with `export_plugin!`)";
    assert_eq!(
        failed_message(&host, "c-lib"),
        format!("{}{no_root}", refused(&c_lib))
    );
    assert_eq!(
        failed_message(&host, "no-root"),
        format!("{}{no_root}", refused(&fixture("no-root")))
    );
    assert_eq!(
        failed_message(&host, "writable"),
        format!(
            "{}file is writable by group or others (mode 666); run `chmod go-w` on it",
            refused(&writable)
        )
    );
    // The summary names the type whose layout differs and how (the exact
    // sizes follow PluginDescriptor, so only their presence is pinned).
    let abi = failed_message(&host, "abi-changed");
    let abi_prefix = format!(
        "{}ABI layout mismatch with this host's dsh-plugin-api (rebuild the plugin against it): \
         PluginDescriptor: incompatible type size (expected ",
        refused(&fixture("abi-changed"))
    );
    assert!(
        abi.starts_with(&abi_prefix) && abi.contains("; too many fields (expected "),
        "{abi}"
    );
    assert_eq!(
        failed_message(&host, "api-major-2"),
        format!(
            "{}built against plugin API 2.0.0, this host speaks {}",
            refused(&fixture("api-major-2")),
            dsh_plugin_api::API_VERSION
        )
    );
    // One problem per refused file, each one line naming the plugin.
    let problems: Vec<String> = host.host.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(problems.len(), 6, "{problems:#?}");
    for problem in &problems {
        assert!(
            !problem.contains('\n') && problem.starts_with("plugin `"),
            "{problem}"
        );
    }
    // The host is fine: the gate that loaded works.
    let rm = tool_call("c1", "Bash", json!({ "command": "ls" }));
    assert_eq!(host.pre_execute(&rm), Ok(PreToolDecision::allow()));
}

#[test]
fn the_loader_names_the_kind_of_incompatibility() {
    let abi = load_library(&fixture("abi-changed"))
        .map(|_| ())
        .expect_err("refused");
    assert!(
        matches!(&abi, PluginLoadError::AbiMismatch { path, .. } if *path == fixture("abi-changed"))
    );
    let api = load_library(&fixture("api-major-2"))
        .map(|_| ())
        .expect_err("refused");
    assert!(
        matches!(&api, PluginLoadError::ApiVersion { found, expected, .. }
            if found == "2.0.0" && *expected == dsh_plugin_api::API_VERSION),
        "{api:?}"
    );
    let missing = load_library(Path::new("/nonexistent/libx.so"))
        .map(|_| ())
        .expect_err("refused");
    assert!(
        matches!(missing, PluginLoadError::Unreadable { .. }),
        "{missing:?}"
    );
}

#[test]
fn a_panic_in_apply_is_reported_and_the_host_keeps_running() {
    let host = TestHost::load(&format!(
        "plugins:\n  - {{id: panicky, path: {}, config: {{panic_in: apply}}}}\n  - {{id: gate, path: {}, config: {{deny: [\"rm *\"]}}}}\n",
        fixture("panicky").display(),
        example("policy-gate").display(),
    ));
    let expected = "apply failed: plugin panicked in apply: fixture panic in apply";
    assert_eq!(
        host.record("panicky").status,
        PluginStatus::Failed(expected.into())
    );
    let problems: Vec<String> = host.host.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(problems, vec![format!("plugin `panicky`: {expected}")]);
    assert!(host.host.seams_of("panicky").is_empty());
    assert_eq!(host.record("gate").status, PluginStatus::Applied);
    let rm = tool_call("c1", "Bash", json!({ "command": "rm x" }));
    assert!(matches!(
        host.pre_execute(&rm),
        Ok(PreToolDecision::Deny { .. })
    ));
}

#[test]
fn a_panic_in_a_listener_fails_that_listener_only() {
    let host = TestHost::load(&format!(
        "plugins:\n  - {{id: panicky, path: {}, config: {{panic_in: listener}}}}\n  - {{id: audit, path: {}}}\n",
        fixture("panicky").display(),
        example("audit").display(),
    ));
    assert!(host.host.all_applied(), "{:?}", host.host.problems());
    let call = tool_call("c1", "Bash", json!({ "command": "ls" }));
    // Twice: a panic leaves nothing poisoned behind.
    for _ in 0..2 {
        assert_eq!(
            host.pre_execute(&call),
            Err("plugin `panicky`: listener panicked: fixture panic in pre-execute".into())
        );
        let failures = host.tool_result(&call, ToolResult::text("x"), false);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(&*failures[0].plugin, "panicky");
        assert_eq!(
            failures[0].message,
            "listener panicked: fixture panic in tool-result"
        );
    }
    // The observer after the panicking one still saw both results.
    let audit = std::fs::read_to_string(host.state_dir().join("audit.jsonl")).expect("audit file");
    assert_eq!(audit.lines().count(), 2);
}

#[test]
fn a_missing_required_service_skips_the_plugin_with_a_warning() {
    let host = TestHost::load(&format!(
        "plugins:\n  - {{id: needy, path: {}}}\n",
        fixture("needs-service").display()
    ));
    let reason = "not applied: required service `secret-store` is not provided by any plugin loaded before it";
    assert_eq!(
        host.record("needy").status,
        PluginStatus::Skipped(reason.into())
    );
    let problems: Vec<String> = host.host.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(problems, vec![format!("plugin `needy`: {reason}")]);
    assert!(host.host.seams_of("needy").is_empty());
    assert!(!host.host.all_applied());
}

#[test]
fn plugin_dirs_load_every_library_in_name_order() {
    let drop_in = temp_dir();
    copy_with_mode(&fixture("delegate"), drop_in.path(), "libb.so", 0o755);
    copy_with_mode(&fixture("delegate"), drop_in.path(), "liba.so", 0o755);
    std::fs::write(drop_in.path().join("notes.txt"), "ignored").expect("write");
    let host = TestHost::load(&format!(
        "plugin_dirs: [{}]\nplugins: []\n",
        drop_in.path().display()
    ));
    let ids: Vec<&str> = host.host.records().iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, vec!["a", "b"]);
    assert!(host.host.all_applied(), "{:?}", host.host.problems());
    assert_eq!(host.core().view().bus.listener_count(Seam::PreExecute), 2);
}

#[test]
fn dispose_removes_the_plugins_listeners() {
    let host_yaml = format!(
        "plugins:\n  - {{id: gate, path: {}, config: {{deny: [\"rm *\"]}}}}\n  - {{id: delegate, path: {}}}\n",
        example("policy-gate").display(),
        fixture("delegate").display(),
    );
    let mut host = TestHost::load(&host_yaml);
    let rm = tool_call("c1", "Bash", json!({ "command": "rm x" }));
    assert!(matches!(
        host.pre_execute(&rm),
        Ok(PreToolDecision::Deny { .. })
    ));
    assert_eq!(host.core().view().bus.listener_count(Seam::PreExecute), 2);

    assert!(host.host.dispose("gate"));
    assert_eq!(host.core().view().bus.listener_count(Seam::PreExecute), 1);
    assert!(host.host.seams_of("gate").is_empty());
    assert_eq!(host.record("gate").status, PluginStatus::Disabled);
    assert!(host.record("gate").seams.is_empty());
    assert_eq!(host.pre_execute(&rm), Ok(PreToolDecision::allow()));
    assert!(!host.host.dispose("gate"), "already disposed");
    assert_eq!(host.host.seams_of("delegate"), vec![Seam::PreExecute]);
}
