//! One module per Claude Code hook event, each holding its payload builder
//! and its outcome mapping; this module holds what they share: selecting
//! and starting the hooks of one point, and reading one hook's answer the
//! way Claude Code does.
//!
//! How a point runs (vector notes): every matching hook through
//! `/bin/sh -c <command>` in the session's cwd, stdin = compact JSON plus one
//! newline, the environment inherited minus every `OTEL_*` variable (vector
//! `S20-env-passthrough`; credentials pass) plus `CLAUDE_PROJECT_DIR`,
//! `CLAUDECODE=1`, `CLAUDE_CODE_SESSION_ID`, the bridge's `env` (Claude
//! Code's identity variables by default: `AI_AGENT`,
//! `CLAUDE_CODE_CHILD_SESSION`, `CLAUDE_CODE_ENTRYPOINT`,
//! `COREPACK_ENABLE_AUTO_PIN`, `NoDefaultCurrentDirectoryInExePath`), and
//! `CLAUDE_EFFORT`, `CLAUDE_ENV_FILE` (Setup, SessionStart, CwdChanged, FileChanged) and plugin folders
//! where Claude Code sets them. Identical command strings on one
//! point run once. Nothing in the command is substituted: the shell expands
//! `${CLAUDE_PROJECT_DIR}`; a non-plugin hook that mentions
//! `${CLAUDE_PLUGIN_ROOT}` is refused without running, as Claude Code does.

pub mod batch;
pub mod compact;
pub mod config_change;
pub mod cwd_changed;
pub mod elicitation;
pub mod file_changed;
pub mod instructions_loaded;
pub mod nested_memory;
pub mod permission_request;
pub mod post_tool_use;
pub mod pre_tool_use;
pub mod session_end;
pub mod session_start;
pub mod setup;
pub mod stop;
pub mod stop_failure;
pub mod subagent;
pub mod tasks;
pub mod tool_input;
pub mod user_prompt_expansion;
pub mod user_prompt_submit;
pub mod worktree;

use dsh_hook_protocol::Dialect;
use dsh_hook_protocol::codec::{self, Exit, Stdout};
use dsh_hook_protocol::point::{self, HookRun, Invocation, Outcome};
use dsh_hook_protocol::runner::hook_request;
use dsh_plugin_api::SessionRef;
use serde_json::{Map, Value};

use crate::options::{self, HandlerOptions};
use crate::output_schema;
use crate::persist::{Kind, Spill};
use crate::{ClaudeBridge, ClaudeHook};

/// Claude Code's own refusal of `${CLAUDE_PLUGIN_ROOT}` outside a plugin
/// (vector `S12-plugin-root-in-settings`).
fn plugin_root_refusal(command: &str) -> String {
    format!(
        "Failed to run: Hook command references ${{CLAUDE_PLUGIN_ROOT}} but the hook is not \
         associated with a plugin. This variable is only available in hooks defined in a \
         plugin's hooks/hooks.json file, not in settings.json. Command: {command}"
    )
}

/// Inherited variables Claude Code removes from its hooks' environment
/// (its subprocess-env builder deletes every name starting so; vector
/// `S20-env-passthrough`: `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES` dropped, nothing else).
pub const REMOVED_ENV_PREFIX: &str = "OTEL_";

/// What makes two hooks of one point the same hook (run once): command,
/// exec-form arguments and `if`.
type DedupKey<'a> = (&'a str, Option<Vec<String>>, Option<String>);

/// The stdin Claude Code writes: compact JSON and one newline.
pub fn stdin_bytes(payload: &Value) -> String {
    // Written straight into bytes: `to_string` goes through `Display` and a
    // formatter adaptor, the same text at about twice the cost.
    let mut bytes = Vec::with_capacity(512);
    match serde_json::to_writer(&mut bytes, payload) {
        Ok(()) => {
            bytes.push(b'\n');
            String::from_utf8(bytes).unwrap_or_else(|_| format!("{payload}\n"))
        }
        Err(_) => format!("{payload}\n"),
    }
}

/// `session_id`, `transcript_path`, `cwd`: the head of every payload.
pub(crate) fn head(session: &SessionRef) -> Map<String, Value> {
    // Room for the fields every event adds (a PreToolUse payload has ten),
    // so the map is not grown and rehashed on the way.
    let mut m = Map::with_capacity(12);
    m.insert("session_id".into(), session.session_id.as_str().into());
    m.insert("transcript_path".into(), session.log_path.as_str().into());
    m.insert("cwd".into(), session.cwd.as_str().into());
    m
}

/// Adds `prompt_id` when the session is inside a prompt's turn.
pub(crate) fn prompt_id(m: &mut Map<String, Value>, session: &SessionRef) {
    if !session.prompt_id.is_empty() {
        m.insert("prompt_id".into(), session.prompt_id.as_str().into());
    }
}

/// `permission_mode`, `default` when the host has none.
pub(crate) fn permission_mode(m: &mut Map<String, Value>, session: &SessionRef) {
    let mode = if session.permission_mode.is_empty() {
        "default"
    } else {
        session.permission_mode.as_str()
    };
    m.insert("permission_mode".into(), mode.into());
}

/// `effort: {level}`, when configured.
pub(crate) fn effort(m: &mut Map<String, Value>, effort: Option<&str>) {
    if let Some(level) = effort {
        m.insert("effort".into(), serde_json::json!({ "level": level }));
    }
}

/// Whether `session` is a subagent's. Claude Code runs no
/// UserPromptSubmit, Stop or SessionEnd hooks for a subagent: its end is
/// SubagentStop, fired in the parent (vector `S1-all-events`).
pub(crate) fn is_subagent(session: &SessionRef) -> bool {
    session.parent_session_id.is_some()
}

/// Claude Code's name for a tool: its subagent tool is `Agent`, which the
/// model may still call by its old name `Task`.
pub fn claude_tool_name(name: &str) -> &str {
    if name == "Task" { "Agent" } else { name }
}

/// Matcher subjects of a tool: its name, plus `Task` for `Agent` so old
/// matchers keep matching.
pub(crate) fn tool_subjects(tool: &str) -> Vec<&str> {
    if tool == "Agent" {
        vec!["Agent", "Task"]
    } else {
        vec![tool]
    }
}

/// One hook's answer, read the Claude Code way.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// Exit 2 (or an output past the limit): the hook blocks; its stderr
    /// is the reason. Not set when its JSON answer blocks by itself.
    pub blocked: bool,
    /// A JSON object answer (any exit code: Claude Code reads one on exit
    /// 1, 2 and 3 alike), shape and event name checked.
    pub json: Option<Map<String, Value>>,
    /// Plain stdout of an exit-0 hook, trimmed.
    pub plain: Option<String>,
    /// Claude Code's text for a JSON answer that does not fit its schema
    /// ([`crate::output_schema`]): nothing of it was read.
    pub rejected: Option<String>,
}

impl Reading {
    /// `hookSpecificOutput.additionalContext`; an empty one is no context
    /// (vector `S277-ups-empty-context`).
    pub fn additional_context(&self) -> Option<&str> {
        self.json
            .as_ref()
            .and_then(|j| codec::specific_str(j, "additionalContext"))
            .filter(|c| !c.is_empty())
    }

    /// `continue: false` and its `stopReason`.
    pub fn stop(&self) -> Option<Option<&str>> {
        self.json.as_ref().and_then(codec::stop_requested)
    }

    /// Top-level `decision`.
    pub fn decision(&self) -> Option<&str> {
        self.json
            .as_ref()
            .and_then(|j| codec::str_field(j, "decision"))
    }

    /// Top-level `reason`.
    pub fn reason(&self) -> Option<&str> {
        self.json
            .as_ref()
            .and_then(|j| codec::str_field(j, "reason"))
    }
}

/// Reads `run`'s answer for `event`, marking the run's outcome and detail
/// when the output is rejected (wrong `hookEventName`).
pub(crate) fn read(run: &mut HookRun, event: &str) -> Reading {
    let exit = Exit::of(&run.answer);
    // Claude Code checks a JSON answer's shape before the exit code: one
    // that does not fit is a non-blocking error even on exit 2
    // ([`crate::output_schema`]).
    let stdout = if exit.output_counts(Dialect::Claude) || exit == Exit::Block {
        Stdout::parse(&run.answer.stdout, Dialect::Claude)
    } else {
        Stdout::Empty
    };
    let mut reading = Reading {
        blocked: exit.blocks(),
        ..Reading::default()
    };
    if let Stdout::Json(map) = &stdout {
        match output_schema::check(map) {
            Ok(output_schema::Shape::Answer) => {}
            Ok(output_schema::Shape::Async) => {
                reading.blocked = false;
                return reading;
            }
            Err(rejection) => {
                run.outcome = Outcome::NonBlockingError;
                run.detail = Some(rejection.detail());
                reading.blocked = false;
                reading.rejected = Some(rejection.text);
                return reading;
            }
        }
    }
    match stdout {
        Stdout::Json(map) => match codec::check_event_name(&map, event) {
            // On exit 2 too the answer is read, and a block it makes itself
            // is the hook's block instead of the stderr one (vectors
            // `S277-pre-exit2-json-deny`, `S277-ups-exit2-json-block`,
            // `S277-pre-exit2-json-context`, `S2-exit2-json-stdout`).
            Ok(()) => {
                if exit == Exit::Block && blocks_itself(&map, event) {
                    reading.blocked = false;
                }
                reading.json = Some(map);
            }
            Err(e) => {
                run.outcome = Outcome::NonBlockingError;
                run.detail = Some(e);
                reading.blocked = false;
            }
        },
        Stdout::Plain(text) if exit == Exit::Success => reading.plain = Some(text),
        _ => {}
    }
    reading
}

/// Whether a JSON answer blocks by itself, as Claude Code reads it:
/// `decision: "block"`, or a PreToolUse `permissionDecision: "deny"`.
fn blocks_itself(output: &Map<String, Value>, event: &str) -> bool {
    codec::str_field(output, "decision") == Some("block")
        || (event == pre_tool_use::EVENT
            && codec::specific_str(output, "permissionDecision") == Some("deny"))
}

/// A fresh id (a hook run, or a batch without a tool use id).
pub(crate) fn fresh_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Whose folder the `CLAUDE_ENV_FILE`s of one firing of `event` are in:
/// the session's, except for SessionStart(resume), whose hooks get a fresh
/// id's folder, one per firing (a loaded session fires it once per load).
///
/// Recorded (`S160-resume`, `S160-compact`): a `claude -p --continue` run
/// gives its SessionStart(resume) hooks files under the new process's own
/// id, a fresh one each run, and then takes the resumed session's id, which
/// the payload already carries. Nothing sources that folder: the resumed
/// run's `Bash` sees what the session's own folder holds (the startup and
/// compact hooks' files of any earlier run), not what its resume hooks
/// wrote; a SessionStart(compact) in that run writes to the session's
/// folder again. So in dsh too the resume hooks' files reach no shell.
fn env_file_owner<'a>(
    event: &str,
    payload: &Value,
    session_id: &'a str,
) -> std::borrow::Cow<'a, str> {
    let resume = event == session_start::EVENT
        && payload.get("source").and_then(Value::as_str) == Some("resume");
    if resume {
        std::borrow::Cow::Owned(fresh_id())
    } else {
        std::borrow::Cow::Borrowed(session_id)
    }
}

/// Counts the JSON answers of one batch, for the names of saved texts.
#[derive(Debug, Default)]
pub(crate) struct JsonCount(usize);

impl JsonCount {
    /// Counts `reading` if it is a JSON answer; the count so far.
    pub(crate) fn count(&mut self, reading: &Reading) -> usize {
        if reading.json.is_some() {
            self.0 += 1;
        }
        self.0
    }
}

/// The plain stdout of `reading`, capped ([`crate::persist`]).
pub(crate) fn capped_plain(spill: &Spill<'_>, reading: &Reading) -> Option<String> {
    let text = reading.plain.as_deref()?;
    Some(spill.cap(text, Kind::Stdout, &fresh_id(), 0))
}

/// The `additionalContext` of `reading`, capped; `nth` from [`JsonCount`].
pub(crate) fn capped_context(spill: &Spill<'_>, reading: &Reading, nth: usize) -> Option<String> {
    let text = reading.additional_context()?;
    Some(spill.cap(text, Kind::AdditionalContext, "", nth))
}

/// The runs' indices in the order Claude Code reads their answers: as they
/// finished (it consumes the hooks of one point as they complete; vectors
/// `S53-*`, whose sleeps fix that order).
pub(crate) fn completion(runs: &[HookRun]) -> Vec<usize> {
    point::completion_order(runs)
}

/// Text blocks Claude Code puts one after another in a message: every one
/// but the last ends with a newline (vectors `S5-block-and-context`,
/// `S53-post-block-plus-context`, `S53-two-pre-contexts`).
pub(crate) fn text_blocks(mut blocks: Vec<String>) -> Vec<String> {
    let last = blocks.len().saturating_sub(1);
    for b in blocks.iter_mut().take(last) {
        b.push('\n');
    }
    blocks
}

/// `[command]: stderr`: how Claude Code quotes a blocking hook's stderr;
/// `No stderr output` for an empty one (vector `S271-exit2-empty`).
pub(crate) fn quoted_stderr(run: &HookRun) -> String {
    let stderr = match run.answer.stderr.as_str() {
        "" => "No stderr output",
        text => text,
    };
    format!("[{}]: {stderr}", run.command)
}

/// A warning per hook file with hooks for `events`, which only a tool
/// `plugin` offers (`feature`) makes fire, for a host that does not offer
/// it: those hooks never run.
pub fn unfired_without(
    hooks: &[crate::ClaudeHook],
    events: &[&str],
    feature: &str,
    plugin: &str,
) -> Vec<dsh_plugin_api::ConfigProblem> {
    let mut by_file: Vec<(String, Vec<&str>)> = Vec::new();
    for h in hooks {
        let Some(event) = events.iter().copied().find(|e| *e == h.hook.event) else {
            continue;
        };
        let source = h.hook.source.clone();
        match by_file.iter_mut().find(|(s, _)| *s == source) {
            Some((_, seen)) if !seen.contains(&event) => seen.push(event),
            Some(_) => {}
            None => by_file.push((source, vec![event])),
        }
    }
    by_file
        .into_iter()
        .map(|(source, events)| {
            dsh_plugin_api::ConfigProblem::warning(
                &source,
                "hooks",
                format!(
                    "dsh does not fire these Claude Code events, their hooks never run: {} \
                     (no {feature}: list the `{plugin}` plugin in the manifest)",
                    events.join(", ")
                ),
            )
        })
        .collect()
}

impl ClaudeBridge {
    /// Whether any hook is configured for `event`.
    pub(crate) fn has_hooks(&self, session: &SessionRef, event: &str) -> bool {
        self.hooks_for(session).has(event)
    }

    /// Runs every hook of `event` whose matcher selects one of `subjects`
    /// (all hooks when `subjects` is empty), concurrently, and returns their
    /// runs in config order. Records are appended by [`Self::record`] once
    /// the caller has read the answers.
    pub(crate) async fn fire(
        &self,
        event: &str,
        session: &SessionRef,
        subjects: &[&str],
        payload: &Value,
    ) -> Vec<HookRun> {
        let resolution = self.hooks_for(session);
        self.fire_resolved(&resolution, event, session, subjects, payload)
            .await
    }

    /// [`Self::fire`] with the session's hooks already in hand (a tool
    /// call resolves them once, not once to ask and again to run).
    pub(crate) async fn fire_resolved(
        &self,
        resolution: &crate::discover::Resolution,
        event: &str,
        session: &SessionRef,
        subjects: &[&str],
        payload: &Value,
    ) -> Vec<HookRun> {
        self.note_prompt(session);
        // A running subagent's own hooks (its tool calls) are told the main
        // session's id, transcript and prompt, and which agent it is
        // (vector `S174-failure-in-subagent`).
        let parent = is_subagent(session)
            .then(|| self.running_subagent(&session.session_id))
            .flatten();
        let rewritten;
        let payload = match &parent {
            Some(info) if payload["session_id"] == session.session_id.as_str() => {
                rewritten = subagent::as_subagents(payload, info);
                &rewritten
            }
            _ => payload,
        };
        let hook_session_id = parent.as_ref().map_or(session.session_id.as_str(), |i| {
            i.parent.session_id.as_str()
        });
        let stdin = stdin_bytes(payload);
        let project_dir = self.project_dir_of(session);
        let with_effort = payload.get("effort").is_some();
        let session_end_ms =
            (event == session_end::EVENT).then(|| self.session_end_budget_ms(&resolution.hooks));
        let mut seen: Vec<DedupKey<'_>> = Vec::new();
        let mut invocations = Vec::new();
        let mut background = Vec::new();
        let mut rewake = Vec::new();
        // Index of each hook that runs (background ones included), for
        // its `CLAUDE_ENV_FILE` name.
        let mut nth = 0;
        let env_owner = env_file_owner(event, payload, &session.session_id);
        for (index, ch) in resolution.hooks.iter().enumerate() {
            let h = &ch.hook;
            if h.event != event || !(subjects.is_empty() || h.matcher.matches_any(subjects)) {
                continue;
            }
            let opts = HandlerOptions::of(&h.handler);
            let key = (h.command.as_str(), opts.args.clone(), opts.if_rule.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            if let Some(rule) = &opts.if_rule {
                // An `if` is a tool rule: without a tool call the hook
                // never runs (vector `S52-if-rules`).
                let tool = payload.get("tool_name").and_then(Value::as_str);
                let input = payload.get("tool_input").unwrap_or(&Value::Null);
                match tool {
                    Some(tool)
                        if options::has_tool(event) && options::rule_matches(rule, tool, input) => {
                    }
                    _ => continue,
                }
            }
            let mentions_root = h.command.contains("${CLAUDE_PLUGIN_ROOT}")
                || opts
                    .args
                    .iter()
                    .flatten()
                    .any(|a| a.contains("${CLAUDE_PLUGIN_ROOT}"));
            let powershell = opts.powershell.then(options::find_powershell);
            let request = if ch.plugin.is_none() && mentions_root {
                Err(plugin_root_refusal(&h.command))
            } else if let Some(None) = powershell {
                Err(options::powershell_missing(&h.command))
            } else {
                let plugin = ch
                    .plugin
                    .as_ref()
                    .map(|d| (d.root.as_str(), d.data.as_str()));
                let program = match (&opts.args, powershell.flatten()) {
                    // Exec form: no shell (vector `S52-args`).
                    (Some(args), _) => std::iter::once(&h.command)
                        .chain(args)
                        .map(|a| options::substitute(a, &project_dir, plugin))
                        .collect(),
                    (None, Some(pwsh)) => vec![
                        pwsh.to_string_lossy().into_owned(),
                        "-NoProfile".into(),
                        "-NonInteractive".into(),
                        "-ExecutionPolicy".into(),
                        "Bypass".into(),
                        "-Command".into(),
                        h.command.clone(),
                    ],
                    (None, None) => vec!["/bin/sh".into(), "-c".into(), h.command.clone()],
                };
                let mut req = hook_request(program, &session.cwd, stdin.clone(), h.timeout_s)
                    .without_env_prefix(REMOVED_ENV_PREFIX);
                // The settings files' `env` is Claude Code's own
                // environment, under what it sets per hook (S191).
                for (k, v) in &resolution.env {
                    req = req.with_env(k, v);
                }
                let mut req = req
                    .with_env("CLAUDE_PROJECT_DIR", &project_dir)
                    .with_env("CLAUDECODE", "1")
                    .with_env("CLAUDE_CODE_SESSION_ID", hook_session_id);
                for (k, v) in &self.env {
                    req = req.with_env(k, v);
                }
                if let (true, Some(level)) = (with_effort, self.effort.as_deref()) {
                    req = req.with_env("CLAUDE_EFFORT", level);
                }
                if matches!(
                    event,
                    "Setup" | "SessionStart" | "CwdChanged" | "FileChanged"
                ) && let Some(file) = self.env_file(&env_owner, event, nth)
                {
                    req = req.with_env("CLAUDE_ENV_FILE", &file);
                }
                if let Some(dirs) = &ch.plugin {
                    req = req
                        .with_env("CLAUDE_PLUGIN_ROOT", &dirs.root)
                        .with_env("CLAUDE_PLUGIN_DATA", &dirs.data);
                }
                if let (Some(ms), false) = (session_end_ms, opts.has_timeout) {
                    req.timeout_ms = Some(ms);
                }
                Ok(req)
            };
            nth += 1;
            let rewakes = opts.rewake
                && (opts.background || self.async_rewake == crate::rewake::AsyncRewake::Background);
            match request {
                Ok(req) if rewakes => rewake.push(crate::rewake::Rewake {
                    request: req,
                    hook_name: match subjects.first() {
                        Some(subject) => format!("{event}:{subject}"),
                        None => event.to_string(),
                    },
                    message: opts.rewake_message.clone(),
                    summary: opts.rewake_summary.clone(),
                }),
                Ok(req) if opts.background => background.push(req),
                request => invocations.push(Invocation {
                    index,
                    command: h.command.clone(),
                    matcher: h.matcher_raw.clone(),
                    source: h.source.clone(),
                    request,
                    transport: h.transport.clone(),
                }),
            }
        }
        // Started, never waited for; their answers change nothing
        // (vector `S52-async-deny`).
        for req in background {
            if let Err(e) = self.host.spawn(req).await {
                self.host.warn(&format!(
                    "hooks-claude: an async {event} hook did not start: {e}"
                ));
            }
        }
        // Backgrounded too; an exit 2 reaches the model later. Without a
        // runtime to run them on, they run as `async` hooks.
        for hook in rewake {
            if let Err(hook) = crate::rewake::start(&self.host, &session.session_id, hook)
                && let Err(e) = self.host.spawn(hook.request).await
            {
                self.host.warn(&format!(
                    "hooks-claude: an asyncRewake {event} hook did not start: {e}"
                ));
            }
        }
        if invocations.is_empty() {
            return Vec::new();
        }
        point::run_all(self.host.as_ref(), invocations).await
    }

    /// Appends the `hook/*` records of a point.
    pub(crate) fn record(&self, session: &SessionRef, event: &str, runs: &[HookRun]) {
        point::record(
            self.host.as_ref(),
            &session.session_id,
            Dialect::Claude,
            event,
            runs,
        );
    }

    /// Where the long texts of one batch of hooks are saved: `batch_id` is
    /// the tool use id of a tool event, else a fresh id ([`fresh_id`]).
    pub(crate) fn spill<'a>(
        &self,
        session_id: &'a str,
        log_path: &str,
        batch_id: &'a str,
    ) -> Spill<'a> {
        let dir = match &self.hook_outputs_dir {
            Some(dir) => dir.clone(),
            None => crate::persist::dir_beside(log_path, &self.fallback_outputs_dir),
        };
        Spill {
            dir,
            session_id,
            batch_id,
        }
    }

    /// `CLAUDE_ENV_FILE` of the `nth` (0-based) SessionStart, CwdChanged or
    /// FileChanged hook (`S184-file-changed`): `<session_env_dir>/<owner>/<event lowercased>-hook-<nth>.sh`,
    /// as Claude Code names it under `~/.claude/session-env` (`owner`: see
    /// [`env_file_owner`]). The folder is made (0700) so the hook can write
    /// the file; `None` (no variable) when the id is not a plain file name.
    fn env_file(&self, owner: &str, event: &str, nth: usize) -> Option<String> {
        let dir = self.env_dir(owner)?;
        use std::os::unix::fs::DirBuilderExt as _;
        if let Err(e) = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
        {
            self.host.warn(&format!(
                "hooks-claude: cannot make {} for CLAUDE_ENV_FILE: {e}",
                dir.display()
            ));
        }
        Some(
            dir.join(format!("{}-hook-{nth}.sh", event.to_ascii_lowercase()))
                .to_string_lossy()
                .into_owned(),
        )
    }

    /// What a SessionEnd hook without a `timeout` of its own gets, in ms:
    /// `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS` when set, else the
    /// largest SessionEnd `timeout`, at least 1.5 s and at most 60 s, as
    /// Claude Code (vector `S52-sessionend-timeout`).
    fn session_end_budget_ms(&self, hooks: &[ClaudeHook]) -> u64 {
        let set = std::env::var("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|ms| *ms > 0);
        set.unwrap_or_else(|| {
            let largest = hooks
                .iter()
                .filter(|h| h.hook.event == session_end::EVENT)
                .filter(|h| HandlerOptions::of(&h.hook.handler).has_timeout)
                .map(|h| h.hook.timeout_s.saturating_mul(1000))
                .max()
                .unwrap_or(0);
            largest.clamp(1_500, 60_000)
        })
    }

    /// The session's `CLAUDE_ENV_FILE` folder; `None` when the session id
    /// is not a plain file name.
    pub(crate) fn env_dir(&self, session_id: &str) -> Option<std::path::PathBuf> {
        if matches!(session_id, "" | "." | "..") || session_id.contains(['/', '\0']) {
            return None;
        }
        Some(self.session_env_dir.join(session_id))
    }

    /// Rebuilds the session's `CLAUDE_ENV_FILE` script
    /// ([`crate::session_env`]) and hands it to the host as the bridge's
    /// shell prelude, so the session's next `Bash` commands run it.
    pub(crate) fn refresh_shell_prelude(&self, session: &SessionRef) {
        if is_subagent(session) {
            // A subagent's shell runs its root session's script.
            return;
        }
        let Some(dir) = self.env_dir(&session.session_id) else {
            return;
        };
        let launch = std::env::var_os("CLAUDE_ENV_FILE").map(std::path::PathBuf::from);
        let script = crate::session_env::build_reporting(&dir, launch.as_deref(), |file, why| {
            self.host.warn(&format!(
                "hooks-claude: CLAUDE_ENV_FILE {} is left out of session {}'s script: {why}",
                file.display(),
                session.session_id
            ));
        });
        if let Err(e) = self.host.set_shell_prelude(&session.session_id, &script)
            && !script.is_empty()
        {
            self.host.warn(&format!(
                "hooks-claude: the CLAUDE_ENV_FILE script of session {} is not run: {e}",
                session.session_id
            ));
        }
        // The settings files' `env` reaches the `Bash` tool's commands as
        // Claude Code's own environment reaches them (`S191-*`).
        let env = self.hooks_for(session).env.clone();
        if let Err(e) = self.host.set_session_env(&session.session_id, &env)
            && !env.is_empty()
        {
            self.host.warn(&format!(
                "hooks-claude: the settings files' env does not reach session {}'s shell tool: {e}",
                session.session_id
            ));
        }
    }

    /// Empties the session's CwdChanged hook files before those hooks run
    /// again, as Claude Code does.
    pub(crate) fn clear_cwd_env_files(&self, session: &SessionRef) {
        let Some(dir) = self.env_dir(&session.session_id) else {
            return;
        };
        if let Err(e) = crate::session_env::clear_cwd_files(&dir) {
            self.host.warn(&format!(
                "hooks-claude: cannot empty the CwdChanged env files in {}: {e}",
                dir.display()
            ));
        }
    }

    /// Injects context, logging (not failing) when the host refuses.
    pub(crate) fn inject(&self, session_id: &str, text: &str) {
        if let Err(e) = self.host.inject_context(session_id, text) {
            self.host.warn(&format!(
                "hooks-claude: context for session {session_id} dropped: {e}"
            ));
        }
    }

    /// Injects system-role context (Claude Code's system message: the
    /// SessionStart and UserPromptSubmit hooks' context), logging (not
    /// failing) when the host refuses.
    pub(crate) fn inject_system(&self, session_id: &str, text: &str) {
        if let Err(e) = self.host.inject_system_context(session_id, text) {
            self.host.warn(&format!(
                "hooks-claude: system context for session {session_id} dropped: {e}"
            ));
        }
    }

    /// Halts the session's turn (`continue: false`).
    pub(crate) fn halt(&self, session_id: &str, reason: &str) {
        if let Err(e) = self.host.halt_turn(session_id, reason) {
            self.host.warn(&format!(
                "hooks-claude: cannot halt the turn of {session_id}: {e}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_resume_firing_gets_a_fresh_env_file_folder() {
        let p = |source: &str| serde_json::json!({"session_id": "s1", "source": source});
        for source in ["startup", "compact", "clear"] {
            assert_eq!(env_file_owner(session_start::EVENT, &p(source), "s1"), "s1");
        }
        assert_eq!(env_file_owner("CwdChanged", &p("resume"), "s1"), "s1");
        let first = env_file_owner(session_start::EVENT, &p("resume"), "s1");
        let second = env_file_owner(session_start::EVENT, &p("resume"), "s1");
        assert!(uuid::Uuid::parse_str(&first).is_ok(), "{first}");
        assert_ne!(first, "s1");
        assert_ne!(first, second, "one fresh id per firing");
    }
}
