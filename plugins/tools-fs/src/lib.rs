//! `tools-fs`: the built-in plugin registering Claude-shaped file tools.
//!
//! - [`read`] — `Read {file_path, offset?, limit?}`: numbered lines, an
//!   image block for an image ([`image`], resized as Claude Code does by
//!   [`resize`]), a first page over the token cap
//!   ([`token_cap`]);
//! - [`write`] — `Write {file_path, content}`: whole-file write, creating
//!   parent directories;
//! - [`edit`] — `Edit {file_path, old_string, new_string, replace_all?}`:
//!   exact, unique-unless-`replace_all` string replacement;
//! - [`glob`] — `Glob {pattern, path?}`: file names, oldest first;
//! - [`grep`] — `Grep {pattern, path?, glob?, output_mode?, …}`: ripgrep's
//!   search, shaped as Claude Code shapes it ([`grep_output`]);
//! - [`notebook_edit`] — `NotebookEdit {notebook_path, cell_id?, new_source,
//!   cell_type?, edit_mode?}`: one cell of a Jupyter notebook (which
//!   `Read` shows as its cells: [`notebook`]).
//!
//! When the session's editor offers its files (the `editor-fs` service,
//! [`editor`]), the tools read and write through it; otherwise the disk.
//! A `Read` of a file the session read unchanged with the same window
//! answers that it is unchanged ([`seen`]). Relative paths resolve against
//! the session's cwd. Every failure is an
//! `is_error` result whose text is an [`FsToolError`]; `structured` holds
//! a Claude-like `tool_response` (each module documents its shape). Each
//! tool body is a plain async function (`read_tool`, `write_tool`,
//! `edit_tool`) over sync cores run on the blocking pool; the plugin
//! wiring below is thin.

pub mod args;
pub mod claude_input;
pub mod edit;
mod editor;
pub mod error;
pub mod glob;
pub mod grep;
pub mod grep_output;
pub mod image;
pub mod notebook;
pub mod notebook_edit;
pub mod patch;
pub mod read;
mod read_rules;
pub mod resize;
pub mod result_cap;
pub mod search_path;
pub mod seen;
pub mod token_cap;
pub mod write;

use std::path::Path;
use std::sync::Arc;

use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::ffi::AbortSignalBox;
use dsh_plugin_api::services::input_check;
use dsh_plugin_api::{Host, Plugin, PluginModuleRef, ToolCall, ToolResult, plugin_module};
use serde::{Deserialize, Serialize};
use tracing::Instrument as _;

pub use edit::edit_tool;
pub use error::FsToolError;
pub use read::read_tool;
pub use write::write_tool;

/// `tools-fs` config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Largest file `Read` returns whole (no offset/limit given); bigger
    /// files must be read in parts.
    pub max_read_bytes: u64,
    /// `Read`'s token cap (Claude Code's 25,000, or its
    /// `CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS`): a whole-file read over
    /// it becomes its first page, a partial one is refused
    /// ([`token_cap`]).
    pub max_read_tokens: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_read_bytes: 256 * 1024,
            max_read_tokens: token_cap::DEFAULT_MAX_READ_TOKENS,
        }
    }
}

/// The plugin.
pub struct ToolsFs;

/// Which tool a registered body runs.
#[derive(Clone, Copy)]
enum FsTool {
    Read,
    Write,
    Edit,
    Glob,
    Grep,
    NotebookEdit,
}

impl Plugin for ToolsFs {
    type Config = Config;
    const NAME: &'static str = "tools-fs";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn apply(host: &Host, config: Config) -> Result<Self, String> {
        let config = Arc::new(config);
        let log = Arc::new(seen::ReadLog::default());
        for (spec, tool) in [
            (read::spec(), FsTool::Read),
            (write::spec(), FsTool::Write),
            (edit::spec(), FsTool::Edit),
            (glob::spec(), FsTool::Glob),
            (grep::spec(), FsTool::Grep),
            (notebook_edit::spec(), FsTool::NotebookEdit),
        ] {
            // Claude Code's refusals, before any hook hears of the call.
            let name = spec.name.to_string();
            let check_log = log.clone();
            let check_host = host.clone();
            host.provide_service(
                &input_check::service_name(&name),
                move |method: String, args: serde_json::Value| {
                    let (name, log, host) = (name.clone(), check_log.clone(), check_host.clone());
                    async move {
                        if method != input_check::METHOD_CHECK {
                            return Err(format!("tools-fs: no method `{method}`"));
                        }
                        let req: input_check::CheckRequest = serde_json::from_value(args)
                            .map_err(|e| format!("tools-fs: bad check request: {e}"))?;
                        let held = match name.as_str() {
                            "Edit" | "Write" => claude_input::held(&host, &req).await,
                            _ => None,
                        };
                        let refusal = claude_input::refusal(&name, &req, &log, held);
                        Ok(serde_json::json!(input_check::CheckAnswer { refusal }))
                    }
                },
            )?;
            let config = config.clone();
            let log = log.clone();
            let tool_host = host.clone();
            host.register_tool(
                spec,
                move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                    // File operations are short and not interruptible midway:
                    // the abort signal is not consulted.
                    let config = config.clone();
                    let log = log.clone();
                    let host = tool_host.clone();
                    async move { run_call(tool, &call, &config, &log, &host).await }
                },
            )?;
        }
        Ok(ToolsFs)
    }
}

async fn run_call(
    tool: FsTool,
    call: &ToolCall,
    config: &Config,
    log: &seen::ReadLog,
    host: &Host,
) -> ToolResult {
    let name = match tool {
        FsTool::Read => read::TOOL_NAME,
        FsTool::Write => write::TOOL_NAME,
        FsTool::Edit => edit::TOOL_NAME,
        FsTool::Glob => glob::TOOL_NAME,
        FsTool::Grep => grep::TOOL_NAME,
        FsTool::NotebookEdit => notebook_edit::TOOL_NAME,
    };
    let span = tracing::info_span!("tool", tool = name, call_id = %call.call_id, session = %call.session.session_id);
    let args = match args::parse_json(name, &call.arguments) {
        Ok(args) => claude_input::coerced(name, args),
        Err(e) => return ToolResult::error(e.to_string()),
    };
    let cwd = Path::new(call.session.cwd.as_str());
    // The session's editor, when it offers its files (`editor-fs`).
    let editor = editor::Editor {
        host,
        session_id: call.session.session_id.as_str(),
    };
    let session = call.session.session_id.as_str();
    let rules = read_rules::ReadRules {
        host,
        session_id: session,
    };
    let known = match tool {
        FsTool::NotebookEdit => notebook_edit::path(&args, cwd),
        _ => args::Args::new(name, &args)
            .and_then(|a| a.file_path(cwd))
            .ok(),
    };
    if matches!(tool, FsTool::Write | FsTool::Edit | FsTool::NotebookEdit)
        && let Some(path) = &known
    {
        // Written or edited: the next Read reads again.
        log.forget(session, path);
    }
    let body = async {
        match tool {
            FsTool::Read => {
                let seen = read::Seen { log, session };
                let result = read::read_via(&args, cwd, config, Some(&editor), Some(seen)).await;
                let result = read::with_path_as_given(result, &args);
                // Claude Code follows a resized image with a note saying
                // how to map coordinates back (after the step's results).
                if let Some(note) = image::resize_note(&result)
                    && let Err(e) = host.inject_context(session, note)
                {
                    tracing::warn!(error = %e, "the resized image's note was not added");
                }
                result
            }
            FsTool::Write => write::write_via(&args, cwd, Some(&editor)).await,
            FsTool::Edit => edit::edit_via(&args, cwd, Some(&editor)).await,
            FsTool::Glob => result_cap::capped(
                glob::glob_via(&args, cwd, Some(&rules)).await,
                result_cap::GLOB_MAX_UNITS,
                &call.session.log_path,
                session,
                &call.call_id,
            ),
            FsTool::Grep => result_cap::capped(
                grep::grep_via(&args, cwd, Some(&rules)).await,
                result_cap::GREP_MAX_UNITS,
                &call.session.log_path,
                session,
                &call.call_id,
            ),
            FsTool::NotebookEdit => notebook_edit::notebook_edit_tool(&args, cwd).await,
        }
    };
    let result = body.instrument(span).await;
    // Read, written or edited: the session has the file (what `Edit` and
    // `Write` of an existing file need first).
    if let (false, Some(path)) = (result.is_error, &known) {
        log.know(session, path);
    }
    result
}

/// The plugin's root module, for the host's built-in table.
pub fn module() -> PluginModuleRef {
    plugin_module::<ToolsFs>()
}
