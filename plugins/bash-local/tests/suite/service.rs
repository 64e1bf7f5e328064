//! The `process-runner` service's JSON contract.

use serde_json::{Value, json};

use dsh_bash_local::service::handle;

use super::support::*;

async fn call(args: Value) -> Result<Value, String> {
    tokio::time::timeout(FINISH, handle("run", &args, &[]))
        .await
        .expect("finished")
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn answer_has_exactly_the_contract_keys_in_order() {
    let (_d, dir) = temp_dir();
    let answer = call(
        json!({"program": ["/bin/sh", "-c", "cat; echo err >&2; exit 4"],
        "cwd": dir, "stdin": "in"}),
    )
    .await
    .expect("answer");
    let keys: Vec<&str> = answer
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "exit_code",
            "signal",
            "stdout",
            "stderr",
            "stdout_truncated",
            "stderr_truncated",
            "timed_out",
            "spawn_error",
            "duration_ms"
        ]
    );
    let mut answer = answer;
    assert!(answer["duration_ms"].is_u64());
    answer["duration_ms"] = json!(0);
    assert_eq!(
        answer,
        json!({"exit_code": 4, "signal": null, "stdout": "in", "stderr": "err\n",
        "stdout_truncated": false, "stderr_truncated": false, "timed_out": false,
        "spawn_error": null, "duration_ms": 0})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn process_problems_are_answers_not_errors() {
    let (_d, dir) = temp_dir();
    let missing = call(json!({"program": ["/nonexistent/x"], "cwd": dir}))
        .await
        .expect("answer");
    assert_eq!(missing["exit_code"], Value::Null);
    assert!(
        missing["spawn_error"]
            .as_str()
            .expect("message")
            .contains("/nonexistent/x")
    );

    let bad_cwd = call(json!({"program": ["true"], "cwd": dir.join("nope")}))
        .await
        .expect("answer");
    assert!(
        bad_cwd["spawn_error"]
            .as_str()
            .expect("message")
            .contains("does not exist")
    );

    let timeout = call(json!({"program": ["/bin/sh", "-c", "sleep 30"], "cwd": dir,
        "timeout_ms": 100, "kill_grace_ms": 100}))
    .await
    .expect("answer");
    assert_eq!(
        (timeout["timed_out"].clone(), timeout["exit_code"].clone()),
        (json!(true), Value::Null)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_arguments_are_errors_naming_the_key() {
    let not_object = call(json!("ls")).await.expect_err("refused");
    assert!(not_object.contains("JSON object"), "{not_object}");
    let no_program = call(json!({"cwd": "/"})).await.expect_err("refused");
    assert!(no_program.contains("`program`"), "{no_program}");
    let no_cwd = call(json!({"program": ["true"]}))
        .await
        .expect_err("refused");
    assert!(no_cwd.contains("`cwd`"), "{no_cwd}");
}

#[tokio::test(flavor = "multi_thread")]
async fn plugin_config_allow_list_reaches_the_runner() {
    let (_d, dir) = temp_dir();
    // DSH_CFG_TOKEN is explicit here, so it is kept either way; the point is
    // that the config list is merged, which the unit tests check in detail.
    let args = json!({"program": ["/bin/sh", "-c", "printf %s \"$DSH_CFG_TOKEN\""], "cwd": dir,
        "env": {"DSH_CFG_TOKEN": "kept"}});
    let answer = handle("run", &args, &["DSH_CFG_TOKEN".to_string()])
        .await
        .expect("answer");
    assert_eq!(answer["stdout"], "kept");
}
