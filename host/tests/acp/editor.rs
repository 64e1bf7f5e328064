//! What the editor shows of file tools: `Write`/`Edit` calls carry `diff`
//! content (kept on screen when they finish), `Read` carries its line, and
//! every location is absolute though the model wrote relative paths.

use agent_client_protocol::v1::schema::StopReason;
use dsh_test_support::agent::Load;
use serde_json::{Value, json};

use crate::support::{Answer, TestHost, text};

fn call(name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": arguments}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_and_edit_are_diffs_read_has_its_line_and_paths_are_absolute() {
    let host = TestHost::with_loads(
        json!([
            call(
                "Write",
                json!({"file_path": "notes.txt", "content": "hello\n"})
            ),
            call(
                "Edit",
                json!({"file_path": "notes.txt", "old_string": "hello", "new_string": "bye"})
            ),
            call("Read", json!({"file_path": "notes.txt", "offset": 1})),
            text("done"),
        ]),
        |_| vec![Load::builtin("tools-fs", "tools-fs", json!({}))],
    );
    let (mut client, _serving) = host.connect(Answer::Fail).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "write it").await.unwrap(),
        StopReason::EndTurn
    );
    let file = host.project.join("notes.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "bye\n");
    let path = file.display().to_string();
    let updates = client.take_updates();
    let calls: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert_eq!(
        calls[0]["content"],
        json!([{"type": "diff", "path": path, "newText": "hello\n"}])
    );
    assert_eq!(calls[0]["locations"], json!([{"path": path}]));
    assert_eq!(
        calls[1]["content"],
        json!([{"type": "diff", "path": path, "oldText": "hello", "newText": "bye"}])
    );
    assert_eq!(calls[2]["locations"], json!([{"path": path, "line": 1}]));
    assert_eq!(calls[2]["kind"], "read");
    // Finished edits keep their diff: their final update sends no content.
    let finals: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .collect();
    assert_eq!(finals.len(), 3, "{updates:#?}");
    assert!(finals[0].get("content").is_none(), "{:#}", finals[0]);
    assert!(finals[1].get("content").is_none(), "{:#}", finals[1]);
    assert!(
        finals[2]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("bye")
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_waiting_for_approval_shows_its_diff() {
    let host = TestHost::with_loads(
        json!([
            call(
                "Write",
                json!({"file_path": "plan.md", "content": "step 1\n"})
            ),
            text("done"),
        ]),
        |_| {
            vec![
                Load::builtin("tools-fs", "tools-fs", json!({})),
                Load::native::<crate::probe::Probe>("probe1", json!({"pre": "ask"})),
            ]
        },
    );
    let (mut client, _serving) = host.connect(Answer::Allow).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "plan").await.unwrap(),
        StopReason::EndTurn
    );
    let asked = crate::support::within("the permission request", client.permissions.recv())
        .await
        .unwrap();
    let path = host.project.join("plan.md").display().to_string();
    assert_eq!(
        serde_json::to_value(&asked.tool_call).unwrap()["content"],
        json!([{"type": "diff", "path": path, "newText": "step 1\n"}])
    );
    assert_eq!(
        std::fs::read_to_string(host.project.join("plan.md")).unwrap(),
        "step 1\n"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_use_the_editor_s_buffers_when_it_offers_them() {
    use agent_client_protocol::v1::schema::{ClientCapabilities, FileSystemCapabilities};
    let host = TestHost::with_loads(
        json!([
            call("Read", json!({"file_path": "notes.txt"})),
            call(
                "Edit",
                json!({"file_path": "notes.txt", "old_string": "unsaved", "new_string": "edited"})
            ),
            call(
                "Write",
                json!({"file_path": "new.txt", "content": "fresh\n"})
            ),
            text("done"),
        ]),
        |_| vec![Load::builtin("tools-fs", "tools-fs", json!({}))],
    );
    let notes = host.project.join("notes.txt");
    std::fs::write(&notes, "on disk\n").unwrap();
    let (client, _serving) = host.connect(Answer::Fail).await;
    client
        .initialize_with(
            ClientCapabilities::new().fs(FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true)),
        )
        .await;
    client
        .buffers
        .lock()
        .unwrap()
        .insert(notes.clone(), "unsaved change\n".into());
    let session = client.new_session(&host.project).await;
    assert_eq!(
        client.prompt(&session, "edit").await.unwrap(),
        StopReason::EndTurn
    );
    let log = host.log(&session);
    let results: Vec<&Value> = log.iter().filter(|e| e["type"] == "tool/result").collect();
    // Read saw the unsaved buffer, not the disk.
    assert_eq!(results[0]["content"], "1\tunsaved change\n2\t");
    assert_eq!(results[1]["is_error"], false, "{:#}", results[1]);
    assert_eq!(results[2]["is_error"], false, "{:#}", results[2]);
    // The edits landed in the editor; the disk is as it was.
    let buffers = client.buffers.lock().unwrap().clone();
    assert_eq!(buffers[&notes], "edited change\n");
    assert_eq!(buffers[&host.project.join("new.txt")], "fresh\n");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "on disk\n");
    assert!(!host.project.join("new.txt").exists());
    let sent = host.sent_methods();
    assert_eq!(
        sent.iter()
            .filter(|m| m.starts_with("fs/"))
            .collect::<Vec<_>>(),
        // Read; Edit: its check before any hook (Claude Code's "not read
        // yet", "not found" checks, S239-edit-checks), then the edit;
        // Write: its check, then the write.
        [
            "fs/read_text_file",
            "fs/read_text_file",
            "fs/read_text_file",
            "fs/write_text_file",
            "fs/read_text_file",
            "fs/read_text_file",
            "fs/write_text_file"
        ]
    );
    client.close().await;
}
