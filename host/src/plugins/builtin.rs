//! The plugins compiled into the `dsh` binary, by manifest name.
//!
//! Each is an ordinary [`dsh_plugin_api::Plugin`]; the host turns it into the
//! same root module a `.so` exports and applies it through the same path.

use dsh_plugin_api::{PluginModuleRef, plugin_module};

/// Every built-in's name, for error messages and `dsh plugins`.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(name, _)| *name).collect()
}

/// The root module of the built-in called `name`.
pub fn lookup(name: &str) -> Option<PluginModuleRef> {
    BUILTINS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, make)| make())
}

type Make = fn() -> PluginModuleRef;

const BUILTINS: &[(&str, Make)] = &[
    ("bash-local", plugin_module::<dsh_bash_local::BashLocal>),
    (
        "hooks-claude",
        plugin_module::<dsh_hooks_claude::ClaudeBridge>,
    ),
    ("hooks-codex", plugin_module::<dsh_hooks_codex::CodexBridge>),
    ("model-openai", plugin_module::<crate::model::OpenAiModel>),
    (
        "model-scripted",
        plugin_module::<crate::model::ScriptedModel>,
    ),
    ("tools-fs", plugin_module::<dsh_tools_fs::ToolsFs>),
    ("tools-tasks", plugin_module::<crate::tasks::TaskTools>),
    ("tools-todo", plugin_module::<crate::todo::TodoTools>),
    (
        "tools-worktree",
        plugin_module::<crate::worktree::WorktreeTools>,
    ),
];
