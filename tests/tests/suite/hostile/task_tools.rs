//! Hostile inputs for the task tools (`tools-tasks`), over the real `dsh
//! prompt`: task ids that are paths, a damaged task file, arguments of the
//! wrong shape, a task folder that is a file. Each is refused or skipped
//! by name, loses nothing, and the turn goes on.

use serde_json::json;

use crate::suite::task_tools::{Site, call, results};

fn no_hooks() -> Site {
    Site::new(|_| json!({}))
}

#[test]
fn task_ids_that_are_paths_reach_nothing_outside_the_list() {
    let site = no_hooks();
    site.prompt("s1", json!([call("TaskList", json!({})), {"text": "ok"}]));
    std::fs::create_dir_all(site.path("state/tasks/s1")).unwrap();
    // Where `../victim` would land from the session's list folder.
    let victim = site.path("state/tasks/victim.json");
    let task = r#"{"id":"victim","subject":"x","description":"y","status":"pending","blocks":[],"blockedBy":[]}"#;
    std::fs::write(&victim, task).unwrap();
    let got = results(&site.prompt(
        "s1",
        json!([
            call("TaskGet", json!({"taskId": "../victim"})),
            call("TaskUpdate", json!({"taskId": "../victim", "status": "deleted"})),
            call("TaskUpdate", json!({"taskId": "/etc/passwd", "subject": "z"})),
            {"text": "ok"}
        ]),
    ));
    // The last request holds the earlier run's result too.
    let texts: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        &texts[texts.len() - 3..],
        ["Task not found", "Task not found", "Task not found"]
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), task);
}

#[test]
fn a_damaged_task_file_is_skipped_and_kept_and_its_id_stays_taken() {
    let site = no_hooks();
    site.prompt("s1", json!([call("TaskList", json!({})), {"text": "ok"}]));
    let list = site.path("state/tasks/s1");
    std::fs::create_dir_all(&list).unwrap();
    std::fs::write(list.join("1.json"), "{not json").unwrap();
    let got = results(&site.prompt(
        "s1",
        json!([
            call("TaskList", json!({})),
            call("TaskGet", json!({"taskId": "1"})),
            call("TaskCreate", json!({"subject": "new", "description": "d"})),
            {"text": "ok"}
        ]),
    ));
    let texts: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
    // The last request holds the earlier run's result too.
    assert_eq!(
        &texts[texts.len() - 3..],
        [
            "No tasks found",
            "Task not found",
            "Task #2 created successfully: new"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(list.join("1.json")).unwrap(),
        "{not json"
    );
}

#[test]
fn arguments_of_the_wrong_shape_are_refused_in_claude_codes_words_and_change_nothing() {
    let site = no_hooks();
    let got = results(&site.prompt(
        "s1",
        json!([
            call("TaskCreate", json!({"subject": 5, "description": "d"})),
            call("TaskCreate", json!({"subject": "s", "owner": "x"})),
            call("TaskUpdate", json!({"taskId": "1", "status": "done"})),
            call("TaskUpdate", json!({"taskId": "1", "addBlocks": "2"})),
            call("TaskList", json!({"all": true})),
            call("TaskList", json!({})),
            {"text": "ok"}
        ]),
    ));
    // Claude Code's input validation (S220-invalid), before any hook.
    let lines = |tool: &str, line: &str| {
        (
            format!(
                "<tool_use_error>InputValidationError: {tool} failed due to the following \
                 issue:\n{line}</tool_use_error>"
            ),
            true,
        )
    };
    assert_eq!(
        got[..2],
        [
            lines(
                "TaskCreate",
                "The parameter `subject` type is expected as `string` but provided as `number`"
            ),
            lines("TaskCreate", "An unexpected parameter `owner` was provided"),
        ]
    );
    assert!(
        got[2].1
            && got[2].0.starts_with(
                "<tool_use_error>InputValidationError: [\n  {\n    \"code\": \"invalid_union\","
            ),
        "{:?}",
        got[2]
    );
    assert_eq!(
        got[3..],
        [
            lines(
                "TaskUpdate",
                "The parameter `addBlocks` type is expected as `array` but provided as `string`"
            ),
            lines("TaskList", "An unexpected parameter `all` was provided"),
            ("No tasks found".to_string(), false),
        ]
    );
}

#[test]
fn a_task_folder_that_is_a_file_fails_the_call_by_path_and_the_turn_goes_on() {
    let site = no_hooks();
    site.prompt("s1", json!([call("TaskList", json!({})), {"text": "ok"}]));
    let tasks = site.path("state/tasks");
    std::fs::write(&tasks, "not a folder").unwrap();
    let got = results(&site.prompt(
        "s1",
        json!([
            call("TaskCreate", json!({"subject": "a", "description": "d"})),
            {"text": "ok"}
        ]),
    ));
    let (text, is_error) = got.last().unwrap();
    assert!(*is_error, "{text}");
    assert!(
        text.contains(&tasks.join("s1").display().to_string()),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&tasks).unwrap(), "not a folder");
}
