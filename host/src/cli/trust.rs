//! `dsh trust`: approve, list and revoke the project hooks the bridges
//! discover (`discover: true`).
//!
//! `dsh trust PATH` approves the project-level hook files a session started
//! in PATH would read, as they are now: `PATH/.claude/settings.json` and
//! `settings.local.json`, and every `.codex/hooks.json` and
//! `.codex/config.toml` from the project root down to PATH. Each is recorded
//! with the hash of its bytes under the project root in
//! `<state_dir>/trust.json` ([`dsh_hook_protocol::trust`]); a file changed
//! afterwards is untrusted again until approved again. Sessions pick the
//! change up at their next turn. Project roots and Codex's home come from
//! the manifest's `hooks-codex` entry (`project_root_markers`,
//! `codex_home`), as the bridge finds them.
//!
//! With a discovering `hooks-codex` entry it also reviews, in Codex's own
//! record (`[hooks.state."<key>"] trusted_hash` in
//! `$CODEX_HOME/config.toml`, [`dsh_hooks_codex::hook_trust`]), every hook
//! of the Codex user layer and of the project's `.codex/` folders as they
//! are now, so they run in dsh and in Codex alike; `--revoke` removes the
//! project's hooks' entries (the user's stay), `--list` shows the entries.
//! Codex's file is the only record of hook reviews: if it cannot be
//! written, `dsh trust` says so and fails (a bridge with `bypass_hook_trust:
//! true` runs hooks without review).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dsh_hook_protocol::discovery::{project_root, read_bounded, sha256};
use dsh_hook_protocol::trust::{Trust, TrustStore};
use dsh_host::config::{Manifest, PluginRef};

/// What `dsh trust` was asked to do.
pub(crate) enum TrustAction {
    /// `--list`.
    List,
    /// `PATH`.
    Approve(PathBuf),
    /// `--revoke PATH`.
    Revoke(PathBuf),
}

/// Where the bridges of a manifest look.
struct Lookup {
    markers: Vec<String>,
    codex_home: PathBuf,
    /// Whether a `hooks-codex` entry discovers (reviews then matter).
    codex_discovers: bool,
    /// Trusted prefixes, with the entry that sets each.
    prefixes: Vec<(String, PathBuf)>,
}

fn lookup(manifest: &Manifest) -> Lookup {
    let base = manifest.path.parent().unwrap_or(Path::new("/"));
    let resolve = |p: &str| base.join(p);
    let mut found = Lookup {
        markers: dsh_hooks_codex::Config::default().project_root_markers,
        codex_home: dsh_hooks_codex::discover::default_codex_home(),
        codex_discovers: false,
        prefixes: Vec::new(),
    };
    for entry in manifest.plugins.iter().filter(|e| !e.disabled) {
        let PluginRef::Builtin(name) = &entry.plugin else {
            continue;
        };
        match name.as_str() {
            "hooks-codex" => {
                if let Ok(c) =
                    serde_json::from_value::<dsh_hooks_codex::Config>(entry.config.clone())
                {
                    found.markers = c.project_root_markers;
                    found.codex_discovers |= c.discover;
                    if let Some(home) = c.codex_home {
                        found.codex_home = resolve(&home);
                    }
                    for p in c.trusted_prefixes {
                        found.prefixes.push((entry.id.clone(), resolve(&p)));
                    }
                }
            }
            "hooks-claude" => {
                if let Ok(c) =
                    serde_json::from_value::<dsh_hooks_claude::Config>(entry.config.clone())
                {
                    for p in c.trusted_prefixes {
                        found.prefixes.push((entry.id.clone(), resolve(&p)));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `dsh trust`. Exit 0 done, 1 nothing to do or a file/record problem.
pub(crate) fn trust(config: &Path, action: TrustAction) -> anyhow::Result<ExitCode> {
    let manifest = match Manifest::load(config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let state_dir = manifest.state_dir.clone();
    let found = lookup(&manifest);
    let mut store = match TrustStore::load(&state_dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("dsh: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    match action {
        TrustAction::List => {
            list(&store, &found);
            Ok(ExitCode::SUCCESS)
        }
        TrustAction::Approve(path) => {
            let Ok(cwd) = std::fs::canonicalize(&path) else {
                eprintln!("dsh: {}: no such folder", path.display());
                return Ok(ExitCode::from(1));
            };
            if !cwd.is_dir() {
                eprintln!("dsh: {}: not a folder", cwd.display());
                return Ok(ExitCode::from(1));
            }
            let (root, mut files) =
                dsh_hooks_codex::discover::project_files(&cwd, &found.markers, &found.codex_home);
            files.extend(dsh_hooks_claude::discover::project_files(&cwd));
            let (reviews, review_errors) = if found.codex_discovers {
                dsh_hooks_codex::discover::reviewable(&cwd, &found.markers, &found.codex_home)
            } else {
                (Vec::new(), Vec::new())
            };
            if files.is_empty() && reviews.is_empty() {
                eprintln!(
                    "dsh: no project hook files for {} (looked for .claude/settings.json, \
                     .claude/settings.local.json and .codex/hooks.json, .codex/config.toml \
                     from {} down); nothing trusted",
                    cwd.display(),
                    root.display()
                );
                return Ok(ExitCode::from(1));
            }
            let mut approved = Vec::new();
            let mut failed = false;
            for file in files {
                match read_bounded(&file) {
                    Ok(bytes) => approved.push((file, sha256(&bytes))),
                    Err(e) => {
                        eprintln!("dsh: {e}; not trusted");
                        failed = true;
                    }
                }
            }
            // Such a file is refused at run time too: nothing to review.
            for e in review_errors {
                eprintln!("dsh: warning: {e}; its Codex hooks were not reviewed");
            }
            if !approved.is_empty() {
                store.approve(&root, &approved, now_ms());
                dsh_host::session::create_state_dir(&state_dir)
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                if let Err(e) = store.save(&state_dir) {
                    eprintln!("dsh: {e}");
                    return Ok(ExitCode::from(1));
                }
                println!("trusted {} ({} file(s)):", root.display(), approved.len());
                for (file, hash) in &approved {
                    println!("  {} {hash}", file.display());
                }
            }
            if !reviews.is_empty() {
                let record = found.codex_home.join("config.toml");
                match dsh_hooks_codex::hook_trust::write_states(&record, &reviews, &[]) {
                    Ok(_) => {
                        println!(
                            "reviewed {} Codex hook(s) in {}:",
                            reviews.len(),
                            record.display()
                        );
                        for (key, hash) in &reviews {
                            println!("  {key} {hash}");
                        }
                    }
                    Err(e) => {
                        eprintln!("dsh: {e}; the Codex hooks were not reviewed");
                        failed = true;
                    }
                }
            }
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        TrustAction::Revoke(path) => {
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            let root = project_root(&path, &found.markers);
            let mut gone = store.revoke(&path);
            gone.extend(store.revoke(&root));
            let mut unreviewed = Vec::new();
            if found.codex_discovers {
                let record = found.codex_home.join("config.toml");
                let keys: Vec<String> = codex_record(&record)
                    .states
                    .into_iter()
                    .filter(|(key, state)| {
                        state.trusted_hash.is_some() && Path::new(key).starts_with(&root)
                    })
                    .map(|(key, _)| key)
                    .collect();
                match dsh_hooks_codex::hook_trust::write_states(&record, &[], &keys) {
                    Ok(changed) => unreviewed = changed,
                    Err(e) => {
                        eprintln!("dsh: {e}");
                        return Ok(ExitCode::from(1));
                    }
                }
            }
            if gone.is_empty() && unreviewed.is_empty() {
                eprintln!("dsh: {} is not trusted", path.display());
                return Ok(ExitCode::from(1));
            }
            if let Err(e) = store.save(&state_dir) {
                eprintln!("dsh: {e}");
                return Ok(ExitCode::from(1));
            }
            for root in gone {
                println!("revoked {root}");
            }
            for key in unreviewed {
                println!("revoked Codex hook review {key}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Codex's record at `path` (empty if it does not read).
fn codex_record(path: &Path) -> dsh_hooks_codex::hook_trust::CodexRecord {
    read_bounded(path)
        .ok()
        .and_then(|bytes| dsh_hooks_codex::hook_trust::CodexRecord::parse(path, &bytes).ok())
        .map(|p| p.value)
        .unwrap_or_default()
}

/// One block per trusted project: each file with its state now.
fn list(store: &TrustStore, found: &Lookup) {
    if store.projects.is_empty() && found.prefixes.is_empty() {
        println!("no trusted projects");
    }
    for (root, project) in &store.projects {
        println!("{root}");
        for (file, hash) in &project.files {
            let now = match read_bounded(Path::new(file)) {
                Ok(bytes) => match store.status(Path::new(file), &sha256(&bytes), &[]) {
                    Trust::Trusted => "trusted",
                    _ => "changed since trusted: untrusted",
                },
                Err(_) => "missing or unreadable",
            };
            println!("  {file} {hash} ({now})");
        }
    }
    for (entry, prefix) in &found.prefixes {
        println!(
            "{} (every project under it; trusted_prefixes of {entry})",
            prefix.display()
        );
    }
    if found.codex_discovers {
        let path = found.codex_home.join("config.toml");
        let mut reviewed: Vec<(String, String)> = codex_record(&path)
            .states
            .into_iter()
            .filter_map(|(key, state)| Some((key, state.trusted_hash?)))
            .collect();
        reviewed.sort();
        if !reviewed.is_empty() {
            println!("Codex hook reviews ({}):", path.display());
        }
        for (key, hash) in reviewed {
            println!("  {key} {hash}");
        }
    }
}
