//! Claude Code's permission-update objects, both ways: the
//! `permission_suggestions` a `PermissionRequest` hook is shown, and the
//! `updatedPermissions` it may answer with.
//!
//! Recorded (S33): with no rule deciding, a Bash call is offered its exact
//! command (`addRules`, `Bash` + `ruleContent`, `localSettings`), an edit is
//! offered `acceptEdits` for the session (`setMode`); a call an ask rule
//! caught is offered nothing. dsh keeps every update for the session only
//! (it writes no settings file), whatever `destination` says.

use serde_json::{Value, json};

use super::PermissionMode;
use super::rule::{Behavior, EDIT_TOOLS, Rule};

/// One change a hook asked for.
#[derive(Debug, Clone)]
pub enum PermissionUpdate {
    /// Add a rule for the rest of the session.
    AddRule {
        /// Its list.
        behavior: Behavior,
        /// The rule.
        rule: Rule,
    },
    /// Switch the session's mode.
    SetMode(PermissionMode),
}

/// What a tool-decided ask offers (Claude Code's `permission_suggestions`).
pub fn suggestions(tool: &str, args: &Value) -> Value {
    if tool == "Bash"
        && let Some(command) = args.get("command").and_then(Value::as_str)
    {
        return json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": command}],
            "behavior": "allow", "destination": "localSettings"}]);
    }
    if EDIT_TOOLS.contains(&tool) {
        return json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]);
    }
    json!([])
}

/// Reads an `updatedPermissions` array: the updates dsh applies, and a
/// line for each entry it cannot.
pub fn parse_updates(text: &str) -> (Vec<PermissionUpdate>, Vec<String>) {
    let mut updates = Vec::new();
    let mut skipped = Vec::new();
    let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(text) else {
        return (
            updates,
            vec!["updatedPermissions is not a JSON array".into()],
        );
    };
    for entry in entries {
        match entry.get("type").and_then(Value::as_str) {
            Some("addRules") => {
                let behavior = match entry.get("behavior").and_then(Value::as_str) {
                    Some("allow") => Behavior::Allow,
                    Some("ask") => Behavior::Ask,
                    Some("deny") => Behavior::Deny,
                    other => {
                        skipped.push(format!("addRules with behavior {other:?}"));
                        continue;
                    }
                };
                for r in entry
                    .get("rules")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(tool) = r.get("toolName").and_then(Value::as_str) else {
                        skipped.push(format!("a rule without toolName: {r}"));
                        continue;
                    };
                    let text = match r.get("ruleContent").and_then(Value::as_str) {
                        Some(content) => format!("{tool}({content})"),
                        None => tool.to_string(),
                    };
                    match Rule::parse(&text) {
                        Ok(rule) => updates.push(PermissionUpdate::AddRule { behavior, rule }),
                        Err(e) => skipped.push(format!("rule `{text}`: {e}")),
                    }
                }
            }
            Some("setMode") => match entry.get("mode").and_then(Value::as_str).map(str::parse) {
                Some(Ok(mode)) => updates.push(PermissionUpdate::SetMode(mode)),
                _ => skipped.push(format!("setMode: {entry}")),
            },
            other => skipped.push(format!("update type {other:?} is not supported")),
        }
    }
    (updates, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_as_recorded() {
        assert_eq!(
            suggestions("Bash", &json!({"command": "python3 -c 'print(41+1)'"})),
            json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "python3 -c 'print(41+1)'"}],
                "behavior": "allow", "destination": "localSettings"}])
        );
        assert_eq!(
            suggestions("Write", &json!({"file_path": "/p/w.txt"})),
            json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
        );
        assert_eq!(suggestions("Agent", &json!({})), json!([]));
    }

    #[test]
    fn updates_parse_and_unsupported_ones_are_named() {
        let (updates, skipped) = parse_updates(
            r#"[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"python3:*"},{"toolName":"Read"}],"behavior":"allow","destination":"session"},
                {"type":"setMode","mode":"acceptEdits","destination":"session"},
                {"type":"addDirectories","directories":["/x"]},
                {"type":"setMode","mode":"yolo"}]"#,
        );
        let shown: Vec<String> = updates
            .iter()
            .map(|u| match u {
                PermissionUpdate::AddRule { behavior, rule } => {
                    format!("{} {}", behavior.as_str(), rule.text())
                }
                PermissionUpdate::SetMode(m) => format!("mode {m}"),
            })
            .collect();
        assert_eq!(
            shown,
            ["allow Bash(python3:*)", "allow Read", "mode acceptEdits"]
        );
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(parse_updates("{}").1[0].contains("not a JSON array"));
    }
}
