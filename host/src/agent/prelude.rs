//! Shell preludes (plugin API 1.4): script a shell tool runs in the same
//! shell before each command of a session. A plugin sets its own piece
//! (`HostContext::set_session_shell_prelude`); a shell tool reads the whole
//! (`HostContext::session_shell_prelude`): every plugin's piece in plugin id
//! order, joined by a newline. A subagent runs with its root session's
//! prelude, as Claude Code's subagents share their session's
//! `CLAUDE_ENV_FILE` scripts. Kept in memory only: the plugins that set
//! one set it again when a resumed session starts.
//!
//! A session's shell-tool environment (plugin API 1.9) lives beside it and
//! follows the same rules: each plugin's pairs, merged in plugin id order
//! (a later plugin's value for a name wins), the root session's for a
//! subagent.

use super::runtime::Agent;
use super::session::Session;

impl Session {
    /// Sets `plugin`'s piece; empty removes it.
    pub(crate) fn set_shell_prelude(&self, plugin: &str, script: &str) {
        let mut preludes = self.preludes.lock().unwrap_or_else(|p| p.into_inner());
        if script.is_empty() {
            preludes.remove(plugin);
        } else {
            preludes.insert(plugin.to_string(), script.to_string());
        }
    }

    /// Every plugin's piece, in plugin id order.
    fn own_shell_prelude(&self) -> String {
        let preludes = self.preludes.lock().unwrap_or_else(|p| p.into_inner());
        preludes.values().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Sets `plugin`'s environment; empty removes it.
    pub(crate) fn set_session_env(&self, plugin: &str, env: Vec<(String, String)>) {
        let mut envs = self.envs.lock().unwrap_or_else(|p| p.into_inner());
        if env.is_empty() {
            envs.remove(plugin);
        } else {
            envs.insert(plugin.to_string(), env);
        }
    }

    /// Every plugin's pairs merged in plugin id order, each name once at
    /// its first place with its last value.
    fn own_session_env(&self) -> Vec<(String, String)> {
        let envs = self.envs.lock().unwrap_or_else(|p| p.into_inner());
        let mut merged: Vec<(String, String)> = Vec::new();
        for (name, value) in envs.values().flatten() {
            match merged.iter_mut().find(|(k, _)| k == name) {
                Some(entry) => entry.1 = value.clone(),
                None => merged.push((name.clone(), value.clone())),
            }
        }
        merged
    }
}

/// The root session of `id` (a subagent's parent chain followed while the
/// parents are live), if `id` is live.
fn root_of(agent: &Agent, id: &str) -> Option<std::sync::Arc<Session>> {
    let mut session = agent.get(id)?;
    // A chain of live parents is short; the bound only guards a cycle.
    for _ in 0..64 {
        match session.parent.as_deref().and_then(|p| agent.get(p)) {
            Some(parent) => session = parent,
            None => return Some(session),
        }
    }
    None
}

/// The shell-tool environment for session `id`: its root session's.
pub(crate) fn env_of_session(agent: &Agent, id: &str) -> Vec<(String, String)> {
    root_of(agent, id).map_or_else(Vec::new, |s| s.own_session_env())
}

/// The prelude for session `id`: its root session's (a subagent's parent
/// chain is followed while the parents are live), empty when none.
pub(crate) fn of_session(agent: &Agent, id: &str) -> String {
    root_of(agent, id).map_or_else(String::new, |s| s.own_shell_prelude())
}
