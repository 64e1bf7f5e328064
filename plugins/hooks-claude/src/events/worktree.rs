//! WorktreeCreate / WorktreeRemove: the hooks that replace git's worktree
//! for `EnterWorktree` / `ExitWorktree` (the `tools-worktree` built-in),
//! served to that tool as the `worktree-hooks` service
//! (`dsh_plugin_api::services::worktree_hooks`).
//!
//! Recorded (Claude Code 2.1.197, vectors `S231-*`, `S232-*`,
//! `FINDINGS-worktree.md`):
//!
//! - WorktreeCreate fires inside the `EnterWorktree` call (after its
//!   PreToolUse) whenever the session has such a hook, git or not, in the
//!   session's folder, with `{session_id, transcript_path, cwd, prompt_id,
//!   hook_event_name, name}`. Its stdout is the folder (the tool reads and
//!   checks it). Any exit but 0 fails the call with
//!   `WorktreeCreate hook failed: <command>: <stderr>`; exit 0 with no
//!   stdout fails it with Claude Code's "returned no worktree path" text.
//!   A JSON answer is no exception: it is taken as the path. Of several
//!   hooks, the first in config order decides (not recorded).
//! - WorktreeRemove fires inside `ExitWorktree remove` of a worktree a
//!   WorktreeCreate hook made (never of a git-made one, `S230-remove-hook-git-made`),
//!   with the session still in the worktree (`cwd` it), `{..., hook_event_name,
//!   worktree_path}`. Exit 0 counts as removed; any other exit as not
//!   removed (the tool then says it kept the folder); stdout is ignored.
//! - No CwdChanged fires for the tools' moves: the tool announces each
//!   (`moving`), and [`ClaudeBridge::on_cwd_changed`] leaves it out.

use std::sync::Weak;

use dsh_hook_protocol::point::HookRun;
use dsh_plugin_api::SessionRef;
use dsh_plugin_api::services::worktree_hooks::{
    CreateAnswer, CreateRequest, METHOD_CREATE, METHOD_MOVING, METHOD_REMOVE, MovingRequest,
    RemoveAnswer, RemoveRequest,
};
use serde_json::{Value, json};

use super::{head, prompt_id};
use crate::ClaudeBridge;

/// The create event's name.
pub const CREATE: &str = "WorktreeCreate";
/// The remove event's name.
pub const REMOVE: &str = "WorktreeRemove";

/// Claude Code's text for a hook that exited 0 and printed nothing.
pub const NO_PATH: &str = "WorktreeCreate hook failed: hook succeeded but returned no worktree \
    path (command: echo the path to stdout; http/callback: return hookSpecificOutput.worktreePath)";

/// WorktreeCreate's stdin payload.
pub fn create_payload(session: &SessionRef, name: &str) -> Value {
    let mut m = head(session);
    prompt_id(&mut m, session);
    m.insert("hook_event_name".into(), CREATE.into());
    m.insert("name".into(), name.into());
    Value::Object(m)
}

/// WorktreeRemove's stdin payload.
pub fn remove_payload(session: &SessionRef, worktree_path: &str) -> Value {
    let mut m = head(session);
    prompt_id(&mut m, session);
    m.insert("hook_event_name".into(), REMOVE.into());
    m.insert("worktree_path".into(), worktree_path.into());
    Value::Object(m)
}

/// What the first WorktreeCreate run says: the printed folder, or the
/// call's error text.
pub fn created(run: &HookRun) -> Result<String, String> {
    if run.answer.exit_code != Some(0) {
        return Err(format!(
            "WorktreeCreate hook failed: {}: {}",
            run.command,
            run.answer.stderr.trim()
        ));
    }
    let out = run.answer.stdout.trim();
    if out.is_empty() {
        return Err(NO_PATH.into());
    }
    Ok(out.to_string())
}

/// The service's handler, holding the bridge weakly (the bridge holds it).
pub(crate) async fn serve(
    bridge: Weak<ClaudeBridge>,
    method: String,
    args: Value,
) -> Result<Value, String> {
    let bridge = bridge
        .upgrade()
        .ok_or_else(|| "hooks-claude: the bridge is gone".to_string())?;
    let bad = |e: serde_json::Error| format!("hooks-claude: bad {method} request: {e}");
    match method.as_str() {
        METHOD_CREATE => {
            let req: CreateRequest = serde_json::from_value(args).map_err(bad)?;
            let session = bridge.live(&req.session_id)?;
            Ok(json!(bridge.on_worktree_create(&session, &req.name).await?))
        }
        METHOD_REMOVE => {
            let req: RemoveRequest = serde_json::from_value(args).map_err(bad)?;
            let session = bridge.live(&req.session_id)?;
            let answer = bridge
                .on_worktree_remove(&session, &req.worktree_path)
                .await;
            Ok(json!(answer))
        }
        METHOD_MOVING => {
            let req: MovingRequest = serde_json::from_value(args).map_err(bad)?;
            bridge.note_worktree_move(&req.session_id, &req.to);
            Ok(json!({}))
        }
        other => Err(format!(
            "hooks-claude: worktree-hooks has no method `{other}`"
        )),
    }
}

impl ClaudeBridge {
    fn live(&self, session_id: &str) -> Result<SessionRef, String> {
        self.host
            .session(session_id)
            .ok_or_else(|| format!("hooks-claude: no live session `{session_id}`"))
    }

    /// Runs the WorktreeCreate hooks of a session that has them: the
    /// folder they printed, or the call's error text.
    pub async fn on_worktree_create(
        &self,
        session: &SessionRef,
        name: &str,
    ) -> Result<CreateAnswer, String> {
        let session = session.clone();
        if !self.has_hooks(&session, CREATE) {
            return Ok(CreateAnswer {
                handled: false,
                path: None,
            });
        }
        let runs = self
            .fire(CREATE, &session, &[], &create_payload(&session, name))
            .await;
        self.record(&session, CREATE, &runs);
        let Some(first) = runs.first() else {
            return Ok(CreateAnswer {
                handled: false,
                path: None,
            });
        };
        created(first).map(|path| CreateAnswer {
            handled: true,
            path: Some(path),
        })
    }

    /// Runs the WorktreeRemove hooks: removed when there were some and
    /// every one exited 0.
    pub async fn on_worktree_remove(
        &self,
        session: &SessionRef,
        worktree_path: &str,
    ) -> RemoveAnswer {
        if !self.has_hooks(session, REMOVE) {
            return RemoveAnswer { removed: false };
        }
        let runs = self
            .fire(
                REMOVE,
                session,
                &[],
                &remove_payload(session, worktree_path),
            )
            .await;
        self.record(session, REMOVE, &runs);
        let removed = !runs.is_empty() && runs.iter().all(|r| r.answer.exit_code == Some(0));
        RemoveAnswer { removed }
    }

    /// Notes that `session`'s next move, to `to`, is a worktree tool's.
    pub(crate) fn note_worktree_move(&self, session_id: &str, to: &str) {
        if let Ok(mut m) = self.worktree_moves.lock() {
            m.insert(session_id.to_string(), to.to_string());
        }
    }

    /// Whether the move of `session` to `new_cwd` is one a worktree tool
    /// announced (forgetting the announcement either way).
    pub(crate) fn is_worktree_move(&self, session_id: &str, new_cwd: &str) -> bool {
        self.worktree_moves
            .lock()
            .ok()
            .and_then(|mut m| m.remove(session_id))
            .is_some_and(|to| to == new_cwd)
    }
}
