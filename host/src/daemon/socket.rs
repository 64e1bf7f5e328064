//! The daemon's socket: owner-only, refuses other users, never steals a
//! live daemon's path.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

/// Why the socket could not be served.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// Another daemon answers on the path.
    #[error("{0}: another dsh daemon is already serving here")]
    InUse(PathBuf),
    /// The file system said no.
    #[error("{path}: {message}")]
    Io {
        /// The socket path.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

fn io(path: &Path, what: &str, e: std::io::Error) -> SocketError {
    SocketError::Io {
        path: path.to_path_buf(),
        message: format!("{what}: {e}"),
    }
}

/// Binds `path` with mode 0600, creating its folder (mode 0700) if needed
/// and replacing a stale socket left by a dead daemon.
pub fn bind_socket(path: &Path) -> Result<UnixListener, SocketError> {
    if let Some(dir) = path.parent()
        && !dir.exists()
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| io(dir, "cannot create the socket's folder", e))?;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(SocketError::InUse(path.to_path_buf()));
        }
        std::fs::remove_file(path).map_err(|e| io(path, "cannot remove the stale socket", e))?;
    }
    let listener = UnixListener::bind(path).map_err(|e| io(path, "cannot bind", e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| io(path, "cannot restrict the socket to its owner", e))?;
    Ok(listener)
}

/// Lets the connection in only if its peer runs as the daemon's user.
pub(crate) fn admit(stream: UnixStream) -> Option<UnixStream> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == me => Some(stream),
        Ok(cred) => {
            tracing::warn!(
                peer_uid = cred.uid(),
                "refused a connection from another user"
            );
            None
        }
        Err(e) => {
            tracing::warn!("refused a connection whose peer is unknown: {e}");
            None
        }
    }
}

/// Removes the socket file at shutdown.
pub(crate) fn remove(path: &Path) {
    if let Err(e) = std::fs::remove_file(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(socket = %path.display(), "cannot remove the socket: {e}");
    }
}
