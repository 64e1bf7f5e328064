//! The shared in-process agent ([`AgentHost`]) in a throwaway folder, with
//! this suite's probes (ids probe1, probe2, ...) between `bash-local` and
//! the scripted model.

use std::sync::Arc;

use dsh_host::agent::{Prompt, Session};
pub use dsh_test_support::agent::{AgentHost, Load};
pub use dsh_test_support::events::{
    Outcome, assert_balanced, bash, events_of, kinds, of_kind, read_jsonl, text,
};
use serde_json::Value;

use super::probe::Probe;

pub struct Harness {
    /// Keeps the temp folders alive as long as the harness.
    pub _dir: tempfile::TempDir,
    pub host: AgentHost,
}

impl std::ops::Deref for Harness {
    type Target = AgentHost;

    fn deref(&self) -> &AgentHost {
        &self.host
    }
}

impl Harness {
    /// bash-local, then each probe config (ids probe1, probe2, ...), then a
    /// scripted model answering `script`; fails on any plugin problem.
    pub fn new(script: Value, probes: &[Value]) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let probes = probes
            .iter()
            .enumerate()
            .map(|(i, config)| Load::native::<Probe>(&format!("probe{}", i + 1), config.clone()))
            .collect();
        let host = AgentHost::scripted(dir.path(), probes, script).problem_free();
        Harness { _dir: dir, host }
    }

    pub async fn run(&self, text: &str) -> (Arc<Session>, Outcome) {
        let session = self.session().await;
        let outcome = session.prompt(Prompt::user(text)).await;
        (session, outcome.into())
    }
}
