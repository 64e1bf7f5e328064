//! `dsh`: argument parsing, exit codes and error reporting; everything else
//! lives in the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// dsh: an agent harness whose every lifecycle point is a typed plugin seam.
#[derive(Parser)]
#[command(name = "dsh", version, about)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load the manifest and apply every plugin without serving.
    Check {
        /// The manifest.
        #[arg(long, default_value = "cordis.yml")]
        config: PathBuf,
    },
    /// List the manifest's plugins with their seams.
    Plugins {
        /// The manifest.
        #[arg(long, default_value = "cordis.yml")]
        config: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Command::Check { config } => cli::check(&config, false, true),
        Command::Plugins { config, json } => cli::check(&config, json, false),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dsh: {e:#}");
            ExitCode::from(2)
        }
    }
}
