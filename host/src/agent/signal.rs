//! The host's abort signal: a cancellation token behind the ABI trait.

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::RArc;
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{AbortSignal, AbortSignal_TO, AbortSignalBox};
use tokio_util::sync::CancellationToken;

/// An [`AbortSignal`] that fires when its token is cancelled.
#[derive(Clone)]
pub struct TokenSignal(pub CancellationToken);

impl AbortSignal for TokenSignal {
    fn is_aborted(&self) -> bool {
        self.0.is_cancelled()
    }

    fn aborted(&self) -> FfiFuture<()> {
        self.0.clone().cancelled_owned().into_ffi()
    }
}

impl TokenSignal {
    /// The signal as it crosses the boundary.
    pub fn boxed(token: CancellationToken) -> AbortSignalBox {
        AbortSignal_TO::from_ptr(RArc::new(TokenSignal(token)), TD_Opaque)
    }
}
