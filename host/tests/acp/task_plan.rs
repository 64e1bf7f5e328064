//! Claude Code's task tools (`tools-tasks`) as the editor's plan: each
//! change of the list (a task created, updated, deleted) sends a `plan`
//! update with every task's subject and status; reading the list sends
//! none; the calls are `think` tool calls.

use dsh_test_support::agent::Load;
use serde_json::{Value, json};

use crate::support::{Answer, TestHost, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_list_becomes_the_editor_s_plan_after_each_change() {
    let call = |name: &str, args: Value| json!({"tool_calls": [{"name": name, "arguments": args}]});
    let host = TestHost::with_loads(
        json!([
            call(
                "TaskCreate",
                json!({"subject": "Read the code", "description": "d"})
            ),
            call(
                "TaskCreate",
                json!({"subject": "Fix the bug", "description": "d"})
            ),
            call(
                "TaskUpdate",
                json!({"taskId": "1", "status": "in_progress"})
            ),
            call("TaskList", json!({})),
            call("TaskUpdate", json!({"taskId": "2", "status": "deleted"})),
            text("done"),
        ]),
        |_| vec![Load::builtin("tools-tasks", "tools-tasks", json!({}))],
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    client.prompt(&session, "plan it").await.unwrap();
    let updates = client.take_updates();
    let plans: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .map(|u| &u["entries"])
        .collect();
    let entry = |content: &str, status: &str| json!({"content": content, "priority": "medium", "status": status});
    assert_eq!(
        plans,
        [
            &json!([entry("Read the code", "pending")]),
            &json!([
                entry("Read the code", "pending"),
                entry("Fix the bug", "pending")
            ]),
            &json!([
                entry("Read the code", "in_progress"),
                entry("Fix the bug", "pending")
            ]),
            &json!([entry("Read the code", "in_progress")]),
        ]
    );
    let kinds: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| &u["kind"])
        .collect();
    assert!(
        kinds.len() == 5 && kinds.iter().all(|k| *k == "think"),
        "{kinds:?}"
    );
    client.close().await;
}
