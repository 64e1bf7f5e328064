//! What a command handler's options do, as Claude Code 2.1.197 does it
//! (vectors `S52-*`, and its handler schema):
//!
//! | key | effect |
//! |---|---|
//! | `timeout` | seconds, default 600 ([`crate::events::session_end`] has its own budget) |
//! | `args` | exec form: `command` is run directly with these arguments, no shell; `${CLAUDE_PROJECT_DIR}`, `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` substituted in each element, nothing else (`S52-args`) |
//! | `if` | a permission rule (`Bash`, `Bash(echo *)`): the hook runs only for a tool call it matches; on an event without a tool it never runs (`S52-if-rules`) |
//! | `async` | the hook is started and not waited for; its answer changes nothing (`S52-async-deny`) |
//! | `asyncRewake` | run in the background and waited for by nobody, an exit 2 then reaching the model at its next request as Claude Code's task notification ([`crate::rewake`]), where Claude Code backgrounds it: `e.async \|\| e.asyncRewake && (interactive \|\| hasStreamingInput)`, so with `async` too, or in a session with streaming input (the bridge's `async_rewake: background`, which `dsh serve` and `dsh acp` set for editors' sessions). Otherwise (`claude -p`, `dsh prompt`) a plain hook, waited for and read as any other (vectors `S82-*`: an exit 2 is the event's own blocking error, a UserPromptSubmit one blocks the prompt) |
//! | `shell` | `bash` (the default) runs as usual; `powershell` needs `pwsh` or `powershell` on `PATH`, else the hook fails without running, in Claude Code's words (`S52-shell-option`) |
//! | `rewakeMessage`, `rewakeSummary` | the prefix and the `<summary>` of a backgrounded `asyncRewake` hook's notification (a plugin hook's JSON `rewakeSummary` is not read) |
//! | `once`, `statusMessage` | nothing for a settings hook (`S52-once`: `once` is for skill hooks; the rest is display) |

use serde_json::{Map, Value};

/// The options of one handler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandlerOptions {
    /// Exec-form arguments.
    pub args: Option<Vec<String>>,
    /// The `if` permission rule.
    pub if_rule: Option<String>,
    /// Started and not waited for (`async`).
    pub background: bool,
    /// `shell: "powershell"`.
    pub powershell: bool,
    /// The handler gave its own `timeout`.
    pub has_timeout: bool,
    /// `asyncRewake`: run in the background where Claude Code does (an
    /// `async` hook, or any session with streaming input) and bring an
    /// exit 2 to the model ([`crate::rewake`]).
    pub rewake: bool,
    /// `rewakeMessage`: the prefix of that notification.
    pub rewake_message: Option<String>,
    /// `rewakeSummary`: its `<summary>`.
    pub rewake_summary: Option<String>,
}

impl HandlerOptions {
    /// Reads the options of a handler object as written. Values of the
    /// wrong type count as absent (the config loader warns about them).
    pub fn of(handler: &Map<String, Value>) -> HandlerOptions {
        let flag = |k: &str| handler.get(k).and_then(Value::as_bool).unwrap_or(false);
        HandlerOptions {
            args: handler.get("args").and_then(Value::as_array).and_then(|a| {
                a.iter()
                    .map(|v| v.as_str().map(String::from))
                    .collect::<Option<Vec<_>>>()
            }),
            if_rule: handler.get("if").and_then(Value::as_str).map(String::from),
            background: flag("async"),
            powershell: handler.get("shell").and_then(Value::as_str) == Some("powershell"),
            has_timeout: handler.get("timeout").is_some_and(Value::is_number),
            rewake: flag("asyncRewake"),
            rewake_message: handler
                .get("rewakeMessage")
                .and_then(Value::as_str)
                .map(String::from),
            rewake_summary: handler
                .get("rewakeSummary")
                .and_then(Value::as_str)
                .map(String::from),
        }
    }
}

/// Claude Code's failure for `shell: "powershell"` without PowerShell.
pub fn powershell_missing(command: &str) -> String {
    format!(
        "Failed to run: Hook \"{command}\" has shell: 'powershell' but no PowerShell executable \
         (pwsh or powershell) was found on PATH. Install PowerShell, or remove \"shell\": \
         \"powershell\" to use bash."
    )
}

/// The PowerShell Claude Code would run: `pwsh`, else `powershell`, on
/// `PATH`.
pub fn find_powershell() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in ["pwsh", "powershell"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// `text` with the placeholders Claude Code substitutes in exec-form
/// elements replaced (only those given).
pub fn substitute(text: &str, project_dir: &str, plugin: Option<(&str, &str)>) -> String {
    let mut out = text.replace("${CLAUDE_PROJECT_DIR}", project_dir);
    if let Some((root, data)) = plugin {
        out = out
            .replace("${CLAUDE_PLUGIN_ROOT}", root)
            .replace("${CLAUDE_PLUGIN_DATA}", data);
    }
    out
}

/// The events whose hooks may have an `if`: the tool events.
pub fn has_tool(event: &str) -> bool {
    matches!(
        event,
        "PreToolUse"
            | "PostToolUse"
            | "PostToolUseFailure"
            | "PermissionRequest"
            | "PermissionDenied"
    )
}

/// Claude Code's current name for a tool name (`Task` is `Agent`).
fn canonical(tool: &str) -> &str {
    if tool == "Task" { "Agent" } else { tool }
}

/// Whether permission rule `rule` (`Tool` or `Tool(content)`) selects the
/// call of `tool` with `input`, as Claude Code reads an `if`: the tool
/// names must agree; a rule without content (or `()`/`(*)`) selects every
/// call; a `Bash` rule's content is matched against the whole command,
/// `*` matching any text and a trailing `:*` meaning "starts with"; content
/// for any other tool selects nothing.
pub fn rule_matches(rule: &str, tool: &str, input: &Value) -> bool {
    let (name, content) = match (rule.find('('), rule.strip_suffix(')')) {
        (Some(open), Some(inner)) if open > 0 => (&rule[..open], Some(&inner[open + 1..])),
        _ => (rule, None),
    };
    if canonical(name) != canonical(tool) {
        return false;
    }
    let content = match content {
        None | Some("") | Some("*") => return true,
        Some(c) => c.replace("\\(", "(").replace("\\)", ")"),
    };
    if canonical(tool) != "Bash" {
        return false;
    }
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return false;
    };
    if let Some(prefix) = content.strip_suffix(":*") {
        return command.starts_with(prefix);
    }
    glob(&content, command)
}

/// `*` matches any text (newlines included); everything else literally;
/// the whole text must match.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(p) => p,
        None => return text.is_empty(),
    };
    let Some(mut tail) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return tail.is_empty();
    };
    for part in middle {
        match tail.find(part) {
            Some(i) => tail = &tail[i + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn if_rules_as_recorded() {
        let echo = json!({"command": "echo hi", "description": "Print hi"});
        assert!(rule_matches("Bash(echo *)", "Bash", &echo));
        assert!(!rule_matches("Bash(rm *)", "Bash", &echo));
        assert!(rule_matches("Bash", "Bash", &echo));
        assert!(!rule_matches("Read", "Bash", &echo));
    }

    #[test]
    fn if_rule_forms() {
        let c = |cmd: &str| json!({ "command": cmd });
        assert!(rule_matches("Bash()", "Bash", &c("x")));
        assert!(rule_matches("Bash(*)", "Bash", &c("x")));
        assert!(rule_matches(
            "Bash(npm run test:*)",
            "Bash",
            &c("npm run test --x")
        ));
        assert!(!rule_matches(
            "Bash(npm run test:*)",
            "Bash",
            &c("npm run lint")
        ));
        assert!(rule_matches(
            "Bash(git * main)",
            "Bash",
            &c("git push origin main")
        ));
        assert!(!rule_matches(
            "Bash(git * main)",
            "Bash",
            &c("git push origin main2")
        ));
        assert!(rule_matches("Bash(ls)", "Bash", &c("ls")));
        assert!(!rule_matches("Bash(ls)", "Bash", &c("ls -la")));
        assert!(rule_matches("Task", "Agent", &json!({})));
        assert!(!rule_matches(
            "Read(./src/**)",
            "Read",
            &json!({"file_path": "./src/a"})
        ));
    }

    #[test]
    fn options_read_from_the_handler() {
        let h = json!({"type": "command", "command": "bash", "args": ["a", "${CLAUDE_PROJECT_DIR}"],
            "if": "Bash", "async": true, "shell": "powershell", "timeout": 3});
        let o = HandlerOptions::of(h.as_object().unwrap());
        assert_eq!(
            o.args.as_deref(),
            Some(&["a".to_string(), "${CLAUDE_PROJECT_DIR}".to_string()][..])
        );
        assert_eq!(o.if_rule.as_deref(), Some("Bash"));
        assert!(o.background && o.powershell && o.has_timeout);
        // `claude -p` waits for an `asyncRewake` hook (S82-*).
        let rewake = json!({"asyncRewake": true});
        assert!(!HandlerOptions::of(rewake.as_object().unwrap()).background);
        let both = json!({"async": true, "asyncRewake": true});
        assert!(HandlerOptions::of(both.as_object().unwrap()).background);
        assert_eq!(HandlerOptions::of(&Map::new()), HandlerOptions::default());
    }

    #[test]
    fn exec_form_substitutes_only_the_placeholders() {
        assert_eq!(
            substitute(
                "${CLAUDE_PROJECT_DIR}/x $HOME '${CLAUDE_PLUGIN_ROOT}'",
                "/p",
                None
            ),
            "/p/x $HOME '${CLAUDE_PLUGIN_ROOT}'"
        );
        assert_eq!(
            substitute("${CLAUDE_PLUGIN_DATA}", "/p", Some(("/r", "/d"))),
            "/d"
        );
    }
}
