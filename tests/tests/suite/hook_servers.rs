//! Socket hook servers (issue 14), over the real `dsh` binary, real hook
//! servers (the README's Python and Node examples, run as written) and real
//! sockets; only the model is scripted.
//!
//! - socket servers in Python and Node make the same decisions, with the
//!   same records, as the equivalent command hook, in both bridges;
//! - a request carries exactly the stdin the command hook gets, the cwd,
//!   the bridge's variables and the timeout;
//! - a server dsh starts is restarted after it crashes (the crashed call
//!   fails open) and dies with dsh;
//! - concurrent turns share one server connection, requests in flight
//!   together;
//! - socket hooks written in the manifest (a bridge's `hooks` key) run too.
//!
//! The support here ([`Project`], [`readme_block`], ...) is shared with
//! `http_hooks` and `hostile::hook_servers`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dsh_tests::artifacts::workspace;
use dsh_tests::background::{Background, alive, wait_until};
use dsh_tests::{Outcome, run, temp_dir};
use serde_json::{Value, json};

/// Which hook bridge a project runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bridge {
    Claude,
    Codex,
}

impl Bridge {
    pub(crate) const BOTH: [Bridge; 2] = [Bridge::Claude, Bridge::Codex];

    fn plugin(self) -> &'static str {
        match self {
            Bridge::Claude => "hooks-claude",
            Bridge::Codex => "hooks-codex",
        }
    }

    fn config(self) -> Value {
        match self {
            Bridge::Claude => json!({"config_path": "hooks.json"}),
            Bridge::Codex => json!({"config_path": "hooks.json", "model": "m"}),
        }
    }
}

/// A folder with a manifest (bash-local, one bridge, a scripted model), a
/// hooks file and a project folder (`proj/`) sessions run in.
pub(crate) struct Project {
    dir: tempfile::TempDir,
}

/// One `dsh prompt --json` run.
pub(crate) struct Turn {
    pub(crate) outcome: Outcome,
    pub(crate) events: Vec<Value>,
}

impl Turn {
    pub(crate) fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    pub(crate) fn context(&self) -> String {
        let events: Vec<String> = self
            .events
            .iter()
            .map(|e| {
                let s = e.to_string();
                if s.len() > 700 {
                    format!("{}…", &s[..700])
                } else {
                    s
                }
            })
            .collect();
        format!(
            "exit {:?}\nstderr:\n{}\nevents:\n{}",
            self.outcome.code,
            self.outcome.stderr,
            events.join("\n")
        )
    }

    /// What the turn decided, without what names the handler: every tool
    /// denial (its reason) and every tool result (its text), and each hook's
    /// outcome, in order.
    pub(crate) fn decisions(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e["type"].as_str() {
                Some("tool/denied") => Some(format!("denied: {}", e["reason"])),
                Some("tool/result") => Some(format!("result: {}", e["content"])),
                Some("hook/result") => Some(format!("hook: {}", e["outcome"])),
                _ => None,
            })
            .collect()
    }
}

impl Project {
    /// `hooks` is the event map; `script` the model's replies; `extra` more
    /// manifest text (top-level keys).
    pub(crate) fn new(bridge: Bridge, hooks: Value, script: Value, extra: &str) -> Project {
        Project::with_config(bridge, bridge.config(), hooks, script, extra)
    }

    /// [`Project::new`] with the bridge's `config` given.
    pub(crate) fn with_config(
        bridge: Bridge,
        config: Value,
        hooks: Value,
        script: Value,
        extra: &str,
    ) -> Project {
        let dir = temp_dir();
        for sub in ["proj", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let project = Project { dir };
        project.write_hooks(&hooks);
        let manifest = format!(
            "state_dir: state\n{extra}plugins:\n  - name: bash-local\n  - name: {}\n    config: {}\n  \
             - id: model\n    name: model-scripted\n    config: {}\n",
            bridge.plugin(),
            config,
            json!({"script": script, "record": "requests.jsonl"}),
        );
        std::fs::write(project.root().join("cordis.yml"), manifest).unwrap();
        project
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn proj(&self) -> PathBuf {
        self.root().join("proj")
    }

    pub(crate) fn write_hooks(&self, hooks: &Value) {
        let text = json!({ "hooks": hooks }).to_string();
        std::fs::write(self.root().join("hooks.json"), text).unwrap();
    }

    /// Writes `text` to `name` under the root; returns its path.
    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `dsh prompt --json text` with `env` added.
    pub(crate) fn prompt_with_env(&self, text: &str, env: &[(&str, &str)]) -> Turn {
        let mut command = Command::new(&workspace().dsh);
        let manifest = self.root().join("cordis.yml");
        command
            .args(["prompt", "--config"])
            .arg(&manifest)
            .arg("--cwd")
            .arg(self.proj())
            .args(["--json", text])
            .current_dir(self.root());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DSH_") {
                command.env_remove(key);
            }
        }
        command
            .env("HOME", self.root().join("home"))
            .env("SHELL", "/bin/sh");
        for (k, v) in env {
            command.env(k, v);
        }
        let outcome = run(command, Duration::from_secs(120));
        let events = outcome
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        Turn { outcome, events }
    }

    pub(crate) fn prompt(&self, text: &str) -> Turn {
        self.prompt_with_env(text, &[])
    }
}

/// A PreToolUse group matching `Bash` with the handlers `hooks`.
pub(crate) fn pre_tool_use(hooks: Vec<Value>) -> Value {
    json!({"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]})
}

/// The model runs `Bash` with each command in turn, then says `done`.
pub(crate) fn bash_calls(commands: &[&str]) -> Value {
    let mut steps: Vec<Value> = commands
        .iter()
        .map(|c| json!({"tool_calls": [{"name": "Bash", "arguments": {"command": c}}]}))
        .collect();
    steps.push(json!({"text": "done"}));
    Value::Array(steps)
}

/// The code block in `lang` of the README's "Hooks that do not spawn"
/// section: the examples the README shows are the servers tests run.
pub(crate) fn readme_block(lang: &str) -> String {
    let readme = std::fs::read_to_string(dsh_tests::workspace_root().join("README.md")).unwrap();
    let section = readme
        .split("## Hooks that do not spawn")
        .nth(1)
        .expect("the README's socket hook section");
    let fence = format!("```{lang}\n");
    let start = section
        .find(&fence)
        .unwrap_or_else(|| panic!("no {lang} block"))
        + fence.len();
    let len = section[start..].find("```").unwrap();
    section[start..start + len].to_string()
}

/// `node`, or why it cannot run (the caller prints it and skips).
pub(crate) fn node() -> Result<String, String> {
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => Ok("node".into()),
        Ok(o) => Err(format!("`node --version` failed: {:?}", o.status)),
        Err(e) => Err(format!("`node` is not installed here: {e}")),
    }
}

/// A user-run socket server: `program server socket`, waited for until
/// it listens.
pub(crate) fn start_server(program: &str, server: &Path, socket: &Path) -> Background {
    let mut command = Command::new(program);
    command.arg(server).arg(socket);
    let bg = Background::start(command);
    wait_until("the server to listen", Duration::from_secs(30), || {
        std::os::unix::net::UnixStream::connect(socket).is_ok()
    });
    bg
}

// ---------------------------------------------------------------------------
// Socket hook servers decide as the equivalent command hook.

#[test]
fn socket_servers_in_python_and_node_decide_as_the_equivalent_command_hook() {
    let python = readme_block("python");
    let node_src = readme_block("js");
    let decide = &python[..python.find("def serve").unwrap()];
    let command_hook = format!(
        "{decide}r = decide(sys.stdin.read())\nsys.stdout.write(r[\"stdout\"])\n\
         sys.stderr.write(r[\"stderr\"])\nsys.exit(r[\"exit_code\"])\n"
    );
    let node = node();
    if let Err(why) = &node {
        println!("skipped the Node server: {why}");
    }
    for bridge in Bridge::BOTH {
        let mut seen: Vec<(String, Vec<String>)> = Vec::new();
        let mut handlers = vec!["command", "python"];
        if node.is_ok() {
            handlers.push("node");
        }
        for handler in handlers {
            let project = Project::new(
                bridge,
                json!({}),
                bash_calls(&["rm -rf junk", "echo fine"]),
                "",
            );
            let _server;
            let hook = match handler {
                "command" => {
                    let file = project.write("hook.py", &command_hook);
                    json!({"type": "command", "command": format!("python3 {}", file.display())})
                }
                "python" => {
                    // dsh starts and supervises this one.
                    let file = project.write("server.py", &python);
                    json!({"type": "socket", "command": format!("python3 {}", file.display())})
                }
                _ => {
                    // This one the user runs.
                    let file = project.write("server.js", &node_src);
                    let socket = project.root().join("node.sock");
                    _server = start_server("node", &file, &socket);
                    json!({"type": "socket", "path": socket})
                }
            };
            project.write_hooks(&pre_tool_use(vec![hook]));
            let turn = project.prompt("go");
            let ctx = || format!("{bridge:?} {handler}\n{}", turn.context());
            assert_eq!(turn.outcome.code, Some(0), "{}", ctx());
            let denied = turn.of_type("tool/denied");
            assert_eq!(denied.len(), 1, "{}", ctx());
            assert!(
                denied[0]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("no rm -rf here"),
                "{}",
                ctx()
            );
            assert!(
                turn.of_type("tool/result")
                    .iter()
                    .any(|r| r["content"].to_string().contains("fine")),
                "{}",
                ctx()
            );
            seen.push((handler.to_string(), turn.decisions()));
        }
        let (first, want) = &seen[0];
        for (handler, got) in &seen[1..] {
            assert_eq!(got, want, "{bridge:?}: {handler} vs {first}");
        }
    }
}

/// A user-run server that saves each request's `params` to `saved` and
/// answers exit 0 with nothing to say.
const RECORDING_SERVER: &str = r#"
import json, socket, sys
srv = socket.socket(socket.AF_UNIX); srv.bind(sys.argv[1]); srv.listen()
while True:
    f = srv.accept()[0].makefile("rw")
    for line in f:
        req = json.loads(line)
        open(sys.argv[2], "w").write(json.dumps(req))
        f.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {"exit_code": 0}}) + "\n"); f.flush()
"#;

#[test]
fn a_socket_request_carries_exactly_the_command_hooks_stdin() {
    for bridge in Bridge::BOTH {
        let project = Project::new(bridge, json!({}), bash_calls(&["echo hi"]), "");
        let server = project.write("recording.py", RECORDING_SERVER);
        let socket = project.root().join("rec.sock");
        let saved = project.root().join("request.json");
        let mut command = Command::new("python3");
        command.arg(&server).arg(&socket).arg(&saved);
        let _server = Background::start(command);
        wait_until("the server to listen", Duration::from_secs(30), || {
            std::os::unix::net::UnixStream::connect(&socket).is_ok()
        });
        let stdin_copy = project.root().join("stdin.txt");
        project.write_hooks(&pre_tool_use(vec![
            json!({"type": "socket", "path": socket, "timeout": 30}),
            json!({"type": "command", "command": format!("cat > {}", stdin_copy.display())}),
        ]));
        let turn = project.prompt("go");
        let ctx = format!("{bridge:?}\n{}", turn.context());
        let request: Value =
            serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
        assert_eq!(request["jsonrpc"], "2.0", "{ctx}");
        assert_eq!(request["method"], "hook", "{ctx}");
        let params = &request["params"];
        assert_eq!(
            params["stdin"].as_str().unwrap(),
            std::fs::read_to_string(&stdin_copy).unwrap(),
            "{ctx}"
        );
        assert_eq!(params["timeout_ms"], 30_000, "{ctx}");
        let cwd = project.proj().canonicalize().unwrap();
        assert_eq!(
            std::path::Path::new(params["cwd"].as_str().unwrap())
                .canonicalize()
                .unwrap(),
            cwd,
            "{ctx}"
        );
        if bridge == Bridge::Claude {
            assert_eq!(params["env"]["CLAUDECODE"], "1", "{ctx}");
            assert!(params["env"]["CLAUDE_PROJECT_DIR"].is_string(), "{ctx}");
        }
        assert_eq!(
            turn.of_type("hook/result")[0]["outcome"],
            "success",
            "{ctx}"
        );
    }
}

#[test]
fn socket_hooks_written_in_the_manifest_run_in_both_bridges() {
    let python = readme_block("python");
    for bridge in Bridge::BOTH {
        let dir = temp_dir();
        let server = dir.path().join("server.py");
        std::fs::write(&server, &python).unwrap();
        let mut config = bridge.config();
        config.as_object_mut().unwrap().remove("config_path");
        config["hooks"] = pre_tool_use(vec![
            json!({"type": "socket", "command": format!("python3 {}", server.display())}),
        ]);
        let project = Project::with_config(
            bridge,
            config,
            json!({}),
            bash_calls(&["rm -rf junk", "echo fine"]),
            "",
        );
        let turn = project.prompt("go");
        let ctx = format!("{bridge:?}\n{}", turn.context());
        let denied = turn.of_type("tool/denied");
        assert_eq!(denied.len(), 1, "{ctx}");
        assert!(
            denied[0]["reason"].to_string().contains("no rm -rf here"),
            "{ctx}"
        );
        assert_eq!(
            turn.of_type("hook/invoked")[0]["source"],
            "the manifest",
            "{ctx}"
        );
    }
}

// ---------------------------------------------------------------------------
// A server dsh starts is supervised.

/// A server that notes each start (its pid) in `starts`, crashes on a
/// command containing `crash` (exiting with the request unanswered) and
/// otherwise decides as the README's example.
fn crashing_server(python: &str, starts: &Path) -> String {
    let decide = &python[..python.find("def serve").unwrap()];
    let rest = r#"
import json, os, socket, sys
with open(STARTS, "a") as f: f.write(str(os.getpid()) + "\n")
srv = socket.socket(socket.AF_UNIX); srv.bind(os.environ["DSH_HOOK_SOCKET"]); srv.listen()
while True:
    conn = srv.accept()[0]
    f = conn.makefile("rw")
    for line in f:
        req = json.loads(line)
        if "crash" in req["params"]["stdin"]: os._exit(3)
        f.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": decide(req["params"]["stdin"])}) + "\n"); f.flush()
"#;
    format!("{decide}{}", rest.replace("STARTS", &format!("{starts:?}")))
}

#[test]
fn a_crashed_server_fails_open_and_is_restarted_and_dies_with_dsh() {
    let python = readme_block("python");
    let project = Project::new(
        Bridge::Claude,
        json!({}),
        bash_calls(&["echo crash", "rm -rf junk"]),
        "",
    );
    let starts = project.root().join("starts");
    let server = project.write("server.py", &crashing_server(&python, &starts));
    project.write_hooks(&pre_tool_use(vec![
        json!({"type": "socket", "command": format!("python3 {}", server.display()), "timeout": 30}),
    ]));
    let turn = project.prompt("go");
    let ctx = turn.context();
    assert_eq!(turn.outcome.code, Some(0), "{ctx}");
    // The call whose server crashed ran (a crashed hook fails open) ...
    let results = turn.of_type("hook/result");
    assert_eq!(results.len(), 2, "{ctx}");
    assert_eq!(results[0]["outcome"], "non_blocking_error", "{ctx}");
    assert!(
        results[0]["stderr"]
            .as_str()
            .unwrap()
            .contains("closed the connection before it answered"),
        "{ctx}"
    );
    assert!(
        turn.of_type("tool/result")[0]["content"]
            .to_string()
            .contains("crash"),
        "{ctx}"
    );
    // ... and the restarted server denied the next one.
    assert_eq!(results[1]["outcome"], "blocked", "{ctx}");
    let denied = turn.of_type("tool/denied");
    assert_eq!(denied.len(), 1, "{ctx}");
    let pids: Vec<i32> = std::fs::read_to_string(&starts)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "started twice: {pids:?}\n{ctx}");
    assert_ne!(pids[0], pids[1]);
    // dsh is gone: so is its server.
    wait_until(
        "the server to die with dsh",
        Duration::from_secs(10),
        || !alive(pids[1]),
    );
}

// ---------------------------------------------------------------------------
// Concurrent tool calls share one server.

/// A user-run server that counts its connections in `count` and answers
/// nothing until `together` requests are in flight, then denies them all.
const BARRIER_SERVER: &str = r#"
import json, socket, sys
path, count, together = sys.argv[1], sys.argv[2], int(sys.argv[3])
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen()
connections, held = 0, []
while True:
    conn = srv.accept()[0]
    connections += 1
    open(count, "w").write(str(connections))
    f = conn.makefile("rw")
    for line in f:
        held.append(json.loads(line)["id"])
        if len(held) < together:
            continue
        deny = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "held together"}
        for i in held:
            f.write(json.dumps({"jsonrpc": "2.0", "id": i, "result": {"exit_code": 0, "stdout": json.dumps({"hookSpecificOutput": deny})}}) + "\n")
        f.flush()
        held = []
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_tool_calls_share_one_server_connection() {
    use dsh_host::agent::Prompt;
    use dsh_tests::agent::{AgentHost, Load};
    use dsh_tests::wait::within;

    let dir = temp_dir();
    let root = dir.path().canonicalize().unwrap();
    let server = root.join("barrier.py");
    std::fs::write(&server, BARRIER_SERVER).unwrap();
    let socket = root.join("hooks.sock");
    let count = root.join("connections");
    let mut command = Command::new("python3");
    command.arg(&server).arg(&socket).arg(&count).arg("2");
    let _server = Background::start(command);
    wait_until("the server to listen", Duration::from_secs(30), || {
        socket.exists()
    });
    // A hook whose answer never came would time out and fail open: the
    // tool would run and the test fail.
    let hooks = pre_tool_use(vec![
        json!({"type": "socket", "path": socket, "timeout": 20}),
    ]);
    let file = root.join("hooks.json");
    std::fs::write(&file, json!({ "hooks": hooks }).to_string()).unwrap();
    let host = AgentHost::scripted(
        &root,
        vec![Load::builtin(
            "hooks-claude",
            "hooks-claude",
            json!({"config_path": file}),
        )],
        bash_calls_for_two(),
    )
    .problem_free();
    let (a, b) = (host.session().await, host.session().await);
    let limit = Duration::from_secs(60);
    let (one, two) = within(
        "two concurrent turns",
        limit,
        futures::future::join(a.prompt(Prompt::user("one")), b.prompt(Prompt::user("two"))),
    )
    .await;
    for out in [one, two] {
        let events = dsh_host::session::events::wire(&out.events);
        let denied: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "tool/denied")
            .collect();
        assert_eq!(denied.len(), 1, "{events:#?}");
        assert!(denied[0]["reason"].to_string().contains("held together"));
    }
    assert!(!host.project.join("ran").exists(), "a tool ran");
    assert_eq!(
        std::fs::read_to_string(&count).unwrap(),
        "1",
        "one connection"
    );
}

/// Two sessions' scripts: each runs one `Bash` (which must be denied),
/// then says done.
fn bash_calls_for_two() -> Value {
    let call = json!({"tool_calls": [{"name": "Bash", "arguments": {"command": "touch ran"}}]});
    json!([call, call, {"text": "done"}, {"text": "done"}])
}
