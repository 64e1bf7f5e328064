//! Claude's background `Bash` over the real `dsh` binary: a job still
//! running when the turn is about to end is listed in the Stop hook's
//! `background_tasks`, as Claude Code lists it (recorded
//! `S260-left-running`), and is gone once `dsh prompt` has ended.

use serde_json::json;

use super::compaction::Project;

#[test]
fn a_running_job_is_listed_to_stop_hooks_and_gone_after_the_run() {
    // A short grace: `dsh prompt` waits for the job that long, then
    // kills it (`wind_down`).
    let p = Project::new(&[("Stop", "")], "wind_down_grace_ms: 100\n");
    let run = p.prompt(
        "s1",
        "go",
        json!([
            {"tool_calls": [{"name": "Bash", "arguments": {
                "command": "echo $$ > job.pid; sleep 300",
                "description": "background job", "run_in_background": true}}]},
            {"text": "done"}
        ]),
    );
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    let (stop, _) = p.hook_stdin("Stop", 0);
    let tasks = stop["background_tasks"].as_array().expect("a list");
    assert_eq!(tasks.len(), 1, "{stop}");
    let id = tasks[0]["id"].as_str().unwrap();
    assert!(id.starts_with('b') && id.len() == 9, "{id}");
    assert_eq!(
        tasks[0],
        json!({"id": id, "type": "shell", "status": "running",
            "description": "background job", "command": "echo $$ > job.pid; sleep 300"})
    );
    // Killed when the session ended.
    let pid: i32 = std::fs::read_to_string(p.proj().join("job.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, a)| a.trim_start().chars().next())
            })
            .flatten();
        if matches!(state, None | Some('Z')) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "job {pid} still running"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
