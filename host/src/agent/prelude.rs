//! Shell preludes (plugin API 1.4): script a shell tool runs in the same
//! shell before each command of a session. A plugin sets its own piece
//! (`HostContext::set_session_shell_prelude`); a shell tool reads the whole
//! (`HostContext::session_shell_prelude`): every plugin's piece in plugin id
//! order, joined by a newline. A subagent runs with its root session's
//! prelude, as Claude Code's subagents share their session's
//! `CLAUDE_ENV_FILE` scripts. Kept in memory only: the plugins that set
//! one set it again when a resumed session starts.

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
}

/// The prelude for session `id`: its root session's (a subagent's parent
/// chain is followed while the parents are live), empty when none.
pub(crate) fn of_session(agent: &Agent, id: &str) -> String {
    let mut session = agent.get(id);
    // A chain of live parents is short; the bound only guards a cycle.
    for _ in 0..64 {
        let Some(current) = session else {
            return String::new();
        };
        match current.parent.as_deref().and_then(|p| agent.get(p)) {
            Some(parent) => session = Some(parent),
            None => return current.own_shell_prelude(),
        }
    }
    String::new()
}
