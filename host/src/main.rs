//! `dsh`: argument parsing, exit codes and error reporting; everything else
//! lives in the library.

// `main` reports fatal errors on stderr itself; that is its job.
#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// The daemon's allocator (issue 15): about a third of a busy daemon's
/// worker time went to glibc's `malloc`/`free` (JSON values and strings
/// built and dropped per request, hook record and frame). Only the `dsh`
/// binary's own allocations: a `.so` plugin keeps its own allocator, and
/// what crosses the boundary is freed by the side that allocated it
/// (abi_stable's types carry their own free).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Run one turn in-process and print it.
    ///
    /// Then, as `claude -p`, background jobs still running get the
    /// manifest's `wind_down_grace_ms` (5000) to end: each that ends
    /// re-invokes the model in a turn of its own (printed too), the rest
    /// are killed and no SessionEnd hook runs. The exit code is the last
    /// turn's.
    ///
    /// Exit codes: 0 the turn completed (or hit max tokens); 1 it failed or
    /// was aborted, or the session could not be opened; 2 bad arguments
    /// (e.g. a session id not of the form [A-Za-z0-9_-]{1,128}); 3 every
    /// prompt was blocked; 4 the session is in use by another dsh process
    /// (it holds the log's lock); 130 / 143 stopped by SIGINT (Ctrl-C) /
    /// SIGTERM: the running tool's and hooks' processes are killed and the
    /// turn ends `aborted`.
    Prompt {
        /// The manifest.
        #[arg(long, default_value = "cordis.yml")]
        config: PathBuf,
        /// Working directory of the session (default: the current one).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Resume this session, or create it with this id (1 to 128 of
        /// A-Z a-z 0-9 _ -).
        #[arg(long, value_parser = session_id)]
        session: Option<String>,
        /// Continue the session of this folder that was active last (as
        /// `claude -c` / `codex exec resume --last`); a new one when the
        /// folder has none.
        #[arg(short = 'c', long = "continue", conflicts_with = "session")]
        continue_last: bool,
        /// Print the turn's session events as JSONL.
        #[arg(long)]
        json: bool,
        /// The session's permission mode, over the manifest's
        /// `permissions.mode`: default, acceptEdits, plan,
        /// bypassPermissions, dontAsk (Claude Code's `--permission-mode`).
        #[arg(long = "permission-mode", value_name = "MODE", value_parser = permission_mode)]
        permission_mode: Option<dsh_host::permissions::PermissionMode>,
        /// Rules whose calls run without asking, in Claude Code's syntax,
        /// comma or space separated: "Bash(git diff:*),Read" (repeatable).
        #[arg(
            long = "allowedTools",
            visible_alias = "allowed-tools",
            value_name = "RULES"
        )]
        allowed_tools: Vec<String>,
        /// Rules whose calls are refused (repeatable), as --allowedTools.
        #[arg(
            long = "disallowedTools",
            visible_alias = "disallowed-tools",
            value_name = "RULES"
        )]
        disallowed_tools: Vec<String>,
        /// Run the Claude bridge's Setup hooks (trigger `init`) before the
        /// session starts, as `claude --init` does.
        #[arg(long, conflicts_with = "maintenance")]
        init: bool,
        /// Run the Setup hooks (trigger `init`) and the session's start,
        /// then exit without a prompt, as `claude --init-only` does.
        #[arg(long = "init-only", conflicts_with_all = ["init", "maintenance"])]
        init_only: bool,
        /// Run the Setup hooks with trigger `maintenance` before the session
        /// starts, as `claude --maintenance` does.
        #[arg(long)]
        maintenance: bool,
        /// The prompt (none with --init-only).
        #[arg(required_unless_present = "init_only")]
        text: Option<String>,
    },
    /// ACP on stdio for editors: relays to a running daemon (`--connect`, or
    /// the manifest's socket when a daemon is listening), or hosts in-process.
    Acp {
        /// The manifest.
        #[arg(long, default_value = "cordis.yml")]
        config: PathBuf,
        /// Relay to the daemon listening on this socket.
        #[arg(long)]
        connect: Option<PathBuf>,
    },
    /// Run the daemon: ACP on the manifest's Unix socket, under systemd or not.
    Serve {
        /// The manifest.
        #[arg(long, default_value = "cordis.yml")]
        config: PathBuf,
    },
    /// Approve the project hooks of a folder (`discover: true`), list the
    /// trusted projects, or revoke one. A changed file is untrusted again
    /// until approved again. Exit 0 done, 1 nothing to do or a problem.
    Trust {
        /// The manifest (for its state_dir and the bridges' settings).
        #[arg(long, default_value = "cordis.yml")]
        config: PathBuf,
        /// List the trusted projects and prefixes.
        #[arg(long, conflicts_with_all = ["path", "revoke"])]
        list: bool,
        /// Forget the trust of this folder's project.
        #[arg(long, value_name = "PATH", conflicts_with = "path")]
        revoke: Option<PathBuf>,
        /// The folder whose project hooks to trust, as they are now.
        #[arg(required_unless_present_any = ["list", "revoke"])]
        path: Option<PathBuf>,
    },
    /// Inspect stored sessions.
    Sessions {
        /// The manifest (for its state_dir).
        #[arg(long, default_value = "cordis.yml", global = true)]
        config: PathBuf,
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Manage the session store (`state:` in the manifest).
    Store {
        /// The manifest (for its `state:` block).
        #[arg(long, default_value = "cordis.yml", global = true)]
        config: PathBuf,
        #[command(subcommand)]
        command: StoreCommand,
    },
}

#[derive(Subcommand)]
enum StoreCommand {
    /// Create or upgrade the PostgreSQL schema (versioned migrations, each
    /// applied once); prints what it applied. `dsh serve` applies pending
    /// migrations itself when it connects.
    Migrate,
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// One line per stored session.
    List,
    /// A session's header and events as JSONL. A session another process
    /// has open is only read; otherwise the log is loaded as a resume would
    /// (closing a turn a crash left open).
    Show {
        /// Session id.
        #[arg(value_parser = session_id)]
        id: String,
    },
    /// Rewrite a damaged log keeping every readable event, in order; the
    /// original is kept as `<id>.jsonl.damaged-<n>`. Exit 0 repaired (or
    /// nothing to repair), 1 failed, 4 the session is in use.
    Repair {
        /// Session id.
        #[arg(value_parser = session_id)]
        id: String,
        /// The working directory a regenerated header gets when the log no
        /// longer says (default: the current one).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Write a session as JSONL (header line, then one event per line), as
    /// it stands, to move it to another store.
    Export {
        /// Session id.
        #[arg(value_parser = session_id)]
        id: String,
        /// Write here instead of stdout.
        #[arg(long)]
        output: Option<PathBuf>,
    },
    /// Read a JSONL session (from `export`, or a file store's log) into the
    /// manifest's store. Refuses a damaged file or an id already stored.
    Import {
        /// The JSONL file.
        file: PathBuf,
    },
}

/// Parses a permission mode (Claude Code's spellings).
fn permission_mode(mode: &str) -> Result<dsh_host::permissions::PermissionMode, String> {
    mode.parse()
}

/// Parses a session id: only dsh's form reaches the commands.
fn session_id(id: &str) -> Result<String, String> {
    dsh_host::session::check_session_id(id)
        .map(|()| id.to_string())
        .map_err(|e| e.to_string())
}

/// Makes dsh non-dumpable before anything else runs: no core dumps, and no
/// process of the same user (a `Bash` command, a hook) can read
/// `/proc/<dsh pid>/environ`, `mem` or `fd/`. The capabilities that would
/// override this (`CAP_SYS_PTRACE`, `CAP_SYS_ADMIN`, `CAP_PERFMON`) are
/// dropped from dsh's bounding set here, before any thread starts, so no
/// child can hold them (and children spawn with `posix_spawn`, see
/// bash-local's runner).
fn make_non_dumpable() {
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        eprintln!(
            "dsh: warning: cannot make the process non-dumpable ({e}); tools may read its \
             environment through /proc"
        );
    }
    if let Err(e) = dsh_bash_local::runner::drop_capabilities_at_startup() {
        // The runner then drops them in each child instead.
        eprintln!("dsh: warning: cannot drop capabilities at startup ({e})");
    }
}

/// `dsh sandbox-exec ... -- <command>`: the helper the shell tools run a
/// sandboxed command through (bash-local's `sandbox::helper`). It is
/// dispatched before anything else: it must stay single-threaded (a user
/// namespace needs that) and dumpable (a non-dumpable process may not
/// write its own uid map), and it becomes the command or exits
/// `EXIT_NOT_RUN` with its reason.
fn sandbox_exec() -> Option<ExitCode> {
    use dsh_bash_local::sandbox::{
        EXIT_NOT_RUN, MESSAGE_PREFIX, NOT_RUN_SUFFIX, SUBCOMMAND, helper,
    };
    let mut args = std::env::args_os().skip(1);
    if args.next()? != SUBCOMMAND {
        return None;
    }
    let args: Vec<std::ffi::OsString> = args.collect();
    Some(match helper::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{MESSAGE_PREFIX}{e}{NOT_RUN_SUFFIX}");
            ExitCode::from(EXIT_NOT_RUN as u8)
        }
    })
}

fn main() -> ExitCode {
    if let Some(code) = sandbox_exec() {
        return code;
    }
    make_non_dumpable();
    let args = Args::parse();
    let result = match args.command {
        Command::Check { config } => cli::check(&config, false, true),
        Command::Plugins { config, json } => cli::check(&config, json, false),
        Command::Prompt {
            config,
            cwd,
            session,
            continue_last,
            json,
            permission_mode,
            allowed_tools,
            disallowed_tools,
            init,
            init_only,
            maintenance,
            text,
        } => cli::prompt(cli::PromptArgs {
            config,
            cwd,
            session,
            continue_last,
            json,
            text: text.unwrap_or_default(),
            setup: cli::setup_of(init || init_only, maintenance),
            init_only,
            permissions: cli::CliPermissions {
                mode: permission_mode,
                allow: cli::split_rules(&allowed_tools),
                deny: cli::split_rules(&disallowed_tools),
            },
        }),
        Command::Serve { config } => cli::serve(&config),
        Command::Acp { config, connect } => cli::acp(cli::AcpArgs { config, connect }),
        Command::Trust {
            config,
            list,
            revoke,
            path,
        } => cli::trust(
            &config,
            match (list, revoke, path) {
                (true, _, _) => cli::TrustAction::List,
                (_, Some(p), _) => cli::TrustAction::Revoke(p),
                (_, None, Some(p)) => cli::TrustAction::Approve(p),
                (false, None, None) => cli::TrustAction::List,
            },
        ),
        Command::Sessions { config, command } => match command {
            SessionsCommand::List => cli::sessions_list(&config),
            SessionsCommand::Show { id } => cli::sessions_show(&config, &id),
            SessionsCommand::Repair { id, cwd } => cli::sessions_repair(&config, &id, cwd),
            SessionsCommand::Export { id, output } => cli::sessions_export(&config, &id, output),
            SessionsCommand::Import { file } => cli::sessions_import(&config, &file),
        },
        Command::Store { config, command } => match command {
            StoreCommand::Migrate => cli::store_migrate(&config),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dsh: {e:#}");
            ExitCode::from(2)
        }
    }
}
