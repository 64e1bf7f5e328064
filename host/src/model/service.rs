//! The `model` service of a built-in provider, read and answered as text.
//!
//! A plugin's service made with the SDK (`Host::provide_service`) gets its
//! arguments as a `serde_json::Value` parsed from the caller's text, which
//! the provider then types as a [`ModelRequest`]; for a model request that
//! is the whole history parsed twice and a tree of values built and freed
//! per request (issue 15: a tenth of the daemon's time under many
//! sessions). [`provide`] reads the text straight into a [`ModelRequest`]
//! and writes the reply straight to text. Anything the direct read refuses
//! (a wrong method, text that is not JSON, a request of the wrong shape)
//! takes the SDK's path unchanged, so every answer and error is the same
//! as before.

use std::future::Future;
use std::sync::Arc;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::Host;
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::model::METHOD_COMPLETE;

use super::MODEL_SERVICE;
use super::scripted::read_request;
use super::wire::{ModelError, ModelErrorKind, ModelReply, ModelRequest};

/// Mounts `handler` as the `model` service; it answers a request with the
/// reply or the error's wire text (`ModelError::to_wire`).
pub(crate) fn provide<F, Fut>(host: &Host, handler: F) -> Result<(), String>
where
    F: Fn(ModelRequest) -> Fut + Send + Sync + 'static,
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

/// The request in `args`, as the SDK's service and [`read_request`] would
/// read it (the same errors, in the same order).
fn request(method: &str, args: &str) -> Result<ModelRequest, String> {
    if method == METHOD_COMPLETE
        && let Ok(request) = serde_json::from_str::<ModelRequest>(args)
    {
        return Ok(request);
    }
    let args: serde_json::Value =
        serde_json::from_str(args).map_err(|e| format!("arguments are not JSON: {e}"))?;
    read_request(method, args).map_err(|e| e.to_wire())
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
    F: Fn(ModelRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ModelReply, String>> + Send + 'static,
{
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let handler = self.0.clone();
        async move {
            let request = match request(&method, &args) {
                Ok(request) => request,
                Err(e) => return RResult::RErr(e.into()),
            };
            drop(args);
            let call = std::panic::AssertUnwindSafe(async move { handler(request).await });
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
            tools: vec![],
        };
        let text = serde_json::to_string(&sent).unwrap();
        let direct = request(METHOD_COMPLETE, &text);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let sdk = read_request(METHOD_COMPLETE, value).map_err(|e| e.to_wire());
        assert_eq!(direct, sdk);
        assert_eq!(direct, Ok(sent));
        // Refusals: the same words as the SDK's service and `read_request`.
        let not_json = serde_json::from_str::<serde_json::Value>("{not json").unwrap_err();
        assert_eq!(
            request(METHOD_COMPLETE, "{not json"),
            Err(format!("arguments are not JSON: {not_json}"))
        );
        let wrong = request("other", &text).unwrap_err();
        assert!(wrong.contains("no method `other`"), "{wrong}");
        let shape = request(METHOD_COMPLETE, r#"{"session_id": 3}"#).unwrap_err();
        assert!(shape.contains("malformed model request"), "{shape}");
    }
}
