//! The hostile-input suite (issue 8): what an attacker, a careless user or
//! a crashing machine does to dsh, driven through the real binary with real
//! files, sockets and processes; only the model is scripted. Each test fails
//! on the code before its fix.
//!
//! - [`audit`]: what an audit of every input surface found: durations
//!   past the clock's range, `.so` files cut short or of another machine,
//!   session logs of another format version, a bad settings rule taking
//!   its file's denies with it, a `log_level` that is no filter, FIFOs and
//!   devices where dsh reads a manifest, script, import, session log,
//!   `CLAUDE_ENV_FILE` or a file tool's path.
//! - [`codex_compaction`]: an unknown `compaction.style` is refused by
//!   name; Codex compaction hook answers Codex rejects change nothing.
//! - [`compaction`]: `compaction:` blocks that are not shares or name
//!   unknown keys are refused by name; `/compact` with nothing to
//!   summarize or a failing summary request loses nothing.
//! - [`compact_transcript`]: compaction hooks printing the transcript's
//!   own markup, blank lines or failing are shown in `/compact`'s output as
//!   Claude Code shows them, and break nothing after it.
//! - [`daemon`]: what sits at the socket path is never deleted unless it is
//!   a stale socket; `accept()` failures back off and recover; a reload
//!   stuck in a plugin's apply does not stop new connections.
//! - [`envfile`]: a resumed session's SessionStart(resume) hook writing
//!   `exit 3` or a syntax error into its `CLAUDE_ENV_FILE` leaves the
//!   session's `Bash` as it was (that file is never run, as in Claude Code).
//! - [`img`]: `Read` of a PNG declaring 100000×100000 pixels (refused by
//!   the decoder's allocation limit), truncated and corrupt images: shown
//!   as they are or refused with Claude Code's text, never decoded whole.
//! - [`manifest`]: empty, comment-only, duplicate-key and oversized
//!   manifests are refused by `dsh check` and by a SIGHUP reload, which
//!   keeps the running plugins.
//! - [`permissions`]: malformed `permissions:` blocks refused naming the
//!   key; hand-edited permission records in a log skipped on resume.
//! - [`read`]: `Read` of image paths holding no image or an undecodable one,
//!   odd JPEG headers, FIFOs, emoji cut at the token cap: named, never
//!   hung on, never split.
//! - [`sandbox`]: a kernel without user namespaces runs no sandboxed
//!   command and says so in the result and in `dsh check`; sandbox
//!   settings that cannot work are refused by name.
//! - [`sessions`]: session ids that are paths, private state, damaged logs
//!   and `dsh sessions repair`;
//! - [`session_processes`]: one writer per log, a crash mid-tool resumed
//!   into a valid conversation, SIGINT and SIGTERM to `dsh prompt`.
//! - [`plugins`]: plugin trust over the whole path, listener time limits,
//!   listeners that block their thread.
//! - [`discovery`]: discovered hook files that are FIFOs, huge, folders,
//!   malformed or symlinks out of the project are refused by name, never
//!   hang a turn, and leave the good files running; a damaged trust record
//!   trusts nothing and is named.
//! - [`bgbash`]: background `Bash` jobs: task ids that are paths, empty,
//!   numbers or absent refused before any hook; a job's output that is not
//!   UTF-8 read with replacement characters (the file keeps its bytes); a
//!   job forking children leaves nothing running when `dsh prompt` ends;
//!   an output folder that cannot be made, or whose root is a symlink or
//!   open to others, is named and runs nothing.
//! - [`file_search`]: `Grep` patterns ripgrep rejects or that are huge, a
//!   NUL in a path, a `Glob` climbing out of its folder, a notebook that is
//!   not JSON, skill names climbing out of `.claude/commands`: results the
//!   model reads, no other file run as a skill.
//! - [`task_tools`]: task ids that are paths, a damaged task file,
//!   arguments of the wrong shape, a task folder that is a file: refused or
//!   skipped by name, nothing lost.
//! - [`trust`]: Codex's own hook-review record (`$CODEX_HOME/config.toml`)
//!   broken, misshapen, a FIFO or a symlink: named, never hangs, reviews
//!   nothing it does not say, and is written only whole and in place.
//! - [`worktree`]: a worktree name git refuses as a branch, a worktree
//!   deleted under the session: Claude Code's texts (recorded S236), no
//!   worktree, folder or branch left behind, the project untouched.
//! - [`hook_answers`]: a Claude Code PreToolUse deny beside JSON nested a
//!   million levels deep: honoured, as Claude Code honours it (S279).
//! - [`hook_servers`]: socket hook servers and http endpoints that send
//!   garbage, too much, or hang up: each read as the command hook it stands
//!   for would be.
//! - [`hooks`]: hook decisions read whole, oversized hook text replaced as
//!   each CLI does, hook-file problems in `dsh check`, secrets kept from
//!   tools.
//! - [`codex_subagent`]: an unknown `subagent_tools` is refused by name;
//!   `spawn_agent` without a task and `wait_agent` for no agent are error
//!   results, and no child is made.
//! - [`codex_subagent_manage`]: `send_input`, `close_agent` and
//!   `resume_agent` without a target or a message, for an agent never
//!   spawned, closed twice: results the model reads.
//! - [`subagent`]: a SubagentStop hook blocking every time gives way after
//!   8 blocks, as Claude Code's does; the subagent's 9th answer is returned.
//! - [`subagent_failure`]: a subagent failing with a large error full of
//!   quoting while its StopFailure hook hangs: cut off by its `timeout`, the
//!   `Agent` call completes with the whole text.
//! - [`memory2`]: Claude rules folders that are files or loop, rules that
//!   are not YAML or not UTF-8, a `Read` outside the project, a user
//!   command file that is not UTF-8: what can load does, nothing loops, the
//!   bad command file is named.
//! - [`store`]: a bad store URL, a wrong password, an unreachable database,
//!   `DSH_STORE_URL`: refused at start naming the database, never the
//!   password.

mod audit;
mod bgbash;
mod codex_compaction;
mod codex_subagent;
mod codex_subagent_manage;
mod compact_transcript;
mod compaction;
mod daemon;
mod discovery;
mod elicit;
mod envfile;
mod file_search;
mod hook_answers;
mod hook_servers;
mod hooks;
mod img;
mod manifest;
mod memory2;
mod permissions;
mod plugins;
mod read;
mod sandbox;
mod session_processes;
mod session_support;
mod sessions;
mod slash_commands;
mod store;
mod subagent;
mod subagent_failure;
mod task_tools;
mod trust;
mod worktree;
