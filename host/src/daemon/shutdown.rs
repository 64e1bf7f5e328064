//! Ending running turns at shutdown: wait, then abort what is left.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::Agent;

const POLL: Duration = Duration::from_millis(25);
/// How long aborted turns get to write their `turn/end`.
const ABORT_GRACE: Duration = Duration::from_secs(10);

fn busy(agent: &Agent) -> usize {
    agent
        .live_sessions()
        .iter()
        .filter_map(|id| agent.get(id))
        .filter(|s| s.is_busy())
        .count()
}

async fn wait_idle(agent: &Agent, limit: Duration) -> bool {
    // A limit past the clock's range (`shutdown_grace_s` near 2^64) never
    // runs out.
    let deadline = tokio::time::Instant::now().checked_add(limit);
    while busy(agent) > 0 {
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
    true
}

/// Lets running turns finish within `grace`, then cancels the rest (they end
/// `aborted`, fsyncing their logs) and fires session-end for every session.
pub(crate) async fn finish_turns(agent: &Arc<Agent>, grace: Duration) {
    if !wait_idle(agent, grace).await {
        tracing::warn!(
            turns = busy(agent),
            "grace period over: aborting running turns"
        );
        for id in agent.live_sessions() {
            if let Some(session) = agent.get(&id) {
                session.cancel();
            }
        }
        if !wait_idle(agent, ABORT_GRACE).await {
            tracing::error!("some turns did not end after being aborted");
        }
    }
    for id in agent.live_sessions() {
        agent.close_session(&id, "other").await;
    }
}
