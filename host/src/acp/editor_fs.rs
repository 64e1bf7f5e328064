//! The `editor-fs` service over ACP: a session's files as its editor holds
//! them, for clients that offer `fs/read_text_file` / `fs/write_text_file`
//! at `initialize`. The file tools call it (`tools-fs`); for a session
//! whose client offers neither (or no client), the answer is `local` and
//! the tools use the disk. Hooks are not involved: they run locally with
//! the same payloads either way.

use std::sync::Arc;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::editor_fs::{
    EditorFsAnswer, METHOD_READ, METHOD_WRITE, ReadRequest, WriteRequest,
};

use super::approval::Routes;

/// The service, backed by whichever client owns the session.
#[derive(Clone)]
pub(crate) struct EditorFsService {
    routes: Arc<Routes>,
}

impl EditorFsService {
    pub(crate) fn boxed(routes: Arc<Routes>) -> ServiceBox {
        Service_TO::from_ptr(RArc::new(EditorFsService { routes }), TD_Opaque)
    }

    async fn read(&self, args: ReadRequest) -> EditorFsAnswer {
        let Some((client, fs)) = self.routes.client_with_fs(&args.session_id) else {
            return EditorFsAnswer::Local;
        };
        if !fs.read_text_file {
            return EditorFsAnswer::Local;
        }
        let request = ReadTextFileRequest::new(args.session_id.clone(), args.path.clone());
        match client.send_request(request).block_task().await {
            Ok(answer) => EditorFsAnswer::Done {
                content: answer.content,
            },
            Err(e) => EditorFsAnswer::Failed { message: e.message },
        }
    }

    async fn write(&self, args: WriteRequest) -> EditorFsAnswer {
        let Some((client, fs)) = self.routes.client_with_fs(&args.session_id) else {
            return EditorFsAnswer::Local;
        };
        if !fs.write_text_file {
            return EditorFsAnswer::Local;
        }
        let request =
            WriteTextFileRequest::new(args.session_id.clone(), args.path.clone(), args.content);
        match client.send_request(request).block_task().await {
            Ok(_) => EditorFsAnswer::Done {
                content: String::new(),
            },
            Err(e) => EditorFsAnswer::Failed { message: e.message },
        }
    }
}

impl Service for EditorFsService {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let this = self.clone();
        async move {
            let answer = match method.as_str() {
                METHOD_READ => match serde_json::from_str::<ReadRequest>(&args) {
                    Ok(args) => this.read(args).await,
                    Err(e) => return RResult::RErr(format!("editor-fs read: {e}").into()),
                },
                METHOD_WRITE => match serde_json::from_str::<WriteRequest>(&args) {
                    Ok(args) => this.write(args).await,
                    Err(e) => return RResult::RErr(format!("editor-fs write: {e}").into()),
                },
                other => return RResult::RErr(format!("editor-fs has no method `{other}`").into()),
            };
            match serde_json::to_string(&answer) {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => RResult::RErr(format!("cannot encode the editor-fs answer: {e}").into()),
            }
        }
        .into_ffi()
    }
}
