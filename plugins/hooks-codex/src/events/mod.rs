//! One module per Codex hook event, each holding its payload builder and
//! its outcome mapping; this module holds what they share: selecting and
//! starting the hooks of one point and reading a hook's answer.
//!
//! How a point runs (vector notes): every matching hook through
//! `/bin/bash -c <command>` (not a login shell, whatever `$SHELL` says:
//! vectors `C20-hook-shell-probe`, `-sh`) in the session's cwd, stdin =
//! compact JSON with no trailing newline, the environment inherited
//! unchanged (Codex adds nothing: `env_added` is empty in every vector) and
//! nothing in the command substituted. Only exit 0 output is read; exit 2
//! blocks only with a non-empty stderr, which is trimmed.

pub mod compact;
pub mod interrupt;
pub mod model_request;
pub mod post_tool_use;
pub mod pre_tool_use;
pub mod session_end;
pub mod session_start;
pub mod stop;
pub mod subagent;
pub mod user_prompt_submit;

use dsh_hook_protocol::Dialect;
use dsh_hook_protocol::codec::{self, Stdout};
use dsh_hook_protocol::point::{self, HookRun, Invocation, Outcome};
use dsh_hook_protocol::runner::hook_request;
use dsh_plugin_api::SessionRef;
use serde_json::{Map, Value};

use crate::CodexBridge;

/// The stdin Codex writes: compact JSON, no newline.
pub fn stdin_bytes(payload: &Value) -> String {
    payload.to_string()
}

/// `transcript_path`: the session log, `null` when there is none.
pub(crate) fn transcript(session: &SessionRef) -> Value {
    if session.log_path.is_empty() {
        Value::Null
    } else {
        session.log_path.as_str().into()
    }
}

/// The head shared by turn-scoped payloads: `session_id`, `turn_id`,
/// `transcript_path`, `cwd`, `hook_event_name`, `model`, `permission_mode`.
pub(crate) fn turn_head(
    session: &SessionRef,
    cwd: &str,
    event: &str,
    model: &str,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("session_id".into(), root_session(session).into());
    m.insert("turn_id".into(), session.turn_id.as_str().into());
    // A sub-agent's events name the main session and carry the agent
    // after `turn_id` (vector `C180-child-tool`).
    agent_fields(&mut m, session);
    m.insert("transcript_path".into(), transcript(session));
    m.insert("cwd".into(), cwd.into());
    m.insert("hook_event_name".into(), event.into());
    m.insert("model".into(), model.into());
    m.insert("permission_mode".into(), permission_mode(session).into());
    m
}

/// `session_id` as Codex gives it: a sub-agent's events carry the main
/// session's id.
pub(crate) fn root_session(session: &SessionRef) -> &str {
    session
        .parent_session_id
        .as_ref()
        .map(|p| p.as_str())
        .into_option()
        .unwrap_or(session.session_id.as_str())
}

/// For a sub-agent's session: `agent_id` (its own id) and `agent_type`.
pub(crate) fn agent_fields(m: &mut Map<String, Value>, session: &SessionRef) {
    if session.parent_session_id.is_some() {
        m.insert("agent_id".into(), session.session_id.as_str().into());
        let agent_type = session
            .agent_type
            .as_ref()
            .map(|t| t.as_str())
            .into_option()
            .unwrap_or("default");
        m.insert("agent_type".into(), agent_type.into());
    }
}

/// The session's permission mode, `default` when the host has none.
pub(crate) fn permission_mode(session: &SessionRef) -> &str {
    if session.permission_mode.is_empty() {
        "default"
    } else {
        session.permission_mode.as_str()
    }
}

/// One hook's answer, read the Codex way.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// Exit 2 with a non-empty stderr (or an output past the limit, whose
    /// stderr names the error): its trimmed text.
    pub block: Option<String>,
    /// An exit-0 JSON object.
    pub json: Option<Map<String, Value>>,
    /// Plain exit-0 stdout, trimmed.
    pub plain: Option<String>,
}

/// Reads `run`'s answer, marking the run when it is unusable.
pub(crate) fn read(run: &mut HookRun) -> Reading {
    let (exit, stdout) = codec::read_output(&run.answer, Dialect::Codex);
    let mut reading = Reading::default();
    if exit.blocks() {
        match run.answer.stderr.trim() {
            "" => {
                run.outcome = Outcome::NonBlockingError;
                run.detail =
                    Some("exited with code 2 but did not write a blocking reason to stderr".into());
            }
            reason => reading.block = Some(reason.to_string()),
        }
        return reading;
    }
    match stdout {
        Stdout::Json(map) => reading.json = Some(map),
        Stdout::Plain(text) => reading.plain = Some(text),
        Stdout::Invalid(_) => invalid(run, "hook returned invalid JSON output".into()),
        Stdout::Empty => {}
    }
    reading
}

/// Marks a run whose output Codex rejects (it fails open).
pub(crate) fn invalid(run: &mut HookRun, why: String) {
    run.outcome = Outcome::NonBlockingError;
    run.detail = Some(why);
}

impl CodexBridge {
    /// Whether any hook is configured for `event`.
    pub(crate) fn has_hooks(&self, session: &SessionRef, event: &str) -> bool {
        self.hooks_for(session)
            .hooks
            .iter()
            .any(|h| h.hook.event == event)
    }

    /// The program that runs a hook: `/bin/bash -c`, as Codex 0.171.0 runs
    /// them (recorded: `argv0=/bin/bash`, `$-` = `hBc`, `login_shell` off,
    /// with `SHELL=/bin/bash` and with `SHELL=/bin/sh`).
    pub const SHELL: [&'static str; 2] = ["/bin/bash", "-c"];

    /// Runs every hook of `event` whose matcher selects `subject` (all of
    /// them for `None`), concurrently; runs come back in config order.
    pub(crate) async fn fire(
        &self,
        event: &str,
        session: &SessionRef,
        subject: Option<&str>,
        payload: &Value,
    ) -> Vec<HookRun> {
        let stdin = stdin_bytes(payload);
        let resolution = self.hooks_for(session);
        let selected = resolution.hooks.iter().enumerate().filter(|(_, h)| {
            h.hook.event == event && subject.is_none_or(|s| h.hook.matcher.matches(s))
        });
        // `async: true`: started, never waited for, its answer changes
        // nothing (vector `C205-async-true`: its deny does not gate).
        let (background, waited): (Vec<_>, Vec<_>) = selected.partition(|(_, h)| {
            h.hook.transport.is_none() && h.hook.handler.get("async") == Some(&Value::Bool(true))
        });
        // Codex's shell with the bridge's variables, in the session's folder.
        let request_for = |command: &str, timeout_s| {
            self.env.iter().fold(
                hook_request(
                    vec![Self::SHELL[0].into(), Self::SHELL[1].into(), command.into()],
                    &session.cwd,
                    stdin.clone(),
                    timeout_s,
                ),
                |req, (k, v)| req.with_env(k, v),
            )
        };
        for (_, h) in background {
            let request = request_for(&h.hook.command, h.hook.timeout_s);
            if let Err(e) = self.host.spawn(request).await {
                self.host.warn(&format!(
                    "hooks-codex: an async {event} hook did not start: {e}"
                ));
            }
        }
        let invocations: Vec<Invocation> = waited
            .into_iter()
            .map(|(index, h)| Invocation {
                index,
                command: h.hook.command.clone(),
                matcher: h.hook.matcher_raw.clone(),
                source: h.hook.source.clone(),
                request: Ok(request_for(&h.hook.command, h.hook.timeout_s)),
                transport: h.hook.transport.clone(),
            })
            .collect();
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
            Dialect::Codex,
            event,
            runs,
        );
    }

    /// Injects context, warning (not failing) when the host refuses.
    pub(crate) fn inject(&self, session_id: &str, text: &str) {
        if let Err(e) = self.host.inject_context(session_id, text) {
            self.host.warn(&format!(
                "hooks-codex: context for session {session_id} dropped: {e}"
            ));
        }
    }
}
