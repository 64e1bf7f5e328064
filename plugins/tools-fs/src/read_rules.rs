//! What `Glob` and `Grep` leave out: the files a session's `Read` deny
//! rules cover, as Claude Code's searches leave them out (recorded
//! `S291-deny`). The rules are the session's, so the agent's `read-rules`
//! service judges them ([`dsh_plugin_api::services::read_rules`]); with no
//! such service (a host without an agent), nothing is left out.

use std::path::PathBuf;

use dsh_plugin_api::Host;
use dsh_plugin_api::services::read_rules::{DeniedAnswer, DeniedRequest, METHOD_DENIED, SERVICE};

/// A session's `Read` deny rules, through the agent.
pub(crate) struct ReadRules<'a> {
    pub(crate) host: &'a Host,
    pub(crate) session_id: &'a str,
}

impl ReadRules<'_> {
    /// `paths` without those a deny rule covers. If the agent cannot say,
    /// every path is kept (and the reason logged).
    pub(crate) async fn keep(&self, paths: Vec<PathBuf>) -> Vec<PathBuf> {
        if paths.is_empty() || !self.host.has_service(SERVICE) {
            return paths;
        }
        let request = DeniedRequest {
            session_id: self.session_id.to_string(),
            paths: paths
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
        };
        let Ok(args) = serde_json::to_value(&request) else {
            return paths;
        };
        let answer = match self.host.call_service(SERVICE, METHOD_DENIED, &args).await {
            Ok(answer) => serde_json::from_value::<DeniedAnswer>(answer).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match answer {
            Ok(DeniedAnswer { denied }) if denied.len() == paths.len() => paths
                .into_iter()
                .zip(denied)
                .filter_map(|(path, denied)| (!denied).then_some(path))
                .collect(),
            Ok(_) => {
                tracing::warn!(session = %self.session_id, "read-rules answered for other paths; nothing left out");
                paths
            }
            Err(e) => {
                tracing::warn!(session = %self.session_id, "read-rules failed: {e}; nothing left out");
                paths
            }
        }
    }
}
