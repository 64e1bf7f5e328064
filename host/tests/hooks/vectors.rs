//! Every recorded vector, through the real loop.
//!
//! Per vector: a sandbox laid out as its placeholders say, its hook files
//! installed unmodified, `hook.sh` answering as `hook_behaviors` says, and a
//! real host (bash-local, the bridge, scripted model) driving its `prompt`
//! (and each further invocation, as a resumed session) with its
//! `model_script`. Then every aspect is compared and every difference
//! collected; one test per dialect reports all of them at once. What cannot
//! be reproduced is in [`crate::skips`].

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use dsh_hook_protocol::vectors::{Sandbox, Vector, foreign_to, load_dir, set_launch_env};
use dsh_host::agent::{AgentOptions, Prompt};
use dsh_host::session::TurnEndReason;
use serde_json::{Value, json};

use crate::script;
use crate::skips::{Aspect, ROWS};
use crate::slash;
use crate::support::{
    AgentHost, DialogRejects, DialogStandIn, Load, Outcome, events_of, wait_for, within,
};
use crate::unify::Bindings;
use dsh_test_support::permissions as perms;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Claude,
    Codex,
}

impl Dialect {
    fn dir(self) -> &'static str {
        match self {
            Dialect::Claude => "claude",
            Dialect::Codex => "codex",
        }
    }

    fn bridge(self) -> &'static str {
        match self {
            Dialect::Claude => "hooks-claude",
            Dialect::Codex => "hooks-codex",
        }
    }
}

/// The table rows that apply, marking each one used.
struct Skips {
    dialect: Dialect,
    vector: String,
    used: Arc<Mutex<BTreeSet<usize>>>,
    /// The rows this vector used.
    mine: Mutex<BTreeSet<usize>>,
}

impl Skips {
    fn find(&self, f: impl Fn(&Aspect) -> bool) -> Option<&'static str> {
        ROWS.iter().enumerate().find_map(|(i, r)| {
            let applies = r.dialect == self.dialect
                && (r.vector == self.vector
                    || r.vector
                        .strip_suffix('*')
                        .is_some_and(|p| self.vector.starts_with(p)))
                && f(&r.aspect);
            applies.then(|| {
                self.used.lock().unwrap().insert(i);
                self.mine.lock().unwrap().insert(i);
                r.reason
            })
        })
    }

    fn has(&self, aspect: Aspect) -> bool {
        self.find(|a| *a == aspect).is_some()
    }
}

fn s(v: &Value, k: &str) -> String {
    v[k].as_str().unwrap_or_default().to_string()
}

/// The vector's model script as `model-scripted` replies, followed by the
/// default reply (requests past the end get it; the count is checked).
fn model_script(v: &Vector) -> Value {
    let reply = |r: &Value| -> Value {
        if let Some(t) = r.get("tool_use") {
            return json!({"tool_calls": [{"name": t["name"], "arguments": t["input"]}]});
        }
        if let Some(f) = r.get("function_call") {
            // Codex's shell tools, as bash-local offers them for Codex
            // sessions (`codex_exec_command`; `write_stdin` polls a running
            // command, a `"$EXEC_SESSION"` argument the id it got, C207-*),
            // an MCP tool (the same name in dsh, `mcp__<server>__<tool>`),
            // or Codex's `multi_agent_v1` calls, dsh's `spawn_agent` and
            // `wait_agent` (`subagent_tools: codex`), a `"$AGENT_ID"`
            // argument the id the spawn returned (C180-*). The arguments go
            // as the model wrote them, text (tools read that text: a parse
            // error's column is the model's, C207-stdin).
            let name = f["name"].as_str().unwrap_or_default();
            assert!(
                name.starts_with("mcp__")
                    || f["namespace"] == "multi_agent_v1"
                    || ["exec_command", "write_stdin"].contains(&name),
                "{}: tool {name}",
                v.name,
            );
            let text = f["arguments"].as_str().unwrap_or("{}");
            assert!(
                serde_json::from_str::<Value>(text).is_ok(),
                "{}: arguments {text}",
                v.name
            );
            return json!({"tool_calls": [{"name": name, "arguments": text}]});
        }
        // An HTTP error answer (S92): the provider's refusal with the
        // server's message; a Codex recording's (C184a) with the whole body
        // the mock sent, which `model-openai` reports as its refusal.
        if let Some(e) = r.get("error") {
            let message = match e["body_text"].as_str() {
                Some(body) => json!(body),
                None => e["body"]["error"]["message"].clone(),
            };
            return json!({"error": {"status": e["status"], "message": message}});
        }
        json!({"text": r["text"]})
    };
    let mut replies: Vec<Value> = v.json["model_script"]
        .as_array()
        .unwrap()
        .iter()
        .map(reply)
        .collect();
    // A sub-agent's own answers (a per-thread recording, C180-*): after the
    // main thread's, under `subagent`, for `model-scripted`'s
    // `subagent_script`.
    let sub: Option<Vec<Value>> = v.json["model_script_subagent"]
        .as_array()
        .map(|a| a.iter().map(reply).collect());
    let default = reply(&v.json["model_script_default"]);
    replies.extend(std::iter::repeat_n(default, 16));
    // What the recorder's Codex mock reported of every answer, when the
    // run set a context window (C90-*): the context in use, as
    // `model-scripted` reports it, against that window.
    if let Some(size) = codex_setting(v, "model_context_window") {
        let script = v.json["model_script"].as_array().unwrap();
        let default = &v.json["model_usage_default"]["total_tokens"];
        for (k, r) in replies.iter_mut().enumerate() {
            let used = script
                .get(k)
                .and_then(|e| e["usage"]["total_tokens"].as_u64())
                .or_else(|| default.as_u64())
                .unwrap();
            r["context"] = json!({"used": used, "size": size});
        }
    }
    // What the recorder's mock Anthropic API said of every answer
    // (`claude/mock_api.py`): the usage below, and the model it was asked
    // for, which Claude Code reports as an `Agent` call's `resolvedModel`.
    if v.json["dialect"] == "claude" {
        let model = v.calls().iter().find_map(|c| {
            c["stdin_json"]["tool_response"]["resolvedModel"]
                .as_str()
                .map(String::from)
        });
        for r in &mut replies {
            r["usage"] = json!({"input_tokens": 100, "output_tokens": 20,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
            if let Some(m) = &model {
                r["model"] = json!(m);
            }
        }
    }
    match sub {
        Some(mut sub) => {
            sub.extend(std::iter::repeat_n(
                reply(&v.json["model_script_default"]),
                16,
            ));
            json!({"main": replies, "subagent": sub})
        }
        None => Value::Array(replies),
    }
}

/// A numeric top-level setting of the run's Codex `config.toml`.
fn codex_setting(v: &Vector, key: &str) -> Option<u64> {
    let files = v.json["hooks_config"]["files"].as_array()?;
    let text = files
        .iter()
        .find(|f| s(f, "path").ends_with("config.toml"))
        .map(|f| s(f, "text"))?;
    text.lines().find_map(|l| {
        let (k, val) = l.split_once('=')?;
        (k.trim() == key).then(|| val.trim().parse().ok())?
    })
}

/// The sandbox a `codex exec` run gave its shell tool: `-s <mode>`,
/// none with `--dangerously-bypass-approvals-and-sandbox`, else Codex's
/// default, `read-only` (C101g: `codex -a never exec` with no `-s`
/// refused a write as `-s read-only` did).
fn codex_sandbox_mode(v: &Vector) -> &'static str {
    let argv: Vec<&str> = v.json["invocations"][0]["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if argv.contains(&"--dangerously-bypass-approvals-and-sandbox") {
        return "danger-full-access";
    }
    let given = argv
        .windows(2)
        .find(|w| w[0] == "-s" || w[0] == "--sandbox")
        .map(|w| w[1]);
    match given {
        None | Some("read-only") => "read-only",
        Some("workspace-write") => "workspace-write",
        Some("danger-full-access") => "danger-full-access",
        Some(other) => panic!("{}: sandbox mode {other}", v.name),
    }
}

/// How the session compacts: Codex's way for Codex vectors, at Codex's
/// `model_auto_compact_token_limit` (a share of `model_context_window`)
/// when the run set one.
fn compaction(v: &Vector, dialect: Dialect) -> dsh_host::config::CompactionSettings {
    let mut c = dsh_host::config::CompactionSettings::default();
    if dialect == Dialect::Codex {
        c.style = dsh_host::config::CompactionStyle::Codex;
        if let (Some(limit), Some(size)) = (
            codex_setting(v, "model_auto_compact_token_limit"),
            codex_setting(v, "model_context_window"),
        ) {
            c.threshold = limit as f64 / size as f64;
        }
    }
    c
}

/// `text` with the milliseconds of every `duration_ms: N` left out:
/// durations vary from run to run (vectors README), as in the `Agent`
/// result's `<usage>` note.
fn without_durations(text: &str) -> String {
    let re = regex::Regex::new(r"duration_ms: \d+").unwrap();
    let text = re.replace_all(text, "duration_ms: N");
    // Codex's framing of each exec chunk: a new id and time every chunk,
    // so no one binding fits them all (C207-*: several chunks).
    let chunk = regex::Regex::new(r"(?m)^Chunk ID: [0-9a-f]{6}$").unwrap();
    let wall = regex::Regex::new(r"(?m)^Wall time: \d+\.\d{4} seconds$").unwrap();
    let text = chunk.replace_all(&text, "Chunk ID: $$CHUNK_ID");
    wall.replace_all(&text, "Wall time: $$WALL_TIME seconds")
        .into_owned()
}

/// Every string in `v` [`without_durations`].
fn strip_durations(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("duration_ms: ") => *s = without_durations(s),
        Value::Array(items) => items.iter_mut().for_each(strip_durations),
        Value::Object(map) => map.values_mut().for_each(strip_durations),
        _ => {}
    }
}

/// The Codex bridge's `hook_outputs_dir`: a folder whose path is as long
/// as Codex's `/tmp/hook_outputs` (dsh's session ids are 36 characters, as
/// Codex's UUIDs), so the footer naming a saved file, and with it Codex's
/// cut points, are the recorded ones byte for byte.
fn codex_outputs_dir() -> tempfile::TempDir {
    let tmp = std::env::temp_dir();
    let fixed = tmp.display().to_string().len() + "/ho".len();
    let want = "/tmp/hook_outputs".len();
    assert!(
        fixed + 6 <= want,
        "the temp dir {} is too long to pad",
        tmp.display()
    );
    tempfile::Builder::new()
        .prefix("ho")
        .rand_bytes(want - fixed)
        .tempdir_in(&tmp)
        .unwrap()
}

fn bridge_config(v: &Vector, sb: &Sandbox, dialect: Dialect, outs: &Path) -> Value {
    let files = sb.write_config_files(v);
    match dialect {
        Dialect::Claude => {
            let plugin_root = sb.run().join("plugin");
            let hook_files: Vec<String> = files
                .iter()
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n == "settings.json" || n == "hooks.json")
                })
                .map(|p| p.display().to_string())
                .collect();
            let mut c = json!({"config_path": hook_files});
            if files.iter().any(|f| f.starts_with(&plugin_root)) {
                c["plugin_root"] = json!(plugin_root);
            }
            // The model name SessionStart reports after a compaction (S90).
            if let Some(model) = v
                .calls()
                .iter()
                .find_map(|c| c["stdin_json"]["model"].as_str())
            {
                c["model"] = json!(model);
            }
            // The gateway a server error's text names: the CLI's
            // `ANTHROPIC_BASE_URL`, the mock's loopback port (S92).
            c["api_gateway"] = json!("127.0.0.1:$PORT");
            // `claude --init` / `--init-only` / `--maintenance` (S242):
            // the bridge's Setup trigger, as `dsh prompt --init` sets it.
            let argv = &v.json["invocations"][0]["argv"];
            let has = |flag: &str| argv.as_array().is_some_and(|a| a.iter().any(|x| x == flag));
            if has("--init") || has("--init-only") {
                c["setup"] = json!("init");
            } else if has("--maintenance") {
                c["setup"] = json!("maintenance");
            }
            // Claude Code loads its memory files (`CLAUDE.md`, S187) from
            // the run's HOME and the project's folders.
            c["memory"] = json!(true);
            c["home"] = json!(sb.home());
            // `claude -p` runs the project's slash commands with no trust
            // dialog (S185): the recorded project is trusted.
            if v.json["project_files"]
                .as_object()
                .is_some_and(|f| f.keys().any(|k| k.starts_with(".claude/commands/")))
            {
                c["trusted_prefixes"] = json!([sb.run().join("proj")]);
            }
            c
        }
        Dialect::Codex => {
            // The files are where the recording put them: the user layer
            // in `$CODEX_HOME`, a project layer in `$PROJECT/.codex`; the
            // bridge discovers them as Codex does. The run's flags say
            // what was trusted: `--dangerously-bypass-hook-trust` is the
            // bridge's `bypass_hook_trust`, `--trust` the project's trust.
            let argv: Vec<&str> = v.json["invocations"][0]["argv"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            assert!(
                files
                    .iter()
                    .all(|f| f.starts_with(sb.run().join("codex_home"))
                        || f.starts_with(sb.run().join("proj/.codex"))),
                "{}: a hook file outside $CODEX_HOME and $PROJECT/.codex: {files:?}",
                v.name
            );
            let model = v
                .calls()
                .iter()
                .find_map(|c| c["stdin_json"]["model"].as_str())
                .unwrap_or("mock-model");
            let mut c = json!({"discover": true, "codex_home": sb.run().join("codex_home"),
                "model": model, "hook_outputs_dir": outs,
                "bypass_hook_trust": argv.contains(&"--dangerously-bypass-hook-trust")});
            if argv.contains(&"--trust") {
                c["trusted_prefixes"] = json!([sb.run().join("proj")]);
            }
            // A run whose model spawned sub-agents: dsh offers
            // `spawn_agent` (`subagent_tools: codex`, which sets this).
            if v.json.get("model_script_subagent").is_some() {
                c["spawn_agent"] = json!(true);
            }
            c
        }
    }
}

/// What one vector run produced.
struct Produced {
    outcomes: Vec<Outcome>,
    events: Vec<Value>,
    requests: Vec<Value>,
    calls: Vec<script::Call>,
    log_dir: std::path::PathBuf,
    state: std::path::PathBuf,
    /// The Codex bridge's `hook_outputs_dir`.
    outs: std::path::PathBuf,
}

impl Produced {
    /// A recorded text with the CLI's own folders mapped to dsh's: Claude
    /// Code's project folder under `~/.claude/projects` holds the
    /// transcript and, beside it, `<session>/tool-results/` (dsh: the
    /// session log's folder, the `Mapped("transcript_path")` row);
    /// `~/.claude/session-env` is the bridge's `session_env_dir`
    /// (`<state>/session-env`); Codex's `$TMPDIR/hook_outputs` is the
    /// configured `hook_outputs_dir`.
    fn map_paths(&self, sb: &Sandbox, text: &str) -> String {
        sb.subst(text)
            .replace(
                &sb.subst("$HOME/.claude/projects/$PROJECT_SLUG/"),
                &format!("{}/", self.log_dir.display()),
            )
            .replace(
                &sb.subst("$HOME/.claude/session-env/"),
                &format!("{}/", self.state.join("session-env").display()),
            )
            .replace(
                "$TMPDIR/hook_outputs/",
                &format!("{}/", self.outs.display()),
            )
    }
}

/// A generous bound on an interrupted run's steps (the tool starting, the
/// cancelled turn ending) against hangs; never a measurement.
const INTERRUPT_WAIT: Duration = Duration::from_secs(60);

async fn drive(v: &Vector, sb: &Sandbox, dialect: Dialect, outs: &Path) -> Produced {
    let config = bridge_config(v, sb, dialect, outs);
    script::install(sb);
    script::write_behaviors(sb, v);
    // Files the recording put in the project before the CLI started.
    // A file that is not UTF-8 (an image) is recorded as `{"base64": ...}`,
    // one over 1 MiB as `{"base64_zlib": ..., "bytes": n}` (S151).
    if let Some(files) = v.json["project_files"].as_object() {
        for (rel, text) in files {
            let path = sb.run().join("proj").join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let b64 = |k: &str| {
                text[k]
                    .as_str()
                    .map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap())
            };
            let bytes = if let Some(b) = b64("base64") {
                b
            } else if let Some(z) = b64("base64_zlib") {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&z[..]), &mut out)
                    .unwrap();
                assert_eq!(Some(out.len() as u64), text["bytes"].as_u64(), "{rel}");
                out
            } else {
                sb.subst(text.as_str().unwrap_or_default()).into_bytes()
            };
            std::fs::write(&path, bytes).unwrap();
        }
    }
    // The recorded git repository and run files (worktree vectors).
    crate::worktree_vectors::setup(v, sb);
    // Files the recording put in the CLI's HOME (`~/.claude/CLAUDE.md`,
    // S187-four-files).
    if let Some(files) = v.json["home_files"].as_object() {
        for (rel, text) in files {
            let path = sb.home().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, sb.subst(text.as_str().unwrap_or_default())).unwrap();
        }
    }
    // The project files' recorded modification times, in ns (`Glob` lists
    // oldest first and `Grep` newest first: S290).
    if let Some(times) = v.json["project_mtimes"].as_object() {
        for (rel, ns) in times {
            let path = sb.run().join("proj").join(rel);
            let when = std::time::UNIX_EPOCH + Duration::from_nanos(ns.as_u64().unwrap());
            match std::fs::File::options().write(true).open(&path) {
                Ok(file) => file.set_modified(when).unwrap(),
                // A file the recorder writes where dsh's run does not.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => panic!("{}: mtime of {rel}: {e}", v.name),
            }
        }
    }
    // Folders the session moves into (`cd sub`) must exist.
    for c in v.calls() {
        let cwd = sb.subst(&s(c, "cwd"));
        if Path::new(&cwd).starts_with(sb.run()) {
            std::fs::create_dir_all(&cwd).unwrap();
        }
    }
    let mut loads = vec![Load::builtin(dialect.bridge(), dialect.bridge(), config)];
    // Runs whose model calls the file tools (S30, S31, S290) get dsh's.
    let file_tools = v.json["model_script"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| {
            matches!(
                r["tool_use"]["name"].as_str(),
                Some("Read" | "Write" | "Edit" | "Glob" | "Grep" | "NotebookEdit")
            )
        });
    if file_tools {
        // Claude Code's `Read` token cap, when the run set it (S120).
        let mut fs = json!({});
        if let Some(cap) = v.json["launch_env"]["CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"]
            .as_str()
            .and_then(|c| c.parse::<u64>().ok())
        {
            fs["max_read_tokens"] = json!(cap);
        }
        loads.push(Load::builtin("tools-fs", "tools-fs", fs));
    }
    if let Some(worktree) = crate::worktree_vectors::tools(v) {
        loads.push(worktree);
        // As the manifest tells the bridge when it lists `tools-worktree`.
        loads[0].config["worktree_tools"] = json!(true);
    }
    // Runs whose model calls Claude Code's task tools (S185-task*,
    // S220-*) get dsh's (`tools-tasks`, opt-in like the file tools).
    let task_tools = v.json["model_script"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| {
            r["tool_use"]["name"]
                .as_str()
                .is_some_and(|n| dsh_host::tasks::TOOL_NAMES.contains(&n))
        });
    if task_tools {
        loads.push(Load::builtin("tools-tasks", "tools-tasks", json!({})));
        // As the manifest tells the bridge when it lists `tools-tasks`.
        loads[0].config["task_tools"] = json!(true);
    }
    let bash = match dialect {
        // A deleted folder recovers to the user's home: the run's
        // (S236-deleted-under-session-keep).
        // Background jobs write where Claude Code's did (S260-*).
        Dialect::Claude => json!({"home": sb.home(), "background_dir": sb.subst("$CLAUDE_TMP")}),
        // Codex ran with an empty HOME: its login shell read no profile;
        // its shell tool ran in the run's sandbox.
        Dialect::Codex => json!({"codex_exec_command": true,
            "codex_exec_env": {"HOME": sb.home()},
            "sandbox_mode": codex_sandbox_mode(v),
            "sandbox_helper": env!("CARGO_BIN_EXE_dsh")}),
    };
    // The interactive CLI (S33, run without `-p`) could ask someone.
    let interactive = dialect == Dialect::Claude
        && !v.json["invocations"][0]["argv"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "-p"));
    if interactive && rejects_in_dialog(v) {
        loads.push(Load::native::<DialogRejects>("dialog", json!({})));
        dsh_hooks_claude::config::terminal_entrypoint(&mut loads[0].config);
    } else if interactive {
        loads.push(Load::native::<DialogStandIn>("dialog", json!({})));
        // As `dsh prompt` on a terminal configures the bridge.
        dsh_hooks_claude::config::terminal_entrypoint(&mut loads[0].config);
    }
    // The run's own permissions: Claude's flags and settings, `codex
    // exec`'s bypass. No approval service is mounted: an ask is answered
    // as the CLI's headless mode answers it.
    let permissions = match dialect {
        Dialect::Claude => {
            let argv: Vec<String> = v.json["invocations"][0]["argv"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| sb.subst(a.as_str().unwrap_or("")))
                .collect();
            let settings: Vec<Value> = v.json["hooks_config"]["files"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| s(f, "path").ends_with("settings.json"))
                .map(|f| f["json"].clone())
                .collect();
            perms::from_claude_argv(&argv, &settings)
        }
        Dialect::Codex => perms::codex_exec(),
    };
    let record = sb.run().join("requests.jsonl");
    let script = sb.subst_value(&model_script(v));
    let subagents = script.get("subagent").is_some();
    let model_config = match script {
        Value::Object(lanes) => {
            json!({"script": lanes["main"], "subagent_script": lanes["subagent"],
            "record": record})
        }
        script => json!({"script": script, "record": record}),
    };
    let model = Load::builtin("model", "model-scripted", model_config);
    // Codex shows the model an MCP result framed as exec output.
    let mcp_framing = match dialect {
        Dialect::Claude => dsh_host::mcp::McpFraming::Plain,
        Dialect::Codex => dsh_host::mcp::McpFraming::Codex,
    };
    let options = AgentOptions {
        permissions,
        mcp_framing,
        compaction: compaction(v, dialect),
        // A recording whose model spawned sub-agents (C180-*).
        codex_subagents: subagents,
        ..AgentOptions::default()
    };
    let host = AgentHost::with_options(sb.run(), bash, loads, model, options);
    // A matcher its CLI's regex dialect rejects never matched there (the
    // CLI logged it and ran on, S51-dialect); dsh reports it as a config
    // error and its group never runs. So does a file the CLI could not
    // parse and ran on without (`failed to parse hooks config`, C204-*).
    // Any other error fails the vector.
    let cli_rejected_a_file = v.json["outcome"]["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["warnings"].as_array().into_iter().flatten())
        .any(|w| {
            w.as_str()
                .unwrap_or_default()
                .starts_with("failed to parse hooks config")
        });
    let errors: Vec<String> = host
        .plugins
        .problems()
        .iter()
        .filter(|p| p.severity == dsh_host::plugins::Severity::Error)
        .map(|p| p.message.clone())
        .filter(|m| !m.contains("invalid matcher"))
        .filter(|m| !(cli_rejected_a_file && m.contains("Codex rejects the whole file")))
        // Codex ignores an unknown event name without a word, dsh reports
        // it; the file's other hooks run in both (C206-unknown-event).
        .filter(|m| !m.contains("unknown Codex hook event"))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", v.name);
    let project = sb.run().join("proj");
    let ends: Vec<String> = v
        .calls()
        .iter()
        .filter(|c| c["event"] == "SessionEnd")
        .map(|c| s(&c["stdin_json"], "reason"))
        .collect();
    let end_reason = |k: usize| ends.get(k).cloned().unwrap_or_else(|| "other".into());
    let invocations = v.json["invocations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // A first run with `--continue` (S190-continue-first) has nothing to
    // continue: it starts a new session, as `dsh prompt --continue` does.
    if invocations.first().is_some_and(continues) {
        let latest = host.agent.latest_session(&project).await.unwrap();
        assert_eq!(latest, None, "{}: nothing to continue", v.name);
    }
    let mut session = host.session_in(&project).await;
    connect_mcp(v, sb, &host, &session).await;
    let log_dir = host.state.join("sessions");
    // The CLI could not save there (S21-ups-json-persist-fails): the
    // session's tool-results folder is a regular file.
    let blocked = v.json["outcome"]["hook_text_seen_by_model"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| s(t, "text").contains("persist-to-disk failed: ENOTDIR"));
    if blocked {
        let dir = log_dir.join(&session.id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tool-results"), "not a folder").unwrap();
    }
    let mut outcomes = Vec::new();
    let mut wind = None;
    for (k, inv) in invocations.iter().enumerate() {
        if k > 0 {
            // `codex exec resume --last`: the first run's process ended (its
            // session closed), the second loads the session from disk.
            let id = session.id.clone();
            let reason = crate::bg_vectors::close_reason(wind.as_ref(), end_reason(k - 1));
            host.agent.close_session(&id, &reason).await;
            // The first process is gone, and with it its lock on the log.
            drop(session);
            // `--continue` / `resume --last` pick the folder's session
            // active last, as `dsh prompt --continue` does.
            if continues(inv) {
                let latest = host.agent.latest_session(&project).await.unwrap();
                assert_eq!(
                    latest.as_deref(),
                    Some(id.as_str()),
                    "{}: the session --continue picks",
                    v.name
                );
            }
            session = host.agent.resume_session(&id).await.unwrap();
            connect_mcp(v, sb, &host, &session).await;
        }
        // `claude --init-only` (S242): the session starts and ends, no
        // prompt, as `dsh prompt --init-only`.
        if init_only(inv) {
            continue;
        }
        let prompt = inv["prompt"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| s(&v.json, "prompt"));
        // As the CLI's command line gives it: `codex exec` has no slash
        // commands (`C90-slash-compact`), `claude -p` runs `/compact`.
        let style = compaction(v, dialect).style;
        let typed = Prompt::typed(prompt, style);
        let headless = crate::bg_vectors::headless(dialect == Dialect::Claude, inv, &session);
        let outcome = match inv["interrupted_when_file"].as_str() {
            // `codex exec` or `claude -p` given SIGINT (a Ctrl-C) once its
            // tool (a subagent's too: S181) had made this file in the
            // project (C173, C174, S181, S182): the turn is cancelled there.
            Some(file) => {
                let marker = project.join(file);
                let turn = tokio::spawn({
                    let session = session.clone();
                    async move { session.prompt(typed).await }
                });
                wait_for("the file the interrupt waits for", INTERRUPT_WAIT, || {
                    marker.exists()
                })
                .await;
                session.cancel();
                within("the interrupted turn", INTERRUPT_WAIT, turn)
                    .await
                    .unwrap()
            }
            None => session.prompt(typed).await,
        };
        outcomes.push(outcome.into());
        // `claude -p`'s wind-down: background jobs still running (S262-*).
        wind = crate::bg_vectors::wind_down(headless, &session).await;
        if let Some(w) = &wind {
            outcomes.extend(w.turns.iter().cloned().map(Into::into));
        }
        // What the recording typed at the interactive CLI's input line
        // after the first prompt: more turns of the same session.
        if k == 0 {
            for typed in typed_prompts(v) {
                outcomes.push(session.prompt(Prompt::user(typed)).await.into());
            }
        }
    }
    let reason = crate::bg_vectors::close_reason(
        wind.as_ref(),
        end_reason(invocations.len().saturating_sub(1)),
    );
    host.agent.close_session(&session.id, &reason).await;
    // With sub-agents that run beside it (C180-*): the main session's
    // requests first, then theirs, each in order (their interleaving is a
    // race, in the CLI as in dsh; the recorder orders a recording's
    // requests the same way). Other runs keep the order they were made in
    // (a Claude compaction's summary agent asks in its turn).
    let mut requests = host.requests();
    if subagents {
        let (main, others): (Vec<Value>, Vec<Value>) = requests
            .into_iter()
            .partition(|r| r["session_id"] == session.id.as_str());
        requests = main.into_iter().chain(others).collect();
    }
    Produced {
        outcomes,
        events: events_of(&session),
        requests,
        calls: script::calls(sb.run()),
        log_dir,
        state: host.state.clone(),
        outs: outs.to_path_buf(),
    }
}

/// Whether the run was `claude --init-only`.
fn init_only(inv: &Value) -> bool {
    inv["argv"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x == "--init-only"))
}

/// Whether the recording answered the interactive dialog "No" (`2`).
fn rejects_in_dialog(v: &Vector) -> bool {
    v.json["tty_answers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|a| a[0] == "Do you want to proceed?" && a[1] == "2")
}

/// The prompts the recording typed at the interactive CLI's input line
/// (`tty_answers` after the first whose keys end with a carriage return).
fn typed_prompts(v: &Vector) -> Vec<String> {
    v.json["tty_answers"]
        .as_array()
        .into_iter()
        .flatten()
        .skip(1)
        .filter_map(|a| a[1].as_str()?.strip_suffix('\r').map(String::from))
        .collect()
}

/// The MCP servers the CLI was given (`mcp_servers`, the manifest shape),
/// with the recorder's server script (`$MCP_SERVER`) at its copy beside the
/// vectors; a server that does not start fails the vector.
async fn connect_mcp(
    v: &Vector,
    sb: &Sandbox,
    host: &AgentHost,
    session: &std::sync::Arc<dsh_host::agent::Session>,
) {
    let Some(servers) = v.json["mcp_servers"].as_object() else {
        return;
    };
    let script = dsh_test_support::workspace_root().join("tests/fixtures/vectors/mcp_server.py");
    let mut specs = Vec::new();
    for (name, entry) in servers {
        let text = entry
            .to_string()
            .replace("$MCP_SERVER", &script.display().to_string());
        let entry = sb.subst_value(&serde_json::from_str(&text).unwrap());
        specs.push(dsh_host::mcp::McpServerSpec::from_manifest(name, &entry).unwrap());
    }
    let failed = host.agent.connect_mcp(session, specs).await;
    assert!(
        failed.is_empty(),
        "{}: MCP servers failed: {failed:?}",
        v.name
    );
}

/// Runs one vector and returns every difference found, and whether it
/// was reproduced whole: no table row but the `Mapped` ones (dsh's own
/// paths and file modes) had to be used.
async fn check(
    v: Vector,
    dialect: Dialect,
    used: Arc<Mutex<BTreeSet<usize>>>,
) -> (Vec<String>, bool) {
    let sb = Sandbox::new();
    let skips = Skips {
        dialect,
        vector: v.name.clone(),
        used,
        mine: Mutex::new(BTreeSet::new()),
    };
    let outs = codex_outputs_dir();
    let p = drive(&v, &sb, dialect, outs.path()).await;
    let mut fails = Vec::new();
    let mut b = Bindings::new(&v.json);
    check_calls(&v, &sb, dialect, &skips, &p, &mut b, &mut fails);
    check_requests(&v, &sb, dialect, &skips, &p, &mut b, &mut fails);
    check_notifications(&v, &sb, &p, &mut b, &mut fails);
    crate::bg_vectors::check(&v, &sb, &p.requests, &mut b, &mut fails);
    check_saved_files(&v, &sb, &skips, &p, &mut b, &mut fails);
    check_files_after_run(&v, &sb, &mut fails);
    check_tools(&v, &sb, &skips, &p, &mut b, &mut fails);
    check_turn_ends(&v, &sb, dialect, &p, &mut fails);
    if dialect == Dialect::Claude {
        check_preserved(&v, &p, &mut fails);
    }
    let whole = skips
        .mine
        .lock()
        .unwrap()
        .iter()
        .all(|&i| matches!(ROWS[i].aspect, Aspect::Mapped(_)));
    let fails = fails
        .into_iter()
        .map(|f| format!("{}: {f}", v.name))
        .collect();
    (fails, whole)
}

fn check_calls(
    v: &Vector,
    sb: &Sandbox,
    dialect: Dialect,
    skips: &Skips,
    p: &Produced,
    b: &mut Bindings,
    fails: &mut Vec<String>,
) {
    let want: Vec<&Value> = v
        .calls()
        .iter()
        .filter(|c| {
            let event = c["event"].as_str().unwrap_or("");
            skips
                .find(|a| matches!(a, Aspect::Event(e) if *e == event))
                .is_none()
        })
        .collect();
    let extra_all = skips.has(Aspect::ExtraCalls("*"));
    let got: Vec<&script::Call> = p
        .calls
        .iter()
        .filter(|c| {
            !extra_all
                && skips
                    .find(|a| matches!(a, Aspect::ExtraCalls(l) if *l == c.label))
                    .is_none()
        })
        .collect();
    // A sub-agent's hooks run beside its parent's: each thread's calls in
    // order, the main thread's first (C180-*).
    let (want, got) = if v.json.get("model_script_subagent").is_some() {
        (by_thread(want, |c| c["stdin_json"].clone()), {
            let parsed = |c: &&script::Call| serde_json::from_str(&c.stdin).unwrap_or(Value::Null);
            by_thread(got, parsed)
        })
    } else {
        (want, got)
    };
    let got = concurrent_order(sb, &want, got);
    let wl: Vec<String> = want.iter().map(|c| s(c, "label")).collect();
    let gl: Vec<String> = got.iter().map(|c| c.label.clone()).collect();
    if wl != gl {
        fails.push(format!("hook calls: want {wl:?} got {gl:?}"));
        return;
    }
    let log = p.log_dir.display().to_string();
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        let at = format!("call {i} ({})", s(w, "event"));
        // The payload, as recorded, with dsh's equivalents mapped in.
        let mut expect = sb.subst_value(&w["stdin_json"]);
        if skips.has(Aspect::Mapped("session_id")) && expect.to_string().contains("$SESSION_ID_2") {
            expect =
                serde_json::from_str(&expect.to_string().replace("$SESSION_ID_2", "$SESSION_ID"))
                    .unwrap();
            if expect["hook_event_name"] == "SessionStart" {
                expect["source"] = json!("resume");
            }
        }
        if let Some(o) = expect.as_object_mut() {
            if o.contains_key("transcript_path") && skips.has(Aspect::Mapped("transcript_path")) {
                // A Codex sub-agent's rollout is its own session's log
                // (C180-*): its transcript, and the agent_transcript_path
                // of its SubagentStop.
                let whose = |p: &Value| {
                    if p.as_str().is_some_and(|p| p.ends_with("-$AGENT_ID.jsonl")) {
                        "$AGENT_ID"
                    } else {
                        "$SESSION_ID"
                    }
                };
                o["transcript_path"] =
                    json!(format!("{log}/{}.jsonl", whose(&o["transcript_path"])));
                if dialect == Dialect::Codex && o.contains_key("agent_transcript_path") {
                    o["agent_transcript_path"] = json!(format!(
                        "{log}/{}.jsonl",
                        whose(&o["agent_transcript_path"])
                    ));
                }
            }
            if o.contains_key("agent_transcript_path")
                && skips.has(Aspect::Mapped("agent_transcript_path"))
            {
                o["agent_transcript_path"] = json!(format!("{log}/$AGENT_ID.jsonl"));
            }
            o.retain(|k, _| !dropped(skips, k));
        }
        drop_nested(skips, &mut expect);
        // Where a long `Bash` output was saved (S261-*): beside dsh's log.
        if let Some(path) = expect["tool_response"]["persistedOutputPath"].as_str() {
            expect["tool_response"]["persistedOutputPath"] = json!(p.map_paths(sb, path));
        }
        let got_json: Value = match serde_json::from_str(&g.stdin) {
            Ok(j) => j,
            Err(e) => {
                fails.push(format!("{at}: stdin is not JSON ({e}): {:?}", g.stdin));
                continue;
            }
        };
        let mut got_cmp = got_json.clone();
        if let Some(o) = got_cmp.as_object_mut() {
            o.retain(|k, _| !dropped(skips, k));
        }
        // `Read`'s image, summarized in the vector (S150): dsh's too.
        if expect["tool_response"]["file"]["base64"]
            .get("decoded")
            .is_some()
            && let Some(b64) = got_cmp["tool_response"]["file"]["base64"].as_str()
        {
            got_cmp["tool_response"]["file"]["base64"] = json!({"decoded": decoded(b64)});
        }
        drop_nested(skips, &mut got_cmp);
        strip_durations(&mut expect);
        strip_durations(&mut got_cmp);
        // ripgrep's file order varies from run to run (`Grep`).
        if crate::ripgrep_order::applies(s(&expect, "tool_name").as_str(), &expect["tool_input"]) {
            for v in [&mut expect, &mut got_cmp] {
                if let Some(text) = v["tool_response"]["content"].as_str() {
                    v["tool_response"]["content"] = json!(crate::ripgrep_order::normalized(text));
                }
            }
        }
        // Durations and token counts vary (vectors README): type only.
        let mut type_only = vec![
            "duration_ms",
            "durationMs",
            "totalDurationMs",
            "totalTokens",
        ];
        // An MCP tool's response is the server's answer, which dsh passes
        // on as the CLI does: compared whole, whatever the rows say of the
        // CLI's own tools.
        let mcp = expect["tool_name"]
            .as_str()
            .is_some_and(|n| n.starts_with("mcp__"));
        type_only.extend(ROWS.iter().filter_map(|r| match r.aspect {
            Aspect::TypeOnly("tool_response") if mcp => None,
            Aspect::TypeOnly(k) if skips.has(Aspect::TypeOnly(k)) => Some(k),
            _ => None,
        }));
        if let Err(e) = b.match_value("stdin", &expect, &got_cmp, &type_only) {
            fails.push(format!("{at}: {e}"));
        }
        // Byte-faithful: compact JSON, and the newline only where the CLI wrote one.
        let compact = got_json.to_string();
        let body = g.stdin.strip_suffix('\n').unwrap_or(&g.stdin);
        if compact != body {
            fails.push(format!("{at}: stdin is not compact JSON: {:?}", g.stdin));
        }
        if g.stdin.ends_with('\n') != (w["trailing_newline"] == true) {
            fails.push(format!(
                "{at}: trailing newline want {}",
                w["trailing_newline"]
            ));
        }
        let want_cwd = sb.subst(&s(w, "cwd"));
        if g.cwd != want_cwd && !dropped(skips, "cwd") {
            fails.push(format!("{at}: hook cwd want {want_cwd} got {}", g.cwd));
        }
        let argv: Vec<String> = w["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| sb.subst(a.as_str().unwrap()))
            .collect();
        match dialect {
            Dialect::Claude => {
                for (k, a) in argv.iter().enumerate() {
                    // `"$SHELL"` expands to whatever shell runs the tests.
                    if a != "/bin/bash" && g.argv.get(k + 1) != Some(a) {
                        fails.push(format!("{at}: argv[{}] want {a} got {:?}", k + 1, g.argv));
                    }
                }
            }
            Dialect::Codex => {
                if g.argv != argv {
                    fails.push(format!("{at}: argv want {argv:?} got {:?}", g.argv));
                }
                if let Some(path) = w["env_PATH"].as_str()
                    && !path.starts_with("$CODEX_VENDOR/codex-path:")
                {
                    fails.push(format!("{at}: env_PATH {path}"));
                }
            }
        }
        check_env(v, sb, skips, p, w, g, b, &at, fails);
    }
}

/// `calls` with the main thread's first and a sub-agent's after them, each
/// in order: a sub-agent's payload names it (`agent_id`; its
/// PreModelRequest a `thread_id` of its own).
fn by_thread<T>(calls: Vec<T>, payload: impl Fn(&T) -> Value) -> Vec<T> {
    let (mut main, sub): (Vec<T>, Vec<T>) = calls.into_iter().partition(|c| {
        let p = payload(c);
        p.get("agent_id").is_none()
            && (p["thread_id"].is_null() || p["thread_id"] == p["session_id"])
    });
    main.extend(sub);
    main
}

/// `got` with each run of calls of one event put in the recorded order
/// of their labels: the hooks of one point start concurrently, so their
/// start order is a race in the CLI as in dsh (vectors README, step 4).
/// Which hooks ran, and that each event's batch is where it was, stays
/// strict. A call that names a `file_path` takes the call of that label
/// for that file: Claude Code starts the InstructionsLoaded hooks of all
/// its memory files at once, in no fixed order (S187-four-files).
fn concurrent_order<'a>(
    sb: &Sandbox,
    want: &[&Value],
    got: Vec<&'a script::Call>,
) -> Vec<&'a script::Call> {
    let file_of = |c: &script::Call| -> String {
        serde_json::from_str::<Value>(&c.stdin)
            .map(|v| s(&v, "file_path"))
            .unwrap_or_default()
    };
    let event = |c: &script::Call| -> String {
        serde_json::from_str::<Value>(&c.stdin)
            .map(|v| s(&v, "hook_event_name"))
            .unwrap_or_default()
    };
    let mut out = Vec::with_capacity(got.len());
    let mut i = 0;
    while i < got.len() {
        let ev = event(got[i]);
        let mut j = i;
        while j < got.len() && event(got[j]) == ev {
            j += 1;
        }
        let mut batch: Vec<Option<&script::Call>> = got[i..j].iter().copied().map(Some).collect();
        // The recorded labels of the same stretch, in their order: each
        // takes the first call of that label not taken yet.
        for w in want.get(i..j.min(want.len())).unwrap_or_default() {
            let label = s(w, "label");
            let file = sb.subst(&s(&w["stdin_json"], "file_path"));
            if let Some(slot) = batch.iter_mut().find(|c| {
                c.is_some_and(|c| c.label == label && (file.is_empty() || file_of(c) == file))
            }) {
                out.extend(slot.take());
            }
        }
        out.extend(batch.into_iter().flatten());
        i = j;
    }
    out
}

/// The hook's environment against the recorded one, strictly: every
/// `env_added` variable with the CLI's value (paths and ids mapped), every
/// `env_removed` one absent, everything else of the launch environment
/// (this process's) unchanged, and nothing else added (the shells' `PWD`,
/// `SHLVL`, `_` aside). Codex's `codex-path` PATH prefix is the one
/// declared difference (NOT_REPRODUCED.md): the rest of its PATH is the
/// launch PATH, which is what the hook must get.
#[allow(clippy::too_many_arguments)]
fn check_env(
    v: &Vector,
    sb: &Sandbox,
    skips: &Skips,
    p: &Produced,
    w: &Value,
    g: &script::Call,
    b: &mut Bindings,
    at: &str,
    fails: &mut Vec<String>,
) {
    let added = w["env_added"].as_object().cloned().unwrap_or_default();
    let removed: Vec<&str> = w["env_removed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (k, val) in &added {
        if skips
            .find(|a| matches!(a, Aspect::Env(e) if *e == k.as_str()))
            .is_some()
        {
            continue;
        }
        let want_v = p.map_paths(sb, val.as_str().unwrap_or_default());
        match g.env_var(k) {
            Some(got_v) if b.match_str(&want_v, &got_v) => {}
            other => fails.push(format!("{at}: env {k} want {want_v} got {other:?}")),
        }
    }
    for k in &removed {
        if std::env::var_os(k).is_none() {
            fails.push(format!("{at}: {k} is not in the launch environment"));
        }
        if g.env_var(k).is_some() {
            fails.push(format!("{at}: env {k} must be removed"));
        }
    }
    let shells = ["PWD", "SHLVL", "_", "OLDPWD"];
    for (k, val) in std::env::vars() {
        let skip = shells.contains(&k.as_str())
            || removed.contains(&k.as_str())
            || added.contains_key(&k)
            || val.contains('\n')
            || foreign_to(v, &k);
        if !skip && g.env_var(&k).as_deref() != Some(val.as_str()) {
            fails.push(format!(
                "{at}: env {k} want {val:?} got {:?}",
                g.env_var(&k)
            ));
        }
    }
    for line in g.env.lines() {
        let Some((k, _)) = line.split_once('=') else {
            continue;
        };
        let is_name = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name
            && !shells.contains(&k)
            && !added.contains_key(k)
            && std::env::var_os(k).is_none()
        {
            fails.push(format!("{at}: env {k} added, not by the CLI"));
        }
    }
}

/// Every file the CLI saved (`outcome.saved_files`) is where dsh saved it
/// (paths mapped as [`Produced::map_paths`] says, ids bound), holding the
/// same hook text byte for byte. Claude Code wrote them 0644; dsh keeps
/// hook output private (0600, the `Mapped("saved file mode")` row).
/// The project files the recording checked after the run: absent where
/// it found none (a denied command, a write the sandbox refused), present
/// where it found one. Their text holds the CLI's own paths and process
/// lines (C20's probes), so only presence is compared.
fn check_files_after_run(v: &Vector, sb: &Sandbox, fails: &mut Vec<String>) {
    let Some(files) = v.json["outcome"]["files_after_run"].as_object() else {
        return;
    };
    for (path, want) in files {
        let path = sb.subst(path);
        let exists = Path::new(&path).exists();
        if exists == want.is_null() {
            fails.push(format!(
                "file {path}: want {} got {}",
                if want.is_null() { "absent" } else { "present" },
                if exists { "present" } else { "absent" }
            ));
        }
    }
}

fn check_saved_files(
    v: &Vector,
    sb: &Sandbox,
    skips: &Skips,
    p: &Produced,
    b: &mut Bindings,
    fails: &mut Vec<String>,
) {
    for f in v.json["outcome"]["saved_files"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let want = p.map_paths(sb, &s(f, "path"));
        let Some(dir) = Path::new(&want).parent() else {
            continue;
        };
        let dir = {
            // The folder names hold ids: bind them by walking up to the
            // first existing folder.
            let mut found: Vec<std::path::PathBuf> = Vec::new();
            let mut stack = vec![std::path::PathBuf::from("/")];
            for part in dir.components().skip(1) {
                let part = part.as_os_str().to_string_lossy().to_string();
                let mut next = Vec::new();
                for d in &stack {
                    if !part.contains('$') {
                        next.push(d.join(&part));
                        continue;
                    }
                    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                        next.push(e.path());
                    }
                }
                stack = next;
            }
            found.extend(stack.into_iter().filter(|d| d.is_dir()));
            found
        };
        let files: Vec<std::path::PathBuf> = dir
            .iter()
            .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
            .map(|e| e.path())
            .collect();
        let Some(path) = files
            .iter()
            .find(|p| b.match_str(&want, &p.display().to_string()))
        else {
            fails.push(format!("saved file {want} not found (have {files:?})"));
            continue;
        };
        let content = s(f, "content");
        let label = content.split('\'').nth(1).unwrap_or_default();
        let stdout = s(&v.json["hook_behaviors"][label], "stdout");
        let text = if content.ends_with("additionalContext of its JSON output") {
            serde_json::from_str::<Value>(&stdout).ok().and_then(|o| {
                o["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .map(String::from)
            })
        } else if content.ends_with("its stdout, trimmed") {
            Some(stdout.trim().to_string())
        } else {
            None
        };
        // A long `Bash` output (S261-*), kept compressed in the vector.
        let text = text.or_else(|| {
            let z = base64::engine::general_purpose::STANDARD
                .decode(f["base64_zlib"].as_str()?)
                .ok()?;
            let mut out = String::new();
            std::io::Read::read_to_string(&mut flate2::read::ZlibDecoder::new(&z[..]), &mut out)
                .ok()?;
            Some(out)
        });
        let saved = std::fs::read(path).unwrap_or_default();
        if let Some(digest) = f["sha256"].as_str() {
            // A tool's own long result (S292): the whole text, by digest.
            use sha2::Digest as _;
            let got: String = sha2::Sha256::digest(&saved)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            if got != digest {
                fails.push(format!("{}: sha256 {got}, want {digest}", path.display()));
            }
        } else if Some(saved.as_slice()) != text.as_deref().map(str::as_bytes) {
            fails.push(format!("{}: does not hold {content}", path.display()));
        }
        if saved.len() as u64 != f["bytes"].as_u64().unwrap_or(0) {
            fails.push(format!(
                "{}: {} bytes, want {}",
                path.display(),
                saved.len(),
                f["bytes"]
            ));
        }
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0);
        let want_mode = if skips.has(Aspect::Mapped("saved file mode")) {
            0o600
        } else {
            u32::from_str_radix(s(f, "mode").trim_start_matches("0o"), 8).unwrap_or(0)
        };
        if mode != want_mode {
            fails.push(format!(
                "{}: mode {mode:o}, want {want_mode:o}",
                path.display()
            ));
        }
    }
}

/// Whether the table leaves payload key `key` out.
fn dropped(skips: &Skips, key: &str) -> bool {
    skips
        .find(|a| matches!(a, Aspect::PayloadKey(k) if *k == key))
        .is_some()
}

/// Removes every nested key (`a.b`) the table leaves out.
fn drop_nested(skips: &Skips, v: &mut Value) {
    for r in ROWS {
        let Aspect::PayloadKey(path) = r.aspect else {
            continue;
        };
        let Some((outer, inner)) = path.split_once('.') else {
            continue;
        };
        if let Some(o) = v.get_mut(outer).and_then(Value::as_object_mut)
            && o.contains_key(inner)
            && dropped(skips, path)
        {
            o.shift_remove(inner);
        }
    }
}

/// `(request, text)` of every hook-sourced message new in each request.
fn sourced(requests: &[Value]) -> Vec<(usize, String, Value)> {
    let mut out = Vec::new();
    for (r, req) in requests.iter().enumerate() {
        let msgs = req["messages"].as_array().cloned().unwrap_or_default();
        // New = past the longest prefix shared with any earlier request
        // (a subagent's requests are a conversation of their own).
        let shared = requests[..r]
            .iter()
            .map(|e| {
                let em = e["messages"].as_array().cloned().unwrap_or_default();
                em.iter().zip(&msgs).take_while(|(a, b)| a == b).count()
            })
            .max()
            .unwrap_or(0);
        for m in &msgs[shared..] {
            if let Some(src) = m.get("source")
                && !is_subagent_notification(m)
                && !crate::bg_vectors::is_task_notification(m)
            {
                out.push((r, s(m, "content"), src.clone()));
            }
        }
    }
    out
}

/// dsh's `<subagent_notification>` message (the agent's own, not a
/// hook's; compared in [`check_notifications`]).
fn is_subagent_notification(m: &Value) -> bool {
    m["source"] == json!({"kind": "plugin", "plugin": "dsh"})
        && s(m, "content").starts_with("<subagent_notification>")
}

/// Each `<subagent_notification>` the recording's parent read (C180-*):
/// in that request, a user message of dsh's own, right after the tool
/// results of the step it came in, and no other.
fn check_notifications(
    v: &Vector,
    sb: &Sandbox,
    p: &Produced,
    b: &mut Bindings,
    fails: &mut Vec<String>,
) {
    let want = v.json["outcome"]["subagent_notifications"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut seen = 0;
    for (r, j, msgs) in crate::support::first_appearances(&p.requests, is_subagent_notification) {
        let m = &msgs[j];
        let Some(w) = want.get(seen) else {
            fails.push(format!(
                "request {r}: a notification the CLI never sent: {m}"
            ));
            continue;
        };
        seen += 1;
        let text = sb.subst(&s(w, "text"));
        if w["request"] != json!(r) || !b.match_str(&text, &s(m, "content")) {
            fails.push(format!(
                "request {r}: notification want {w} got {}",
                m["content"]
            ));
        }
        let placed = m["role"] == "user"
            && j.checked_sub(1).is_some_and(|k| msgs[k]["role"] == "tool")
            && j + 1 == msgs.len();
        if s(w, "placement") != "user message, after the function_call_output item, last input item"
            || !placed
        {
            fails.push(format!(
                "request {r}: notification not placed as `{}`: {}",
                s(w, "placement"),
                Value::Array(msgs.clone())
            ));
        }
    }
    if seen != want.len() {
        fails.push(format!("notifications: want {} got {seen}", want.len()));
    }
}

/// A recorded text: a string, or content blocks of text (an MCP tool's
/// result as Claude Code sends it) joined by newlines.
fn text_of(v: &Value) -> String {
    match v {
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| b["text"].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.as_str().unwrap_or_default().to_string(),
    }
}

/// A user message that is not a plugin's: the user's prompt (or, in dsh,
/// a compaction's own message).
fn is_user_prompt(m: &Value) -> bool {
    m["role"] == "user" && m.get("source").is_none()
}

fn check_requests(
    v: &Vector,
    sb: &Sandbox,
    dialect: Dialect,
    skips: &Skips,
    p: &Produced,
    b: &mut Bindings,
    fails: &mut Vec<String>,
) {
    let outcome = &v.json["outcome"];
    let want_n = outcome["model_requests"].as_u64().unwrap_or(0) as usize;
    if p.requests.len() != want_n {
        fails.push(format!(
            "model requests: want {want_n} got {}",
            p.requests.len()
        ));
    }
    let bridge = dialect.bridge();
    let mut want_sourced = Vec::new();
    if dialect == Dialect::Claude {
        check_memory(v, sb, p, &mut want_sourced, fails);
    }
    // Several text blocks of one user message (two Stop blocks, vector
    // S53-two-stop-blocks) and Codex's several `<hook_prompt>` items of one
    // user message after the answer (C50-two-stop-blocks) are one message
    // in dsh's history with a text part each: an entry with their texts in
    // `parts`, in order, compared part by part.
    let mut texts: Vec<Value> = Vec::new();
    for t in outcome["hook_text_seen_by_model"].as_array().unwrap() {
        let placement = s(t, "placement");
        let block = placement
            .strip_prefix("text block ")
            .and_then(|p| p.strip_suffix(" in a user message"))
            .and_then(|p| p.split_once(" of "))
            .and_then(|(k, n)| Some((k.parse::<usize>().ok()?, n.parse::<usize>().ok()?)));
        let codex_prompt =
            placement == "user message, after the assistant message, last input item";
        // A group's first block (a project command's message starts at
        // block 2, after the CLI's date reminder dsh does not send).
        let group = |prev: &Value| {
            let first = prev["first_block"].as_u64().unwrap_or(1) as usize;
            prev["request"] == t["request"]
                && prev["parts"]
                    .as_array()
                    .is_some_and(|p| block.is_none_or(|(k, _)| p.len() + first == k))
        };
        let command = s(t, "text").starts_with("<command-message>");
        match (block, texts.last_mut()) {
            (Some((k, n)), Some(prev)) if k > 1 && n > 1 && group(prev) => {
                if let Some(parts) = prev["parts"].as_array_mut() {
                    parts.push(t["text"].clone());
                }
            }
            (None, Some(prev))
                if codex_prompt && group(prev) && s(prev, "placement") == placement =>
            {
                if let Some(parts) = prev["parts"].as_array_mut() {
                    parts.push(t["text"].clone());
                }
            }
            // A project slash command's message and its expanded text
            // (S185): one user message of dsh's, its blocks from here on.
            (Some((k, n)), _) if k > 1 && n >= k && command => {
                let mut t = t.clone();
                t["placement"] = json!("text block 1 of 1 in a user message");
                t["parts"] = json!([t["text"].clone()]);
                t["blocks"] = json!(n - k + 1);
                t["first_block"] = json!(k);
                texts.push(t);
            }
            (Some((1, n)), _) if n > 1 => {
                let mut t = t.clone();
                t["placement"] = json!("text block 1 of 1 in a user message");
                t["parts"] = json!([t["text"].clone()]);
                t["blocks"] = json!(n);
                texts.push(t);
            }
            (None, _) if codex_prompt => {
                let mut t = t.clone();
                t["parts"] = json!([t["text"].clone()]);
                texts.push(t);
            }
            _ => texts.push(t.clone()),
        }
    }
    // The user's prompts, as typed.
    let prompts: Vec<String> = v.json["invocations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["prompt"].as_str().map(String::from))
        .chain(typed_prompts(v))
        .collect();
    for t in &texts {
        let r = t["request"].as_u64().unwrap_or(0) as usize;
        let placement = s(t, "placement");
        let parts: Vec<String> = t["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|part| p.map_paths(sb, &text_of(part)))
            .collect();
        // The user's texts the CLI merged into one message (`/compact`'s
        // transcript, its output with the next prompt, a prompt with the
        // summary prompt after it).
        if dialect == Dialect::Claude && !parts.is_empty() && slash::is_users(&parts, &prompts) {
            let n = t["blocks"].as_u64().map_or(parts.len(), |n| n as usize);
            slash::check_merged(&v.json, r, &parts, n, &p.requests, fails);
            continue;
        }
        if parts.len() > 1 {
            check_parts(r, &parts, p, bridge, &mut want_sourced, fails);
            continue;
        }
        let mut text = p.map_paths(sb, &text_of(&t["text"]));
        // Codex's exec framing is its tool's output, not hook text
        // (C20-env-passthrough lists the tool's result).
        if dialect == Dialect::Codex
            && text.starts_with("Chunk ID: ")
            && skips.has(Aspect::ToolResults)
        {
            continue;
        }
        // Ids in saved-file names: bound to the text dsh produced.
        if text.contains('$') {
            let msgs = p.requests.get(r).and_then(|q| q["messages"].as_array());
            let stripped = |c: &str| {
                c.strip_prefix("\n\n")
                    .or_else(|| c.strip_suffix("\n\n"))
                    .unwrap_or(c)
                    .to_string()
            };
            let want = stripped(&text);
            if let Some(got) = msgs
                .into_iter()
                .flatten()
                .filter_map(|m| m["content"].as_str())
                .find(|c| b.match_str(&want, c))
            {
                text = text.replace(&want, got);
            }
        }
        // A compaction's own messages (S90) and a prompt the CLI merged
        // into its slash-command message are plain user messages in dsh's
        // history, compared whole.
        let plain = [
            ("CRITICAL: Respond with TEXT ONLY.", "summary request"),
            (
                "This session is being continued from a previous conversation",
                "compaction summary",
            ),
            // Codex's (C90-*).
            (
                "You are performing a CONTEXT CHECKPOINT COMPACTION.",
                "summary request",
            ),
            (
                "Another language model started to solve this problem",
                "compaction summary",
            ),
        ]
        .into_iter()
        .find(|(head, _)| text.starts_with(head))
        .map(|(_, kind)| kind)
        .or_else(|| {
            v.json["invocations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|i| i["prompt"] == text.as_str())
                .then_some("prompt")
        })
        .or_else(|| typed_prompts(v).contains(&text).then_some("prompt"))
        // A prompt Codex kept after a compaction, cut to its budget
        // (`C120-*`): compared whole against dsh's kept user message.
        .or_else(|| {
            (placement == "user message, an earlier prompt kept in the history after a compaction")
                .then_some("prompt")
        });
        // Claude Code's summary prompt after a tool result and a prompt
        // of its own, compared strictly unless a row maps them.
        match plain {
            Some("summary request")
                if dialect == Dialect::Claude && !skips.has(Aspect::Mapped("summary request")) =>
            {
                slash::check_summary_request(r, &text, &placement, &p.requests, fails);
                continue;
            }
            // A prompt is its message's last block; blocks before it are
            // Claude Code's own reminders (the date), which dsh does not
            // send: the first prompt of a session whose earlier prompts
            // were all blocked (S190) has them.
            Some("prompt")
                if dialect == Dialect::Claude
                    && is_last_block(&placement)
                    && !skips.has(Aspect::Mapped("prompt")) =>
            {
                slash::check_prompt(r, &text, &p.requests, fails);
                continue;
            }
            _ => {}
        }
        if let Some(kind) = plain
            && skips.has(Aspect::Mapped(kind))
        {
            let found = p.requests.get(r).is_some_and(|q| {
                let msgs = q["messages"].as_array().cloned().unwrap_or_default();
                // Claude Code's summary message starts the conversation
                // (after the date reminder, which dsh does not send).
                if dialect == Dialect::Claude && kind == "compaction summary" {
                    return msgs
                        .first()
                        .is_some_and(|m| is_user_prompt(m) && m["content"] == text.as_str());
                }
                msgs.iter()
                    .any(|m| is_user_prompt(m) && m["content"] == text.as_str())
            });
            if !found {
                fails.push(format!("request {r}: no user message {text:?} ({kind})"));
            }
            continue;
        }
        let Some(req) = p.requests.get(r) else {
            fails.push(format!("request {r} (for {text:?}) was never made"));
            continue;
        };
        let msgs = req["messages"].as_array().cloned().unwrap_or_default();
        // The recording kept only the head of a long text the CLI cut
        // (`...[truncated N chars]`): the message starting with that head
        // is the one, and the rest of it must be the CLI's own cut.
        if let Some((head, _)) = text.split_once("...[truncated ") {
            let found = msgs.iter().rev().find_map(|m| {
                let c = m["content"].as_str()?;
                (m.get("source").is_some() && c.starts_with(head)).then(|| c.to_string())
            });
            match found {
                Some(full) => {
                    if let Err(e) = check_spilled(v, sb, p, &full) {
                        fails.push(format!("request {r}: {e}"));
                    }
                    text = full;
                }
                None => {
                    fails.push(format!("request {r}: no hook message starting {head:?}"));
                    continue;
                }
            }
        }
        let is_sourced = |m: &Value| m.get("source").is_some();
        let tool_result_placement = placement.starts_with("content of the tool_result block")
            || placement == "output of the function_call_output item";
        // A tool's own result the table leaves out (its ToolResults row).
        if tool_result_placement && skips.has(Aspect::ToolResults) {
            continue;
        }
        if tool_result_placement {
            let is_error = placement.contains("is_error=true");
            // Durations vary (vectors README): the `Agent` result's
            // `<usage>` note is compared without them.
            let text = without_durations(&text);
            let found = msgs.iter().any(|m| {
                let content = without_durations(m["content"].as_str().unwrap_or_default());
                m["role"] == "tool"
                    && (content == text || b.match_str(&text, &content))
                    && (dialect == Dialect::Codex
                        || m.get("is_error").and_then(Value::as_bool).unwrap_or(false) == is_error)
            });
            if !found {
                fails.push(format!(
                    "request {r}: no tool result {text:?} ({placement}); tool messages: {:?}",
                    msgs.iter()
                        .filter(|m| m["role"] == "tool")
                        .collect::<Vec<_>>()
                ));
            }
            continue;
        }
        // Everything else is a message of its own: context or steering.
        let text = if placement.starts_with("end of the role:'system'") {
            text.strip_prefix("\n\n").unwrap_or(&text).to_string()
        } else if placement.starts_with("start of the role:'system'") {
            text.strip_suffix("\n\n").unwrap_or(&text).to_string()
        } else {
            text
        };
        // The newest of equal texts is the one this request added; the
        // same text added several times in one request (vector
        // `C200-same-handler-twice`) is the newest few, in order.
        let nth = want_sourced
            .iter()
            .filter(|w| w.0 == r && w.1 == text)
            .count();
        let same = texts
            .iter()
            .filter(|o| o["request"] == t["request"] && o["text"] == t["text"])
            .count();
        want_sourced.push((r, text.clone()));
        // One text block is one part: a message in parts is not it.
        let equal: Vec<usize> = msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.get("source").is_some()
                    && m["content"] == text.as_str()
                    && m.get("parts").is_none()
            })
            .map(|(k, _)| k)
            .collect();
        let pick = (equal.len() + nth).checked_sub(same.max(nth + 1));
        let Some(j) = pick.and_then(|k| equal.get(k)).or(equal.last()).copied() else {
            fails.push(format!(
                "request {r}: no hook message {text:?} ({placement})"
            ));
            continue;
        };
        let m = &msgs[j];
        let from = if m["source"]["kind"] == "steering" {
            &m["source"]["from"]
        } else {
            &m["source"]
        };
        // The CLI's own interrupted-for-tool-use text after a dialog's "No"
        // (S107) is the approval step's in dsh, not a hook's.
        let by = if text == dsh_host::permissions::INTERRUPTED_FOR_TOOL_USE && rejects_in_dialog(v)
        {
            "approval"
        } else if text.starts_with("[Image: original ")
            && placement.contains("after the tool_result block")
        {
            // Claude Code's note after a resized image (S150) is `Read`'s.
            "tools-fs"
        } else {
            bridge
        };
        // Claude's system-message text is a system-role message, Codex's
        // developer message a developer-role one; every other hook text a
        // user-role one.
        let role = if placement.contains("of the role:'system' message") {
            "system"
        } else if placement.starts_with("developer message") {
            "developer"
        } else {
            "user"
        };
        if *from != json!({"kind": "plugin", "plugin": by}) || m["role"] != role {
            fails.push(format!(
                "request {r}: {text:?} is not attributed to {by}: {m}"
            ));
        }
        let last = j + 1 == msgs.len();
        let prev = j.checked_sub(1).map(|k| &msgs[k]);
        let steering = m["source"]["kind"] == "steering";
        let ok = match placement.as_str() {
            // Claude's system message → system-role context right after the
            // prompt: SessionStart's first, then UserPromptSubmit's (after
            // SessionStart's, when both are there).
            p if p.starts_with("end of the role:'system'") => msgs[..j]
                .iter()
                .rev()
                .find(|m| m["role"] != "system")
                .is_some_and(is_user_prompt),
            p if p.starts_with("start of the role:'system'") => {
                prev.is_some_and(is_user_prompt) && !steering
            }
            // Text blocks after a tool_result → context messages after the
            // step's results (ARCHITECTURE.md §4, decision 2).
            p if p.contains("after the tool_result block") => {
                let k: usize = p
                    .strip_prefix("text block ")
                    .and_then(|r| r.split(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                j >= k && msgs[j + 1 - k]["role"] == "tool" && !steering
            }
            // Stop feedback → steering at the end of the next request.
            "text block 1 of 1 in a user message"
            | "user message, after the assistant message, last input item" => {
                steering && last && prev.is_some_and(|m| m["role"] == "assistant")
            }
            // Codex puts tool-step context before the output; dsh keeps
            // call/result adjacency and puts it after the step's results.
            "developer message, after the function_call item, before the function_call_output item" => {
                prev.is_some_and(|m| m["role"] == "tool") && !steering
            }
            "developer message, after the environment_context user message, before the user message" => {
                msgs[j + 1..].iter().any(is_user_prompt) && !steering
            }
            "developer message, after the user message, last input item" => {
                prev.is_some_and(is_user_prompt) && last && !steering
            }
            // Several hooks' contexts: a developer message each, in a row
            // (vectors `C50-*-several-contexts`).
            "developer message, after the environment_context user message, before another developer message" => {
                msgs.get(j + 1).is_some_and(is_sourced) && !steering
            }
            "developer message, after another developer message, before the user message" => {
                prev.is_some_and(is_sourced)
                    && msgs[j + 1..].iter().any(is_user_prompt)
                    && !steering
            }
            "developer message, after the user message, before another developer message" => {
                prev.is_some_and(is_user_prompt)
                    && msgs.get(j + 1).is_some_and(is_sourced)
                    && !steering
            }
            "developer message, after another developer message, before another developer message" => {
                prev.is_some_and(is_sourced) && msgs.get(j + 1).is_some_and(is_sourced) && !steering
            }
            "developer message, after another developer message, last input item" => {
                prev.is_some_and(is_sourced) && last && !steering
            }
            // Several contexts of one tool step, in a row after its result
            // (vector `C200-same-handler-twice`).
            "developer message, after the function_call item, before another developer message" => {
                prev.is_some_and(|m| m["role"] == "tool")
                    && msgs.get(j + 1).is_some_and(is_sourced)
                    && !steering
            }
            "developer message, after another developer message, before the function_call_output item" => {
                prev.is_some_and(is_sourced)
                    && msgs[..j]
                        .iter()
                        .rev()
                        .find(|m| !is_sourced(m))
                        .is_some_and(|m| m["role"] == "tool")
                    && !steering
            }
            other => {
                fails.push(format!("unknown placement {other:?}"));
                true
            }
        };
        if !ok {
            fails.push(format!(
                "request {r}: {text:?} is not placed as `{placement}`: messages {}",
                Value::Array(msgs.clone())
            ));
        }
    }
    // A blocked prompt never reaches the model, in this turn or a later one
    // (C3-ups-block-then-resume: "no trace of the blocked prompt").
    for blocked in p.events.iter().filter(|e| e["type"] == "prompt/blocked") {
        let content = s(blocked, "content");
        // Claude Code writes a blocked `/compact` into the conversation as
        // a command (`<command-name>`, compared above); no message is it.
        if dialect == Dialect::Claude && content.starts_with("/compact") {
            let as_message = p.requests.iter().any(|r| {
                r["messages"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|m| m["content"] == content.as_str())
            });
            if as_message {
                fails.push(format!("blocked prompt {content:?} reached the model"));
            }
            continue;
        }
        if p.requests.iter().any(|r| r.to_string().contains(&content)) {
            fails.push(format!("blocked prompt {content:?} reached the model"));
        }
    }
    // No hook text the CLI did not show, none missing, in order.
    let got: Vec<(usize, String)> = sourced(&p.requests)
        .into_iter()
        .map(|(r, t, _)| (r, t))
        .collect();
    if got != want_sourced {
        fails.push(format!("hook messages: want {want_sourced:?} got {got:?}"));
    }
}

/// Claude Code's context reminder around the memory files' section (its
/// `# currentDate` section, which dsh does not send, left out).
const MEMORY_HEAD: &str = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\n";
const MEMORY_TAIL: &str = "\n\n      IMPORTANT: this context may or may not be relevant to your tasks. \
You should not respond to this context unless it is highly relevant to your task.\n</system-reminder>\n";

/// The memory files the model read (`claude_md`: the `# claudeMd` section
/// of Claude Code's context reminder at the head of a user message,
/// S187-*): in that request, a user-role message from the bridge holding
/// the reminder with that section, right before the request's first
/// prompt, and no such message where the recording has none.
fn check_memory(
    v: &Vector,
    sb: &Sandbox,
    p: &Produced,
    want_sourced: &mut Vec<(usize, String)>,
    fails: &mut Vec<String>,
) {
    for e in v.json["model_request_excerpts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let r = e["request"].as_u64().unwrap_or(0) as usize;
        let sections = e["new_messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|b| b["claude_md"].as_str().map(String::from));
        // A `Read`'s nested memory (S240): Claude Code's system message of
        // its own after the step's tool results: the bridge's system-role
        // message right after the step's last tool message.
        let nested = e["new_messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "system")
            .filter_map(|m| match m["content_string_parts"].as_array() {
                Some(parts) if parts.len() == 1 => parts[0].as_str().map(String::from),
                _ => None,
            })
            .filter(|t| t.starts_with("Contents of "));
        for text in nested {
            let text = p.map_paths(sb, &text);
            want_sourced.push((r, text.clone()));
            let msgs = p
                .requests
                .get(r)
                .and_then(|q| q["messages"].as_array().cloned())
                .unwrap_or_default();
            let at = msgs
                .iter()
                .position(|m| m.get("source").is_some() && m["content"] == text.as_str());
            let ok = at.is_some_and(|j| {
                msgs[j]["role"] == "system"
                    && msgs[j]["source"] == json!({"kind": "plugin", "plugin": "hooks-claude"})
                    && j.checked_sub(1).is_some_and(|k| msgs[k]["role"] == "tool")
            });
            if !ok {
                fails.push(format!(
                    "request {r}: no nested memory message {text:?} as the bridge's system message after the step's tool results: messages {}",
                    Value::Array(msgs)
                ));
            }
        }
        for md in sections {
            let text = format!("{MEMORY_HEAD}{}{MEMORY_TAIL}", p.map_paths(sb, &md));
            want_sourced.push((r, text.clone()));
            let msgs = p
                .requests
                .get(r)
                .and_then(|q| q["messages"].as_array().cloned())
                .unwrap_or_default();
            let Some(j) = msgs
                .iter()
                .position(|m| m.get("source").is_some() && m["content"] == text.as_str())
            else {
                fails.push(format!(
                    "request {r}: no memory message {text:?}; messages {}",
                    Value::Array(msgs)
                ));
                continue;
            };
            let m = &msgs[j];
            let first_prompt = msgs.iter().position(is_user_prompt);
            let ok = m["role"] == "user"
                && m["source"] == json!({"kind": "plugin", "plugin": "hooks-claude"})
                && first_prompt == Some(j + 1);
            if !ok {
                fails.push(format!(
                    "request {r}: the memory message is not the bridge's user message right before the first prompt: messages {}",
                    Value::Array(msgs)
                ));
            }
        }
    }
}

/// Claude Code's preserved segment (`S90-*`): `/compact` summarizes all
/// but the last answer, which the request after the compaction has right
/// after the summary message (the recording's excerpt: the summary at
/// index 0, the answer at index 1), and which the summary request does not
/// have.
fn check_preserved(v: &Vector, p: &Produced, fails: &mut Vec<String>) {
    const SUMMARY_HEAD: &str = "This session is being continued from a previous conversation";
    for e in v.json["model_request_excerpts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let new = e["new_messages"].as_array().cloned().unwrap_or_default();
        let at = |i: u64, role: &str| {
            new.iter()
                .find(|m| m["index"] == i && m["role"] == role)
                .and_then(|m| m["content"].as_array().cloned())
                .unwrap_or_default()
        };
        let summarized = at(0, "user").iter().any(|b| {
            b["text"]
                .as_str()
                .is_some_and(|t| t.starts_with(SUMMARY_HEAD))
        });
        let kept = at(1, "assistant")
            .iter()
            .find_map(|b| b["text"].as_str().map(String::from));
        let (true, Some(kept)) = (summarized, kept) else {
            continue;
        };
        let r = e["request"].as_u64().unwrap_or(0) as usize;
        let msgs = p
            .requests
            .get(r)
            .and_then(|q| q["messages"].as_array().cloned())
            .unwrap_or_default();
        let after = msgs
            .iter()
            .position(|m| {
                m["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with(SUMMARY_HEAD))
            })
            .and_then(|j| msgs.get(j + 1));
        if !after.is_some_and(|m| m["role"] == "assistant" && m["content"] == kept.as_str()) {
            fails.push(format!(
                "request {r}: the last answer {kept:?} is not kept right after the summary: {}",
                Value::Array(msgs.clone())
            ));
        }
        for (k, q) in p.requests.iter().enumerate() {
            let asked = q["messages"].as_array().cloned().unwrap_or_default();
            let is_summary_request = slash::is_summary_request(q);
            if is_summary_request
                && asked
                    .iter()
                    .any(|m| m["role"] == "assistant" && m["content"] == kept.as_str())
            {
                fails.push(format!(
                    "request {k}: the summary request summarizes the last answer {kept:?}"
                ));
            }
        }
    }
}

/// One user message of several text parts (several Stop hooks' blocks):
/// the newest hook message of request `r` with exactly these parts, in
/// order, is steering from the bridge at the end of the request, right
/// after the answer it steers.
fn check_parts(
    r: usize,
    parts: &[String],
    p: &Produced,
    bridge: &str,
    want_sourced: &mut Vec<(usize, String)>,
    fails: &mut Vec<String>,
) {
    let joined = parts.join(dsh_plugin_api::STEERING_PART_SEPARATOR);
    want_sourced.push((r, joined.clone()));
    let msgs = p
        .requests
        .get(r)
        .and_then(|q| q["messages"].as_array())
        .cloned()
        .unwrap_or_default();
    let Some(j) = msgs.iter().rposition(|m| {
        m.get("source").is_some() && m["parts"] == json!(parts) && m["content"] == joined.as_str()
    }) else {
        fails.push(format!(
            "request {r}: no hook message in parts {parts:?}; messages {}",
            Value::Array(msgs)
        ));
        return;
    };
    let m = &msgs[j];
    let ok = m["role"] == "user"
        && m["source"] == json!({"kind": "steering", "from": {"kind": "plugin", "plugin": bridge}})
        && j + 1 == msgs.len()
        && j.checked_sub(1)
            .is_some_and(|k| msgs[k]["role"] == "assistant");
    if !ok {
        fails.push(format!(
            "request {r}: the message in parts {parts:?} is not steering from {bridge} after the answer: messages {}",
            Value::Array(msgs)
        ));
    }
}

/// A text Codex cut (vector `C3-ups-large-additional-context`): its end
/// names the file under the sandbox that holds the hook's whole
/// `additionalContext`, and it stays near Codex's 10 KB.
fn check_spilled(v: &Vector, sb: &Sandbox, p: &Produced, shown: &str) -> Result<(), String> {
    let whole = v.json["hook_behaviors"]
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .find_map(|b| {
            let out: Value = serde_json::from_str(b["stdout"].as_str()?).ok()?;
            out["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .map(String::from)
        })
        .unwrap_or_default();
    let (_, path) = shown
        .rsplit_once("\n\nFull hook output saved to: ")
        .ok_or_else(|| format!("no `Full hook output saved to:` footer in {shown:.300}"))?;
    let _ = sb;
    if !Path::new(path).starts_with(&p.outs) {
        return Err(format!("saved to {path}, not under the configured folder"));
    }
    let saved = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    if saved != whole {
        return Err(format!("{path} does not hold the whole context"));
    }
    if shown.len() > 10_200 {
        return Err(format!("the cut text is {} bytes", shown.len()));
    }
    Ok(())
}

fn check_tools(
    v: &Vector,
    sb: &Sandbox,
    skips: &Skips,
    p: &Produced,
    b: &mut Bindings,
    fails: &mut Vec<String>,
) {
    let want = v.json["outcome"]["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let calls: Vec<&Value> = p
        .events
        .iter()
        .filter(|e| e["type"] == "tool/call")
        .collect();
    if calls.len() != want.len() {
        fails.push(format!(
            "tool calls: want {} got {}",
            want.len(),
            calls.len()
        ));
        return;
    }
    for (w, call) in want.iter().zip(calls) {
        let id = s(call, "call_id");
        let denied = p
            .events
            .iter()
            .any(|e| e["type"] == "tool/denied" && e["call_id"] == id.as_str());
        let ran = w["ran"] == true;
        if ran == denied && !skips.has(Aspect::ToolsRan) {
            fails.push(format!("tool {id}: ran want {ran} got {}", !denied));
        }
        let result = p
            .events
            .iter()
            .find(|e| e["type"] == "tool/result" && e["call_id"] == id.as_str());
        // Content blocks of text (Claude's MCP results, Codex's `input_text`
        // items) read as their text.
        let blocks_text = w["result_seen_by_model"].as_array().and_then(|blocks| {
            blocks
                .iter()
                .map(|b| {
                    (b["type"] == "text" || b["type"] == "input_text")
                        .then(|| b["text"].as_str())
                        .flatten()
                })
                .collect::<Option<Vec<&str>>>()
                .map(|texts| texts.join("\n"))
        });
        // Image blocks (`Read` of a PNG): the tool message the model got
        // next carries those images, in order, and no text.
        // A vector whose images are summarized (`source.decoded`, S150:
        // resized images, too long to store and to match as text) compares
        // dsh's image by its media type, pixel size, length and CRC-32.
        let images: Vec<Value> = w["result_seen_by_model"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "image")
            .map(|b| match b["source"].get("decoded") {
                Some(d) => json!({"mime_type": b["source"]["media_type"], "data": {"decoded": d}}),
                None => {
                    json!({"mime_type": b["source"]["media_type"], "data": b["source"]["data"]})
                }
            })
            .collect();
        if !images.is_empty() && !skips.has(Aspect::ToolResults) {
            let sent: Vec<&Value> = p
                .requests
                .iter()
                .flat_map(|r| r["messages"].as_array().into_iter().flatten())
                .filter(|m| m["role"] == "tool" && m["tool_call_id"] == id.as_str())
                .collect();
            let want = json!(images);
            let ok = !sent.is_empty()
                && sent.iter().all(|m| {
                    summarized_like(&m["images"], &want) == want
                        && m["content"] == ""
                        && m.get("is_error").is_none()
                });
            let logged = result.is_some_and(|r| {
                summarized_like(&r["images"], &want) == want && r["content"] == ""
            });
            if !ok || !logged {
                fails.push(format!(
                    "tool {id}: images want {want} got in the requests {sent:?}, in the log {:?}",
                    result.map(|r| &r["images"])
                ));
            }
            continue;
        }
        let seen = w["result_seen_by_model"]
            .as_str()
            .map(str::to_string)
            .or(blocks_text);
        if let (Some(seen), Some(result)) = (seen.as_deref(), result)
            && !skips.has(Aspect::ToolResults)
        {
            // A long result saved beside the transcript names its file
            // (S292): Claude Code's folders mapped to dsh's.
            let mut seen = without_durations(&p.map_paths(sb, seen));
            let mut got = without_durations(result["content"].as_str().unwrap_or_default());
            if crate::ripgrep_order::applies(s(w, "name").as_str(), &w["input"]) {
                seen = crate::ripgrep_order::normalized(&seen);
                got = crate::ripgrep_order::normalized(&got);
            }
            // `$CHUNK_ID`, `$WALL_TIME` (Codex's framing) bind to dsh's.
            if got != seen && !b.match_str(&seen, &got) {
                fails.push(format!(
                    "tool {id}: result want {seen:?} got {}",
                    result["content"]
                ));
            }
        }
    }
}

fn check_turn_ends(
    v: &Vector,
    sb: &Sandbox,
    dialect: Dialect,
    p: &Produced,
    fails: &mut Vec<String>,
) {
    let outcome = &v.json["outcome"];
    let last_text = |o: &Outcome| {
        o.events
            .iter()
            .rev()
            .find(|e| e["type"] == "assistant/message")
            .map(|e| s(e, "content"))
    };
    // (reason, message if it must match, final assistant text if it must match)
    let wants: Vec<(TurnEndReason, Option<String>, Option<String>)> = match dialect {
        Dialect::Claude => {
            let te = &outcome["turn_end"];
            let result = sb.subst(&s(te, "result"));
            let typed = typed_prompts(v);
            if init_only(&v.json["invocations"][0]) {
                // `--init-only` (S242): no turn.
                Vec::new()
            } else if v.json["invocations"][0]["interrupted_when_file"].is_string() {
                // SIGINT mid-tool (S181, S182): `claude -p` ends the run
                // `error_during_execution` (`aborted_tools`); dsh's
                // cancelled turn ends aborted.
                vec![(TurnEndReason::Aborted, None, None)]
            } else if !typed.is_empty() {
                // An interactive run: the first turn, then one per prompt
                // typed; the TUI reports no result.
                (0..=typed.len())
                    .map(|_| (TurnEndReason::Completed, None, None))
                    .collect()
            } else if let Some(results) = outcome["results"].as_array() {
                // `claude -p` re-invoked the model in its wind-down
                // (S262-ends-in-grace): a result per turn.
                results.iter().map(|r| claude_run_end(sb, r)).collect()
            } else if let Some(runs) = outcome["runs"].as_array() {
                // Several runs of one session (`--continue`, S90): each
                // ends as its CLI run did.
                runs.iter().map(|run| claude_run_end(sb, run)).collect()
            } else if te["is_error"] == true {
                vec![claude_run_end(sb, te)]
            } else if outcome["model_requests"] == 0 {
                vec![(TurnEndReason::Rejected, Some(result), None)]
            } else {
                // `completed` and `stop_hook_prevented` both end dsh's turn
                // `completed`; the CLI's empty final result after a capped
                // Stop loop is presentation.
                let text = (!result.is_empty()).then_some(result);
                vec![(TurnEndReason::Completed, None, text)]
            }
        }
        Dialect::Codex => outcome["runs"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(k, run)| {
                // SIGINT mid-turn (C173): codex exits 1 without
                // `turn.completed`; dsh's cancelled turn ends aborted.
                if v.json["invocations"][k]["interrupted_when_file"].is_string() {
                    return (TurnEndReason::Aborted, None, None);
                }
                let answered = run["agent_messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .cloned();
                let stopped = run["exit_code"] == 1
                    && !run["events"]
                        .as_array()
                        .is_some_and(|e| e.iter().any(|x| x == "turn.completed"));
                match answered {
                    // A hook stopped the turn mid-way (`continue: false` on
                    // PreCompact or PostCompact, C91-*): codex exits 1
                    // without `turn.completed`; dsh's turn ends halted.
                    None if stopped => (TurnEndReason::Completed, None, None),
                    // `turn.completed` with no answer: nothing was sent to the model.
                    None => (TurnEndReason::Rejected, None, None),
                    Some(a) => (TurnEndReason::Completed, None, a.as_str().map(String::from)),
                }
            })
            .collect(),
    };
    if wants.len() != p.outcomes.len() {
        fails.push(format!(
            "turns: want {} got {}",
            wants.len(),
            p.outcomes.len()
        ));
        return;
    }
    for (k, ((reason, message, text), o)) in wants.into_iter().zip(&p.outcomes).enumerate() {
        if o.reason != reason {
            fails.push(format!(
                "turn {k}: ended {:?} ({:?}), want {reason:?}",
                o.reason, o.message
            ));
        }
        if let Some(m) = message
            && o.message.as_deref() != Some(m.as_str())
        {
            fails.push(format!("turn {k}: message want {m:?} got {:?}", o.message));
        }
        if let Some(t) = text
            && last_text(o).as_deref() != Some(t.as_str())
        {
            fails.push(format!(
                "turn {k}: last answer want {t:?} got {:?}",
                last_text(o)
            ));
        }
    }
}

/// Whether an invocation continues the folder's last session
/// (`claude --continue`, `codex exec resume --last`).
fn continues(invocation: &Value) -> bool {
    invocation["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|a| a == "--continue" || a == "--last")
}

/// Whether a placement is the last text block of a user message
/// (`text block 1 of 1`, `text block 2 of 2`, ...).
fn is_last_block(placement: &str) -> bool {
    placement
        .strip_prefix("text block ")
        .and_then(|p| p.strip_suffix(" in a user message"))
        .and_then(|p| p.split_once(" of "))
        .is_some_and(|(k, n)| k == n)
}

/// How dsh ends the turn of one Claude Code run: a failed model request
/// (`is_error`, S92) ends it `error`. A run that asked the model nothing
/// (`num_turns: 0`, a `/compact`) answers with the command's output: a
/// compaction a PreCompact hook blocked (S90, Claude Code's `Compaction
/// blocked by` text) and a prompt a UserPromptSubmit hook blocked (S190) are
/// `rejected` with it, any other text (S110's `Not
/// enough messages to compact.`) is the `completed` turn's message, and a
/// compaction that happened says nothing. A run the model answered is
/// `completed` with its answer.
fn claude_run_end(sb: &Sandbox, run: &Value) -> (TurnEndReason, Option<String>, Option<String>) {
    let result = sb.subst(&s(run, "result"));
    if run["is_error"] == true {
        (TurnEndReason::Error, None, None)
    } else if run["num_turns"] == 0 {
        if result.is_empty() {
            (TurnEndReason::Completed, None, None)
        } else if result.starts_with("Compaction blocked by ")
            || result.starts_with("UserPromptSubmit operation blocked by hook")
        {
            (TurnEndReason::Rejected, Some(result), None)
        } else {
            (TurnEndReason::Completed, Some(result), None)
        }
    } else {
        (
            TurnEndReason::Completed,
            None,
            (!result.is_empty()).then_some(result),
        )
    }
}

/// Runs every vector of `dialect` (a few at a time), then fails with every
/// difference found and with any table row nothing used.
async fn run_dialect(dialect: Dialect) {
    use futures::StreamExt as _;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/vectors")
        .join(dialect.dir());
    let mut all = load_dir(&dir);
    assert!(
        all.len() > 40,
        "found only {} vectors in {}",
        all.len(),
        dir.display()
    );
    // `DSH_VECTORS=S240,S241-`: only the vectors whose names start so
    // (while working on them; the table's unused rows are not checked).
    let only: Vec<String> = std::env::var("DSH_VECTORS")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    if !only.is_empty() {
        all.retain(|v| only.iter().any(|p| v.name.starts_with(p.as_str())));
    }
    set_launch_env(&all);
    let used = Arc::new(Mutex::new(BTreeSet::new()));
    let total = all.len();
    let results: Vec<(String, Vec<String>, bool)> =
        futures::stream::iter(all.into_iter().map(|v| {
            let used = used.clone();
            async move {
                let name = v.name.clone();
                let run = tokio::spawn(tokio::time::timeout(
                    Duration::from_secs(120),
                    check(v, dialect, used),
                ));
                let (fails, whole) = match run.await {
                    Ok(Ok(done)) => done,
                    Ok(Err(_)) => (vec![format!("{name}: timed out after 120 s")], false),
                    Err(e) => (vec![format!("{name}: panicked: {e}")], false),
                };
                (name, fails, whole)
            }
        }))
        .buffer_unordered(6)
        .collect()
        .await;
    let mut failures: Vec<String> = results.iter().flat_map(|(_, f, _)| f.clone()).collect();
    failures.sort();
    let failed: BTreeSet<&String> = results
        .iter()
        .filter(|(_, f, _)| !f.is_empty())
        .map(|(n, _, _)| n)
        .collect();
    let mut partial: Vec<&String> = results
        .iter()
        .filter(|(_, f, whole)| f.is_empty() && !whole)
        .map(|(n, _, _)| n)
        .collect();
    partial.sort();
    println!(
        "{} vectors reproduced whole (no table row but Mapped ones): {} of {total}; with table rows: {partial:?}",
        dialect.dir(),
        total - failed.len() - partial.len(),
    );
    let used = used.lock().unwrap().clone();
    let stale: Vec<String> = ROWS
        .iter()
        .enumerate()
        .filter(|(i, r)| r.dialect == dialect && !used.contains(i) && only.is_empty())
        .map(|(_, r)| format!("unused table row: {} {:?}", r.vector, r.aspect))
        .collect();
    println!(
        "{} vectors: {} passed, {} failed",
        dialect.dir(),
        total - failed.len(),
        failed.len()
    );
    assert!(
        failures.is_empty() && stale.is_empty(),
        "{} of {total} {} vectors differ:\n{}\n{}",
        failed.len(),
        dialect.dir(),
        failures.join("\n"),
        stale.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_claude_vector_through_the_loop() {
    run_dialect(Dialect::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_codex_vector_through_the_loop() {
    run_dialect(Dialect::Codex).await;
}

/// What a base64 image decodes to, as the vectors summarize it:
/// `{"width", "height"}` (from its header), its length and its CRC-32, or
/// `null`.
fn decoded(b64: &str) -> Value {
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(b64) else {
        return Value::Null;
    };
    let Some((w, h)) = dsh_tools_fs::image::dimensions(&bytes) else {
        return Value::Null;
    };
    json!({"width": w, "height": h, "bytes": bytes.len(), "crc32": crc32fast::hash(&bytes)})
}

/// dsh's `images` (`[{"mime_type", "data"}]`) with each `data` summarized
/// where `want`'s is (`{"decoded": ...}`), so the two compare.
fn summarized_like(got: &Value, want: &Value) -> Value {
    let Some(got) = got.as_array() else {
        return got.clone();
    };
    let want = want.as_array().cloned().unwrap_or_default();
    Value::Array(
        got.iter()
            .enumerate()
            .map(|(i, g)| {
                let summarize = want
                    .get(i)
                    .is_some_and(|w| w["data"].get("decoded").is_some());
                match (summarize, g["data"].as_str()) {
                    (true, Some(b64)) => {
                        json!({"mime_type": g["mime_type"], "data": {"decoded": decoded(b64)}})
                    }
                    _ => g.clone(),
                }
            })
            .collect(),
    )
}
