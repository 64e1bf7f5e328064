//! The `read-rules` service ([`dsh_plugin_api::services::read_rules`]):
//! which of the files a search found a session's `Read` deny rules keep
//! from it. The agent mounts it at start; `Glob` and `Grep` call it once
//! per search (recorded `S291-deny`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::read_rules::{DeniedAnswer, DeniedRequest, METHOD_DENIED, SERVICE};

use super::Agent;

/// The plugin id the service is mounted as.
const OWNER: &str = "agent";

#[derive(Clone)]
struct ReadRules {
    agent: Weak<Agent>,
}

impl ReadRules {
    fn denied(&self, request: &DeniedRequest) -> Result<DeniedAnswer, String> {
        let agent = self.agent.upgrade().ok_or("the agent is gone")?;
        let session = agent
            .get(&request.session_id)
            .ok_or_else(|| format!("no live session `{}`", request.session_id))?;
        let perms = session.permissions();
        let cwd = session.current_cwd();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let denied_here =
            crate::permissions::read_denier(&perms, &cwd, &session.cwd, home.as_deref());
        let denied = request
            .paths
            .iter()
            .map(|p| denied_here(Path::new(p)))
            .collect();
        Ok(DeniedAnswer { denied })
    }
}

impl Service for ReadRules {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let answer = match method.as_str() {
            METHOD_DENIED => serde_json::from_str::<DeniedRequest>(&args)
                .map_err(|e| format!("{SERVICE} {METHOD_DENIED}: {e}"))
                .and_then(|request| self.denied(&request))
                .and_then(|answer| serde_json::to_string(&answer).map_err(|e| e.to_string())),
            other => Err(format!("{SERVICE} has no method `{other}`")),
        };
        async move {
            match answer {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => RResult::RErr(e.into()),
            }
        }
        .into_ffi()
    }
}

/// Mounts the service for `agent`'s sessions.
pub(super) fn mount(agent: &Arc<Agent>) {
    let service: ServiceBox = Service_TO::from_ptr(
        RArc::new(ReadRules {
            agent: Arc::downgrade(agent),
        }),
        TD_Opaque,
    );
    if let Err(e) = agent.core.mount_service(OWNER, SERVICE, service) {
        tracing::warn!("Read deny rules will not filter searches: {e}");
    }
}
