//! The everyday commands, printing for humans (or JSON when asked).

#![allow(clippy::print_stdout)] // this module writes the commands' output.

use std::path::Path;
use std::process::ExitCode;

use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost};

pub(crate) fn init_tracing(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DSH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// `dsh check` and `dsh plugins`: load, apply, report.
pub(crate) fn check(config: &Path, json: bool, problems_on_stdout: bool) -> anyhow::Result<ExitCode> {
    let manifest = match Manifest::load(config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(1));
        }
    };
    init_tracing("error");
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
            let status = match &r.status {
                dsh_host::plugins::PluginStatus::Applied => "applied",
                dsh_host::plugins::PluginStatus::Disabled => "disabled",
                dsh_host::plugins::PluginStatus::Skipped(_) => "skipped",
                dsh_host::plugins::PluginStatus::Failed(_) => "failed",
            };
            let mut what: Vec<String> = r.seams.clone();
            what.extend(r.tools.iter().map(|t| format!("tool:{t}")));
            what.extend(r.services.iter().map(|s| format!("service:{s}")));
            println!("{:<18} {:<10} {:<8} {:<9} {}", r.id, r.source.to_string(), r.version, status, what.join(", "));
        }
        let problems = host.problems();
        if !problems.is_empty() {
            println!("\n{} problem(s):", problems.len());
            for p in problems {
                if problems_on_stdout {
                    println!("  {p}");
                } else {
                    eprintln!("  {p}");
                }
            }
        }
    }
    Ok(if host.all_applied() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
