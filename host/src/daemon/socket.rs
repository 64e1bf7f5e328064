//! The daemon's socket: owner-only, refuses other users, never steals a
//! live daemon's path, and never deletes anything but a stale socket.
//!
//! What may already sit at the path decides what happens: nothing, bind;
//! a socket nobody answers on (a dead daemon's), remove it and bind; a
//! socket that answers, refuse ("already serving"); anything else (a
//! regular file, a folder, a symlink, a fifo, a device) is refused with the
//! path and what it is, and left untouched. A typo such as
//! `socket: cordis.yml` must not cost the user their manifest.

use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

/// Why the socket could not be served.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// Another daemon answers on the path.
    #[error("{0}: another dsh daemon is already serving here")]
    InUse(PathBuf),
    /// Something other than a socket sits at the path.
    #[error(
        "{path}: {what}, not a socket; refusing to replace it (remove it yourself or point `socket:` elsewhere)"
    )]
    NotASocket {
        /// The socket path.
        path: PathBuf,
        /// What is there: "a regular file", "a folder", ...
        what: &'static str,
    },
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
    clear_stale(path)?;
    let listener = UnixListener::bind(path).map_err(|e| io(path, "cannot bind", e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| io(path, "cannot restrict the socket to its owner", e))?;
    Ok(listener)
}

/// What a file type is, in words.
fn kind(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_file() {
        "a regular file"
    } else if file_type.is_dir() {
        "a folder"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_fifo() {
        "a fifo"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "a device"
    } else {
        "something"
    }
}

/// Leaves `path` free to bind: removes a stale socket, refuses anything
/// else. Never follows a symlink.
fn clear_stale(path: &Path) -> Result<(), SocketError> {
    let before = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(path, "cannot inspect the socket path", e)),
    };
    if !before.file_type().is_socket() {
        return Err(SocketError::NotASocket {
            path: path.to_path_buf(),
            what: kind(before.file_type()),
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => return Err(SocketError::InUse(path.to_path_buf())),
        // Refused: nobody listens, the socket is a dead daemon's.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
        Err(e) => return Err(io(path, "cannot tell whether the socket is in use", e)),
    }
    // The same socket still (not swapped meanwhile), then remove it.
    let still = std::fs::symlink_metadata(path)
        .map_err(|e| io(path, "cannot inspect the socket path", e))?;
    if !(still.file_type().is_socket()
        && still.ino() == before.ino()
        && still.dev() == before.dev())
    {
        return Err(SocketError::Io {
            path: path.to_path_buf(),
            message: "replaced while dsh checked it; left alone".into(),
        });
    }
    std::fs::remove_file(path).map_err(|e| io(path, "cannot remove the stale socket", e))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(path: &Path) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        bind_socket(path).map(|_| ()).unwrap_err().to_string()
    }

    #[test]
    fn what_is_not_a_socket_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cordis.yml");
        std::fs::write(&file, "plugins: []\n").unwrap();
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        for (path, what) in [
            (&file, "a regular file"),
            (&folder, "a folder"),
            (&link, "a symbolic link"),
            (&dangling, "a symbolic link"),
        ] {
            assert_eq!(
                refusal(path),
                format!(
                    "{}: {what}, not a socket; refusing to replace it (remove it yourself or point `socket:` elsewhere)",
                    path.display()
                )
            );
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "plugins: []\n");
        assert!(folder.is_dir());
        assert_eq!(std::fs::read_link(&link).unwrap(), file);
        assert!(std::fs::symlink_metadata(&dangling).is_ok());
    }

    #[test]
    fn a_stale_socket_is_replaced_and_a_live_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dsh.sock");
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let live = bind_socket(&path).unwrap();
        assert!(
            matches!(bind_socket(&path), Err(SocketError::InUse(p)) if p == path),
            "a live socket is another daemon's"
        );
        drop(live);
    }
}
