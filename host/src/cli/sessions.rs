//! `dsh sessions list`, `show` and `repair`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dsh_host::config::Manifest;
use dsh_host::session::repair::{HeaderFix, repair};
use dsh_host::session::{
    LogError, LoggedEvent, SessionEvent, SessionLog, list_sessions, read_log, session_path,
};

use super::EXIT_IN_USE;

fn state_dir(config: &Path) -> Result<PathBuf, ExitCode> {
    Manifest::load(config).map(|m| m.state_dir).map_err(|e| {
        eprintln!("{e}");
        ExitCode::from(1)
    })
}

/// One line per session: id, turns, last end reason, cwd. A log whose
/// header cannot be read is listed as `damaged`, with the way forward.
pub(crate) fn sessions_list(config: &Path) -> anyhow::Result<ExitCode> {
    let dir = match state_dir(config) {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    println!("{:<40} {:>5} {:<12} CWD", "SESSION", "TURNS", "LAST");
    for stored in list_sessions(&dir) {
        let header = match &stored.header {
            Ok(h) => h,
            Err(why) => {
                println!("{:<40} {:>5} {:<12} -", stored.id, "-", "damaged");
                eprintln!(
                    "dsh: {}: line 1: {why}; run `dsh sessions repair {}`",
                    stored.path.display(),
                    stored.id
                );
                continue;
            }
        };
        let text = std::fs::read_to_string(&stored.path).unwrap_or_default();
        // A `turn/end` this dsh cannot type (a newer reason) still counts.
        let ends: Vec<String> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<LoggedEvent>(l).ok())
            .filter(|e| e.kind() == "turn/end")
            .map(|e| match &e.event {
                SessionEvent::TurnEnd { reason, .. } => reason.as_str().to_string(),
                SessionEvent::Other(raw) => raw["reason"].as_str().unwrap_or("?").to_string(),
                _ => "?".to_string(),
            })
            .collect();
        let last = ends.last().map_or("-", String::as_str).to_string();
        println!(
            "{:<40} {:>5} {:<12} {}",
            header.session_id,
            ends.len(),
            last,
            header.cwd
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what a log holds as it stands (for a live or a damaged log).
fn print_as_it_stands(path: &Path) -> anyhow::Result<()> {
    let snapshot = read_log(path)?;
    if let Some(header) = &snapshot.header {
        println!("{}", serde_json::to_string(header)?);
    }
    for event in &snapshot.events {
        println!("{event}");
    }
    Ok(())
}

/// The session's events as JSONL. A session another process has open is
/// only read; otherwise the log is loaded as a resume would load it.
pub(crate) fn sessions_show(config: &Path, id: &str) -> anyhow::Result<ExitCode> {
    let dir = match state_dir(config) {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let path = match session_path(&dir, id) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    match SessionLog::open(&path) {
        Ok(log) => {
            println!("{}", serde_json::to_string(log.header())?);
            for event in log.events() {
                println!("{event}");
            }
            if let Some(aside) = &log.kept_aside {
                eprintln!(
                    "dsh: cut a crash-cut last line from the log; the original is kept as {}",
                    aside.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(LogError::Missing { .. }) => {
            eprintln!("dsh: no session `{id}` under {}", dir.display());
            Ok(ExitCode::from(1))
        }
        Err(LogError::Locked { .. }) => {
            print_as_it_stands(&path)?;
            eprintln!(
                "dsh: session `{id}` is in use by another dsh process; shown as it stands, nothing repaired"
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ LogError::Damaged { .. }) => {
            print_as_it_stands(&path)?;
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// `dsh sessions repair ID`: see [`dsh_host::session::repair`].
pub(crate) fn sessions_repair(
    config: &Path,
    id: &str,
    cwd: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let dir = match state_dir(config) {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let cwd = match cwd {
        Some(c) => std::path::absolute(c)?,
        None => std::env::current_dir()?,
    };
    match repair(&dir, id, &cwd) {
        Ok(report) => {
            let Some(aside) = &report.kept_aside else {
                println!("session `{id}`: the log is whole; nothing to repair");
                return Ok(ExitCode::SUCCESS);
            };
            let header = match report.header {
                HeaderFix::Kept => "kept".to_string(),
                HeaderFix::Rewritten => "rebuilt from what line 1 still said".to_string(),
                HeaderFix::Regenerated => format!("regenerated (cwd {})", cwd.display()),
            };
            println!(
                "session `{id}` repaired: {} events kept in order, header {header}",
                report.events
            );
            for d in &report.dropped {
                println!("  line {} left out: {}", d.line, d.message);
            }
            println!("the original is kept as {}", aside.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(LogError::Missing { .. }) => {
            eprintln!("dsh: no session `{id}` under {}", dir.display());
            Ok(ExitCode::from(1))
        }
        Err(e @ LogError::Locked { .. }) => {
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(EXIT_IN_USE))
        }
        Err(e) => {
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
