//! `dsh check` and `dsh plugins`: load, apply, report.

use std::path::Path;
use std::process::ExitCode;

use dsh_host::config::Manifest;
use dsh_host::plugins::{HostCore, PluginHost, PluginRecord, PluginStatus};

/// `dsh check` and `dsh plugins`: load, apply, report. Exit 0 when every
/// enabled plugin applied and every Claude settings permission rule
/// parses, 1 otherwise; a manifest that cannot be read or
/// parsed is one line on stderr and exit 1.
pub(crate) fn check(
    config: &Path,
    json: bool,
    problems_on_stdout: bool,
) -> anyhow::Result<ExitCode> {
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
    let mut problems: Vec<String> = host.problems().iter().map(|p| p.to_string()).collect();
    // Settings rules that do not parse (each is left out of every session
    // started here, the rest of its file applies).
    let mut bad_rules = 0;
    if let Some((id, config)) = super::claude_config(&manifest) {
        let cwd = std::env::current_dir().unwrap_or_default();
        for problem in
            dsh_host::agent::settings_rule_problems(&config, manifest.state_dir.clone(), &cwd)
        {
            problems.push(format!("plugin `{id}`: {problem}"));
            bad_rules += 1;
        }
    }
    if json {
        let out = serde_json::json!({
            "manifest": manifest.path,
            "plugins": host.records(),
            "problems": problems,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", table(host.records()));
        if !problems.is_empty() {
            let mut text = format!("\n{} problem(s):\n", problems.len());
            for p in &problems {
                text.push_str(&format!("  {p}\n"));
            }
            if problems_on_stdout {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
        }
    }
    Ok(if host.all_applied() && bad_rules == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The plugin table: one row per plugin, columns as wide as their content.
fn table(records: &[PluginRecord]) -> String {
    let mut rows = vec![[
        "ID".to_string(),
        "SOURCE".into(),
        "VERSION".into(),
        "STATUS".into(),
        "SEAMS / TOOLS / SERVICES".into(),
    ]];
    for r in records {
        let status = match &r.status {
            PluginStatus::Applied => "applied",
            PluginStatus::Disabled => "disabled",
            PluginStatus::Skipped(_) => "skipped",
            PluginStatus::Failed(_) => "failed",
            PluginStatus::Kept(_) => "kept",
        };
        let mut what: Vec<String> = r.seams.clone();
        what.extend(r.tools.iter().map(|t| format!("tool:{t}")));
        what.extend(r.services.iter().map(|s| format!("service:{s}")));
        let version = if r.version.is_empty() {
            "-"
        } else {
            &r.version
        };
        rows.push([
            r.id.clone(),
            r.source.to_string(),
            version.to_string(),
            status.to_string(),
            what.join(", "),
        ]);
    }
    let widths: Vec<usize> = (0..4)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (c, width) in widths.iter().enumerate() {
            line.push_str(&format!("{:<width$}  ", row[c]));
        }
        line.push_str(&row[4]);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
