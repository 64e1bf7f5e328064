//! `tools-worktree`: the built-in plugin offering Claude Code's
//! `EnterWorktree` and `ExitWorktree` (recorded from Claude Code 2.1.197,
//! vectors `S230-*` to `S235-*`, `tools/recorder-scenarios/FINDINGS-worktree.md`).
//!
//! `EnterWorktree {name?}` makes a git worktree at
//! `<repository>/.claude/worktrees/<name>` on a new branch
//! `worktree-<name>` (a `/` in the name is `+` in both) from HEAD, and
//! moves the session there; `{path}` enters a worktree that is already
//! registered. When the session's Claude hooks have a WorktreeCreate hook,
//! the hook makes the worktree instead of git and prints its folder (the
//! `worktree-hooks` service of `hooks-claude`,
//! `dsh_plugin_api::services::worktree_hooks`). `ExitWorktree {action:
//! keep|remove, discard_changes?}` moves the session back to where it was
//! and, for `remove`, deletes the worktree and its branch (git), or runs
//! the WorktreeRemove hooks (a hook-made worktree; dsh deletes nothing
//! itself then, as Claude Code does not).
//!
//! Refusals Claude Code makes while it checks a call's input (a bad name,
//! a worktree entered already, nothing to exit, changes a removal would
//! lose) are this plugin's `input-check/<tool>` services, so no hook hears
//! of those calls. The session's moves are real cwd moves
//! (`Host::set_session_cwd`): later `Bash` calls and hooks run in the
//! worktree; Claude Code fires no CwdChanged for them, and the Claude
//! bridge is told to leave these moves out (`moving`). State is per
//! session and in memory: a restarted daemon's sessions have no worktree
//! to exit. Opt-in: a manifest that does not list `tools-worktree` offers
//! neither tool, so the tool lists models see (and the recorded vectors)
//! stay as they were.

pub mod args;
pub mod git;
pub mod texts;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::ffi::AbortSignalBox;
use dsh_plugin_api::services::input_check::{self, CheckAnswer, CheckRequest};
use dsh_plugin_api::services::process_runner;
use dsh_plugin_api::services::worktree_hooks::{self as hooks, CreateAnswer, RemoveAnswer};
use dsh_plugin_api::{Host, NoConfig, Plugin, SessionEndInput, ToolCall, ToolResult, ToolSpec};
use serde_json::{Value, json};

use args::Enter;

/// The plugin's manifest name.
pub const PLUGIN: &str = "tools-worktree";
/// The tool that enters a worktree.
pub const ENTER: &str = "EnterWorktree";
/// The tool that leaves it.
pub const EXIT: &str = "ExitWorktree";

/// Who made the worktree a session is in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Made {
    /// Git, from commit `base` (what `remove` counts commits since).
    Git { base: String },
    /// A WorktreeCreate hook.
    Hook,
    /// Nobody here: entered with `path`.
    Entered,
}

/// The worktree a session is in.
#[derive(Debug, Clone)]
struct Active {
    /// Where the session was before it entered.
    original: PathBuf,
    path: PathBuf,
    branch: Option<String>,
    made: Made,
}

/// Each session's worktree.
#[derive(Default)]
struct State(Mutex<HashMap<String, Active>>);

impl State {
    fn get(&self, session: &str) -> Option<Active> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned()
    }

    fn set(&self, session: &str, active: Option<Active>) {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match active {
            Some(a) => m.insert(session.to_string(), a),
            None => m.remove(session),
        };
    }
}

fn spec(name: &str, description: &str, schema: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema.into(),
        aliases: Default::default(),
    }
}

/// `EnterWorktree` as Claude Code advertises it.
pub fn enter_spec() -> ToolSpec {
    spec(
        ENTER,
        include_str!("EnterWorktree.description.txt"),
        include_str!("EnterWorktree.schema.json"),
    )
}

/// `ExitWorktree` as Claude Code advertises it.
pub fn exit_spec() -> ToolSpec {
    spec(
        EXIT,
        include_str!("ExitWorktree.description.txt"),
        include_str!("ExitWorktree.schema.json"),
    )
}

/// `path` with `.` and `..` taken out, without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or(Value::Null)
}

/// The tools' shared parts.
#[derive(Clone)]
struct Tools {
    host: Host,
    state: Arc<State>,
}

impl Tools {
    /// Tells the Claude bridge (when loaded) that this move is a worktree
    /// tool's, then moves the session.
    async fn move_to(&self, session: &str, to: &Path) -> Result<(), String> {
        if self.host.has_service(hooks::SERVICE) {
            let req = hooks::MovingRequest {
                session_id: session.to_string(),
                to: to.to_string_lossy().into_owned(),
            };
            if let Err(e) = self
                .host
                .call_service(hooks::SERVICE, hooks::METHOD_MOVING, &json!(req))
                .await
            {
                tracing::warn!(session, "worktree-hooks moving: {e}");
            }
        }
        self.host
            .set_session_cwd(session, &to.to_string_lossy())
            .map_err(|e| format!("cannot move the session to {}: {e}", to.display()))
    }

    /// The refusal Claude Code gives `tool`'s call while checking its
    /// input, if any.
    async fn check(&self, tool: &str, req: &CheckRequest) -> Option<String> {
        let active = self.state.get(&req.session_id);
        if tool == ENTER {
            return match args::enter(&req.arguments) {
                Err(text) => Some(text),
                Ok(Enter::Create(_)) if active.is_some() => Some(texts::ALREADY_IN.into()),
                Ok(_) => None,
            };
        }
        let exit = match args::exit(&req.arguments) {
            Err(text) => return Some(text),
            Ok(e) => e,
        };
        let Some(active) = active else {
            return Some(texts::NOTHING_TO_EXIT.into());
        };
        if !exit.remove {
            return None;
        }
        if active.made == Made::Entered {
            return Some(texts::not_ours(&active.path, &active.original));
        }
        if exit.discard {
            return None;
        }
        self.unsaved(&active).await
    }

    /// The refusal of a `remove` without `discard_changes` that would lose
    /// work, or of one whose worktree git cannot read.
    async fn unsaved(&self, active: &Active) -> Option<String> {
        let base = match &active.made {
            Made::Git { base } => Some(base.as_str()),
            _ => None,
        };
        match git::changes(&self.host, &active.path, base).await {
            Err(_) => Some(texts::unverifiable(&active.path)),
            Ok((0, 0)) => None,
            Ok((files, commits)) => Some(texts::has_changes(
                files,
                commits,
                active.branch.as_deref().unwrap_or("HEAD"),
            )),
        }
    }

    async fn enter(&self, call: &ToolCall) -> ToolResult {
        let session = call.session.session_id.as_str();
        let cwd = PathBuf::from(call.session.cwd.as_str());
        let input = match args::enter(&arguments(call)) {
            Ok(i) => i,
            Err(text) => return ToolResult::error(text),
        };
        let active = self.state.get(session);
        match input {
            Enter::Path(given) => self.enter_path(session, &cwd, &given, active).await,
            Enter::Create(_) if active.is_some() => ToolResult::error(texts::ALREADY_IN),
            Enter::Create(name) => {
                let name = name.unwrap_or_else(args::random_name);
                match self.by_hook(session, &cwd, &name).await {
                    Some(result) => result,
                    None => self.by_git(session, &cwd, &name).await,
                }
            }
        }
    }

    /// The worktree a WorktreeCreate hook makes; `None`: no such hook.
    async fn by_hook(&self, session: &str, cwd: &Path, name: &str) -> Option<ToolResult> {
        if !self.host.has_service(hooks::SERVICE) {
            return None;
        }
        let req = hooks::CreateRequest {
            session_id: session.to_string(),
            name: name.to_string(),
        };
        let answer = self
            .host
            .call_service(hooks::SERVICE, hooks::METHOD_CREATE, &json!(req))
            .await;
        let printed = match answer.map(serde_json::from_value::<CreateAnswer>) {
            Err(text) => return Some(ToolResult::error(text)),
            Ok(Err(e)) => {
                return Some(ToolResult::error(format!(
                    "{ENTER}: the worktree-hooks service answered badly: {e}"
                )));
            }
            Ok(Ok(CreateAnswer { handled: false, .. })) => return None,
            Ok(Ok(CreateAnswer { path, .. })) => path.unwrap_or_default(),
        };
        // The last line the hooks printed, trimmed (`S231-create-two-lines`,
        // `S231-create-spaces`).
        let line = printed
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .to_string();
        // Claude Code moves into the folder as given (from the session's
        // folder), then resolves it once more from there: a relative folder
        // that exists is looked for inside itself (`S231-create-relative`).
        if line.is_empty() {
            return Some(ToolResult::error(format!(
                "{ENTER}: the worktree-hooks service named no folder"
            )));
        }
        let given = Path::new(&line);
        let first = lexical(&cwd.join(given));
        match std::fs::metadata(&first) {
            Err(_) => return Some(ToolResult::error(texts::hook_path_missing(cwd, &line))),
            Ok(m) if !m.is_dir() => {
                return Some(ToolResult::error(texts::hook_path_not_dir(cwd, &line)));
            }
            Ok(_) => {}
        }
        let path = lexical(&first.join(given));
        if !path.is_dir() {
            return Some(ToolResult::error(texts::hook_path_relative(&path)));
        }
        let active = Active {
            original: cwd.to_path_buf(),
            path: path.clone(),
            branch: None,
            made: Made::Hook,
        };
        Some(
            self.entered(session, active, texts::created(&path, None))
                .await,
        )
    }

    /// The worktree git makes.
    async fn by_git(&self, session: &str, cwd: &Path, name: &str) -> ToolResult {
        let root = match git::git(&self.host, cwd, &["rev-parse", "--show-toplevel"]).await {
            Ok(out) => PathBuf::from(out.trim()),
            Err(git::GitError::Failed(_)) => return ToolResult::error(texts::NOT_GIT),
            Err(e) => return ToolResult::error(e.to_string()),
        };
        let flat = args::flat(name);
        let path = root.join(".claude").join("worktrees").join(&flat);
        let branch = format!("worktree-{flat}");
        let listed = git::worktrees(&self.host, &root).await.unwrap_or_default();
        if let Some(there) = listed.iter().find(|w| w.path == path) {
            // Kept from before (`S235-name-reused`): entered again.
            let base = git::git(&self.host, &path, &["rev-parse", "HEAD"])
                .await
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            let branch = there.branch.clone().unwrap_or(branch);
            let active = Active {
                original: cwd.to_path_buf(),
                path: path.clone(),
                branch: Some(branch.clone()),
                made: Made::Git { base },
            };
            return self
                .entered(session, active, texts::created(&path, Some(&branch)))
                .await;
        }
        let base = match git::git(&self.host, &root, &["rev-parse", "HEAD"]).await {
            Ok(b) => b.trim().to_string(),
            Err(e) => return ToolResult::error(e.to_string()),
        };
        let target = path.to_string_lossy().into_owned();
        if let Err(e) = git::git(
            &self.host,
            &root,
            &["worktree", "add", "-b", &branch, &target],
        )
        .await
        {
            // A folder in the way (`S235-name-dir-exists`), or anything else
            // git refused (`S236-name-git-refuses`).
            return ToolResult::error(if path.exists() {
                texts::cannot_reuse(name, &path, &e.to_string())
            } else {
                texts::create_failed(&e.to_string())
            });
        }
        let active = Active {
            original: cwd.to_path_buf(),
            path: path.clone(),
            branch: Some(branch.clone()),
            made: Made::Git { base },
        };
        self.entered(session, active, texts::created(&path, Some(&branch)))
            .await
    }

    /// `EnterWorktree {path}`: a registered worktree that is not the main
    /// one.
    async fn enter_path(
        &self,
        session: &str,
        cwd: &Path,
        given: &str,
        active: Option<Active>,
    ) -> ToolResult {
        let path = lexical(&cwd.join(given));
        if std::fs::symlink_metadata(&path).is_err() {
            return ToolResult::error(texts::missing_path(given, &path));
        }
        let listed = match git::worktrees(&self.host, cwd).await {
            Ok(l) => l,
            Err(git::GitError::Failed(_)) => return ToolResult::error(texts::NOT_GIT),
            Err(e) => return ToolResult::error(e.to_string()),
        };
        let Some(main) = listed.first() else {
            return ToolResult::error(texts::NOT_GIT);
        };
        if main.path == path {
            return ToolResult::error(texts::main_tree(given));
        }
        let Some(there) = listed.iter().find(|w| w.path == path) else {
            return ToolResult::error(texts::unregistered(given, &main.path));
        };
        let branch = there.branch.clone().unwrap_or_else(|| "HEAD".into());
        // Switching from one worktree to another keeps the way back
        // (`S235-switch`).
        let original = active.map_or_else(|| cwd.to_path_buf(), |a| a.original);
        let active = Active {
            original,
            path: path.clone(),
            branch: Some(branch.clone()),
            made: Made::Entered,
        };
        self.entered(session, active, texts::entered(&path, &branch))
            .await
    }

    /// Moves `session` into `active` and answers with `message`.
    async fn entered(&self, session: &str, active: Active, message: String) -> ToolResult {
        if let Err(e) = self.move_to(session, &active.path).await {
            return ToolResult::error(e);
        }
        let mut response = serde_json::Map::new();
        response.insert(
            "worktreePath".into(),
            active.path.to_string_lossy().as_ref().into(),
        );
        if let Some(b) = &active.branch {
            response.insert("worktreeBranch".into(), b.as_str().into());
        }
        response.insert("message".into(), message.as_str().into());
        self.state.set(session, Some(active));
        ToolResult::text(message).with_structured(Value::Object(response).to_string())
    }

    async fn exit(&self, call: &ToolCall) -> ToolResult {
        let session = call.session.session_id.as_str();
        let exit = match args::exit(&arguments(call)) {
            Ok(e) => e,
            Err(text) => return ToolResult::error(text),
        };
        let Some(active) = self.state.get(session) else {
            return ToolResult::error(texts::NOTHING_TO_EXIT);
        };
        let mut response = serde_json::Map::new();
        response.insert(
            "action".into(),
            if exit.remove { "remove" } else { "keep" }.into(),
        );
        response.insert(
            "originalCwd".into(),
            active.original.to_string_lossy().as_ref().into(),
        );
        response.insert(
            "worktreePath".into(),
            active.path.to_string_lossy().as_ref().into(),
        );
        if let Some(b) = &active.branch {
            response.insert("worktreeBranch".into(), b.as_str().into());
        }
        let message = if exit.remove {
            if active.made == Made::Entered {
                return ToolResult::error(texts::not_ours(&active.path, &active.original));
            }
            if !exit.discard
                && let Some(refusal) = self.unsaved(&active).await
            {
                return ToolResult::error(refusal);
            }
            let (removed, files, commits) = self.remove(session, &active).await;
            response.insert("discardedFiles".into(), files.into());
            response.insert("discardedCommits".into(), commits.into());
            if removed {
                texts::removed(&active.path, files, commits, &active.original)
            } else {
                texts::not_removed(&active.path, &active.original)
            }
        } else {
            texts::kept(&active.path, active.branch.as_deref(), &active.original)
        };
        if let Err(e) = self.move_to(session, &active.original).await {
            return ToolResult::error(e);
        }
        self.state.set(session, None);
        response.insert("message".into(), message.as_str().into());
        ToolResult::text(message).with_structured(Value::Object(response).to_string())
    }

    /// Removes `active`'s worktree (the session still in it, as the
    /// WorktreeRemove hooks see it): whether it is gone, and the files and
    /// commits it had.
    async fn remove(&self, session: &str, active: &Active) -> (bool, u64, u64) {
        match &active.made {
            // Git removes a worktree deleted under the session too
            // (`S236-deleted-under-session`).
            Made::Git { base } => {
                let (files, commits) = git::changes(&self.host, &active.path, Some(base))
                    .await
                    .unwrap_or((0, 0));
                let target = active.path.to_string_lossy().into_owned();
                let removed = git::git(
                    &self.host,
                    &active.original,
                    &["worktree", "remove", "--force", &target],
                )
                .await;
                if let Err(e) = &removed {
                    tracing::warn!(session, "git worktree remove {target}: {e}");
                    return (false, files, commits);
                }
                self.delete_branch(session, active).await;
                (true, files, commits)
            }
            Made::Hook => {
                let req = hooks::RemoveRequest {
                    session_id: session.to_string(),
                    worktree_path: active.path.to_string_lossy().into_owned(),
                };
                let answer = self
                    .host
                    .call_service(hooks::SERVICE, hooks::METHOD_REMOVE, &json!(req))
                    .await
                    .and_then(|v| {
                        serde_json::from_value::<RemoveAnswer>(v).map_err(|e| e.to_string())
                    });
                match answer {
                    Ok(a) => (a.removed, 0, 0),
                    Err(e) => {
                        tracing::warn!(session, "worktree-hooks remove: {e}");
                        (false, 0, 0)
                    }
                }
            }
            Made::Entered => (false, 0, 0),
        }
    }
}

impl Tools {
    /// Deletes the branch git made for `active`'s worktree.
    async fn delete_branch(&self, session: &str, active: &Active) {
        if let Some(branch) = &active.branch
            && let Err(e) = git::git(&self.host, &active.original, &["branch", "-D", branch]).await
        {
            tracing::warn!(session, "git branch -D {branch}: {e}");
        }
    }
}

/// The plugin.
pub struct WorktreeTools {
    state: Arc<State>,
}

impl Plugin for WorktreeTools {
    type Config = NoConfig;
    const NAME: &'static str = PLUGIN;
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Claude Code's EnterWorktree and ExitWorktree (git worktrees, or WorktreeCreate hooks)";
    const REQUIRES: &'static [&'static str] = &[process_runner::SERVICE];

    fn apply(host: &Host, _config: NoConfig) -> Result<Self, String> {
        let state = Arc::new(State::default());
        let tools = Tools {
            host: host.clone(),
            state: state.clone(),
        };
        for (spec, tool) in [(enter_spec(), ENTER), (exit_spec(), EXIT)] {
            let t = tools.clone();
            host.register_tool(
                spec,
                move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                    let t = t.clone();
                    async move {
                        if tool == ENTER {
                            t.enter(&call).await
                        } else {
                            t.exit(&call).await
                        }
                    }
                },
            )?;
            let t = tools.clone();
            host.provide_service(
                &input_check::service_name(tool),
                move |method: String, args: Value| {
                    let t = t.clone();
                    async move {
                        if method != input_check::METHOD_CHECK {
                            return Err(format!("{PLUGIN}: no method `{method}`"));
                        }
                        let req: CheckRequest = serde_json::from_value(args)
                            .map_err(|e| format!("{PLUGIN}: bad check request: {e}"))?;
                        let refusal = t.check(tool, &req).await;
                        Ok(json!(CheckAnswer { refusal }))
                    }
                },
            )?;
        }
        Ok(WorktreeTools { state })
    }

    async fn session_end(self: Arc<Self>, input: RArc<SessionEndInput>) -> Result<(), String> {
        // A closed session's worktree stays on disk, as `claude -p` leaves
        // it; only what this plugin knew of it goes.
        self.state.set(&input.session.session_id, None);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_are_claude_code_s() {
        let enter: Value = serde_json::from_str(&enter_spec().input_schema).unwrap();
        assert_eq!(enter["properties"]["name"]["type"], "string");
        assert_eq!(enter["additionalProperties"], false);
        let exit: Value = serde_json::from_str(&exit_spec().input_schema).unwrap();
        assert_eq!(exit["required"], json!(["action"]));
        assert!(
            enter_spec()
                .description
                .starts_with("Use this tool ONLY when explicitly")
        );
    }

    #[test]
    fn lexical_takes_dots_out() {
        assert_eq!(lexical(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
    }
}
