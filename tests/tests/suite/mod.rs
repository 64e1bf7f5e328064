//! What the suite covers:
//! - [`examples`]: the three example plugins load from their `.so` files,
//!   register their seams and do their job at seam level;
//! - [`plugin_host`]: refusals (non-library, no root module, writable, ABI
//!   changed, API major 2), panics in apply and in listeners, missing
//!   services, drop-in folders, dispose;
//! - [`claude_subagent_end`]: a subagent whose model request fails:
//!   StopFailure as the subagent's, the `Agent` call completed with the
//!   error's text (recorded S180);
//! - [`cli`]: `dsh check` and `dsh plugins` over the real binary;
//! - [`compaction`]: `/compact` and automatic compaction of a real
//!   session, its log and the next model request; StopFailure;
//! - [`envfile`]: `CLAUDE_ENV_FILE` of a resumed session: its
//!   SessionStart(resume) hooks write under a fresh id, its `Bash` runs the
//!   startup hooks' files (recorded S160);
//! - [`codex_compaction`]: Codex's compaction (`compaction.style: codex`)
//!   and its PreCompact/PostCompact hooks through `hooks-codex`;
//! - [`codex_subagent`]: Codex's `spawn_agent`/`wait_agent`
//!   (`subagent_tools: codex`) and its SubagentStart/SubagentStop hooks
//!   over the binary; `dsh check`'s warning while they are off;
//! - [`codex_subagent_manage`]: Codex's `send_input`, `close_agent`,
//!   `resume_agent` and a child whose model request fails, over the binary;
//! - [`abi_evolution`]: a plugin built against the frozen 1.0 API works in
//!   this host, what 1.1 added works from a `.so`, a newer minor is refused;
//! - [`discovery`]: per-project hook discovery, trust, and files re-read
//!   when they change;
//! - [`hook_servers`]: socket hook servers (issue 14);
//! - [`http_hooks`]: Claude Code's `http` hooks (issue 14);
//! - [`hostile`]: the hostile-input suite;
//! - [`idle_sessions`]: idle sessions in the daemon hold no file
//!   descriptor, yet stay held (issue 15);
//! - [`permissions`]: the daemon's sessions start with the manifest's
//!   `permissions:`, and a SIGHUP reload changes it for new sessions;
//! - [`reload_atomic`]: reload as one atomic swap of the plugin registry,
//!   under concurrent turns.
//! - [`sandbox`]: Codex's sandbox for the shell tools (`sandbox_mode`) in
//!   real namespaces.
//! - [`native_seams`]: `.so` listeners that answer at once (plugin API
//!   1.5) run on the caller's thread; async ones on plugin threads.
//! - [`store_pg`]: sessions in a real PostgreSQL shared by two daemons.
//! - [`task_tools`]: Claude Code's task tools and TaskCreated/TaskCompleted
//!   hooks over the binary: lists outlive the process, per session.
//! - [`telemetry`]: one turn's spans at an OTLP receiver, the metrics
//!   endpoint scraped.
//! - [`bash_shell`]: Claude's `Bash` over the binary: one output stream,
//!   the shell kept in the project.
//! - [`bgbash`]: a background `Bash` job listed to Stop hooks, gone after
//!   the run.
//! - [`wind_down`]: `dsh prompt`'s wind-down: a job ending in the grace
//!   re-invokes the model; one still running is killed, no SessionEnd.
//! - [`worktree`]: Claude Code's `EnterWorktree`/`ExitWorktree`
//!   (`tools-worktree`) making and removing real git worktrees.
//! - [`memory2`]: Claude Code's rules and nested memory, user slash
//!   commands, Setup (`dsh prompt --init`) over the binary.

mod abi_evolution;
mod bash_shell;
mod bgbash;
mod claude_subagent_end;
mod cli;
mod codex_compaction;
mod codex_subagent;
mod codex_subagent_manage;
mod compaction;
mod continue_last;
mod discovery;
mod envfile;
mod examples;
mod hook_servers;
mod hostile;
mod http_hooks;
mod idle_sessions;
mod memory;
mod memory2;
mod native_seams;
mod permissions;
mod plugin_host;
mod reload_atomic;
mod sandbox;
mod slash_commands;
mod store_pg;
mod task_tools;
mod telemetry;
mod wind_down;
mod worktree;
