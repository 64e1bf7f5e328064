//! Loads one `.so` plugin through abi_stable, refusing what is unsafe or
//! incompatible with an error that names the file and the reason.
//!
//! Each file is opened on its own (`lib_header_from_path` + `check_layout`),
//! never through `RootModule::load_from*`, which caches one library per root
//! module type and so could not load several plugins. Libraries are never
//! unloaded: unloading Rust code is unsound.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use abi_stable::library::{LibraryError, lib_header_from_path};
use dsh_plugin_api::{API_VERSION, PluginModuleRef, api_major};

/// Why a `.so` was refused.
#[derive(Debug, thiserror::Error)]
pub enum PluginLoadError {
    /// Missing or unreadable.
    #[error("{path}: cannot read plugin file: {message}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Group- or world-writable: anyone could swap the code the host runs.
    #[error("{path}: refused: file is writable by group or others (mode {mode:o}); run `chmod go-w` on it")]
    Writable {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Not a loadable shared library.
    #[error("{path}: refused: not a shared library: {message}")]
    NotALibrary {
        /// The file.
        path: PathBuf,
        /// The loader's words.
        message: String,
    },
    /// A library without the dsh root module symbol.
    #[error("{path}: refused: no dsh plugin root module (was it built with `export_plugin!`?): {message}")]
    MissingRoot {
        /// The file.
        path: PathBuf,
        /// The loader's words.
        message: String,
    },
    /// The library's types do not have the layout this host expects.
    #[error("{path}: refused: ABI layout mismatch with this host's dsh-plugin-api: {message}")]
    AbiMismatch {
        /// The file.
        path: PathBuf,
        /// abi_stable's description (first lines).
        message: String,
    },
    /// Built against another major version of the plugin API.
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

/// abi_stable's layout reports are long; the first lines say what differs.
fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).take(n).collect();
    lines.join(" | ")
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
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(PluginLoadError::Writable { path: path_buf, mode });
    }
    let header = lib_header_from_path(path).map_err(|e| match e {
        LibraryError::OpenError { .. } => PluginLoadError::NotALibrary {
            path: path_buf.clone(),
            message: first_lines(&e.to_string(), 2),
        },
        LibraryError::GetSymbolError { .. } => PluginLoadError::MissingRoot {
            path: path_buf.clone(),
            message: first_lines(&e.to_string(), 2),
        },
        other => PluginLoadError::Other {
            path: path_buf.clone(),
            message: first_lines(&other.to_string(), 3),
        },
    })?;
    let module = header.check_layout::<PluginModuleRef>().map_err(|e| match e {
        LibraryError::AbiInstability(_) => PluginLoadError::AbiMismatch {
            path: path_buf.clone(),
            message: first_lines(&e.to_string(), 4),
        },
        other => PluginLoadError::Other {
            path: path_buf.clone(),
            message: first_lines(&other.to_string(), 3),
        },
    })?;
    let found = module.api_version().as_str().to_string();
    if api_major(&found) != api_major(API_VERSION) {
        return Err(PluginLoadError::ApiVersion {
            path: path_buf,
            found,
            expected: API_VERSION,
        });
    }
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
