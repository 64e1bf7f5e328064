//! The verdict for one tool call: the session's mode and rules, weighed
//! against what the pre-execute waterfall (hooks, plugins) said.
//!
//! The order, as Claude Code 2.1.197 decides (recorded, S30/S31):
//! 1. a `deny` rule refuses, even when a hook allowed the call;
//! 2. a hook's `ask` asks with the hook's reason, even over an allow rule;
//! 3. an `ask` rule asks, even when a hook allowed the call, and under
//!    `bypassPermissions` too (S105);
//! 4. a hook's `allow` runs the call (the mode is not consulted: under
//!    `plan` a Write, `python3 -c` and `touch` ran, S106);
//! 5. `plan` refuses edits;
//! 6. `bypassPermissions` runs it, and so does an `allow` rule;
//! 7. otherwise the tool decides: read-only tools and read-only commands
//!    run, edits and filesystem commands (`touch`, `mkdir`, `rm`, ...) in
//!    the session's folder run under `acceptEdits`, the rest asks;
//! 8. under `dontAsk` every ask is a denial.
//!
//! A session nobody configured (no `permissions:` in the manifest, no flag,
//! no mode set by an editor) is *unmanaged*: only hooks, plugins and guards
//! decide, as before permissions existed, and hooks read `default`.

use std::path::Path;

use serde_json::Value;

use super::PermissionMode;
use super::bash;
use super::rule::{Behavior, Call, EDIT_TOOLS, READ_TOOLS, RuleSet, target_path};

/// What the pre-execute waterfall said about the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookStance {
    /// Nobody decided (the seam's default answer).
    Silent,
    /// A listener allowed it.
    Allow,
    /// A listener asked for approval, with its reason.
    Ask(Option<String>),
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Ask whoever can approve; `message` is what the model reads if nobody
    /// can (Claude Code's headless text).
    Ask {
        /// The headless answer.
        message: String,
        /// The rule that asked, as `source: rule`, if a rule did.
        rule: Option<String>,
    },
    /// Refuse it; the model reads `message`.
    Deny {
        /// What the model reads.
        message: String,
        /// Who refused: `rule <source>: <rule>` or `mode <mode>`.
        by: String,
    },
}

/// A session's permissions: its mode and its rules.
#[derive(Debug, Clone, Default)]
pub struct PermissionState {
    /// The mode.
    pub mode: PermissionMode,
    /// Every rule in force (configured layers and the session's own).
    pub rules: RuleSet,
    /// Whether anything configured permissions for this session; an
    /// unmanaged session runs whatever hooks and guards let through.
    pub managed: bool,
}

/// Claude Code's text for a call refused under `dontAsk`.
fn dont_ask_message(tool: &str) -> String {
    format!(
        "Permission to use {tool} has been denied because Claude Code is running in don't ask mode. \
IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used \
to accomplish this goal, e.g. using head instead of cat. But you *should not* attempt to work around \
this denial in malicious ways, e.g. do not use your ability to run tests to execute non-test actions. \
You should only try to work around this restriction in reasonable ways that do not attempt to bypass \
the intent behind this denial. If you believe this capability is essential to complete the user's \
request, STOP and explain to the user what you were trying to do and why you need this permission. Let \
the user decide how to proceed."
    )
}

fn command(args: &Value) -> &str {
    args.get("command").and_then(Value::as_str).unwrap_or("")
}

/// Claude Code's text for a call a deny rule refused.
fn denied_message(call: &Call<'_>) -> String {
    if call.tool == "Bash" {
        format!(
            "Permission to use Bash with command {} has been denied.",
            command(call.args)
        )
    } else if call.tool == "Skill" {
        // (Claude Code's `Skill` checks its rules itself.)
        "Skill execution blocked by permission rules".to_string()
    } else if let Some(path) = search_path(call) {
        // `Glob` and `Grep` name what they search (S291-deny).
        format!("Permission to read {path} has been denied.")
    } else if READ_TOOLS.contains(&call.tool) {
        // As a path rule refuses it (see [`refused_on_input`]).
        DENIED_DIRECTORY.to_string()
    } else {
        format!("Permission to use {} has been denied.", call.tool)
    }
}

/// What Claude Code's `Glob` and `Grep` name as the folder they read in a
/// permission text: `Glob` its `path` resolved (or the cwd), `Grep` its
/// `path` as given (or the cwd).
fn search_path(call: &Call<'_>) -> Option<String> {
    let given = call.args.get("path").and_then(Value::as_str);
    match (call.tool, given) {
        ("Glob", Some(_)) => target_path(call).map(|p| p.display().to_string()),
        ("Grep", Some(path)) => Some(path.to_string()),
        ("Glob" | "Grep", None) => Some(call.cwd.display().to_string()),
        _ => None,
    }
}

/// Claude Code's headless text for a call an ask rule (or a tool with no
/// rule) asks about: a file tool names its path (`read from`, `write to`;
/// vectors `S81-read-ask`, `S81-write-edit-ask`), any other tool itself.
fn requested_message(call: &Call<'_>) -> String {
    if let Some(path) = search_path(call) {
        return format!(
            "Claude requested permissions to read from {path}, but you haven't granted it yet."
        );
    }
    let what = match target_path(call) {
        Some(path) if READ_TOOLS.contains(&call.tool) => format!("read from {}", path.display()),
        Some(path) if EDIT_TOOLS.contains(&call.tool) => format!("write to {}", path.display()),
        _ => format!("use {}", call.tool),
    };
    format!("Claude requested permissions to {what}, but you haven't granted it yet.")
}

/// Claude Code's refusal of a file tool whose path a deny rule of its kind
/// covers, while it checks its input, before any hook runs (vectors
/// `S31-read-deny-glob`, `S81-*`): `Read` against `Read(path)` deny rules,
/// `Write` and `Edit` against `Edit(path)` ones. Every other deny rule (a
/// bare tool name, `Bash(...)`) and every ask rule is weighed after the
/// pre-execute waterfall, by [`decide`].
pub fn refused_on_input(
    state: &PermissionState,
    tool: &str,
    args: &Value,
    cwd: &Path,
    project: &Path,
    home: Option<&Path>,
) -> Option<Verdict> {
    let kind = match tool {
        "Read" => "Read",
        "Write" | "Edit" => "Edit",
        _ => return None,
    };
    if !state.managed {
        return None;
    }
    let call = Call {
        tool,
        args,
        cwd,
        project,
        home,
    };
    let m = state
        .rules
        .path_rule_matching(kind, Behavior::Deny, &call)?;
    Some(Verdict::Deny {
        message: DENIED_DIRECTORY.to_string(),
        by: format!("rule {}: {}", m.source.as_str(), m.rule),
    })
}

/// Whether a `Read(path)` deny rule covers `path` (absolute): a file
/// Claude Code's `Glob` and `Grep` leave out of what they find (recorded
/// `S291-deny`). Nothing is denied in a session nothing configured.
pub fn read_denied(
    state: &PermissionState,
    path: &Path,
    cwd: &Path,
    project: &Path,
    home: Option<&Path>,
) -> bool {
    read_denier(state, cwd, project, home)(path)
}

/// [`read_denied`] for many paths of one session: its rules are compiled
/// once.
pub fn read_denier(
    state: &PermissionState,
    cwd: &Path,
    project: &Path,
    home: Option<&Path>,
) -> impl Fn(&Path) -> bool + use<> {
    let denies = state
        .managed
        .then(|| state.rules.read_denies(cwd, project, home));
    move |path| denies.as_ref().is_some_and(|d| d.covers(path))
}

/// Claude Code's text for a file tool refused by a path deny rule.
const DENIED_DIRECTORY: &str = "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>";

/// What the tool itself says in the session's mode when no rule decided.
fn tool_fallback(mode: PermissionMode, call: &Call<'_>) -> Verdict {
    let ask = |message: String| Verdict::Ask {
        message,
        rule: None,
    };
    // The task tools ask nobody (S220-*, run in `claude -p`'s default mode
    // with none of them in `--allowedTools`), nor do the tools of
    // background shells (S260-*).
    // Nor does a skill without tools of its own (one with them asks its
    // own question: `tool_ask`, S294-default_mode). Nor does Codex's
    // `write_stdin`, which reaches only a command already allowed.
    let no_ask = matches!(
        call.tool,
        "Agent"
            | "Task"
            | "TodoWrite"
            | "TaskCreate"
            | "TaskGet"
            | "TaskList"
            | "TaskUpdate"
            | "Skill"
            | "TaskOutput"
            | "TaskStop"
            | "write_stdin"
    );
    if READ_TOOLS.contains(&call.tool) || no_ask {
        return Verdict::Allow;
    }
    if EDIT_TOOLS.contains(&call.tool) {
        let target = target_path(call);
        if mode == PermissionMode::AcceptEdits
            && target
                .as_deref()
                .is_some_and(|t| t.starts_with(call.cwd) || t.starts_with(call.project))
        {
            return Verdict::Allow;
        }
        return match target {
            Some(path) => ask(format!(
                "Claude requested permissions to write to {}, but you haven't granted it yet.",
                path.display()
            )),
            None => ask(requested_message(call)),
        };
    }
    if call.tool == "Bash" {
        let cmd = command(call.args);
        if bash::is_read_only(cmd) {
            return Verdict::Allow;
        }
        // acceptEdits: filesystem commands inside the session's folder run
        // (S35: touch, mkdir, rm).
        if mode == PermissionMode::AcceptEdits
            && let Some(paths) = bash::filesystem_paths(cmd)
            && paths.iter().all(|p| {
                let abs = super::rule::normalize(&call.cwd.join(p));
                abs.starts_with(call.cwd) || abs.starts_with(call.project)
            })
        {
            return Verdict::Allow;
        }
        if let Some((name, path)) = bash::first_path_write(cmd) {
            let abs = super::rule::normalize(&call.cwd.join(path));
            return ask(format!(
                "{name} in '{}' was blocked. For security, Claude Code may only create or modify files in the allowed working directories for this session: '{}'.",
                abs.display(),
                call.project.display()
            ));
        }
        return ask("This command requires approval".into());
    }
    ask(requested_message(call))
}

/// The verdict on one call.
pub fn decide(
    state: &PermissionState,
    tool: &str,
    args: &Value,
    cwd: &Path,
    project: &Path,
    home: Option<&Path>,
    hook: &HookStance,
) -> Verdict {
    decide_with(state, tool, args, cwd, project, home, hook, None)
}

/// [`decide`], with the tool's own permission question: where no rule,
/// hook or mode decided, the call is asked about with `tool_ask` instead
/// of the tool's default (Claude Code's `Skill` asks `Execute skill:
/// <name>` of a skill with tools of its own, S294-default_mode).
#[allow(clippy::too_many_arguments)]
pub fn decide_with(
    state: &PermissionState,
    tool: &str,
    args: &Value,
    cwd: &Path,
    project: &Path,
    home: Option<&Path>,
    hook: &HookStance,
    tool_ask: Option<&str>,
) -> Verdict {
    let call = Call {
        tool,
        args,
        cwd,
        project,
        home,
    };
    if !state.managed {
        return match hook {
            HookStance::Ask(reason) => Verdict::Ask {
                message: reason.clone().unwrap_or_else(|| requested_message(&call)),
                rule: None,
            },
            _ => Verdict::Allow,
        };
    }
    let mode = state.mode;
    let verdict = 'verdict: {
        if let Some(m) = state.rules.matching(Behavior::Deny, &call) {
            break 'verdict Verdict::Deny {
                message: denied_message(&call),
                by: format!("rule {}: {}", m.source.as_str(), m.rule),
            };
        }
        if let HookStance::Ask(reason) = hook {
            break 'verdict Verdict::Ask {
                message: reason.clone().unwrap_or_else(|| requested_message(&call)),
                rule: None,
            };
        }
        if let Some(m) = state.rules.matching(Behavior::Ask, &call) {
            // An ask rule naming the whole tool asks to "use" it, even a
            // file tool (S105 ask_rule_write: `Write`); a path rule names
            // the path (S81-write-edit-ask).
            let message = if m.whole_tool {
                format!(
                    "Claude requested permissions to use {tool}, but you haven't granted it yet."
                )
            } else {
                requested_message(&call)
            };
            break 'verdict Verdict::Ask {
                message,
                rule: Some(format!("{}: {}", m.source.as_str(), m.rule)),
            };
        }
        if *hook == HookStance::Allow {
            break 'verdict Verdict::Allow;
        }
        if mode == PermissionMode::Plan && EDIT_TOOLS.contains(&tool) {
            let what = target_path(&call)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| tool.to_string());
            break 'verdict Verdict::Deny {
                message: format!("Cannot write to {what} while in plan mode."),
                by: "mode plan".into(),
            };
        }
        if mode == PermissionMode::BypassPermissions
            || state.rules.matching(Behavior::Allow, &call).is_some()
        {
            break 'verdict Verdict::Allow;
        }
        if let Some(question) = tool_ask {
            break 'verdict Verdict::Ask {
                message: question.to_string(),
                rule: None,
            };
        }
        tool_fallback(mode, &call)
    };
    match verdict {
        Verdict::Ask { .. } if mode == PermissionMode::DontAsk => Verdict::Deny {
            message: dont_ask_message(tool),
            by: "mode dontAsk".into(),
        },
        v => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::{RuleLayer, RuleSource};
    use serde_json::json;

    fn state(mode: PermissionMode, allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionState {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        let layer = RuleLayer {
            source: RuleSource::Cli,
            allow: v(allow),
            ask: v(ask),
            deny: v(deny),
        };
        PermissionState {
            mode,
            rules: RuleSet::from_layers(&[layer]).unwrap(),
            managed: true,
        }
    }

    fn run(s: &PermissionState, tool: &str, args: Value, hook: HookStance) -> Verdict {
        decide(
            s,
            tool,
            &args,
            Path::new("/p"),
            Path::new("/p"),
            None,
            &hook,
        )
    }

    const PY: &str = "python3 -c 'print(41+1)'";

    fn ask(message: &str) -> Verdict {
        Verdict::Ask {
            message: message.into(),
            rule: None,
        }
    }

    #[test]
    fn each_mode_as_recorded_in_s30() {
        use PermissionMode::*;
        let write = || json!({"file_path": "/p/written.txt", "content": "x"});
        let py = || json!({"command": PY});
        let echo = || json!({"command": "echo hi"});
        let only_read = |m| state(m, &["Read"], &[], &[]);
        let s = only_read(Default);
        assert_eq!(
            run(&s, "Write", write(), HookStance::Silent),
            ask(
                "Claude requested permissions to write to /p/written.txt, but you haven't granted it yet."
            )
        );
        assert_eq!(
            run(&s, "Bash", py(), HookStance::Silent),
            ask("This command requires approval")
        );
        assert_eq!(run(&s, "Bash", echo(), HookStance::Silent), Verdict::Allow);
        let s = only_read(AcceptEdits);
        assert_eq!(
            run(&s, "Write", write(), HookStance::Silent),
            Verdict::Allow
        );
        assert_eq!(
            run(&s, "Bash", py(), HookStance::Silent),
            ask("This command requires approval")
        );
        let s = only_read(Plan);
        assert!(matches!(run(&s, "Write", write(), HookStance::Silent),
            Verdict::Deny { message, .. } if message == "Cannot write to /p/written.txt while in plan mode."));
        assert_eq!(run(&s, "Bash", echo(), HookStance::Silent), Verdict::Allow);
        let s = only_read(BypassPermissions);
        for (tool, args) in [("Write", write()), ("Bash", py()), ("Bash", echo())] {
            assert_eq!(run(&s, tool, args, HookStance::Silent), Verdict::Allow);
        }
        let s = only_read(DontAsk);
        for (tool, args) in [("Write", write()), ("Bash", py())] {
            assert!(matches!(run(&s, tool, args, HookStance::Silent),
                Verdict::Deny { message, .. } if message.starts_with(&format!("Permission to use {tool} has been denied because Claude Code is running in don't ask mode."))));
        }
        assert_eq!(run(&s, "Bash", echo(), HookStance::Silent), Verdict::Allow);
    }

    #[test]
    fn rules_against_hooks_as_recorded_in_s31() {
        use PermissionMode::Default;
        let py = || json!({"command": PY});
        let denied = format!("Permission to use Bash with command {PY} has been denied.");
        let requested = "Claude requested permissions to use Bash, but you haven't granted it yet.";
        // deny rule, silent hook / allowing hook: refused with the rule's text
        let s = state(Default, &["Read"], &[], &["Bash(python3:*)"]);
        for hook in [HookStance::Silent, HookStance::Allow] {
            assert!(matches!(run(&s, "Bash", py(), hook),
                Verdict::Deny { message, by } if message == denied && by == "rule cli: Bash(python3:*)"));
        }
        // ask rule beats a hook's allow
        let s = state(Default, &["Bash", "Read"], &["Bash(python3:*)"], &[]);
        for hook in [HookStance::Silent, HookStance::Allow] {
            assert!(
                matches!(run(&s, "Bash", py(), hook), Verdict::Ask { message, .. } if message == requested)
            );
        }
        // a hook's ask beats an allow rule, with the hook's reason
        let s = state(Default, &["Bash(python3:*)"], &[], &[]);
        assert_eq!(
            run(&s, "Bash", py(), HookStance::Ask(Some("MARK_HASK".into()))),
            ask("MARK_HASK")
        );
        assert_eq!(run(&s, "Bash", py(), HookStance::Silent), Verdict::Allow);
        // a hook's allow skips the tool's own ask
        let s = state(Default, &["Read"], &[], &[]);
        assert_eq!(run(&s, "Bash", py(), HookStance::Allow), Verdict::Allow);
        // --allowedTools forms
        for allowed in ["Bash(python3:*)", "Bash(python3 *)"] {
            let s = state(Default, &[allowed], &[], &[]);
            assert_eq!(
                run(&s, "Bash", py(), HookStance::Silent),
                Verdict::Allow,
                "{allowed}"
            );
        }
        let s = state(Default, &["Bash(git diff:*)"], &[], &[]);
        assert_eq!(
            run(&s, "Bash", py(), HookStance::Silent),
            ask("This command requires approval")
        );
        // --disallowedTools beats --allowedTools
        let s = state(Default, &["Bash"], &[], &["Bash(python3:*)"]);
        assert!(
            matches!(run(&s, "Bash", py(), HookStance::Silent), Verdict::Deny { message, .. } if message == denied)
        );
    }

    #[test]
    fn ask_rules_bind_bypass_and_hook_allow_skips_plan_as_recorded_in_s105_s106() {
        use PermissionMode::{BypassPermissions, Plan};
        let py = || json!({"command": PY});
        let write = || json!({"file_path": "/p/w.txt", "content": "x"});
        // S105: an ask rule asks under bypassPermissions, hook silent or allowing
        let s = state(BypassPermissions, &["Read"], &["Bash(python3:*)"], &[]);
        for hook in [HookStance::Silent, HookStance::Allow] {
            assert!(matches!(run(&s, "Bash", py(), hook),
                Verdict::Ask { message, .. } if message == "Claude requested permissions to use Bash, but you haven't granted it yet."));
        }
        // a whole-tool ask rule on a file tool asks to "use" it, not to write to its path
        let s = state(BypassPermissions, &["Read"], &["Write"], &[]);
        assert!(matches!(run(&s, "Write", write(), HookStance::Silent),
            Verdict::Ask { message, .. } if message == "Claude requested permissions to use Write, but you haven't granted it yet."));
        // S106: a hook's allow runs edits and commands under plan
        let s = state(Plan, &["Read"], &[], &[]);
        for (tool, args) in [
            ("Write", write()),
            ("Bash", py()),
            ("Bash", json!({"command": "touch made_by_bash.txt"})),
        ] {
            assert_eq!(run(&s, tool, args, HookStance::Allow), Verdict::Allow);
        }
    }

    #[test]
    fn accept_edits_runs_filesystem_commands_in_the_project_only_s35() {
        let s = state(PermissionMode::AcceptEdits, &["Read"], &[], &[]);
        for cmd in [
            "touch made_by_bash.txt",
            "mkdir made_dir",
            "rm -f nothing_here.txt",
        ] {
            assert_eq!(
                run(&s, "Bash", json!({"command": cmd}), HookStance::Silent),
                Verdict::Allow,
                "{cmd}"
            );
        }
        assert!(matches!(
            run(
                &s,
                "Bash",
                json!({"command": "touch /etc/x"}),
                HookStance::Silent
            ),
            Verdict::Ask { .. }
        ));
        let s = state(PermissionMode::Plan, &["Read"], &[], &[]);
        assert!(matches!(
            run(&s, "Bash", json!({"command": "touch made_by_bash.txt"}), HookStance::Silent),
            Verdict::Ask { message, .. } if message.starts_with("touch in '/p/made_by_bash.txt' was blocked.")
        ));
    }

    #[test]
    fn touch_asks_with_claude_codes_path_text() {
        let s = state(PermissionMode::Default, &["Read"], &[], &[]);
        assert_eq!(
            run(
                &s,
                "Bash",
                json!({"command": "touch made_by_bash.txt && echo hi"}),
                HookStance::Silent
            ),
            ask(
                "touch in '/p/made_by_bash.txt' was blocked. For security, Claude Code may only create or modify files in the allowed working directories for this session: '/p'."
            )
        );
    }

    #[test]
    fn the_task_tools_ask_nobody_but_deny_rules_bind_them_s220() {
        let s = state(PermissionMode::Default, &["Read"], &[], &[]);
        for tool in [
            "TaskCreate",
            "TaskGet",
            "TaskList",
            "TaskUpdate",
            "TaskOutput",
            "TaskStop",
        ] {
            assert_eq!(
                run(&s, tool, json!({"taskId": "1"}), HookStance::Silent),
                Verdict::Allow,
                "{tool}"
            );
        }
        let s = state(PermissionMode::Default, &["Read"], &[], &["TaskCreate"]);
        assert!(matches!(
            run(&s, "TaskCreate", json!({}), HookStance::Silent),
            Verdict::Deny { .. }
        ));
    }

    #[test]
    fn unmanaged_sessions_only_hear_hooks() {
        let s = PermissionState::default();
        assert_eq!(
            run(
                &s,
                "Bash",
                json!({"command": "rm -rf x"}),
                HookStance::Silent
            ),
            Verdict::Allow
        );
        assert_eq!(
            run(&s, "Bash", json!({}), HookStance::Ask(Some("r".into()))),
            ask("r")
        );
    }

    #[test]
    fn searches_name_their_folder_when_a_read_rule_denies_them() {
        let s = state(PermissionMode::Default, &[], &[], &["Read(./ignored/**)"]);
        let deny = |tool: &str, args: Value| match run(&s, tool, args, HookStance::Silent) {
            Verdict::Deny { message, .. } => message,
            other => panic!("{other:?}"),
        };
        // `dir/**` covers the folder itself (S291-deny).
        assert_eq!(
            deny("Grep", json!({"pattern": "x", "path": "ignored"})),
            "Permission to read ignored has been denied."
        );
        assert_eq!(
            deny("Glob", json!({"pattern": "*", "path": "ignored"})),
            "Permission to read /p/ignored has been denied."
        );
        assert!(matches!(
            run(
                &s,
                "Grep",
                json!({"pattern": "x", "path": "src"}),
                HookStance::Silent
            ),
            Verdict::Allow
        ));
    }

    #[test]
    fn read_denied_covers_what_a_deny_rule_names_and_nothing_unmanaged() {
        let s = state(
            PermissionMode::Default,
            &[],
            &[],
            &["Read(./ignored/**)", "Read(**/.hidden/**)"],
        );
        let denied =
            |p: &str| read_denied(&s, Path::new(p), Path::new("/p"), Path::new("/p"), None);
        assert!(denied("/p/ignored/a.rs"));
        assert!(denied("/p/ignored"));
        assert!(denied("/p/x/.hidden/y.rs"));
        assert!(!denied("/p/src/a.rs"));
        assert!(!read_denied(
            &PermissionState::default(),
            Path::new("/p/ignored/a.rs"),
            Path::new("/p"),
            Path::new("/p"),
            None
        ));
    }
}
