//! Loads one `.so` plugin through abi_stable, refusing what is unsafe or
//! incompatible with a one-line error that names the file and the reason.
//!
//! Each file is opened on its own (`lib_header_from_path` + `check_layout`),
//! never through `RootModule::load_from*`, which caches one library per root
//! module type and so could not load several plugins. Libraries are never
//! unloaded: unloading Rust code is unsound.
//!
//! Checks, in order: the file is a regular file; it and every folder on its
//! resolved path are owned by root or the daemon's user and writable by
//! nobody else ([`super::trust`], sshd's `StrictModes` rule); its ELF
//! headers describe a shared library of this machine that the file holds
//! whole ([`super::elf`]); it is a loadable shared library (mapped from the
//! resolved path); it exports the
//! dsh root module; its types and API version are ones this host accepts
//! ([`dsh_plugin_api::compat`]: the same or an older minor of this host's
//! major).

use std::path::{Path, PathBuf};

use abi_stable::library::{LibraryError, lib_header_from_path};
use dsh_plugin_api::compat::{self, Refusal};
use dsh_plugin_api::{API_VERSION, PluginModuleRef};

pub use super::trust::PathPart;

/// Why a `.so` was refused.
#[derive(Debug, thiserror::Error)]
pub enum PluginLoadError {
    /// Missing or unreadable.
    #[error("{path}: refused: cannot read plugin file: {message}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The file or a folder on its resolved path is writable by someone
    /// other than its owner: they could swap the code the host runs.
    #[error(
        "{path}: refused: {part} is writable by group or others (mode {mode:o}); run `chmod go-w` on it"
    )]
    Writable {
        /// The file as named.
        path: PathBuf,
        /// Which part of the path.
        part: PathPart,
        /// Its permission bits.
        mode: u32,
    },
    /// The file or a folder on its resolved path belongs to someone other
    /// than root or the daemon's user, who could swap the code.
    #[error(
        "{path}: refused: {part} is owned by uid {uid} (mode {mode:o}), not by root or the daemon's user (uid {daemon})"
    )]
    Owner {
        /// The file as named.
        path: PathBuf,
        /// Which part of the path.
        part: PathPart,
        /// Its owner.
        uid: u32,
        /// Its permission bits.
        mode: u32,
        /// The daemon's effective user.
        daemon: u32,
    },
    /// Not a loadable shared library.
    #[error("{path}: refused: not a loadable shared library: {message}")]
    NotALibrary {
        /// The file.
        path: PathBuf,
        /// The dynamic loader's words.
        message: String,
    },
    /// A library without the dsh root module symbol.
    #[error(
        "{path}: refused: no dsh plugin root module in this library (a plugin exports one with `export_plugin!`)"
    )]
    MissingRoot {
        /// The file.
        path: PathBuf,
    },
    /// The library's types do not have the layout this host expects.
    #[error(
        "{path}: refused: ABI layout mismatch with this host's dsh-plugin-api (rebuild the plugin against it): {message}"
    )]
    AbiMismatch {
        /// The file.
        path: PathBuf,
        /// A summary of abi_stable's report: the type and what differs.
        message: String,
    },
    /// Built against another major, or a newer minor, of the plugin API.
    #[error("{path}: refused: built against plugin API {found}, this host speaks {expected}")]
    ApiVersion {
        /// The file.
        path: PathBuf,
        /// What the plugin says.
        found: String,
        /// What the host speaks.
        expected: &'static str,
    },
    /// Anything else abi_stable reports.
    #[error("{path}: refused: {message}")]
    Other {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// abi_stable's reports span many lines; problems are one line each.
fn one_line(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(max_lines)
        .collect();
    lines.join(" ")
}

/// The dynamic loader's reason without the path it repeats.
fn loader_reason(path: &Path, err: &dyn std::fmt::Display) -> String {
    let text = err.to_string();
    let prefix = format!("{}: ", path.display());
    one_line(text.strip_prefix(&prefix).unwrap_or(&text), 2)
}

/// Condenses abi_stable's layout report (hundreds of lines) to the type that
/// differs and each `Error:` it lists, with the expected and found values.
fn abi_summary(report: &str) -> String {
    let lines: Vec<&str> = report.lines().map(str::trim).collect();
    let mut culprit = None;
    let mut errors = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(ty) = line.strip_prefix("type:") {
            culprit = Some(ty);
        }
        if let Some(what) = line.strip_prefix("Error:") {
            let value = |label: &str, at: usize| match (lines.get(at), lines.get(at + 1)) {
                (Some(l), Some(v)) if l.starts_with(label) => v.to_string(),
                _ => "?".to_string(),
            };
            let (expected, found) = (value("Expected", i + 1), value("Found", i + 3));
            errors.push(format!("{what} (expected {expected}, found {found})"));
        }
    }
    // The last type named before the errors is the innermost one that differs.
    let culprit = lines
        .iter()
        .rposition(|l| l.starts_with("Layout of expected type"))
        .and_then(|end| {
            lines[..end]
                .iter()
                .rev()
                .find_map(|l| l.strip_prefix("type:"))
        })
        .or(culprit);
    match (culprit, errors.is_empty()) {
        (_, true) => one_line(report, 3),
        (Some(ty), false) => format!("{ty}: {}", errors.join("; ")),
        (None, false) => errors.join("; "),
    }
}

/// Loads the plugin root module of the library at `path`.
pub fn load_library(path: &Path) -> Result<PluginModuleRef, PluginLoadError> {
    let path_buf = path.to_path_buf();
    let meta = std::fs::metadata(path).map_err(|e| PluginLoadError::Unreadable {
        path: path_buf.clone(),
        message: e.to_string(),
    })?;
    if !meta.is_file() {
        return Err(PluginLoadError::Unreadable {
            path: path_buf,
            message: "not a regular file".into(),
        });
    }
    let resolved = super::trust::trusted_path(path)?;
    // Before the dynamic loader: a truncated library would kill the
    // process with SIGBUS when mapped, one of another machine be "missing".
    super::elf::check(&resolved).map_err(|message| PluginLoadError::NotALibrary {
        path: path_buf.clone(),
        message,
    })?;
    let header = lib_header_from_path(&resolved).map_err(|e| match e {
        LibraryError::OpenError { err, .. } => PluginLoadError::NotALibrary {
            path: path_buf.clone(),
            message: loader_reason(&resolved, &err),
        },
        LibraryError::GetSymbolError { .. } => PluginLoadError::MissingRoot {
            path: path_buf.clone(),
        },
        other => PluginLoadError::Other {
            path: path_buf.clone(),
            message: one_line(&other.to_string(), 3),
        },
    })?;
    // The policy's direction, not abi_stable's default: see `compat`.
    let module = compat::accept(header).map_err(|e| match e {
        Refusal::Layout(report) => PluginLoadError::AbiMismatch {
            path: path_buf.clone(),
            message: abi_summary(&report),
        },
        Refusal::Api { found } => PluginLoadError::ApiVersion {
            path: path_buf.clone(),
            found,
            expected: API_VERSION,
        },
        Refusal::Other(message) => PluginLoadError::Other {
            path: path_buf.clone(),
            message: one_line(&message, 3),
        },
    })?;
    Ok(module)
}

/// Every `.so` directly inside `dir`, sorted by name for a stable order.
pub fn libraries_in(dir: &Path) -> Result<Vec<PathBuf>, PluginLoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| PluginLoadError::Unreadable {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "so"))
        .collect();
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_reports_are_summarized_to_the_type_and_the_differences() {
        let report = "Compared <this>:\n type:PrefixRef<'a, PluginModule>\n2 error(s)inside:\n    <other>\n\
                      field_name:0\n type:PluginModule\n field_name:__returns\n type:PluginDescriptor\n\
                      Layout of expected type:\n type:PluginDescriptor\n\
                      Error:incompatible type size\nExpected:\n    192\nFound:\n    200\n\n\
                      Error:too many fields\nExpected:\n    6\nFound:\n    7\n";
        assert_eq!(
            abi_summary(report),
            "PluginDescriptor: incompatible type size (expected 192, found 200); too many fields (expected 6, found 7)"
        );
        assert_eq!(
            abi_summary("something\nelse\nentirely\nhere"),
            "something else entirely"
        );
    }
}
