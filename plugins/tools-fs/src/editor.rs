//! Files through the session's editor (the `editor-fs` service), when it
//! offers them: `Read` sees unsaved buffers and `Write`/`Edit` land in the
//! editor. Without the service, or for a session whose editor does not
//! offer it, every call answers `None`: the tool uses the disk as always.

use std::path::Path;

use dsh_plugin_api::Host;
use dsh_plugin_api::services::editor_fs::{
    EditorFsAnswer, METHOD_READ, METHOD_WRITE, ReadRequest, SERVICE, WriteRequest,
};

use crate::error::FsToolError;

/// A read through the editor.
pub(crate) enum EditorRead {
    /// The file's text as the editor holds it.
    Text(String),
    /// The editor could not read it (it may not exist); its message.
    Failed(String),
}

/// One session's editor.
pub(crate) struct Editor<'a> {
    pub(crate) host: &'a Host,
    pub(crate) session_id: &'a str,
}

impl Editor<'_> {
    async fn call(&self, method: &str, args: serde_json::Value) -> Option<EditorFsAnswer> {
        if !self.host.has_service(SERVICE) {
            return None;
        }
        match self.host.call_service(SERVICE, method, &args).await {
            Ok(answer) => serde_json::from_value(answer).ok(),
            Err(e) => {
                tracing::warn!(session = %self.session_id, "editor-fs {method} failed: {e}; using the disk");
                None
            }
        }
    }

    /// `path` as the editor holds it; `None`: use the disk.
    pub(crate) async fn read(&self, path: &Path) -> Option<EditorRead> {
        let request = ReadRequest {
            session_id: self.session_id.to_string(),
            path: path.to_string_lossy().into_owned(),
        };
        match self
            .call(METHOD_READ, serde_json::to_value(request).ok()?)
            .await?
        {
            EditorFsAnswer::Done { content } => Some(EditorRead::Text(content)),
            EditorFsAnswer::Failed { message } => Some(EditorRead::Failed(message)),
            EditorFsAnswer::Local => None,
        }
    }

    /// Writes `content` to `path` in the editor; `None`: use the disk.
    pub(crate) async fn write(
        &self,
        path: &Path,
        content: &str,
    ) -> Option<Result<(), FsToolError>> {
        let request = WriteRequest {
            session_id: self.session_id.to_string(),
            path: path.to_string_lossy().into_owned(),
            content: content.to_string(),
        };
        match self
            .call(METHOD_WRITE, serde_json::to_value(request).ok()?)
            .await?
        {
            EditorFsAnswer::Done { .. } => Some(Ok(())),
            EditorFsAnswer::Failed { message } => Some(Err(FsToolError::Editor {
                action: "write",
                path: path.to_path_buf(),
                message,
            })),
            EditorFsAnswer::Local => None,
        }
    }
}
