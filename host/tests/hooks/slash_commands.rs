//! Claude Code's project slash commands through the loop: `/hello world`
//! with `.claude/commands/hello.md` runs its UserPromptExpansion hooks,
//! then UserPromptSubmit (unexpanded prompt), and the model reads the
//! command's blocks (recorded S185).

use serde_json::{Value, json};

use crate::bridge::{Cap, Case, text};
use dsh_host::session::TurnEndReason;

const MARKER: &str = "<command-message>hello</command-message>\n<command-name>/hello</command-name>\n<command-args>world</command-args>\n";

/// A case whose project has `hello.md` = `Say MARK $ARGUMENTS\n`; its
/// files are trusted (every path under the trusted prefix `/`) when
/// `trusted`.
fn case(trusted: bool, model: Value, hooks: impl FnOnce(&Cap) -> Value) -> Case {
    let extra = if trusted {
        json!({"trusted_prefixes": ["/"]})
    } else {
        json!({})
    };
    let c = Case::claude_with(extra, model, hooks);
    std::fs::create_dir_all(c.project.join(".claude/commands")).unwrap();
    std::fs::write(
        c.project.join(".claude/commands/hello.md"),
        "Say MARK $ARGUMENTS\n",
    )
    .unwrap();
    c
}

fn group(command: &str) -> Value {
    json!([{"hooks": [{"type": "command", "command": command}]}])
}

/// The texts of the request's user message(s), and its system messages.
fn users_and_systems(request: &Value) -> (Vec<Value>, Vec<String>) {
    let mut users = Vec::new();
    let mut systems = Vec::new();
    for m in request["messages"].as_array().unwrap() {
        match m["role"].as_str() {
            Some("user") => users.push(m["content"].clone()),
            Some("system") => systems.push(m["content"].as_str().unwrap_or_default().to_string()),
            _ => {}
        }
    }
    (users, systems)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_command_reaches_the_model_expanded_after_its_hooks() {
    let c = case(true, json!([text("ok")]), |cap| {
        json!({
            "UserPromptExpansion": group(&cap.hook("upe.sh", "cat > $CAP/upe.json; echo 'from expansion'")),
            "UserPromptSubmit": group(&cap.hook("ups.sh", "cat > $CAP/ups.json; echo 'from submit'")),
        })
    });
    let (_, out) = c.run("/hello world").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    let upe: Value = serde_json::from_str(&c.cap.read("upe.json")).unwrap();
    for (k, v) in [
        ("hook_event_name", "UserPromptExpansion"),
        ("expansion_type", "slash_command"),
        ("command_name", "hello"),
        ("command_args", "world"),
        ("command_source", "projectSettings"),
        ("prompt", "/hello world"),
    ] {
        assert_eq!(upe[k], json!(v), "{k} in {upe}");
    }
    assert!(upe["prompt_id"].is_string(), "{upe}");
    assert!(upe["permission_mode"].is_string(), "{upe}");
    let ups: Value = serde_json::from_str(&c.cap.read("ups.json")).unwrap();
    assert_eq!(ups["prompt"], json!("/hello world"));
    let requests = c.host.requests();
    let (users, systems) = users_and_systems(&requests[0]);
    let user = serde_json::to_string(&users).unwrap();
    assert!(
        user.contains(
            &serde_json::to_string(MARKER)
                .unwrap()
                .trim_matches('"')
                .to_string()
        ) && user.contains("Say MARK world\\n"),
        "{user}"
    );
    assert!(
        !user.contains("$ARGUMENTS") && !user.contains("\"/hello world\""),
        "{user}"
    );
    assert_eq!(
        systems.last().map(String::as_str),
        Some(
            "UserPromptExpansion hook success: from expansion\n\nUserPromptSubmit hook success: from submit"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expansion_hook_exit_2_stops_the_prompt_with_claudes_text() {
    let mut hook = String::new();
    let c = case(true, json!([text("never")]), |cap| {
        hook = cap.hook("upe.sh", "cat >/dev/null; echo 'no commands' >&2; exit 2");
        json!({"UserPromptExpansion": group(&hook)})
    });
    let (_, out) = c.run("/hello world").await;
    let reason = format!(
        "UserPromptExpansion operation blocked by hook:\n[{hook}]: no commands\n\n\nOriginal prompt: /hello world"
    );
    assert_eq!(
        (out.reason, out.message.as_deref()),
        (TurnEndReason::Rejected, Some(reason.as_str()))
    );
    assert!(c.host.requests().is_empty(), "the model must not be called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expansion_hook_continue_false_stops_the_prompt() {
    let c = case(true, json!([text("never")]), |cap| {
        let out = r#"{"continue":false,"stopReason":"not now"}"#;
        json!({"UserPromptExpansion": group(&cap.hook("upe.sh", &format!("cat >/dev/null; echo '{out}'")))})
    });
    let (_, out) = c.run("/hello world").await;
    assert_eq!(
        (out.reason, out.message.as_deref()),
        (
            TurnEndReason::Rejected,
            Some("Operation stopped by hook: not now")
        )
    );
    assert!(c.host.requests().is_empty(), "the model must not be called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_command_file_is_not_run() {
    let c = case(
        false,
        json!([text("ok")]),
        |cap| json!({"UserPromptExpansion": group(&cap.hook("upe.sh", "cat > $CAP/upe.json"))}),
    );
    let (_, out) = c.run("/hello world").await;
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_eq!(
        c.cap.read("upe.json"),
        "",
        "no expansion hook for an untrusted file"
    );
    let (users, _) = users_and_systems(&c.host.requests()[0]);
    let user = serde_json::to_string(&users).unwrap();
    assert!(
        user.contains("/hello world") && !user.contains("Say MARK"),
        "{user}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_command_is_refused_with_claudes_text_and_no_hook() {
    let c = case(
        true,
        json!([text("never")]),
        |cap| json!({"UserPromptSubmit": group(&cap.hook("ups.sh", "cat > $CAP/ups.json"))}),
    );
    let (_, out) = c.run("/nope world").await;
    assert_eq!(
        (out.reason, out.message.as_deref()),
        (TurnEndReason::Rejected, Some("Unknown command: /nope"))
    );
    assert!(c.host.requests().is_empty(), "the model must not be called");
    assert_eq!(c.cap.read("ups.json"), "", "no UserPromptSubmit for it");
}
