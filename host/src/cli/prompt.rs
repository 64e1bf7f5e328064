//! `dsh prompt`: one turn in-process, printed for a human or as JSONL,
//! then `claude -p`'s wind-down (background jobs get a grace, those that
//! end in it re-invoke the model, the rest are killed:
//! [`Session::wind_down`]); SIGINT and SIGTERM end the turn `aborted` and
//! kill what it started.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use dsh_host::agent::{Prompt, Session, TurnOutcome, WindDown};
use dsh_host::session::{ContextRole, EventSource, LogError, SessionEvent, TurnEndReason};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// Options of `dsh prompt`.
pub(crate) struct PromptArgs {
    pub(crate) config: PathBuf,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) session: Option<String>,
    /// `--continue`: the folder's session active last, if any.
    pub(crate) continue_last: bool,
    pub(crate) json: bool,
    pub(crate) text: String,
    pub(crate) permissions: super::CliPermissions,
    /// `--init`, `--init-only`, `--maintenance`: the Claude bridge's Setup
    /// trigger.
    pub(crate) setup: Option<dsh_hooks_claude::events::setup::SetupTrigger>,
    /// `--init-only`: start the session (Setup, SessionStart), close it, no
    /// prompt.
    pub(crate) init_only: bool,
}

fn indent(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n    ")
}

fn print_human(event: &SessionEvent) {
    match event {
        SessionEvent::UserMessage {
            content,
            source: EventSource::Plugin { plugin },
            ..
        } => println!("[turn opened by {plugin}] {content}"),
        SessionEvent::UserMessage { content, .. } => println!("> {content}"),
        SessionEvent::PromptBlocked { reason, .. } => println!("[prompt blocked] {reason}"),
        SessionEvent::ContextMessage {
            content,
            source,
            role,
        } => {
            let plugin = match source {
                EventSource::Plugin { plugin } => plugin.as_str(),
                _ => "?",
            };
            let kind = match role {
                ContextRole::User => "context",
                ContextRole::System => "system message",
                ContextRole::Developer => "developer message",
            };
            println!("[{kind} from {plugin}] {content}");
        }
        SessionEvent::SteeringMessage { content, .. } => println!("[steering] {content}"),
        SessionEvent::Compacted { trigger, .. } => println!("[compacted ({trigger})]"),
        SessionEvent::AssistantMessage { content, .. } if !content.is_empty() => {
            println!("{content}")
        }
        SessionEvent::ToolCall {
            name, arguments, ..
        } => println!("* {name} {arguments}"),
        SessionEvent::ToolUpdated {
            arguments, plugin, ..
        } => println!("  (arguments rewritten by {plugin}) {arguments}"),
        SessionEvent::ToolDenied { reason, by, .. } => println!("  denied by {by}: {reason}"),
        SessionEvent::ToolResult {
            content,
            is_error,
            images,
            ..
        } => {
            let mark = if *is_error { "error" } else { "result" };
            println!("  {mark}: {}", indent(content));
            for image in images {
                // The base64 length, in bytes of the image.
                let bytes = image.data.len() / 4 * 3;
                println!("  [image {}, about {bytes} bytes]", image.mime_type);
            }
        }
        SessionEvent::TurnEnd {
            reason, message, ..
        } => match message.as_deref() {
            None | Some("") => println!("[turn {}]", reason.as_str()),
            Some(msg) => println!("[turn {}: {msg}]", reason.as_str()),
        },
        SessionEvent::UserNotice { text, .. } => {
            // Words for the user (a hook's `systemMessage`, untrusted
            // project hooks): on stderr, so stdout stays the turn.
            eprintln!("{text}");
        }
        _ => {}
    }
}

/// Ctrl-C and SIGTERM while `dsh prompt` runs. The first cancels the
/// turn: the tool's and hooks' process groups are killed (their futures are
/// dropped) and the turn ends `aborted`. A second stops at once, whatever
/// is still running (a listener that ignores cancellation, session-end).
struct Interrupts {
    first: CancellationToken,
    second: CancellationToken,
    signal: Arc<AtomicI32>,
}

impl Interrupts {
    /// Installs the handlers (inside `runtime`).
    fn install(runtime: &tokio::runtime::Runtime) -> std::io::Result<Interrupts> {
        let _inside = runtime.enter();
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let caught = Interrupts {
            first: CancellationToken::new(),
            second: CancellationToken::new(),
            signal: Arc::new(AtomicI32::new(0)),
        };
        let (first, second, number) = (
            caught.first.clone(),
            caught.second.clone(),
            caught.signal.clone(),
        );
        runtime.spawn(async move {
            loop {
                let signo = tokio::select! {
                    Some(()) = interrupt.recv() => libc::SIGINT,
                    Some(()) = terminate.recv() => libc::SIGTERM,
                    else => return,
                };
                if first.is_cancelled() {
                    second.cancel();
                } else {
                    number.store(signo, Ordering::SeqCst);
                    eprintln!("dsh: interrupted: stopping the turn");
                    first.cancel();
                }
            }
        });
        Ok(caught)
    }

    /// 128 + the signal's number, once one arrived.
    fn exit_code(&self) -> Option<u8> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            n => u8::try_from(128 + n).ok(),
        }
    }
}

/// Runs one turn, cancelling it when the first signal arrives, whenever
/// that is: a cancel before the turn has opened is kept by the session for
/// it ([`Session::cancel`]). A second signal drops the turn at once
/// (`None`): dropping kills every process it started, and the next load
/// closes it `interrupted`.
async fn run_until(
    session: &Arc<Session>,
    prompt: Prompt,
    interrupts: &Interrupts,
) -> Option<TurnOutcome> {
    let turn = session.prompt(prompt);
    tokio::pin!(turn);
    let mut stopping = false;
    loop {
        tokio::select! {
            outcome = &mut turn => return Some(outcome),
            _ = interrupts.second.cancelled() => return None,
            _ = interrupts.first.cancelled(), if !stopping => {
                stopping = true;
                session.cancel();
            }
        }
    }
}

/// Winds the session down after its last turn ([`Session::wind_down`]).
/// The first signal stops the wait and cancels a turn it runs; a second
/// drops it at once (`None`), as [`run_until`] does.
async fn wind_down_until(
    session: &Arc<Session>,
    grace: std::time::Duration,
    interrupts: &Interrupts,
) -> Option<WindDown> {
    let wind = session.wind_down(grace, interrupts.first.clone());
    tokio::pin!(wind);
    let mut stopping = false;
    loop {
        tokio::select! {
            wind = &mut wind => return Some(wind),
            _ = interrupts.second.cancelled() => return None,
            _ = interrupts.first.cancelled(), if !stopping => {
                stopping = true;
                session.cancel();
            }
        }
    }
}

/// Why `dsh prompt` did not get to run its turn.
enum Refused {
    /// Another process has the session open.
    InUse(String),
    /// Anything else, already worded.
    Failed(String),
    /// A signal arrived first, or a second one stopped the turn at once.
    Interrupted,
}

impl From<LogError> for Refused {
    fn from(e: LogError) -> Self {
        match e {
            LogError::Locked { .. } | LogError::HeldElsewhere { .. } => {
                Refused::InUse(e.to_string())
            }
            other => Refused::Failed(other.to_string()),
        }
    }
}

/// Runs one turn. Exit 0 when it completed (or hit max tokens), 1 when it
/// failed or was aborted, 3 when every prompt was blocked, 4 when another
/// process has the session open, 128 + the signal's number when SIGINT or
/// SIGTERM stopped it (see `dsh prompt --help`).
pub(crate) fn prompt(args: PromptArgs) -> anyhow::Result<ExitCode> {
    super::init_tracing("warn");
    let runtime = tokio::runtime::Runtime::new()?;
    // First of all: from here on a signal ends the turn cleanly.
    let interrupts = Interrupts::install(&runtime)?;
    // On a terminal, an `ask` is asked there (and Claude hooks learn it, as
    // from the interactive CLI); without one, answered as `claude -p`
    // answers it (no approval service: a refusal).
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let entrypoint = if terminal {
        super::Entrypoint::Terminal
    } else {
        super::Entrypoint::Sdk
    };
    let booted = match super::boot_with(
        &args.config,
        &runtime,
        &args.permissions,
        entrypoint,
        args.setup,
    ) {
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
    if terminal {
        super::approval::mount_terminal_approval(&agent);
    }
    let cli_mode = args.permissions.mode;
    let grace = booted.manifest.wind_down_grace;
    let init_only = args.init_only;
    let stops = &interrupts;
    let outcome = runtime.block_on(async move {
        let opening = async {
            let chosen = match args.session {
                None if args.continue_last => agent.latest_session(&cwd).await?,
                other => other,
            };
            match chosen {
                Some(id) if agent.exists(&id) => agent.resume_session(&id).await,
                other => agent.create_session(&cwd, other).await,
            }
        };
        let session = tokio::select! {
            biased;
            _ = stops.first.cancelled() => return Err(Refused::Interrupted),
            session = opening => session?,
        };
        // A resumed session keeps the mode it was last set to, unless the
        // command line says otherwise.
        if let Some(mode) = cli_mode {
            session.set_permission_mode(mode, "cli");
        }
        // `--init-only`: Setup and SessionStart ran as the session opened;
        // it ends without a prompt (recorded S242-init-only).
        if init_only {
            tokio::select! {
                _ = agent.close_session(&session.id, "other") => {}
                _ = stops.second.cancelled() => {}
            }
            return Ok::<_, Refused>((session.id.clone(), None));
        }
        // The manifest's MCP servers; one that fails is reported and the
        // prompt runs without it.
        for failed in agent.connect_mcp(&session, Vec::new()).await {
            eprintln!("dsh: {failed}");
        }
        // `/compact` is a command unless the session compacts as Codex
        // does: `codex exec` sends it to the model (`C90-slash-compact`).
        let prompt = Prompt::typed(args.text, session.compaction_style());
        // A headless run: what plugins open as turns (a background job's
        // end) runs after this turn, in the wind-down.
        session.run_headless();
        let Some(outcome) = run_until(&session, prompt, stops).await else {
            eprintln!("dsh: stopped at once; the turn is closed `interrupted` when the session is next loaded");
            return Err(Refused::Interrupted);
        };
        // `claude -p`'s wind-down: background jobs still running get a
        // grace, and those that end in it re-invoke the model.
        let Some(wind) = wind_down_until(&session, grace, stops).await else {
            eprintln!("dsh: stopped at once; the turn is closed `interrupted` when the session is next loaded");
            return Err(Refused::Interrupted);
        };
        tokio::select! {
            _ = agent.close_session(&session.id, wind.end_reason()) => {}
            _ = stops.second.cancelled() => {}
        }
        let mut outcomes = vec![outcome];
        outcomes.extend(wind.turns);
        Ok::<_, Refused>((session.id.clone(), Some(outcomes)))
    });
    let (session_id, outcomes) = match outcome {
        Ok((id, Some(outcomes))) => (id, outcomes),
        Ok((id, None)) => {
            eprintln!("session {id} ({})", booted.manifest.state_dir.display());
            return Ok(ExitCode::from(interrupts.exit_code().unwrap_or(0)));
        }
        Err(Refused::InUse(message)) => {
            eprintln!("dsh: {message}");
            return Ok(ExitCode::from(super::EXIT_IN_USE));
        }
        Err(Refused::Failed(message)) => {
            eprintln!("dsh: {message}");
            return Ok(ExitCode::from(1));
        }
        Err(Refused::Interrupted) => {
            return Ok(ExitCode::from(interrupts.exit_code().unwrap_or(1)));
        }
    };
    let events = outcomes.iter().flat_map(|o| &o.events);
    if args.json {
        for event in events {
            println!("{event}");
        }
    } else {
        for event in events {
            print_human(&event.event);
        }
        eprintln!(
            "session {session_id} ({})",
            booted.manifest.state_dir.display()
        );
    }
    let _ = &booted.host;
    if let Some(code) = interrupts.exit_code() {
        return Ok(ExitCode::from(code));
    }
    // The run ends as its last turn did (the wind-down's, if it ran one).
    let last = outcomes.last().map(|o| o.reason);
    Ok(match last.unwrap_or(TurnEndReason::Error) {
        TurnEndReason::Completed | TurnEndReason::MaxTokens => ExitCode::SUCCESS,
        TurnEndReason::Rejected => ExitCode::from(3),
        _ => ExitCode::from(1),
    })
}
