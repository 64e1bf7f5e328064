//! The worktree tools' arguments, checked as Claude Code checks them, with
//! its texts (vectors `S230-bad-name`, `S230-exit-bad-action`,
//! `S234-name-checks`): a value of the wrong type or a key the schema does
//! not have is refused in one line naming it; a bad `name`, both `name`
//! and `path`, or an `action` other than `keep`/`remove` as Claude Code's
//! schema library lists its issues (JSON, two-space indent). Every text is
//! wrapped in `<tool_use_error>InputValidationError: ...</tool_use_error>`.
//! Only the first issue is reported (no recording has two).

use dsh_plugin_api::sdk::claude_input::js_type;
use serde_json::{Map, Value, json};

/// The longest `name` Claude Code takes.
const MAX_NAME: usize = 64;

/// `EnterWorktree`'s input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enter {
    /// A new worktree; `None`: a generated name.
    Create(Option<String>),
    /// An existing worktree, as the model wrote its path.
    Path(String),
}

/// `ExitWorktree`'s input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// `remove` (else `keep`).
    pub remove: bool,
    /// `discard_changes`.
    pub discard: bool,
}

fn wrap(tool: &str, issue: Issue) -> String {
    let body = match issue {
        Issue::Line(line) => format!("{tool} failed due to the following issue:\n{line}"),
        Issue::Listed(list) => {
            serde_json::to_string_pretty(&Value::Array(vec![list])).unwrap_or_else(|_| "[]".into())
        }
    };
    format!("<tool_use_error>InputValidationError: {body}</tool_use_error>")
}

enum Issue {
    Line(String),
    Listed(Value),
}

/// Checks `args` against the keys and types of one tool's schema.
fn shape(args: &Value, keys: &[(&str, &str)]) -> Result<Map<String, Value>, Issue> {
    let Value::Object(map) = args else {
        return Err(Issue::Line(format!(
            "The input is expected as `object` but provided as `{}`",
            js_type(args)
        )));
    };
    for (k, v) in map {
        let Some((_, want)) = keys.iter().find(|(name, _)| name == k) else {
            return Err(Issue::Line(format!(
                "An unexpected parameter `{k}` was provided"
            )));
        };
        if js_type(v) != *want {
            return Err(Issue::Line(format!(
                "The parameter `{k}` type is expected as `{want}` but provided as `{}`",
                js_type(v)
            )));
        }
    }
    Ok(map.clone())
}

fn custom(message: String, path: &[&str]) -> Issue {
    Issue::Listed(json!({"code": "custom", "message": message, "path": path}))
}

/// Why `name` is not a worktree name, in Claude Code's words.
fn name_issue(name: &str) -> Option<String> {
    let n = name.chars().count();
    if n > MAX_NAME {
        return Some(format!(
            "Invalid worktree name: must be {MAX_NAME} characters or fewer (got {n})"
        ));
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.iter().any(|s| *s == "." || *s == "..") {
        return Some(format!(
            "Invalid worktree name {}: must not contain \".\" or \"..\" path segments",
            Value::from(name)
        ));
    }
    let good = |s: &&str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if !segments.iter().all(good) {
        return Some(format!(
            "Invalid worktree name {}: each \"/\"-separated segment must be non-empty and contain \
             only letters, digits, dots, underscores, and dashes",
            Value::from(name)
        ));
    }
    None
}

/// `EnterWorktree`'s arguments, or the text that refuses them.
pub fn enter(args: &Value) -> Result<Enter, String> {
    const TOOL: &str = "EnterWorktree";
    let map = shape(args, &[("name", "string"), ("path", "string")]).map_err(|i| wrap(TOOL, i))?;
    let name = map.get("name").and_then(Value::as_str);
    if let Some(issue) = name.and_then(name_issue) {
        return Err(wrap(TOOL, custom(issue, &["name"])));
    }
    match (name, map.get("path").and_then(Value::as_str)) {
        (Some(_), Some(_)) => Err(wrap(
            TOOL,
            Issue::Listed(json!({"code": "custom", "path": [],
                "message": "Provide at most one of `name` or `path`, not both."})),
        )),
        (None, Some(path)) => Ok(Enter::Path(path.to_string())),
        (name, None) => Ok(Enter::Create(name.map(str::to_string))),
    }
}

/// `ExitWorktree`'s arguments, or the text that refuses them.
pub fn exit(args: &Value) -> Result<Exit, String> {
    const TOOL: &str = "ExitWorktree";
    let map = shape(
        args,
        &[("action", "string"), ("discard_changes", "boolean")],
    )
    .map_err(|i| wrap(TOOL, i))?;
    let remove = match map.get("action").and_then(Value::as_str) {
        Some("keep") => false,
        Some("remove") => true,
        // Absent or another word: the enum's one text (`S230-exit-bad-action`).
        _ => {
            return Err(wrap(
                TOOL,
                Issue::Listed(
                    json!({"code": "invalid_value", "values": ["keep", "remove"],
                    "path": ["action"],
                    "message": "Invalid option: expected one of \"keep\"|\"remove\""}),
                ),
            ));
        }
    };
    Ok(Exit {
        remove,
        discard: map.get("discard_changes").and_then(Value::as_bool) == Some(true),
    })
}

/// The folder and branch part of a name: `x/y` is `x+y`
/// (`.claude/worktrees/x+y`, branch `worktree-x+y`; `S230-bad-name`).
pub fn flat(name: &str) -> String {
    name.replace('/', "+")
}

const ADJECTIVES: &[&str] = &[
    "velvety", "quiet", "brisk", "amber", "gentle", "lucky", "misty", "nimble", "sunny", "wild",
];
const VERBS: &[&str] = &[
    "spinning", "drifting", "humming", "leaping", "glowing", "rolling", "singing", "wading",
];
const NOUNS: &[&str] = &[
    "lightning",
    "otter",
    "harbor",
    "meadow",
    "comet",
    "pebble",
    "lantern",
    "falcon",
];

/// A name for a worktree the model did not name: adjective, verb, noun
/// (`S233-no-name`: `velvety-spinning-lightning`).
pub fn random_name() -> String {
    let id = uuid::Uuid::new_v4();
    let b = id.as_bytes();
    let pick = |list: &[&'static str], byte: u8| list[usize::from(byte) % list.len()];
    format!(
        "{}-{}-{}",
        pick(ADJECTIVES, b[0]),
        pick(VERBS, b[1]),
        pick(NOUNS, b[2])
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_in_claude_code_s_words() {
        let e = enter(&json!({"name": "a b"})).unwrap_err();
        assert!(e.starts_with("<tool_use_error>InputValidationError: [\n  {\n    \"code\": \"custom\",\n    \"message\": \"Invalid worktree name \\\"a b\\\": each"), "{e}");
        assert!(
            enter(&json!({"name": "../x"}))
                .unwrap_err()
                .contains("path segments")
        );
        assert!(
            enter(&json!({"name": "a".repeat(65)}))
                .unwrap_err()
                .contains("(got 65)")
        );
        assert_eq!(
            enter(&json!({"name": 5})).unwrap_err(),
            "<tool_use_error>InputValidationError: EnterWorktree failed due to the following issue:\nThe parameter `name` type is expected as `string` but provided as `number`</tool_use_error>"
        );
        assert_eq!(
            enter(&json!({"name": "x/y"})).unwrap(),
            Enter::Create(Some("x/y".into()))
        );
        assert_eq!(enter(&json!({})).unwrap(), Enter::Create(None));
        assert_eq!(flat("x/y"), "x+y");
        let r = random_name();
        assert_eq!(r.split('-').count(), 3, "{r}");
        assert!(name_issue(&r).is_none());
    }

    #[test]
    fn exit_needs_a_known_action() {
        assert!(
            exit(&json!({}))
                .unwrap_err()
                .contains("expected one of \\\"keep\\\"|\\\"remove\\\"")
        );
        assert_eq!(
            exit(&json!({"action": "remove", "discard_changes": true})).unwrap(),
            Exit {
                remove: true,
                discard: true
            }
        );
    }
}
