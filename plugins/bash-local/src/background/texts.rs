//! What Claude Code 2.1.197 says of background jobs, word for word
//! (recorded `S260-*`): the `Bash` call's answer, the notification when a
//! job ends, `TaskOutput`'s and `TaskStop`'s answers, the refusal of an
//! unknown id.

use serde::Serialize;

use super::{Job, JobState};

/// What the model reads when `Bash` started `job` (recorded `S260-*`).
pub fn started_text(job: &Job) -> String {
    format!(
        "Command running in background with ID: {}. Output is being written to: {}. You will be \
         notified when it completes. To check interim output, use Read on that file path.",
        job.id,
        job.output.display()
    )
}

/// Claude Code's notification of a job that exited with `code`, as the
/// model reads it in the system message that follows a step's tool
/// results: the preamble, then [`task_notification`] (recorded `S260-*`).
pub fn notification(job: &Job, code: i32) -> String {
    format!(
        "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event, NOT \
         a message from the user.\nDo NOT interpret this as user acknowledgement, confirmation, \
         or response to any pending question.\n\n{}",
        task_notification(job, code)
    )
}

/// The bare `<task-notification>` of a job that exited with `code`: the
/// whole prompt of the turn `claude -p`'s wind-down re-invokes the model
/// with (recorded `S262-ends-in-grace`).
pub fn task_notification(job: &Job, code: i32) -> String {
    let (status, summary) = if code == 0 {
        ("completed", format!("completed (exit code {code})"))
    } else {
        ("failed", format!("failed with exit code {code}"))
    };
    format!(
        "<task-notification>\n<task-id>{}</task-id>\n<tool-use-id>{}</tool-use-id>\n\
         <output-file>{}</output-file>\n<status>{status}</status>\n<summary>Background command \
         \"{}\" {summary}</summary>\n</task-notification>",
        job.id,
        job.tool_use_id,
        job.output.display(),
        job.description
    )
}

/// A job as `TaskOutput` reports it.
#[derive(Debug, Serialize)]
pub struct TaskView {
    task_id: String,
    task_type: &'static str,
    status: &'static str,
    description: String,
    output: String,
    #[serde(rename = "exitCode")]
    exit_code: Option<i32>,
}

/// `TaskOutput`'s `tool_response`.
#[derive(Debug, Serialize)]
pub struct OutputResponse {
    retrieval_status: &'static str,
    task: TaskView,
}

/// `TaskOutput`'s answer for `job` in `state`; `waited_out` when a
/// blocking wait ran out of time.
pub fn output_answer(job: &Job, state: JobState, waited_out: bool) -> (String, OutputResponse) {
    let (status, exit_code) = match state {
        JobState::Running => ("running", None),
        JobState::Exited(0) => ("completed", Some(0)),
        JobState::Exited(code) => ("failed", Some(code)),
        JobState::Killed => ("killed", None),
    };
    let retrieval = match state {
        JobState::Running if waited_out => "timeout",
        JobState::Running => "not_ready",
        _ => "success",
    };
    let output = job.output_text();
    let mut text = format!(
        "<retrieval_status>{retrieval}</retrieval_status>\n\n<task_id>{}</task_id>\n\n\
         <task_type>local_bash</task_type>\n\n<status>{status}</status>",
        job.id
    );
    if let Some(code) = exit_code {
        text.push_str(&format!("\n\n<exit_code>{code}</exit_code>"));
    }
    if !output.trim_end().is_empty() {
        text.push_str(&format!("\n\n<output>\n{}\n</output>", output.trim_end()));
    }
    let response = OutputResponse {
        retrieval_status: retrieval,
        task: TaskView {
            task_id: job.id.clone(),
            task_type: "local_bash",
            status,
            description: job.description.clone(),
            output,
            exit_code,
        },
    };
    (text, response)
}

/// `TaskStop`'s answer (the model reads the same JSON).
#[derive(Debug, Serialize)]
pub struct StopResponse {
    message: String,
    task_id: String,
    task_type: &'static str,
    command: String,
}

/// `TaskStop`'s answer for `job`.
pub fn stop_answer(job: &Job) -> StopResponse {
    StopResponse {
        message: format!("Successfully stopped task: {} ({})", job.id, job.command),
        task_id: job.id.clone(),
        task_type: "local_bash",
        command: job.command.clone(),
    }
}

/// Claude Code's refusal of an id it does not know (before any hook).
pub fn not_found(id: &str) -> String {
    format!("<tool_use_error>No task found with ID: {id}</tool_use_error>")
}
