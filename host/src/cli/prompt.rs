//! `dsh prompt`: one turn in-process, printed for a human or as JSONL.

use std::path::PathBuf;
use std::process::ExitCode;

use dsh_host::agent::Prompt;
use dsh_host::session::{TurnEndReason, events};
use serde_json::Value;

/// Options of `dsh prompt`.
pub(crate) struct PromptArgs {
    pub(crate) config: PathBuf,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) session: Option<String>,
    pub(crate) json: bool,
    pub(crate) text: String,
}

fn s<'a>(event: &'a Value, key: &str) -> &'a str {
    event.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn indent(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n    ")
}

fn print_human(event: &Value) {
    match events::kind(event) {
        "user/message" => println!("> {}", s(event, "content")),
        "prompt/blocked" => println!("[prompt blocked] {}", s(event, "reason")),
        "context/message" => println!("[context from {}] {}", event["source"]["plugin"].as_str().unwrap_or("?"), s(event, "content")),
        "steering/message" => println!("[steering] {}", s(event, "content")),
        "assistant/message" => {
            let text = s(event, "content");
            if !text.is_empty() {
                println!("{text}");
            }
        }
        "tool/call" => println!("* {} {}", s(event, "name"), event["arguments"]),
        "tool/updated" => println!("  (arguments rewritten by {}) {}", s(event, "plugin"), event["arguments"]),
        "tool/denied" => println!("  denied by {}: {}", s(event, "by"), s(event, "reason")),
        "tool/result" => {
            let mark = if event["is_error"].as_bool().unwrap_or(false) { "error" } else { "result" };
            println!("  {mark}: {}", indent(s(event, "content")));
        }
        "turn/end" => {
            let msg = s(event, "message");
            if msg.is_empty() {
                println!("[turn {}]", s(event, "reason"));
            } else {
                println!("[turn {}: {}]", s(event, "reason"), msg);
            }
        }
        _ => {}
    }
}

/// Runs one turn. Exit 0 when it completed (or hit max tokens), 1 when it
/// failed or was aborted, 3 when every prompt was blocked.
pub(crate) fn prompt(args: PromptArgs) -> anyhow::Result<ExitCode> {
    super::init_tracing("warn");
    let runtime = tokio::runtime::Runtime::new()?;
    let booted = match super::boot(&args.config, &runtime) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let cwd = match args.cwd {
        Some(dir) => std::path::absolute(dir)?,
        None => std::env::current_dir()?,
    };
    if !cwd.is_dir() {
        eprintln!("dsh: --cwd {}: not a directory", cwd.display());
        return Ok(ExitCode::from(1));
    }
    let agent = booted.agent.clone();
    let outcome = runtime.block_on(async move {
        let session = match args.session {
            Some(id) if agent.exists(&id) => agent.resume_session(&id).await,
            other => agent.create_session(&cwd, other).await,
        }
        .map_err(|e| e.to_string())?;
        let outcome = session.prompt(Prompt::user(args.text)).await;
        agent.close_session(&session.id, "other").await;
        Ok::<_, String>((session.id.clone(), outcome))
    });
    let (session_id, outcome) = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if args.json {
        for event in &outcome.events {
            println!("{event}");
        }
    } else {
        for event in &outcome.events {
            print_human(event);
        }
        eprintln!("session {session_id} ({})", booted.manifest.state_dir.display());
    }
    let _ = &booted.host;
    Ok(match outcome.reason {
        TurnEndReason::Completed | TurnEndReason::MaxTokens => ExitCode::SUCCESS,
        TurnEndReason::Rejected => ExitCode::from(3),
        _ => ExitCode::from(1),
    })
}
