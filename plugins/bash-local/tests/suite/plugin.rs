//! The plugin applied on a fake host: registration, the service across the
//! JSON-text boundary, and the tool body across the ABI.

use dsh_bash_local::BashLocal;
use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::{Host, Plugin, plugin_module};
use serde_json::{Value, json};

use super::support::*;

fn apply(config: Value) -> (FakeHost, Result<(), String>) {
    let host = FakeHost::default();
    let module = plugin_module::<BashLocal>();
    let applied = (module.apply())(host.boxed(), config.to_string().into());
    (host, applied.into_result().map_err(String::from))
}

#[test]
fn describes_itself_with_a_config_schema_and_defaults() {
    let descriptor = (plugin_module::<BashLocal>().describe())();
    assert_eq!(descriptor.name.as_str(), BashLocal::NAME);
    let defaults: Value = serde_json::from_str(&descriptor.default_config).expect("json");
    assert_eq!(
        defaults,
        json!({"env_allow": [], "max_output_bytes": 30000, "codex_exec_command": false, "codex_exec_env": {}, "shell": "/bin/bash",
            "sandbox_mode": "danger-full-access",
            "sandbox_workspace_write": {"writable_roots": [], "network_access": false,
                "exclude_tmpdir_env_var": false, "exclude_slash_tmp": false},
            "sandbox_helper": null, "home": null, "background_dir": null})
    );
    let schema: Value = serde_json::from_str(&descriptor.config_schema).expect("json");
    assert!(schema["properties"]["env_allow"].is_object(), "{schema}");
}

#[test]
fn unknown_config_keys_are_refused() {
    let (_host, applied) = apply(json!({"shel": "zsh"}));
    assert!(applied.expect_err("refused").contains("shel"));
}

#[tokio::test(flavor = "multi_thread")]
async fn registers_the_service_and_the_tool() {
    let (host, applied) = apply(json!({}));
    applied.expect("applied");
    let (_d, dir) = temp_dir();

    let answer = Host::new(host.boxed())
        .call_service(
            "process-runner",
            "run",
            &json!({"program": ["/bin/echo", "via service"], "cwd": dir}),
        )
        .await
        .expect("answer");
    assert_eq!(
        (answer["exit_code"].clone(), answer["stdout"].clone()),
        (json!(0), json!("via service\n"))
    );

    let refused = Host::new(host.boxed())
        .call_service("process-runner", "run", &json!({"cwd": "/"}))
        .await
        .expect_err("malformed");
    assert!(refused.contains("`program`"), "{refused}");

    let body = host.take_tool("Bash");
    let call = RArc::new(tool_call(
        "Bash",
        &json!({"command": "echo hi"}).to_string(),
        &dir,
    ));
    let result = tokio::time::timeout(FINISH, body.run(call, TestSignal::default().boxed()))
        .await
        .expect("finished");
    assert_eq!(
        (result.is_error, result.text_content().as_str()),
        (false, "hi")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_arguments_that_are_not_json_are_an_error_result() {
    let (host, applied) = apply(json!({}));
    applied.expect("applied");
    let (_d, dir) = temp_dir();
    let mut call = tool_call("Bash", &json!({}).to_string(), &dir);
    call.arguments = "{not json".into();
    let result = host
        .take_tool("Bash")
        .run(RArc::new(call), TestSignal::default().boxed())
        .await;
    assert!(
        result.is_error && result.text_content().contains("not JSON"),
        "{}",
        result.text_content()
    );
}
