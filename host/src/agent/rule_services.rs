//! The agent's services about a session's permission rules, mounted at
//! start:
//! - `read-rules` ([`dsh_plugin_api::services::read_rules`]): which of the
//!   files a search found a session's `Read` deny rules keep from it;
//!   `Glob` and `Grep` call it once per search (recorded `S291-deny`);
//! - `turn-rules` ([`dsh_plugin_api::services::turn_rules`]): calls allowed
//!   for the rest of a session's turn; the Claude bridge calls it for a
//!   slash command's `allowed-tools`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use async_ffi::{FfiFuture, FutureExt as _};
use dsh_plugin_api::ffi::{Service, Service_TO, ServiceBox};
use dsh_plugin_api::services::{read_rules, turn_rules};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Agent;
use super::session::Session;

/// The plugin id the services are mounted as.
const OWNER: &str = "agent";

/// Which of the two services a mount is.
#[derive(Clone, Copy)]
enum Kind {
    ReadRules,
    TurnRules,
}

#[derive(Clone)]
struct RuleService {
    agent: Weak<Agent>,
    kind: Kind,
}

impl RuleService {
    fn session(&self, id: &str) -> Result<Arc<Session>, String> {
        let agent = self.agent.upgrade().ok_or("the agent is gone")?;
        agent
            .get(id)
            .ok_or_else(|| format!("no live session `{id}`"))
    }

    fn denied(
        &self,
        request: &read_rules::DeniedRequest,
    ) -> Result<read_rules::DeniedAnswer, String> {
        let session = self.session(&request.session_id)?;
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
        Ok(read_rules::DeniedAnswer { denied })
    }

    fn allow(&self, request: &turn_rules::AllowRequest) -> Result<turn_rules::AllowAnswer, String> {
        let session = self.session(&request.session_id)?;
        Ok(turn_rules::AllowAnswer {
            skipped: session.allow_for_turn(&request.rules),
        })
    }

    fn answer(&self, method: &str, args: &str) -> Result<String, String> {
        match (self.kind, method) {
            (Kind::ReadRules, read_rules::METHOD_DENIED) => {
                json_method(read_rules::SERVICE, method, args, |r| self.denied(r))
            }
            (Kind::TurnRules, turn_rules::METHOD_ALLOW) => {
                json_method(turn_rules::SERVICE, method, args, |r| self.allow(r))
            }
            (Kind::ReadRules, other) => {
                Err(format!("{} has no method `{other}`", read_rules::SERVICE))
            }
            (Kind::TurnRules, other) => {
                Err(format!("{} has no method `{other}`", turn_rules::SERVICE))
            }
        }
    }
}

/// One JSON method: `args` read as `Req`, `f`'s answer written out.
fn json_method<Req: DeserializeOwned, Ans: Serialize>(
    service: &str,
    method: &str,
    args: &str,
    f: impl FnOnce(&Req) -> Result<Ans, String>,
) -> Result<String, String> {
    let request: Req =
        serde_json::from_str(args).map_err(|e| format!("{service} {method}: {e}"))?;
    let answer = f(&request)?;
    serde_json::to_string(&answer).map_err(|e| e.to_string())
}

impl Service for RuleService {
    fn call(&self, method: RString, args: RString) -> FfiFuture<RResult<RString, RString>> {
        let answer = self.answer(method.as_str(), args.as_str());
        async move {
            match answer {
                Ok(text) => RResult::ROk(text.into()),
                Err(e) => RResult::RErr(e.into()),
            }
        }
        .into_ffi()
    }
}

/// Mounts both services for `agent`'s sessions.
pub(super) fn mount(agent: &Arc<Agent>) {
    for (kind, name, without) in [
        (
            Kind::ReadRules,
            read_rules::SERVICE,
            "Read deny rules will not filter searches",
        ),
        (
            Kind::TurnRules,
            turn_rules::SERVICE,
            "slash commands' allowed-tools will allow nothing",
        ),
    ] {
        let service: ServiceBox = Service_TO::from_ptr(
            RArc::new(RuleService {
                agent: Arc::downgrade(agent),
                kind,
            }),
            TD_Opaque,
        );
        if let Err(e) = agent.core.mount_service(OWNER, name, service) {
            tracing::warn!("{without}: {e}");
        }
    }
}
