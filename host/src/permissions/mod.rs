//! Permission modes and rules, as Claude Code has them: what decides, after
//! the `tools/pre-execute` waterfall and the guards, whether a tool call
//! runs, is refused, or must be asked about (ARCHITECTURE.md §11).
//!
//! - [`PermissionMode`]: the session's mode (`default`, `acceptEdits`,
//!   `plan`, `bypassPermissions`, `dontAsk`), spelled as Claude Code spells
//!   it, which is also what hooks read as `permission_mode`.
//! - [`RuleLayer`]: `allow` / `ask` / `deny` lists in Claude Code's rule
//!   syntax (`Bash`, `Bash(git diff:*)`, `Read(./src/**)`, ...) from one
//!   source (managed, user, project, local settings, the manifest, the CLI,
//!   the session's own "allow always" answers); [`RuleSet`] merges them.
//! - [`decide`]: the verdict for one call, from the mode, the rules, what
//!   the pre-execute waterfall said and the call itself.
//!
//! Pure code: no I/O, no seams. The pipeline (`agent/pipeline.rs`) asks it
//! and acts on the verdict; the texts a refused call answers with are the
//! ones Claude Code gives the model (recorded: vectors `S30`–`S33`,
//! `tools/recorder-scenarios/FINDINGS-perm.md`).

mod bash;
mod engine;
mod rule;
mod updates;

pub use engine::{
    HookStance, PermissionState, Verdict, decide, decide_with, read_denied, read_denier,
    refused_on_input,
};
pub use rule::{Behavior, Rule, RuleError, RuleLayer, RuleSet, RuleSource};
pub use updates::{PermissionUpdate, parse_updates, suggestions};

/// What Claude Code tells the model when the user answers its permission
/// dialog "No" (recorded, S34 user_rejects): the refused call's result.
pub const USER_REJECTED: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// The text block Claude Code adds after the refused call's result when
/// that "No" stops the turn (recorded, S34 user_rejects); the model reads
/// both with the user's next prompt. It ends with a newline (S107
/// reject_then_prompt).
pub const INTERRUPTED_FOR_TOOL_USE: &str = "[Request interrupted by user for tool use]\n";

/// Splits one `--allowedTools` / `--disallowedTools` value as Claude Code
/// does: on commas and spaces outside parentheses, so
/// `"Bash(git diff:*),Read"` is two rules.
pub fn split_rule_list(value: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !current.is_empty() {
                rules.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        rules.push(current);
    }
    rules
}

/// A session's permission mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PermissionMode {
    /// Ask for anything not allowed by a rule or read-only.
    #[default]
    Default,
    /// Edits inside the session's folder run without asking.
    AcceptEdits,
    /// Nothing that changes files runs; the model plans.
    Plan,
    /// Everything runs that no deny or ask rule stops.
    BypassPermissions,
    /// Every ask is a denial: only what rules allow (and read-only calls) run.
    DontAsk,
}

impl PermissionMode {
    /// Every mode, in the order editors list them.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
        PermissionMode::DontAsk,
    ];

    /// Claude Code's spelling (`--permission-mode`, hooks' `permission_mode`).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }

    /// A one-line description, for editors and `--help`.
    pub fn description(self) -> &'static str {
        match self {
            PermissionMode::Default => "Ask before edits and commands that are not read-only",
            PermissionMode::AcceptEdits => "Edit files in the session's folder without asking",
            PermissionMode::Plan => "Read and plan only: edits are refused",
            PermissionMode::BypassPermissions => "Run everything no deny or ask rule stops",
            PermissionMode::DontAsk => "Never ask: whatever would ask is refused",
        }
    }

    /// A human name, for editors.
    pub fn title(self) -> &'static str {
        match self {
            PermissionMode::Default => "Default",
            PermissionMode::AcceptEdits => "Accept edits",
            PermissionMode::Plan => "Plan",
            PermissionMode::BypassPermissions => "Bypass permissions",
            PermissionMode::DontAsk => "Don't ask",
        }
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for PermissionMode {
    type Err = String;

    /// Claude Code's spellings only (case-sensitive, as the CLI takes them).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown permission mode `{s}` (one of: {})",
                    PermissionMode::ALL.map(|m| m.as_str()).join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_lists_split_outside_parentheses() {
        assert_eq!(split_rule_list("Bash,Read"), ["Bash", "Read"]);
        assert_eq!(
            split_rule_list("Bash(git diff:*), Read Edit(/docs/**)"),
            ["Bash(git diff:*)", "Read", "Edit(/docs/**)"]
        );
        assert_eq!(
            split_rule_list("Bash(npm run test *)"),
            ["Bash(npm run test *)"]
        );
        assert!(split_rule_list(" , ").is_empty());
    }

    #[test]
    fn modes_parse_only_claude_spellings() {
        for m in PermissionMode::ALL {
            assert_eq!(m.as_str().parse::<PermissionMode>().unwrap(), m);
        }
        let e = "bypass".parse::<PermissionMode>().unwrap_err();
        assert!(e.contains("`bypass`") && e.contains("dontAsk"), "{e}");
        assert!("Default".parse::<PermissionMode>().is_err());
    }
}
