//! `dsh check` and `dsh plugins`: load, apply, report.

use std::path::Path;
use std::process::ExitCode;

use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost, PluginStatus};

fn status_word(status: &PluginStatus) -> &'static str {
    match status {
        PluginStatus::Applied => "applied",
        PluginStatus::Disabled => "disabled",
        PluginStatus::Skipped(_) => "skipped",
        PluginStatus::Failed(_) => "failed",
    }
}

/// Loads the manifest and applies every plugin without serving. Exit 0 when
/// every enabled plugin applied, 1 otherwise.
pub(crate) fn check(config: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let manifest = match Manifest::load(config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(1));
        }
    };
    // Problems are printed below, once; keep tracing to real errors.
    super::init_tracing("error");
    let runtime = tokio::runtime::Runtime::new()?;
    let core = HostCore::new(manifest.state_dir.clone(), runtime.handle().clone());
    let mut host = PluginHost::new(core, manifest.path.clone());
    runtime.block_on(async { host.load_manifest(&manifest) });
    if json {
        let out = serde_json::json!({
            "manifest": manifest.path,
            "plugins": host.records(),
            "problems": host.problems().iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{:<18} {:<10} {:<8} {:<9} SEAMS / TOOLS / SERVICES", "ID", "SOURCE", "VERSION", "STATUS");
        for r in host.records() {
            let mut what: Vec<String> = r.seams.clone();
            what.extend(r.tools.iter().map(|t| format!("tool:{t}")));
            what.extend(r.services.iter().map(|s| format!("service:{s}")));
            println!(
                "{:<18} {:<10} {:<8} {:<9} {}",
                r.id,
                r.source.to_string(),
                r.version,
                status_word(&r.status),
                what.join(", ")
            );
        }
        let problems = host.problems();
        if !problems.is_empty() {
            println!("\n{} problem(s):", problems.len());
            for p in problems {
                println!("  {p}");
            }
        }
    }
    Ok(if host.all_applied() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
