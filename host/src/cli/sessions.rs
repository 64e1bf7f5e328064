//! `dsh sessions list`, `show` and `repair`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::sync::Arc;

use dsh_host::config::{Manifest, StoreConfig};
use dsh_host::session::postgres::{self, PgOptions, PgStore};
use dsh_host::session::repair::{HeaderFix, repair};
use dsh_host::session::{
    LogError, SessionEvent, SessionLog, SessionStore, check_session_id, transfer,
};

use super::EXIT_IN_USE;

/// The manifest's session store, and where it is (for messages).
fn store(config: &Path) -> Result<(Arc<dyn SessionStore>, String), ExitCode> {
    let manifest = Manifest::load(config).map_err(|e| {
        eprintln!("{e}");
        ExitCode::from(1)
    })?;
    let store = super::open_store(&manifest).map_err(|e| {
        eprintln!("dsh: {e}");
        ExitCode::from(1)
    })?;
    let at = match manifest.store {
        StoreConfig::Files => manifest.state_dir.display().to_string(),
        StoreConfig::Postgres { .. } => store.describe(),
    };
    Ok((store, at))
}

/// One line per session: id, turns, last end reason, cwd. A log whose
/// header cannot be read is listed as `damaged`, with the way forward.
pub(crate) fn sessions_list(config: &Path) -> anyhow::Result<ExitCode> {
    let (store, _) = match store(config) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let listed = match store.list() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    println!("{:<40} {:>5} {:<12} CWD", "SESSION", "TURNS", "LAST");
    for stored in listed {
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
        let events = store.read(&stored.id).map(|s| s.events).unwrap_or_default();
        // A `turn/end` this dsh cannot type (a newer reason) still counts.
        let ends: Vec<String> = events
            .iter()
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
fn print_as_it_stands(store: &dyn SessionStore, id: &str) -> anyhow::Result<()> {
    let snapshot = store.read(id)?;
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
    let (store, at) = match store(config) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    if let Err(e) = check_session_id(id) {
        eprintln!("dsh: {e}");
        return Ok(ExitCode::from(2));
    }
    match SessionLog::open_in(store.as_ref(), id) {
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
            eprintln!("dsh: no session `{id}` under {at}");
            Ok(ExitCode::from(1))
        }
        Err(LogError::Locked { .. } | LogError::HeldElsewhere { .. }) => {
            print_as_it_stands(store.as_ref(), id)?;
            eprintln!(
                "dsh: session `{id}` is in use by another dsh process; shown as it stands, nothing repaired"
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ LogError::Damaged { .. }) => {
            print_as_it_stands(store.as_ref(), id)?;
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// `dsh sessions export ID`: the session as JSONL on stdout or in `output`.
pub(crate) fn sessions_export(
    config: &Path,
    id: &str,
    output: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let (store, at) = match store(config) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let text = match transfer::export(store.as_ref(), id) {
        Ok(t) => t,
        Err(LogError::Missing { .. }) => {
            eprintln!("dsh: no session `{id}` under {at}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    match output {
        Some(path) => {
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("dsh: {}: cannot write: {e}", path.display());
                return Ok(ExitCode::from(1));
            }
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `dsh sessions import FILE`: a JSONL session into the manifest's store.
pub(crate) fn sessions_import(config: &Path, file: &Path) -> anyhow::Result<ExitCode> {
    let (store, _) = match store(config) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let bytes = match read_import(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("dsh: {}: cannot read: {e}", file.display());
            return Ok(ExitCode::from(1));
        }
    };
    match transfer::import(store.as_ref(), file, &bytes) {
        Ok(done) => {
            println!(
                "imported session `{}` ({} events) into {}",
                done.id,
                done.events,
                store.describe()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("dsh: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The bytes of a file to import: a regular file, or a pipe (`<(...)`)
/// read to its end ([`dsh_host::config::open_input`]: a FIFO nobody writes
/// to is read as empty, never waited on; a device is refused).
fn read_import(file: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut f = dsh_host::config::open_input(file)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// `dsh store migrate`: applies pending schema migrations.
pub(crate) fn store_migrate(config: &Path) -> anyhow::Result<ExitCode> {
    let manifest = match Manifest::load(config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(1));
        }
    };
    let StoreConfig::Postgres {
        url,
        retry,
        connect_timeout,
        pool_size,
    } = &manifest.store
    else {
        println!("the session store is `files`: nothing to migrate");
        return Ok(ExitCode::SUCCESS);
    };
    let options = PgOptions {
        url: url.clone(),
        retry: *retry,
        connect_timeout: *connect_timeout,
        pool_size: *pool_size,
    };
    match PgStore::connect_and_migrate(&options) {
        Ok((store, migrated)) => {
            for (version, name) in &migrated.applied {
                println!("applied migration {version}: {name}");
            }
            println!(
                "{}: schema version {} (was {})",
                store.shown(),
                postgres::latest(),
                migrated.from
            );
            Ok(ExitCode::SUCCESS)
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
    let manifest = match Manifest::load(config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let StoreConfig::Postgres { .. } = manifest.store {
        eprintln!(
            "dsh: `sessions repair` rewrites JSONL logs; this manifest keeps sessions in PostgreSQL, whose events are stored whole"
        );
        return Ok(ExitCode::from(1));
    }
    let dir = manifest.state_dir;
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
