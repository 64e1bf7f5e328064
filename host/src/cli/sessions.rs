//! `dsh sessions list` and `dsh sessions show`.

use std::path::Path;
use std::process::ExitCode;

use dsh_host::config::Manifest;
use dsh_host::session::{SessionLog, events, list_sessions, session_path};

fn state_dir(config: &Path) -> Result<std::path::PathBuf, ExitCode> {
    Manifest::load(config).map(|m| m.state_dir).map_err(|e| {
        eprintln!("{e}");
        ExitCode::from(1)
    })
}

/// One line per session: id, turns, last end reason, cwd.
pub(crate) fn sessions_list(config: &Path) -> anyhow::Result<ExitCode> {
    let dir = match state_dir(config) {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    println!("{:<40} {:>5} {:<12} CWD", "SESSION", "TURNS", "LAST");
    for (path, header) in list_sessions(&dir) {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let ends: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .filter(|e: &serde_json::Value| events::kind(e) == "turn/end")
            .collect();
        let last = ends.last().and_then(|e| e["reason"].as_str()).unwrap_or("-").to_string();
        println!("{:<40} {:>5} {:<12} {}", header.session_id, ends.len(), last, header.cwd);
    }
    Ok(ExitCode::SUCCESS)
}

/// The session's events as JSONL (repairing the log like a resume would).
pub(crate) fn sessions_show(config: &Path, id: &str) -> anyhow::Result<ExitCode> {
    let dir = match state_dir(config) {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let path = session_path(&dir, id);
    if !path.exists() {
        eprintln!("dsh: no session `{id}` under {}", dir.display());
        return Ok(ExitCode::from(1));
    }
    match SessionLog::open(&path) {
        Ok(log) => {
            println!("{}", serde_json::to_string(log.header())?);
            for event in log.events() {
                println!("{event}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
