//! Background `Bash` jobs (`run_in_background`) and `TaskOutput` /
//! `TaskStop` in the real loop, with real shells: what the model reads
//! (Claude Code's texts, recorded `S260-*`), the notification after the
//! step in which a job ended, the job forgotten once the model read it,
//! and jobs killed and reaped when their session ends.

use std::path::Path;
use std::time::Duration;

use dsh_host::agent::Prompt;
use dsh_test_support::events::Outcome;
use dsh_test_support::wait::wait_for;
use serde_json::{Value, json};

use super::harness::{AgentHost, text};

/// A listener that makes `<cwd>/go` as a blocking `TaskOutput` call is
/// about to run: a job waiting for that file ends during that call. And,
/// where `<cwd>/arm` exists, as the turn is about to end (Claude's Stop):
/// makes `<cwd>/go4` and waits until the session has no job running, so a
/// job waiting for that file ends after the turn's last model request.
struct Go(dsh_plugin_api::Host);

impl dsh_plugin_api::Plugin for Go {
    type Config = serde_json::Map<String, Value>;
    const NAME: &'static str = "go";
    const VERSION: &'static str = "0.0.1";

    fn apply(host: &dsh_plugin_api::Host, _config: Self::Config) -> Result<Self, String> {
        Ok(Go(host.clone()))
    }

    async fn turn_continuation(
        self: std::sync::Arc<Self>,
        input: dsh_plugin_api::abi_stable::std_types::RArc<dsh_plugin_api::ContinuationInput>,
        next: dsh_plugin_api::Next<dsh_plugin_api::ContinuationDecision>,
    ) -> Result<dsh_plugin_api::ContinuationDecision, String> {
        let cwd = Path::new(input.session.cwd.as_str());
        let ending = matches!(
            input.default_decision(),
            Some(dsh_plugin_api::ContinuationDecision::Stop)
        );
        if ending && std::fs::remove_file(cwd.join("arm")).is_ok() {
            std::fs::write(cwd.join("go4"), "").unwrap();
            let args =
                json!({"session_id": input.session.session_id.as_str(), "timeout_ms": 30000});
            let left = self
                .0
                .call_service("background-tasks", "wait", &args)
                .await?;
            assert_eq!(left["tasks"], json!([]), "the job did not end");
        }
        next.run().await
    }

    async fn pre_execute(
        self: std::sync::Arc<Self>,
        call: dsh_plugin_api::abi_stable::std_types::RArc<dsh_plugin_api::ToolCall>,
        next: dsh_plugin_api::Next<dsh_plugin_api::PreToolDecision>,
    ) -> Result<dsh_plugin_api::PreToolDecision, String> {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        if call.name.as_str() == "TaskOutput" && args["block"] == true {
            std::fs::write(Path::new(call.session.cwd.as_str()).join("go"), "").unwrap();
        }
        next.run().await
    }
}

/// An agent whose `bash-local` keeps job output under `<root>/bg`, with
/// [`Go`].
struct Bg {
    _dir: tempfile::TempDir,
    host: AgentHost,
}

impl std::ops::Deref for Bg {
    type Target = AgentHost;

    fn deref(&self) -> &AgentHost {
        &self.host
    }
}

impl Bg {
    fn new(script: Value) -> Bg {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("requests.jsonl");
        let model = super::harness::Load::builtin(
            "model",
            "model-scripted",
            json!({"script": script, "record": record}),
        );
        let bash = json!({"background_dir": dir.path().join("bg")});
        let go = super::harness::Load::native::<Go>("go", json!({}));
        let host = AgentHost::with_bash_config(dir.path(), bash, vec![go], model).problem_free();
        Bg { _dir: dir, host }
    }

    async fn run(&self, prompt: &str) -> (std::sync::Arc<dsh_host::agent::Session>, Outcome) {
        let session = self.session().await;
        let outcome = session.prompt(Prompt::user(prompt)).await;
        (session, outcome.into())
    }
}

const WAIT: Duration = Duration::from_secs(30);

fn call(name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": arguments}]})
}

fn bg(command: &str) -> Value {
    call(
        "Bash",
        json!({"command": command, "description": "background job", "run_in_background": true}),
    )
}

/// The tool results and system texts a request carried, in order.
fn tool_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn last_tool_text(request: &Value) -> String {
    tool_texts(request).pop().unwrap_or_default()
}

/// `/proc/<pid>/stat`'s state letter, `None` once the process is gone.
fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    after.trim_start().chars().next()
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_outlives_its_call_and_the_model_is_told_when_it_ends() {
    let h = Bg::new(json!([
        bg("echo MARK_BG_START; while [ ! -e go ]; do sleep 0.01; done; echo MARK_BG_END"),
        call(
            "TaskOutput",
            json!({"task_id": "$BG_ID", "block": false, "timeout": 1000})
        ),
        call("Bash", json!({"command": "echo MARK_BETWEEN"})),
        call(
            "TaskOutput",
            json!({"task_id": "$BG_ID", "block": true, "timeout": 30000})
        ),
        call("Bash", json!({"command": "echo MARK_NEXT"})),
        call(
            "TaskOutput",
            json!({"task_id": "$BG_ID", "block": true, "timeout": 1000})
        ),
        text("done")
    ]));
    let (session, out) = h.run("go").await;
    assert_eq!(out.reason, dsh_host::session::TurnEndReason::Completed);
    let requests = h.requests();
    let started = last_tool_text(&requests[1]);
    let (_, rest) = started
        .split_once("Command running in background with ID: ")
        .unwrap_or_else(|| panic!("{started}"));
    let id: String = rest
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    let file = h
        .root
        .join("bg")
        .join(dsh_bash_local::background::slug(&h.project))
        .join(&session.id)
        .join("tasks")
        .join(format!("{id}.output"));
    assert_eq!(
        started,
        format!(
            "Command running in background with ID: {id}. Output is being written to: {}. You \
             will be notified when it completes. To check interim output, use Read on that file \
             path.",
            file.display()
        )
    );
    // While it runs: what it printed so far.
    let running = last_tool_text(&requests[2]);
    assert!(
        running.starts_with(&format!(
            "<retrieval_status>not_ready</retrieval_status>\n\n<task_id>{id}</task_id>\n\n\
             <task_type>local_bash</task_type>\n\n<status>running</status>"
        )),
        "{running}"
    );
    // Blocking until it ends.
    assert_eq!(
        last_tool_text(&requests[4]),
        format!(
            "<retrieval_status>success</retrieval_status>\n\n<task_id>{id}</task_id>\n\n\
             <task_type>local_bash</task_type>\n\n<status>completed</status>\n\n<exit_code>0\
             </exit_code>\n\n<output>\nMARK_BG_START\nMARK_BG_END\n</output>"
        )
    );
    // The notification reaches the model after the step's results, once.
    let notification = format!(
        "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event, NOT \
         a message from the user.\nDo NOT interpret this as user acknowledgement, confirmation, or \
         response to any pending question.\n\n<task-notification>\n<task-id>{id}</task-id>\n<tool-use-id>call_1_1</tool-use-id>\n\
         <output-file>{}</output-file>\n<status>completed</status>\n<summary>Background command \
         \"background job\" completed (exit code 0)</summary>\n</task-notification>",
        file.display()
    );
    let escaped = json!(notification).to_string();
    let escaped = &escaped[1..escaped.len() - 1];
    let carried: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r["messages"].to_string().contains(escaped))
        .map(|(k, _)| k)
        .collect();
    // It ended during the blocking `TaskOutput` (step 4): told after that
    // step's results, and kept in the history from then on.
    assert_eq!(carried, (4..requests.len()).collect::<Vec<_>>());
    // Once the model was told, the job is forgotten.
    assert_eq!(
        last_tool_text(&requests[6]),
        format!("<tool_use_error>No task found with ID: {id}</tool_use_error>")
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "MARK_BG_START\nMARK_BG_END\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_stop_kills_the_job_and_forgets_it() {
    let h = Bg::new(json!([
        bg("echo $$ > shell.pid; sleep 300"),
        call("TaskStop", json!({"task_id": "$BG_ID"})),
        call(
            "TaskOutput",
            json!({"task_id": "$BG_ID", "block": false, "timeout": 0})
        ),
        call("TaskStop", json!({"task_id": "$BG_ID"})),
        text("done")
    ]));
    let (_session, _out) = h.run("go").await;
    let requests = h.requests();
    let started = last_tool_text(&requests[1]);
    let id: String = started
        .split_once("with ID: ")
        .unwrap()
        .1
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    assert_eq!(
        last_tool_text(&requests[2]),
        json!({"message": format!("Successfully stopped task: {id} (echo $$ > shell.pid; sleep 300)"),
            "task_id": id, "task_type": "local_bash",
            "command": "echo $$ > shell.pid; sleep 300"})
        .to_string()
    );
    let gone = format!("<tool_use_error>No task found with ID: {id}</tool_use_error>");
    assert_eq!(last_tool_text(&requests[3]), gone);
    assert_eq!(last_tool_text(&requests[4]), gone);
    // Killed and reaped by the time TaskStop answered.
    let pid = read_pid(&h.project.join("shell.pid"));
    assert_eq!(
        proc_state(pid),
        None,
        "the stopped shell {pid} is still there"
    );
    // A stopped job sends no notification.
    assert!(
        !requests[4]["messages"]
            .to_string()
            .contains("task-notification")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_job_and_its_children_are_killed_and_reaped_when_the_session_ends() {
    let h = Bg::new(json!([
        bg("echo $$ > shell.pid; sleep 300 & echo $! > child.pid; wait"),
        call(
            "Bash",
            json!({"command": "while [ ! -s child.pid ]; do sleep 0.01; done"})
        ),
        text("done")
    ]));
    let (session, _out) = h.run("go").await;
    let shell = read_pid(&h.project.join("shell.pid"));
    let child = read_pid(&h.project.join("child.pid"));
    // Still running after the turn: a job outlives its call and its turn.
    assert!(
        matches!(proc_state(shell), Some(s) if s != 'Z'),
        "{:?}",
        proc_state(shell)
    );
    assert!(matches!(proc_state(child), Some(s) if s != 'Z'));
    h.agent.close_session(&session.id, "other").await;
    // The shell is this process's child: reaped, no zombie left.
    assert_eq!(proc_state(shell), None, "shell {shell} left behind");
    // The grandchild went with the group (its reaper is not ours).
    wait_for("the job's child to die", WAIT, || {
        matches!(proc_state(child), None | Some('Z'))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_job_is_reported_with_its_exit_code() {
    let h = Bg::new(json!([
        bg("while [ ! -e go ]; do sleep 0.01; done; echo MARK_OUT; echo MARK_ERR >&2; exit 3"),
        call(
            "TaskOutput",
            json!({"task_id": "$BG_ID", "block": true, "timeout": 30000})
        ),
        text("done")
    ]));
    let (_session, _out) = h.run("go").await;
    let requests = h.requests();
    let answer = last_tool_text(&requests[2]);
    assert!(
        answer.contains("<status>failed</status>\n\n<exit_code>3</exit_code>\n\n<output>\nMARK_OUT\nMARK_ERR\n</output>"),
        "{answer}"
    );
    let text = requests[2]["messages"].to_string();
    assert!(
        text.contains("<status>failed</status>\\n<summary>Background command \\\"background job\\\" failed with exit code 3</summary>"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_times_out_after_printing_goes_on_in_the_background() {
    let h = Bg::new(json!([
        call(
            "Bash",
            json!({
            "command": "echo MARK_STARTED; while [ ! -e go ]; do sleep 0.01; done; echo MARK_AFTER",
            "timeout": 1000, "description": "Print, then wait"})
        ),
        call(
            "TaskOutput",
            json!({"task_id": "$BG_ID", "block": true, "timeout": 30000})
        ),
        call("Bash", json!({"command": "sleep 5", "timeout": 1000})),
        text("done")
    ]));
    let (_session, _out) = h.run("go").await;
    let requests = h.requests();
    let started = last_tool_text(&requests[1]);
    assert!(
        started.starts_with("Command running in background with ID: b"),
        "{started}"
    );
    let answer = last_tool_text(&requests[2]);
    assert!(
        answer.contains("<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<output>\nMARK_STARTED\nMARK_AFTER\n</output>"),
        "{answer}"
    );
    let summary =
        "<summary>Background command \\\"Print, then wait\\\" completed (exit code 0)</summary>";
    assert!(requests[2]["messages"].to_string().contains(summary));
    // A command that printed nothing times out as before.
    assert_eq!(
        last_tool_text(&requests[3]),
        "Exit code 143\nCommand timed out after 1s"
    );
}

/// The session's log as JSON values.
fn logged(session: &dsh_host::agent::Session) -> Vec<Value> {
    session
        .events()
        .iter()
        .map(|e| serde_json::to_value(&e.event).unwrap())
        .collect()
}

/// A job that ends while no turn runs in a session that does not wind
/// down (an ACP or daemon session) is told as before: a system message
/// the model reads with the next prompt, no turn of its own. One that ends
/// while the session winds down (`dsh prompt` after its last turn, plugin
/// API 1.11) opens a turn whose one prompt is its bare
/// `<task-notification>`, as `claude -p` re-invokes the model (recorded
/// `S262-ends-in-grace`); one still running when the grace runs out is
/// killed as the session closes (`S260-left-running`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_ending_between_turns_opens_a_turn_only_while_the_session_winds_down() {
    use dsh_host::agent::WindDownEnd;
    use tokio_util::sync::CancellationToken;
    let h = Bg::new(json!([
        bg("until [ -e go1 ]; do sleep 0.01; done"),
        text("first"),
        bg("until [ -e go2 ]; do sleep 0.01; done"),
        text("second"),
        text("third"),
        bg("echo $$ > job3.pid; sleep 300; touch late.txt"),
        text("fourth"),
    ]));
    let (session, out) = h.run("one").await;
    assert_eq!(out.reason, dsh_host::session::TurnEndReason::Completed);
    // Not winding down: the notification is logged as system context.
    let turns = |s: &dsh_host::agent::Session| {
        logged(s)
            .iter()
            .filter(|e| e["type"] == "turn/start")
            .count()
    };
    let before = turns(&session);
    std::fs::write(h.project.join("go1"), "").unwrap();
    wait_for("the first job's notification", WAIT, || {
        logged(&session).iter().any(|e| {
            e["type"] == "context/message"
                && e["role"] == "system"
                && e["content"]
                    .as_str()
                    .is_some_and(|c| c.contains("<task-notification>"))
        })
    })
    .await;
    // Written as a one-shot injection; no model request was made for it.
    assert_eq!(h.requests().len(), 2);
    assert_eq!(turns(&session), before + 1);
    let out = session.prompt(Prompt::user("two")).await;
    assert_eq!(out.reason, dsh_host::session::TurnEndReason::Completed);
    let requests = h.requests();
    let system: Vec<&Value> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system" && m["source"]["plugin"] == "bash-local")
        .collect();
    assert_eq!(system.len(), 1, "{}", requests[2]);
    assert!(
        system[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("[SYSTEM NOTIFICATION - NOT USER INPUT]\n"),
        "{}",
        system[0]
    );
    // Winding down: the second job's end opens a turn.
    let wind = tokio::spawn({
        let session = session.clone();
        async move {
            session
                .wind_down(Duration::from_secs(600), CancellationToken::new())
                .await
        }
    });
    wait_for("the wind-down", WAIT, || session.winds_down()).await;
    std::fs::write(h.project.join("go2"), "").unwrap();
    let wind = dsh_test_support::wait::within("the wind-down's end", WAIT, wind)
        .await
        .unwrap();
    assert_eq!(wind.end, WindDownEnd::Settled);
    assert_eq!(wind.turns.len(), 1);
    assert!(!session.winds_down());
    let requests = h.requests();
    assert_eq!(requests.len(), 5);
    let messages = requests[4]["messages"].as_array().unwrap();
    let last = &messages[messages.len() - 1];
    let notification = last["content"].as_str().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    assert!(last.get("source").is_none(), "{last}");
    assert!(
        notification.starts_with("<task-notification>\n<task-id>b")
            && notification.ends_with(
                "<status>completed</status>\n<summary>Background command \"background job\" \
                 completed (exit code 0)</summary>\n</task-notification>"
            ),
        "{notification}"
    );
    assert_eq!(messages[messages.len() - 2]["content"], "second");
    let opened: Vec<Value> = wind.turns[0]
        .events
        .iter()
        .map(|e| serde_json::to_value(&e.event).unwrap())
        .filter(|e| e["type"] == "user/message")
        .collect();
    assert_eq!(
        opened,
        [json!({"type": "user/message", "content": notification,
            "source": {"kind": "plugin", "plugin": "bash-local"}})]
    );
    // A job the grace does not see end: the wind-down ends `Killed`, and
    // closing the session with its reason kills it.
    let out = session.prompt(Prompt::user("four")).await;
    assert_eq!(out.reason, dsh_host::session::TurnEndReason::Completed);
    let wind = session
        .wind_down(Duration::from_millis(50), CancellationToken::new())
        .await;
    assert!(wind.turns.is_empty());
    let WindDownEnd::Killed { tasks } = &wind.end else {
        panic!("{:?}", wind.end);
    };
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        tasks[0].command,
        "echo $$ > job3.pid; sleep 300; touch late.txt"
    );
    assert_eq!(
        wind.end_reason(),
        dsh_plugin_api::SESSION_END_WIND_DOWN_KILLED
    );
    let pid = read_pid(&h.project.join("job3.pid"));
    h.agent.close_session(&session.id, wind.end_reason()).await;
    assert_eq!(proc_state(pid), None, "job {pid} outlived its session");
    assert!(!h.project.join("late.txt").exists());
}

/// In a headless run (`dsh prompt`), a job that ends after the turn's last
/// model request (here: while the turn decides to end, as during Claude's
/// Stop hooks) is no system message of a turn that is over: the turn with
/// its bare notification follows, as `claude -p` runs it (recorded
/// `S262-ends-during-stop`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_headless_run_a_job_ending_as_the_turn_ends_opens_the_next_turn() {
    use tokio_util::sync::CancellationToken;
    let h = Bg::new(json!([
        bg("until [ -e go4 ]; do sleep 0.01; done"),
        text("first"),
        text("second"),
    ]));
    let session = h.session().await;
    session.run_headless();
    std::fs::write(h.project.join("arm"), "").unwrap();
    let out = session.prompt(Prompt::user("one")).await;
    assert_eq!(out.reason, dsh_host::session::TurnEndReason::Completed);
    assert!(h.project.join("go4").exists());
    let wind = session
        .wind_down(Duration::from_secs(600), CancellationToken::new())
        .await;
    assert_eq!(wind.end, dsh_host::agent::WindDownEnd::Settled);
    assert_eq!(wind.turns.len(), 1, "{:#?}", logged(&session));
    let requests = h.requests();
    assert_eq!(requests.len(), 3);
    // No request carried the system message; the third ends with the
    // bare notification after the first turn's answer.
    for r in &requests {
        assert!(
            !r["messages"].to_string().contains("SYSTEM NOTIFICATION"),
            "{r}"
        );
    }
    let messages = requests[2]["messages"].as_array().unwrap();
    let tail: Vec<&str> = messages[messages.len() - 2..]
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(tail, ["assistant", "user"]);
    assert!(
        messages[messages.len() - 1]["content"]
            .as_str()
            .unwrap()
            .starts_with("<task-notification>\n"),
        "{}",
        requests[2]
    );
    // The first turn's log has no context from it either.
    let first: Outcome = out.into();
    assert!(
        !first.events.iter().any(|e| e["type"] == "context/message"),
        "{:?}",
        first.events
    );
}
