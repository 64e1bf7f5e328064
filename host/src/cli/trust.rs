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
    /// Trusted prefixes, with the entry that sets each.
    prefixes: Vec<(String, PathBuf)>,
}

fn lookup(manifest: &Manifest) -> Lookup {
    let base = manifest.path.parent().unwrap_or(Path::new("/"));
    let resolve = |p: &str| base.join(p);
    let mut found = Lookup {
        markers: dsh_hooks_codex::Config::default().project_root_markers,
        codex_home: dsh_hooks_codex::discover::default_codex_home(),
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
            if files.is_empty() {
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
            store.approve(&root, &approved, now_ms());
            dsh_host::session::create_state_dir(&state_dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            if let Err(e) = store.save(&state_dir) {
                eprintln!("dsh: {e}");
                return Ok(ExitCode::from(1));
            }
            println!("trusted {} ({} file(s)):", root.display(), approved.len());
            for (file, hash) in &approved {
                println!("  {} {hash}", file.display());
            }
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        TrustAction::Revoke(path) => {
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            let mut gone = store.revoke(&path);
            gone.extend(store.revoke(&project_root(&path, &found.markers)));
            if gone.is_empty() {
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
            Ok(ExitCode::SUCCESS)
        }
    }
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
}
