//! Codex's sandbox for the shell tools: `read-only`, `workspace-write`,
//! `danger-full-access` (config `sandbox_mode`, Codex's key, with Codex's
//! `sandbox_workspace_write` table).
//!
//! With a mode other than `danger-full-access` (the default: no sandbox,
//! what dsh always did), `Bash` and `exec_command` run their command
//! through the helper `dsh sandbox-exec` ([`helper`]), which builds the
//! sandbox in a fresh user and mount namespace and then becomes the
//! command: writes outside what the mode allows fail `Read-only file
//! system` (as in Codex's runs, C101), and without `network_access` a
//! network socket cannot be made (`socket: Operation not permitted`, as
//! in C110c) inside a network namespace of its own with nothing in it. The
//! hooks and the `process-runner` service are not sandboxed (Codex does
//! not sandbox its hooks either).
//!
//! In `workspace-write`, a protected folder a writable root lacks shows as
//! an empty read-only folder, as in Codex 0.171 (C140): the tool makes
//! the folder on disk for the run and removes it afterwards ([`masks`]),
//! the helper covers it with an empty read-only tmpfs.
//!
//! The sandbox fails closed: when the kernel refuses a user namespace the
//! helper runs nothing and the call's result says why ([`refusal`]); the
//! plugin checks this once when it loads ([`Sandbox::probe`]) and reports
//! it, so `dsh check` fails before any command would.

pub mod helper;
pub mod masks;
mod mount;
pub mod policy;
mod seccomp;

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use helper::{EXIT_NOT_RUN, HelperRequest, MESSAGE_PREFIX, NOT_RUN_SUFFIX, SUBCOMMAND};
pub use masks::Masks;
pub use policy::{SandboxMode, WorkspaceWrite};

use crate::runner::RunAnswer;

/// Why the sandbox could not be built (the command then did not run).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The helper's arguments are wrong.
    #[error("bad arguments: {0}")]
    Usage(String),
    /// The kernel refused a user namespace.
    #[error(
        "the sandbox needs a user namespace and the kernel refused one (unshare: {0}; {hint})",
        hint = userns_hint(.0)
    )]
    UserNamespace(io::Error),
    /// A writable root does not exist (Codex refuses these too).
    #[error("the sandbox's writable root {} does not exist", .0.display())]
    MissingRoot(PathBuf),
    /// A step of building the sandbox failed.
    #[error("cannot {step} {}: {source}", path.display())]
    Setup {
        /// What was being done.
        step: &'static str,
        /// To which path.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// The command could not be started inside the sandbox.
    #[error("cannot run {} in the sandbox: {source}", program.display())]
    Exec {
        /// The program.
        program: PathBuf,
        /// The system's error.
        source: io::Error,
    },
}

/// What usually makes `unshare(CLONE_NEWUSER)` fail with this error.
fn userns_hint(err: &io::Error) -> &'static str {
    match err.raw_os_error() {
        Some(libc::ENOSPC) => "user namespaces are off or used up: sysctl user.max_user_namespaces",
        Some(libc::EPERM) => {
            "unprivileged user namespaces are not allowed here: sysctl \
             kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns, \
             or a seccomp or container policy"
        }
        Some(libc::EUSERS) => "too deeply nested user namespaces",
        Some(libc::EINVAL) => "the kernel has no user namespaces",
        _ => "the kernel does not offer user namespaces to this process",
    }
}

/// A configured sandbox, as the shell tools apply it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// `read-only` or `workspace-write`.
    pub mode: SandboxMode,
    /// `workspace-write`'s settings.
    pub workspace: WorkspaceWrite,
    /// The `dsh` binary whose `sandbox-exec` builds it.
    pub helper: PathBuf,
}

impl Sandbox {
    /// The sandbox `mode` asks for, `None` for `danger-full-access`. The
    /// helper is `helper`, or this process's own executable (the `dsh`
    /// binary).
    pub fn new(
        mode: SandboxMode,
        workspace: &WorkspaceWrite,
        helper: Option<&Path>,
    ) -> Result<Option<Sandbox>, String> {
        if mode == SandboxMode::DangerFullAccess {
            return Ok(None);
        }
        let helper = match helper {
            Some(path) => path.to_path_buf(),
            None => std::env::current_exe()
                .map_err(|e| format!("cannot find dsh's own executable for the sandbox: {e}"))?,
        };
        if let Some(root) = workspace.writable_roots.iter().find(|r| !r.is_absolute()) {
            return Err(format!(
                "sandbox_workspace_write.writable_roots: {} is not an absolute path",
                root.display()
            ));
        }
        Ok(Some(Sandbox {
            mode,
            workspace: workspace.clone(),
            helper,
        }))
    }

    fn request(
        &self,
        policy_cwd: &Path,
        rw_files: &[&Path],
        command: Vec<OsString>,
    ) -> HelperRequest {
        HelperRequest {
            mode: self.mode,
            cwd: policy_cwd.to_path_buf(),
            workspace: self.workspace.clone(),
            rw_files: rw_files.iter().map(|f| f.to_path_buf()).collect(),
            masks: Vec::new(),
            probe: false,
            command,
        }
    }

    /// `program` as the runner spawns it in the sandbox: the helper, its
    /// arguments, then `program`. `policy_cwd` is the session's cwd (what
    /// `workspace-write` makes writable); `rw_files` are dsh's own files
    /// the command writes; `tmpdir` is the command's `$TMPDIR` (a writable
    /// root too). In `workspace-write` it makes the folders of the masks
    /// on disk: keep the returned [`Wrapped`] until the run has ended, its
    /// drop removes them.
    pub fn wrap(
        &self,
        program: Vec<String>,
        policy_cwd: &Path,
        rw_files: &[&Path],
        tmpdir: Option<&Path>,
    ) -> Result<Wrapped, SandboxError> {
        let command = program.into_iter().map(OsString::from).collect();
        let mut request = self.request(policy_cwd, rw_files, command);
        let masks = match self.mode {
            SandboxMode::WorkspaceWrite => {
                let roots = policy::writable_roots(&self.workspace, policy_cwd, tmpdir);
                Masks::make(&policy::missing_protected(&roots))?
            }
            _ => Masks::default(),
        };
        request.masks = masks.paths().to_vec();
        let mut argv = vec![
            self.helper.to_string_lossy().into_owned(),
            SUBCOMMAND.to_string(),
        ];
        argv.extend(
            request
                .to_args()
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned()),
        );
        Ok(Wrapped { argv, masks })
    }

    /// Builds the sandbox once in a throwaway helper (`--probe`) and says
    /// why it cannot be built, if it cannot. Bounded: a helper that does
    /// not answer within 10 s is killed and reported.
    pub fn probe(&self, cwd: &Path) -> Result<(), String> {
        let mut request = self.request(cwd, &[], Vec::new());
        request.probe = true;
        let mut child = std::process::Command::new(&self.helper)
            .arg(SUBCOMMAND)
            .args(request.to_args())
            .current_dir(cwd)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the sandbox helper {} {SUBCOMMAND}: {e}",
                    self.helper.display()
                )
            })?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    // The helper makes a few system calls and exits; a
                    // short poll bounds a helper that hangs.
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "the sandbox helper {} {SUBCOMMAND} did not finish within 10 s",
                        self.helper.display()
                    ));
                }
                Err(e) => return Err(format!("cannot wait for the sandbox helper: {e}")),
            }
        };
        if status.success() {
            return Ok(());
        }
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            use std::io::Read as _;
            let _ = pipe.by_ref().take(64 * 1024).read_to_string(&mut stderr);
        }
        // The helper's line is written for a command it did not run; a
        // probe had none.
        let message = stderr.trim();
        let message = message.strip_suffix(NOT_RUN_SUFFIX).unwrap_or(message);
        Err(match message.strip_prefix(MESSAGE_PREFIX) {
            Some(reason) => reason.to_string(),
            None => format!(
                "the sandbox helper {} {SUBCOMMAND} failed ({status}): {message}",
                self.helper.display()
            ),
        })
    }
}

/// A command wrapped for the sandbox, and the mask folders its run uses.
#[derive(Debug)]
pub struct Wrapped {
    /// What the runner spawns.
    pub argv: Vec<String>,
    /// Removes the folders made for the masks when dropped (after the run).
    pub masks: Masks,
}

/// The `$TMPDIR` a command run with `explicit` variables sees: theirs,
/// else this process's.
pub fn command_tmpdir(explicit: Option<&String>) -> Option<PathBuf> {
    match explicit {
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::var_os("TMPDIR").map(PathBuf::from),
    }
}

/// When a sandboxed run did not run its command because the helper could
/// not build the sandbox: the helper's message, for the call's result.
pub fn refusal(outcome: &RunAnswer) -> Option<String> {
    if outcome.exit_code != Some(EXIT_NOT_RUN) {
        return None;
    }
    // On stderr, or on stdout for a run whose streams were merged.
    let line = outcome
        .stderr
        .lines()
        .chain(outcome.stdout.lines())
        .find(|l| l.starts_with(MESSAGE_PREFIX))?;
    Some(line.to_string())
}
