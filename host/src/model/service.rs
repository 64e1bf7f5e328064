//! The `model` service of a built-in provider, read and answered as text.
//!
//! A plugin's service made with the SDK (`Host::provide_service`) gets its
//! arguments as a `serde_json::Value` parsed from the caller's text, which
//! the provider then types as a [`ModelRequest`]; for a model request that
//! is the whole history parsed twice and a tree of values built and freed
//! per request (issue 15: a tenth of the daemon's time under many
//! sessions). [`provide`] reads the text straight into a [`ModelRequest`]
//! and writes the reply straight to text. The tools' schemas are not typed
//! as values at all: the handler gets them as [`ToolText`]s, each schema's
//! text as the value it would have been writes it (made once per distinct
//! schema, see `request_text`), and the request with no tools. Anything the
//! direct read refuses (a wrong method, text that is not JSON, a request of
//! the wrong shape) takes the SDK's path unchanged, so every answer and
//! error is the same as before.

use std::future::Future;
use std::sync::Arc;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::Host;
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::model::METHOD_COMPLETE;

use super::MODEL_SERVICE;
use super::request_text::{IncomingTool, ToolText};
use super::scripted::read_request;
use super::wire::{ChatMessage, ModelError, ModelErrorKind, ModelReply, ModelRequest};

/// Mounts `handler` as the `model` service; it answers a request (its
/// `tools` empty, the tools beside it) with the reply or the error's wire
/// text (`ModelError::to_wire`).
pub(crate) fn provide<F, Fut>(host: &Host, handler: F) -> Result<(), String>
where
    F: Fn(ModelRequest, Vec<ToolText>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ModelReply, String>> + Send + 'static,
{
    let service: ServiceBox = Service_TO::from_ptr(
        abi_stable::std_types::RArc::new(TextService(Arc::new(handler))),
        TD_Opaque,
    );
    host.raw()
        .provide_service(MODEL_SERVICE.into(), service)
        .into_result()
        .map_err(RString::into_string)
}

struct TextService<F>(Arc<F>);

impl<F> Clone for TextService<F> {
    fn clone(&self) -> Self {
        TextService(self.0.clone())
    }
}

/// A [`ModelRequest`]'s text as read here: its tools' schemas left as
/// text (what `ModelRequest` reads, but for the schemas' type).
#[derive(serde::Deserialize)]
struct Incoming {
    session_id: String,
    messages: Vec<ChatMessage>,
    tools: Vec<IncomingTool>,
}

/// The request in `args` (its tools apart), as the SDK's service and
/// [`read_request`] would read it (the same errors, in the same order).
fn request(method: &str, args: &str) -> Result<(ModelRequest, Vec<ToolText>), String> {
    if method == METHOD_COMPLETE
        && let Ok(request) = serde_json::from_str::<Incoming>(args)
    {
        let tools = request.tools.into_iter().map(IncomingTool::into_text);
        let tools = tools.collect();
        let request = ModelRequest {
            session_id: request.session_id,
            messages: request.messages,
            tools: Vec::new(),
        };
        return Ok((request, tools));
    }
    let args: serde_json::Value =
        serde_json::from_str(args).map_err(|e| format!("arguments are not JSON: {e}"))?;
    let mut request = read_request(method, args).map_err(|e| e.to_wire())?;
    let tools = std::mem::take(&mut request.tools);
    Ok((
        request,
        tools.into_iter().map(ToolText::from_tool).collect(),
    ))
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

impl<F, Fut> Service for TextService<F>
where
    F: Fn(ModelRequest, Vec<ToolText>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ModelReply, String>> + Send + 'static,
{
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let handler = self.0.clone();
        async move {
            let (request, tools) = match request(&method, &args) {
                Ok(read) => read,
                Err(e) => return RResult::RErr(e.into()),
            };
            drop(args);
            let call = std::panic::AssertUnwindSafe(async move { handler(request, tools).await });
            match futures::FutureExt::catch_unwind(call).await {
                Ok(Ok(reply)) => match serde_json::to_string(&reply) {
                    Ok(text) => RResult::ROk(text.into()),
                    Err(e) => RResult::RErr(
                        ModelError::new(ModelErrorKind::Other, e.to_string())
                            .to_wire()
                            .into(),
                    ),
                },
                Ok(Err(e)) => RResult::RErr(e.into()),
                Err(panic) => {
                    RResult::RErr(format!("service panicked: {}", panic_message(&panic)).into())
                }
            }
        }
        .into_ffi()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ChatMessage;

    #[test]
    fn a_request_reads_as_the_sdk_path_reads_it() {
        let sent = ModelRequest {
            session_id: "s".into(),
            messages: vec![ChatMessage::new("user", "hi \u{e9}")],
            tools: vec![crate::model::ModelTool {
                name: "Bash".into(),
                description: "runs".into(),
                input_schema: serde_json::json!({"type": "object", "properties": {"b": {}, "a": {}}}),
            }],
        };
        let text = serde_json::to_string(&sent).unwrap();
        let direct = request(METHOD_COMPLETE, &text);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let sdk = read_request(METHOD_COMPLETE, value).map_err(|e| e.to_wire());
        let tools_text = |tools: &[ToolText]| serde_json::to_string(tools).unwrap();
        let (read, tools) = direct.unwrap();
        let mut sdk = sdk.unwrap();
        let sdk_tools: Vec<ToolText> = std::mem::take(&mut sdk.tools)
            .into_iter()
            .map(ToolText::from_tool)
            .collect();
        assert_eq!(read, sdk);
        assert_eq!(tools_text(&tools), tools_text(&sdk_tools));
        // The tools write as the typed ones did.
        assert_eq!(
            tools_text(&tools),
            serde_json::to_string(&sent.tools).unwrap()
        );
        let mut without = sent.clone();
        without.tools.clear();
        assert_eq!(read, without);
        // Refusals: the same words as the SDK's service and `read_request`.
        let not_json = serde_json::from_str::<serde_json::Value>("{not json").unwrap_err();
        assert_eq!(
            request(METHOD_COMPLETE, "{not json").map(|_| ()),
            Err(format!("arguments are not JSON: {not_json}"))
        );
        let wrong = request("other", &text).unwrap_err();
        assert!(wrong.contains("no method `other`"), "{wrong}");
        let shape = request(METHOD_COMPLETE, r#"{"session_id": 3}"#).unwrap_err();
        assert!(shape.contains("malformed model request"), "{shape}");
    }
}
