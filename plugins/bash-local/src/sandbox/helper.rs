//! `dsh sandbox-exec`: the re-exec helper that puts one command in the
//! sandbox and becomes it.
//!
//! The shell tools spawn the helper (by absolute path, so the spawn stays
//! on `posix_spawn`: no `pre_exec` hook runs in the daemon's child) with
//! the command after `--`:
//!
//! ```text
//! dsh sandbox-exec --mode read-only|workspace-write --cwd <policy cwd>
//!     [--writable-root P]... [--network] [--exclude-slash-tmp]
//!     [--exclude-tmpdir-env-var] [--rw-file F]... [--mask D]... [--probe]
//!     -- <program> <args>...
//! ```
//!
//! It builds the sandbox (`mount.rs`), returns to the folder it was
//! started in (through the new mounts), and `exec`s the program, so the
//! command's exit status and output are the command's own. `--rw-file`
//! keeps one of dsh's own side-channel files writable (the `Bash` tool's
//! final-directory file). `--mask` names an empty folder the caller made
//! where a writable root lacks a protected folder (`masks.rs`): the helper
//! mounts an empty read-only tmpfs on it, as Codex does (C140). `--probe` builds the sandbox and exits 0 without
//! running anything: the plugin's check at load. When the sandbox cannot
//! be built the helper runs nothing: it prints [`MESSAGE_PREFIX`] and the
//! reason on stderr and exits [`EXIT_NOT_RUN`].

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

use super::SandboxError;
use super::mount;
use super::policy::{self, SandboxMode, WorkspaceWrite};
use super::seccomp;

/// The subcommand of the `dsh` binary that runs the helper.
pub const SUBCOMMAND: &str = "sandbox-exec";
/// The exit status of a helper that ran nothing.
pub const EXIT_NOT_RUN: i32 = 125;
/// How the helper's own message starts on stderr.
pub const MESSAGE_PREFIX: &str = "dsh sandbox-exec: ";
/// How it ends.
pub const NOT_RUN_SUFFIX: &str = "; the command did not run";

/// The helper's parsed arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperRequest {
    /// The sandbox mode (never `danger-full-access`: that runs no helper).
    pub mode: SandboxMode,
    /// The folder the policy is computed for (the session's cwd).
    pub cwd: PathBuf,
    /// `workspace-write`'s settings.
    pub workspace: WorkspaceWrite,
    /// dsh's own files the command must be able to write.
    pub rw_files: Vec<PathBuf>,
    /// Empty folders to cover with an empty read-only tmpfs (the
    /// protected folders a writable root lacks).
    pub masks: Vec<PathBuf>,
    /// Build the sandbox and exit without running anything.
    pub probe: bool,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

impl HelperRequest {
    /// The helper's argument list (after the subcommand) for this request.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--mode".into(),
            self.mode.as_str().into(),
            "--cwd".into(),
            self.cwd.clone().into(),
        ];
        for root in &self.workspace.writable_roots {
            args.push("--writable-root".into());
            args.push(root.clone().into());
        }
        let switches = [
            (self.workspace.network_access, "--network"),
            (self.workspace.exclude_slash_tmp, "--exclude-slash-tmp"),
            (
                self.workspace.exclude_tmpdir_env_var,
                "--exclude-tmpdir-env-var",
            ),
            (self.probe, "--probe"),
        ];
        args.extend(switches.iter().filter(|(on, _)| *on).map(|(_, s)| s.into()));
        for file in &self.rw_files {
            args.push("--rw-file".into());
            args.push(file.clone().into());
        }
        for mask in &self.masks {
            args.push("--mask".into());
            args.push(mask.clone().into());
        }
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }

    /// Parses the helper's arguments (after the subcommand).
    pub fn parse(args: &[OsString]) -> Result<HelperRequest, SandboxError> {
        let usage = |m: String| SandboxError::Usage(m);
        let mut mode = None;
        let mut cwd = None;
        let mut workspace = WorkspaceWrite::default();
        let mut rw_files = Vec::new();
        let mut masks = Vec::new();
        let mut probe = false;
        let mut rest = args.iter();
        let mut command = Vec::new();
        while let Some(arg) = rest.next() {
            let mut value = |name: &str| {
                rest.next()
                    .cloned()
                    .ok_or_else(|| usage(format!("{name} needs a value")))
            };
            match arg.to_str() {
                Some("--mode") => {
                    let text = value("--mode")?;
                    mode = match text.to_str().and_then(SandboxMode::parse) {
                        Some(SandboxMode::DangerFullAccess) | None => {
                            return Err(usage(format!(
                                "--mode must be read-only or workspace-write, not {text:?}"
                            )));
                        }
                        found => found,
                    };
                }
                Some("--cwd") => cwd = Some(absolute(value("--cwd")?, "--cwd")?),
                Some("--writable-root") => workspace
                    .writable_roots
                    .push(absolute(value("--writable-root")?, "--writable-root")?),
                Some("--rw-file") => rw_files.push(absolute(value("--rw-file")?, "--rw-file")?),
                Some("--mask") => masks.push(absolute(value("--mask")?, "--mask")?),
                Some("--network") => workspace.network_access = true,
                Some("--exclude-slash-tmp") => workspace.exclude_slash_tmp = true,
                Some("--exclude-tmpdir-env-var") => workspace.exclude_tmpdir_env_var = true,
                Some("--probe") => probe = true,
                Some("--") => {
                    command = rest.cloned().collect();
                    break;
                }
                _ => return Err(usage(format!("unknown argument {arg:?}"))),
            }
        }
        let mode = mode.ok_or_else(|| usage("--mode is required".into()))?;
        let cwd = cwd.ok_or_else(|| usage("--cwd is required".into()))?;
        if command.is_empty() && !probe {
            return Err(usage("no command after `--`".into()));
        }
        Ok(HelperRequest {
            mode,
            cwd,
            workspace,
            rw_files,
            masks,
            probe,
            command,
        })
    }
}

fn absolute(value: OsString, name: &str) -> Result<PathBuf, SandboxError> {
    let path = PathBuf::from(value);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(SandboxError::Usage(format!(
            "{name} must be an absolute path, not {}",
            path.display()
        )))
    }
}

/// Builds the sandbox `request` asks for in this process. After it, the
/// process can write only what the mode allows and holds no capability.
pub fn enter(request: &HelperRequest) -> Result<(), SandboxError> {
    let here = std::env::current_dir().map_err(|source| SandboxError::Setup {
        step: "read the working directory",
        path: PathBuf::from("."),
        source,
    })?;
    // Computed before the namespaces exist: the same files either way.
    let roots = match request.mode {
        SandboxMode::WorkspaceWrite => policy::writable_roots(
            &request.workspace,
            &request.cwd,
            std::env::var_os("TMPDIR").as_deref().map(Path::new),
        ),
        _ => Vec::new(),
    };
    if let Some(missing) = roots.iter().find(|r| !r.root.exists()) {
        return Err(SandboxError::MissingRoot(missing.root.clone()));
    }
    // A mask covers an empty folder and nothing else: never a file, and
    // never a folder with something in it that the mask would hide.
    for mask in &request.masks {
        let empty = std::fs::read_dir(mask).map(|mut d| d.next().is_none());
        match empty {
            Ok(true) => {}
            Ok(false) => {
                return Err(SandboxError::Setup {
                    step: "cover the protected folder",
                    path: mask.clone(),
                    source: std::io::Error::from_raw_os_error(libc::ENOTEMPTY),
                });
            }
            Err(source) => {
                return Err(SandboxError::Setup {
                    step: "read the protected folder to cover",
                    path: mask.clone(),
                    source,
                });
            }
        }
    }
    let network = request.mode == SandboxMode::WorkspaceWrite && request.workspace.network_access;
    mount::enter_namespaces(network)?;
    mount::everything_read_only()?;
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        mount::fresh_tmpfs(shm)?;
    }
    for root in &roots {
        mount::bind(&root.root, false)?;
    }
    for root in &roots {
        for sub in &root.read_only_subpaths {
            // A mask's folder is covered below, not bound.
            if !request.masks.contains(sub) {
                unless_vanished(mount::bind(sub, true), sub)?;
            }
        }
    }
    for mask in &request.masks {
        mount::read_only_tmpfs(mask)?;
    }
    for file in &request.rw_files {
        mount::bind(file, false)?;
    }
    // The old working directory is a reference into the mounts as they
    // were; entered again, it resolves through the new ones.
    std::env::set_current_dir(&here).map_err(|source| SandboxError::Setup {
        step: "return to the working directory",
        path: here.clone(),
        source,
    })?;
    mount::drop_privileges()?;
    if !network {
        seccomp::deny_network_sockets()?;
    }
    Ok(())
}

/// The helper's body: parse, build the sandbox, and `exec` the command.
/// Returns only on failure (or after a probe, with `Ok`).
pub fn run(args: &[OsString]) -> Result<(), SandboxError> {
    let request = HelperRequest::parse(args)?;
    enter(&request)?;
    if request.probe {
        return Ok(());
    }
    let (program, rest) = request
        .command
        .split_first()
        .ok_or_else(|| SandboxError::Usage("no command after `--`".into()))?;
    let err = std::process::Command::new(program).args(rest).exec();
    Err(SandboxError::Exec {
        program: PathBuf::from(OsStr::new(program)),
        source: err,
    })
}

/// A protected folder that was there when the policy looked and is gone
/// when it is bound was another process's: another dsh's empty mask
/// folder (`masks.rs`), removed when its run ended. Nothing is left to
/// protect, so the command runs; any other failure stops it.
fn unless_vanished(bound: Result<(), SandboxError>, path: &Path) -> Result<(), SandboxError> {
    match bound {
        Err(SandboxError::Setup { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            tracing::debug!(path = %path.display(), "a protected folder vanished before the sandbox bound it");
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protected_folder_that_vanished_is_skipped_and_other_failures_stop() {
        let failed = |errno| {
            Err(SandboxError::Setup {
                step: "bind",
                path: PathBuf::from("/tmp/.git"),
                source: std::io::Error::from_raw_os_error(errno),
            })
        };
        let path = Path::new("/tmp/.git");
        assert!(unless_vanished(failed(libc::ENOENT), path).is_ok());
        assert!(unless_vanished(Ok(()), path).is_ok());
        let err = unless_vanished(failed(libc::EPERM), path).expect_err("stops");
        assert!(err.to_string().contains("/tmp/.git"), "{err}");
    }

    #[test]
    fn arguments_round_trip() {
        let request = HelperRequest {
            mode: SandboxMode::WorkspaceWrite,
            cwd: PathBuf::from("/p"),
            workspace: WorkspaceWrite {
                writable_roots: vec![PathBuf::from("/extra")],
                network_access: true,
                exclude_tmpdir_env_var: true,
                exclude_slash_tmp: false,
            },
            rw_files: vec![PathBuf::from("/tmp/dsh-cwd-1")],
            masks: vec![PathBuf::from("/p/.codex")],
            probe: false,
            command: vec!["/bin/bash".into(), "-c".into(), "--mode".into()],
        };
        assert_eq!(HelperRequest::parse(&request.to_args()).ok(), Some(request));
    }

    #[test]
    fn bad_arguments_are_refused_by_name() {
        let parse = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            HelperRequest::parse(&args).map_err(|e| e.to_string())
        };
        let err = parse(&["--mode", "danger-full-access", "--cwd", "/", "--", "x"]).unwrap_err();
        assert!(
            err.contains("--mode must be read-only or workspace-write"),
            "{err}"
        );
        let err = parse(&["--mode", "read-only", "--cwd", "rel", "--", "x"]).unwrap_err();
        assert!(err.contains("--cwd must be an absolute path"), "{err}");
        let err = parse(&["--mode", "read-only", "--cwd", "/"]).unwrap_err();
        assert!(err.contains("no command"), "{err}");
    }
}
