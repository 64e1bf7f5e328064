//! The agent loop: sessions, turns, steps, and the tool pipeline.
//!
//! [`Agent`] owns the live sessions and implements the session operations
//! plugins may request ([`crate::plugins::SessionControl`]). A
//! [`Session`] runs one turn at a time: the turn opens first, every drained
//! prompt goes through `agent/prompt-submit`, then steps alternate model
//! requests and tool calls until `agent/turn-continuation` says stop. The
//! loop's three load-bearing decisions (ARCHITECTURE.md §4) live in [`turn`]; the
//! five-phase tool pipeline in [`pipeline`]; compaction (`/compact`, and
//! automatic once the context is full) in [`compact`].
//!
//! It may call: the seam bus, the tool and service registries (through
//! [`crate::plugins::HostCore`]), the session log, and the `model` service.

mod codex_nicknames;
mod codex_subagent;
mod codex_subagent_manage;
mod codex_subagent_wait;
mod compact;
mod elicitation;
mod feed;
mod input_check;
mod permission_step;
mod pipeline;
mod prelude;
mod rule_services;
mod runtime;
mod session;
mod settings_rules;
mod signal;
mod subagent;
mod subagent_stats;
mod turn;
mod wind_down;

pub use codex_nicknames::NICKNAMES as CODEX_NICKNAMES;
pub use feed::{EventStream, FEED_CAPACITY};
pub use pipeline::APPROVAL_SERVICE;
pub use runtime::{Agent, AgentOptions};
pub use session::{Prompt, Session, TurnOutcome};
pub use settings_rules::{SettingsRules, rule_problems as settings_rule_problems};
pub use signal::TokenSignal;
pub use wind_down::{DEFAULT_GRACE, WindDown, WindDownEnd};
