//! The Claude-shaped `Bash` tool.
//!
//! Input `{command, timeout?, description?, run_in_background?}`; the
//! command runs as `<shell> -c <command>` in the session's cwd through
//! [`crate::runner`], with stdin closed and stdout and stderr on one pipe
//! ([`crate::runner::run_merged`]), as Claude Code runs its commands. The
//! result mirrors Claude Code: the model reads the output as the command
//! interleaved its two streams (blank edge lines stripped), prefixed with
//! `Exit code N` and flagged `is_error` when the command failed; the
//! structured response is Claude's `tool_response`
//! `{stdout, stderr, interrupted, isImage, noOutputExpected}`, all of the
//! output in `stdout` and `stderr` empty (recorded S237)
//! (`noOutputExpected` as Claude Code guesses it: [`crate::silent`]).
//!
//! Long output, timeouts and background commands are Claude Code's
//! (recorded `S186-*`, `S260-*`, `S261-*`):
//! - `tool_response.stdout` keeps the **head** of a long output (its first
//!   `max_output_bytes` UTF-16 units); a successful command that printed
//!   more is saved whole beside the session log and the model reads
//!   Claude Code's `<persisted-output>` preview; a long failure's text
//!   keeps its first and last 5,000 units ([`crate::large`]); an output
//!   whose start was dropped before dsh read it (an editor's terminal
//!   keeps its last `max_output_bytes`) is shown behind
//!   `[... earlier output truncated ...]`;
//! - a timeout is an error result `Exit code 143\nCommand timed out after
//!   ...` with `interrupted: true` when the command printed nothing; one
//!   that printed something goes on in the background instead, as a job
//!   ([`crate::background`]); an abort is `Command was aborted ...`, also
//!   `interrupted: true`;
//! - `run_in_background: true` starts the command as a job and answers at
//!   once (`Command running in background with ID: …`,
//!   `tool_response.backgroundTaskId`); `TaskOutput` and `TaskStop`
//!   ([`crate::task_tools`]) read and stop it, and the model is told when
//!   it ends.
//!
//! Still different (`FINDINGS-bgbash.md`): a job that ends after its
//! session's turn is told at the next prompt, where `claude -p` waits up to
//! 5 s for it and opens a turn for its notification (S262); a job still
//! running when the session ends is killed at once (Claude Code waits 5 s).
//!
//! As in Claude Code, the working directory persists: the command runs
//! wrapped so the shell reports where it ended ([`crate::cwd`]), and a
//! call that ends elsewhere moves its session there (the host's
//! `set_session_cwd`, which fires `agent/cwd-changed`). Environment
//! changes (`export`) do not persist, except what the session's shell
//! prelude sets ([`crate::prelude`]: Claude Code's `CLAUDE_ENV_FILE`),
//! which runs in the same shell before every command.
//!
//! When the session's editor offers terminals, the same script runs there
//! instead ([`crate::terminal`]): the editor shows it live and the model
//! reads the terminal's output in this result's shape. With a
//! `sandbox_mode` ([`crate::sandbox`]) the command always runs locally, in
//! the sandbox; a sandbox that cannot be built runs nothing and the result
//! says why.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_plugin_api::ffi::AbortSignalBox;
use dsh_plugin_api::{Host, RString, ToolCall, ToolResult, ToolSpec};
use serde_json::{Value, json};
use tracing::Instrument as _;

use crate::Config;
use crate::background::{Foreground, Jobs, Meta, Start};
use crate::cwd::CwdFile;
use crate::runner::{self, RunAnswer, RunRequest};
use crate::terminal::{EditorRun, EditorTerminal};

/// The tool's name.
pub const TOOL_NAME: &str = "Bash";
/// Timeout when the model gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Longest timeout the model may ask for; longer asks are clamped.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// How much of a command's output is kept in memory (its end, past
/// this): what a long output's saved file can hold.
pub const CAPTURE_BYTES: u64 = 32 * 1024 * 1024;
/// The line before an output whose start was dropped before dsh could
/// read it.
pub const HEAD_LOST: &str = "[... earlier output truncated ...]";
/// What the model reads when a successful command printed nothing.
pub const NO_OUTPUT: &str = "(Bash completed with no output)";

/// Why the tool's arguments were refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BashArgsError {
    /// The arguments are not a JSON object (or not JSON at all).
    #[error("Bash: arguments must be a JSON object with a `command` string{0}")]
    NotObject(String),
    /// `command` is absent.
    #[error("Bash: missing required parameter `command`")]
    MissingCommand,
    /// A parameter has the wrong type or value.
    #[error("Bash: parameter `{key}` must be {expected}")]
    Invalid {
        /// The parameter.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
}

/// Validated tool input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashInput {
    /// The shell command.
    pub command: String,
    /// Effective timeout, defaulted and clamped.
    pub timeout_ms: u64,
    /// The model's 5-10 word summary, if given.
    pub description: Option<String>,
    /// `run_in_background: true` ([`crate::background`]).
    pub background: bool,
}

/// Parses and validates the tool's arguments.
pub fn parse_input(args: &Value) -> Result<BashInput, BashArgsError> {
    // Values in strings count, as in Claude Code (S239-*).
    let args = &dsh_plugin_api::sdk::claude_input::coerced(TOOL_NAME, args);
    let obj = args
        .as_object()
        .ok_or_else(|| BashArgsError::NotObject(String::new()))?;
    let command = match obj.get("command") {
        None | Some(Value::Null) => return Err(BashArgsError::MissingCommand),
        Some(Value::String(c)) => c.clone(),
        Some(_) => {
            return Err(BashArgsError::Invalid {
                key: "command",
                expected: "a string",
            });
        }
    };
    let timeout_ms = match obj.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT_MS,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(ms) if ms.is_finite() && ms >= 1.0 => {
                (ms.round().min(MAX_TIMEOUT_MS as f64)) as u64
            }
            _ => {
                return Err(BashArgsError::Invalid {
                    key: "timeout",
                    expected: "a positive number of milliseconds",
                });
            }
        },
        Some(_) => {
            return Err(BashArgsError::Invalid {
                key: "timeout",
                expected: "a positive number of milliseconds",
            });
        }
    };
    let description = match obj.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => {
            return Err(BashArgsError::Invalid {
                key: "description",
                expected: "a string",
            });
        }
    };
    let background = match obj.get("run_in_background") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(BashArgsError::Invalid {
                key: "run_in_background",
                expected: "a boolean",
            });
        }
    };
    Ok(BashInput {
        command,
        timeout_ms,
        description,
        background,
    })
}

/// The input Claude Code 2.1.197's `Bash` takes, as it checks a call
/// before any hook hears of it ([`dsh_plugin_api::sdk::claude_input`];
/// `claude_input::builtin_lenient`'s properties also in strings, S239-*).
pub fn claude_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "number"},
            "description": {"type": "string"},
            "run_in_background": {"type": "boolean"},
            "dangerouslyDisableSandbox": {"type": "boolean"}
        },
        "required": ["command"],
        "additionalProperties": false
    })
}

/// The tool as advertised to the model.
pub fn spec() -> ToolSpec {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to execute"},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_MS,
                "description": format!("Optional timeout in milliseconds (max {MAX_TIMEOUT_MS}, default {DEFAULT_TIMEOUT_MS})")},
            "description": {"type": "string",
                "description": "Clear, concise description of what this command does in 5-10 words"},
            "run_in_background": {"type": "boolean",
                "description": "Set to true to run this command in the background."}
        },
        "required": ["command"],
        "additionalProperties": false
    });
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Executes a bash command in the session's working directory and returns its \
            output. Each call starts a fresh shell in the directory the previous call ended in \
            (a `cd` persists; exported variables do not). \
            Long output is saved to a file and previewed. A non-zero exit is reported as `Exit code N` \
            followed by the output."
            .into(),
        input_schema: schema.to_string().into(),
        aliases: Default::default(),
    }
}

/// Runs the tool body: parse, run in `cwd`, format. `cancel` resolving
/// kills the command's process group and ends the call as interrupted.
pub async fn bash_tool(
    args: &Value,
    cwd: &Path,
    config: &Config,
    cancel: impl Future<Output = ()>,
) -> ToolResult {
    bash_run(args, cwd, config, cancel).await.result
}

/// What one call produced: the result, and the directory the shell ended
/// in when that is not where it started.
#[derive(Debug)]
pub struct BashRun {
    /// The tool result.
    pub result: ToolResult,
    /// The shell's final physical directory, when it moved.
    pub moved_to: Option<PathBuf>,
}

/// [`bash_tool`], also reporting where the shell ended.
pub async fn bash_run(
    args: &Value,
    cwd: &Path,
    config: &Config,
    cancel: impl Future<Output = ()>,
) -> BashRun {
    bash_run_with_prelude(args, cwd, config, None, cancel).await
}

/// [`bash_run`] with the session's shell prelude ([`crate::prelude`]) run
/// in the same shell before the command.
pub async fn bash_run_with_prelude(
    args: &Value,
    cwd: &Path,
    config: &Config,
    prelude: Option<&str>,
    cancel: impl Future<Output = ()>,
) -> BashRun {
    bash_run_in(args, cwd, config, prelude, &[], None, None, cancel).await
}

/// The tool body: in the session's editor when it offers terminals
/// (`editor`, [`crate::terminal`]), else locally; `session_env` (plugin API
/// 1.9: Claude Code's settings `env`) is set for the command either way.
#[allow(clippy::too_many_arguments)]
async fn bash_run_in(
    args: &Value,
    cwd: &Path,
    config: &Config,
    prelude: Option<&str>,
    session_env: &[(String, String)],
    editor: Option<EditorTerminal<'_>>,
    jobs: Option<SessionJobs<'_>>,
    cancel: impl Future<Output = ()>,
) -> BashRun {
    let input = match parse_input(args) {
        Ok(input) => input,
        Err(e) => {
            return BashRun {
                result: ToolResult::error(e.to_string()),
                moved_to: None,
            };
        }
    };
    if input.background {
        // Only a session's call ([`run_call`]) has jobs to keep it in.
        return BashRun {
            result: ToolResult::error(
                "Bash: run_in_background needs a session: the command was not run",
            ),
            moved_to: None,
        };
    }
    let sandbox = match config.sandbox() {
        Ok(sandbox) => sandbox,
        Err(e) => {
            return BashRun {
                result: ToolResult::error(format!("Bash: {e}")),
                moved_to: None,
            };
        }
    };
    // A session's long outputs are saved beside its log (S261-*).
    let spill = jobs.as_ref().and_then(|j| {
        crate::large::results_dir(
            Path::new(j.call.session.log_path.as_str()),
            j.call.session.session_id.as_str(),
        )
    });
    // Without the side channel the command still runs, in place.
    let cwd_file = CwdFile::create(sandbox.is_some())
        .inspect_err(|e| tracing::warn!("Bash: no temp file for the final cwd: {e}"))
        .ok();
    let script = match &cwd_file {
        Some(file) => crate::cwd::wrap(&input.command, file.path()),
        None => input.command.clone(),
    };
    let script = crate::prelude::prefix(prelude, script);
    tracing::debug!(command = %input.command, description = ?input.description, "Bash: running");
    tokio::pin!(cancel);
    // An editor's terminal is outside dsh's reach: a sandboxed command
    // always runs here.
    let ran = match editor.as_ref().filter(|_| sandbox.is_none()) {
        Some(editor) => {
            editor
                .run(
                    &script,
                    cwd,
                    input.timeout_ms,
                    config,
                    session_env,
                    cancel.as_mut(),
                )
                .await
        }
        None => EditorRun::Local,
    };
    let outcome = match ran {
        EditorRun::Ran(outcome) => outcome,
        EditorRun::Local => {
            let program = vec![config.shell.clone(), "-c".to_string(), script];
            // The mask folders stay until the run has ended (`masks`).
            let (program, _masks) = match &sandbox {
                Some(sandbox) => {
                    let rw: Vec<&Path> = cwd_file.iter().map(|f| f.path()).collect();
                    let tmpdir = crate::sandbox::command_tmpdir(None);
                    match sandbox.wrap(program, cwd, &rw, tmpdir.as_deref()) {
                        Ok(w) => (w.argv, Some(w.masks)),
                        Err(e) => {
                            return BashRun {
                                result: ToolResult::error(format!(
                                    "{}{e}{}",
                                    crate::sandbox::MESSAGE_PREFIX,
                                    crate::sandbox::NOT_RUN_SUFFIX
                                )),
                                moved_to: None,
                            };
                        }
                    }
                }
                None => (program, None),
            };
            let mut spec = RunRequest::new(program, cwd);
            spec.timeout_ms = Some(input.timeout_ms);
            // Long output is saved whole (S261-*): keep that much of it.
            spec.max_output_bytes = CAPTURE_BYTES;
            spec.allow_env = config.env_allow.clone();
            spec.env.extend(session_env.iter().cloned());
            // One pipe for both streams, as Claude Code runs its commands:
            // the model reads them interleaved (recorded S237). In a
            // session, a command that times out after printing something
            // goes on in the background (recorded S260-timeout-output).
            match jobs.filter(|_| sandbox.is_none()) {
                Some(SessionJobs { host, jobs, call }) => {
                    let meta = Meta {
                        session_id: call.session.session_id.to_string(),
                        tool_use_id: call.call_id.to_string(),
                        cwd: cwd.to_path_buf(),
                        command: input.command.clone(),
                        description: input.description.clone(),
                    };
                    match jobs.run_foreground(host, meta, spec, cancel).await {
                        Foreground::Done(answer) => answer,
                        Foreground::Detached(job) => {
                            return BashRun {
                                result: started_result(&job, &input.command),
                                moved_to: None,
                            };
                        }
                    }
                }
                None => runner::run_merged(spec, cancel).await,
            }
        }
    };
    let moved_to = cwd_file
        .and_then(|file| file.read())
        .filter(|dir| crate::cwd::moved(cwd, dir));
    if let Some(message) = sandbox
        .as_ref()
        .and_then(|_| crate::sandbox::refusal(&outcome))
    {
        return BashRun {
            result: ToolResult::error(message),
            moved_to: None,
        };
    }
    BashRun {
        result: to_tool_result(
            &outcome,
            &input.command,
            input.timeout_ms,
            config.max_output_bytes,
            spill.as_deref(),
        ),
        moved_to,
    }
}

/// The tool body as the host calls it: in the session's editor's terminal
/// when it offers one ([`crate::terminal`]), else locally; a call whose
/// shell ended in another directory moves its session there through `host`.
pub async fn run_call(
    call: &ToolCall,
    config: &Config,
    host: &Host,
    jobs: &Arc<Jobs>,
    signal: AbortSignalBox,
) -> ToolResult {
    let span = tracing::info_span!("tool", tool = TOOL_NAME, call_id = %call.call_id, session = %call.session.session_id);
    let args: Value = match serde_json::from_str(&call.arguments) {
        Ok(args) => args,
        Err(e) => {
            return ToolResult::error(
                BashArgsError::NotObject(format!(" (not JSON: {e})")).to_string(),
            );
        }
    };
    if let Some(result) = recovered(call, config, host) {
        return result;
    }
    if let Ok(input) = parse_input(&args)
        && input.background
    {
        return start_background(call, &input, config, host, jobs);
    }
    let prelude = host.session_shell_prelude(call.session.session_id.as_str());
    let session_env = host.session_env(call.session.session_id.as_str());
    let editor = EditorTerminal {
        host,
        session_id: call.session.session_id.as_str(),
        call_id: call.call_id.as_str(),
    };
    let run = bash_run_in(
        &args,
        Path::new(call.session.cwd.as_str()),
        config,
        prelude.as_deref(),
        &session_env,
        Some(editor),
        Some(SessionJobs { host, jobs, call }),
        abort_future(signal),
    )
    .instrument(span)
    .await;
    let Some(dir) = &run.moved_to else {
        return run.result;
    };
    let session = call.session.session_id.as_str();
    let dir = dir.to_string_lossy();
    let moved = match host.set_session_shell_cwd(session, &dir) {
        // A host older than 1.10 keeps no root: the move is made.
        Err(e) if e.contains("plugin API 1.10") => {
            host.set_session_cwd(session, &dir).map(|()| None)
        }
        moved => moved,
    };
    match moved {
        Ok(None) => run.result,
        Ok(Some(root)) => with_reset_note(run.result, &root),
        Err(e) => {
            tracing::warn!(
                session,
                "Bash: the session stays in {}: {e}",
                call.session.cwd
            );
            run.result
        }
    }
}

/// `run_in_background: true`: the command starts as a job of its own
/// ([`crate::background`]) and the call answers at once, in Claude Code's
/// words, with the job's id in `tool_response.backgroundTaskId` (S260-*).
fn start_background(
    call: &ToolCall,
    input: &BashInput,
    config: &Config,
    host: &Host,
    jobs: &Arc<Jobs>,
) -> ToolResult {
    match config.sandbox() {
        Ok(None) => {}
        Ok(Some(_)) => {
            return ToolResult::error(
                "Bash: run_in_background is not available with a sandbox_mode; run the command \
                 in the foreground",
            );
        }
        Err(e) => return ToolResult::error(format!("Bash: {e}")),
    }
    let session = call.session.session_id.as_str();
    let prelude = host.session_shell_prelude(session);
    let session_env = host.session_env(session);
    let start = Start {
        session_id: session,
        tool_use_id: call.call_id.as_str(),
        cwd: Path::new(call.session.cwd.as_str()),
        command: &input.command,
        description: input.description.as_deref(),
        prelude: prelude.as_deref(),
        session_env: &session_env,
    };
    match jobs.start(host, config, start) {
        Ok(job) => started_result(&job, &input.command),
        Err(e) => ToolResult::error(e.to_string()),
    }
}

/// What the model and hooks read of a command now running in the
/// background: Claude Code's text, `tool_response.backgroundTaskId`.
fn started_result(job: &crate::background::Job, command: &str) -> ToolResult {
    let silent = crate::silent::no_output_expected(command);
    let mut response: Value =
        serde_json::from_str(&response("", "", false, silent)).unwrap_or_else(|_| json!({}));
    response["backgroundTaskId"] = json!(job.id);
    ToolResult::text(crate::background::started_text(job)).with_structured(response.to_string())
}

/// What a session's call hands the tool body so that a command can go on
/// in the background.
struct SessionJobs<'a> {
    host: &'a Host,
    jobs: &'a Arc<Jobs>,
    call: &'a ToolCall,
}

/// When the session's folder was deleted under it: the session moved to its
/// root, or to `$HOME` when the root is gone too, and Claude Code's
/// refusal, the command not run (recorded `S236-deleted-under-session-keep`).
fn recovered(call: &ToolCall, config: &Config, host: &Host) -> Option<ToolResult> {
    let cwd = call.session.cwd.as_str();
    if Path::new(cwd).is_dir() {
        return None;
    }
    let session = call.session.session_id.as_str();
    let home = match &config.home {
        Some(home) => home.to_string_lossy().into_owned(),
        None => std::env::var("HOME").unwrap_or_else(|_| "/".into()),
    };
    let now = match host.set_session_shell_cwd(session, &home) {
        Ok(None) => home,
        Ok(Some(root)) => root,
        Err(e) if e.contains("plugin API 1.10") => match host.set_session_cwd(session, &home) {
            Ok(()) => home,
            Err(e) => return Some(ToolResult::error(format!("Bash: {e}"))),
        },
        Err(e) => return Some(ToolResult::error(format!("Bash: {e}"))),
    };
    Some(ToolResult::error(format!(
        "Working directory \"{cwd}\" was deleted; shell cwd recovered to \"{now}\". Re-issue your \
         command (it will run from the recovered directory)."
    )))
}

/// A result whose `cd` left the session's root, which the host undid:
/// Claude Code's note after stderr (`<stderr trimmed>\nShell cwd was reset
/// to <root>`), which the model reads after the output (recorded `S238-*`).
fn with_reset_note(result: ToolResult, root: &str) -> ToolResult {
    let note = format!("Shell cwd was reset to {root}");
    let text = match result.text_content() {
        text if text.is_empty() || text == NO_OUTPUT => note.clone(),
        text => format!("{text}\n{note}"),
    };
    let structured = result
        .structured
        .as_ref()
        .into_option()
        .and_then(|s| serde_json::from_str::<Value>(s.as_str()).ok())
        .map(|mut response| {
            let stderr = response["stderr"].as_str().unwrap_or_default().trim();
            response["stderr"] = format!("{stderr}\n{note}").into();
            response.to_string()
        });
    let mut noted = if result.is_error {
        ToolResult::error(text)
    } else {
        ToolResult::text(text)
    };
    noted.structured = structured.map(RString::from).into();
    noted
}

/// Resolves once `signal` has fired (at once if it already has).
pub async fn abort_future(signal: AbortSignalBox) {
    if !signal.is_aborted() {
        signal.aborted().await;
    }
}

/// Formats a run the way Claude Code reports a Bash call: the head of a
/// long output, saved whole in `spill` (the session's tool-results
/// folder) when the command succeeded ([`crate::large`], recorded
/// `S261-*`).
pub fn to_tool_result(
    outcome: &RunAnswer,
    command: &str,
    timeout_ms: u64,
    max_output_bytes: usize,
    spill: Option<&Path>,
) -> ToolResult {
    let silent = crate::silent::no_output_expected(command);
    if let Some(error) = &outcome.spawn_error {
        return ToolResult::error(format!("Failed to start the command: {error}"))
            .with_structured(response("", error, false, silent));
    }
    let stdout = strip_blank_edges(&outcome.stdout);
    let stderr = strip_blank_edges(&outcome.stderr);
    let mut whole = join_nonempty(&stdout, &stderr);
    // What kept the output (an editor's terminal at `max_output_bytes`, the
    // runner past `CAPTURE_BYTES`) dropped its start: there is no whole
    // output to save, and the model is told the start is missing.
    if outcome.stdout_truncated || outcome.stderr_truncated {
        whole = format!("{HEAD_LOST}\n{whole}");
    }
    let head_lost = outcome.stdout_truncated || outcome.stderr_truncated;
    let head = crate::large::utf16_prefix(&whole, max_output_bytes);
    let failure = if outcome.interrupted {
        Some("Command was aborted before completion".to_string())
    } else if outcome.timed_out {
        // Claude Code's words, the shell's exit status after its SIGTERM
        // first (recorded S186-timeout).
        Some(format!(
            "Exit code 143\nCommand timed out after {}",
            human_ms(timeout_ms)
        ))
    } else {
        match (outcome.exit_code, outcome.signal) {
            (Some(0), _) => None,
            (Some(code), _) => Some(format!("Exit code {code}")),
            // The shell itself died of a signal: report it as a shell would.
            (None, Some(signal)) => Some(format!("Exit code {}", 128 + signal)),
            (None, None) => Some("Command ended without an exit status".to_string()),
        }
    };
    let structured = response(
        crate::large::utf16_prefix(&stdout, max_output_bytes),
        crate::large::utf16_prefix(&stderr, max_output_bytes),
        outcome.interrupted || outcome.timed_out,
        silent,
    );
    match failure {
        None if whole.is_empty() => ToolResult::text(NO_OUTPUT).with_structured(structured),
        None if head.len() < whole.len() && !head_lost => {
            persisted(outcome, head, spill, structured)
        }
        None => ToolResult::text(whole).with_structured(structured),
        Some(header) if head.is_empty() => ToolResult::error(header).with_structured(structured),
        Some(header) => ToolResult::error(crate::large::cap_error(&format!("{header}\n{head}")))
            .with_structured(structured),
    }
}

/// A successful output past the cap: saved whole in `spill`, the model
/// reads Claude Code's preview of it; without a folder (or when it cannot
/// be written) the head.
fn persisted(
    outcome: &RunAnswer,
    head: &str,
    spill: Option<&Path>,
    structured: String,
) -> ToolResult {
    let output = if outcome.stderr.is_empty() {
        outcome.stdout.clone()
    } else {
        format!("{}\n{}", outcome.stdout, outcome.stderr)
    };
    let saved = spill.map(|dir| crate::large::save(dir, &output));
    match saved {
        Some(Ok(path)) => {
            let mut response: Value = serde_json::from_str(&structured).unwrap_or_default();
            response["persistedOutputPath"] = json!(path.display().to_string());
            response["persistedOutputSize"] = json!(output.len());
            ToolResult::text(crate::large::persisted(&output, &path))
                .with_structured(response.to_string())
        }
        Some(Err(e)) => {
            tracing::warn!("Bash: cannot save the whole output; the model reads its head: {e}");
            ToolResult::text(head).with_structured(structured)
        }
        None => ToolResult::text(head).with_structured(structured),
    }
}

fn response(stdout: &str, stderr: &str, interrupted: bool, silent: bool) -> String {
    json!({"stdout": stdout, "stderr": stderr, "interrupted": interrupted,
        "isImage": false, "noOutputExpected": silent})
    .to_string()
}

/// Drops leading and trailing lines that are empty or whitespace only (as
/// Claude Code does: `echo hi` reports `"hi"`), keeping inner indentation.
pub fn strip_blank_edges(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(first), Some(last)) => lines[first..=last].join("\n"),
        _ => String::new(),
    }
}

fn join_nonempty(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (false, false) => format!("{a}\n{b}"),
        (false, true) => a.to_string(),
        _ => b.to_string(),
    }
}

fn human_ms(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_blank_edge_lines_only() {
        assert_eq!(strip_blank_edges("hi\n"), "hi");
        assert_eq!(strip_blank_edges("\n  \n  a\n\tb  \n\n"), "  a\n\tb  ");
        assert_eq!(strip_blank_edges("\n \n"), "");
    }

    #[test]
    fn timeout_defaults_and_clamps() {
        let t =
            |v: Value| parse_input(&json!({"command": "x", "timeout": v})).map(|i| i.timeout_ms);
        assert_eq!(t(Value::Null), Ok(DEFAULT_TIMEOUT_MS));
        assert_eq!(t(json!(1500)), Ok(1500));
        assert_eq!(t(json!(10_000_000)), Ok(MAX_TIMEOUT_MS));
        assert!(t(json!(0)).is_err());
        assert!(t(json!("5s")).is_err());
    }

    #[test]
    fn spec_schema_is_a_json_object_schema() {
        let spec = spec();
        let schema: Value = serde_json::from_str(&spec.input_schema).expect("json");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["command"]));
        assert_eq!(spec.name.as_str(), "Bash");
    }
}
