//! Hooks that do not spawn (issue 14), over the real `dsh` binary, real
//! hook servers (the README's Python and Node examples, run as written),
//! a real local HTTP endpoint and real sockets; only the model is scripted.
//!
//! - socket servers in Python and Node make the same decisions, with the
//!   same records, as the equivalent command hook, in both bridges;
//! - a server dsh starts is restarted after it crashes (the crashed call
//!   fails open) and dies with dsh;
//! - concurrent turns share one server connection, requests in flight
//!   together;
//! - `http` hooks: the request Claude Code sends (vector `S70-deny`), deny,
//!   allow with `updatedInput`, timeout, a 500, a host the manifest does not
//!   allow, one kept-alive connection for several calls.
//!
//! The support here ([`Project`], [`HttpEndpoint`], [`readme_block`]) is
//! shared with `hostile::hook_servers`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
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
        .split("### Hooks that do not spawn")
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

// ---------------------------------------------------------------------------
// http hooks.

/// One request an [`HttpEndpoint`] received.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub(crate) request_line: String,
    /// Header names lower-cased, values as sent, in order.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
    /// Which accepted connection it came on (0, 1, ...).
    pub(crate) connection: usize,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How the endpoint answers one request.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// Status and body.
    Send(u16, String),
    /// Sleep, then answer.
    Late(Duration, u16, String),
    /// Close the connection without answering.
    Hangup,
}

/// A local HTTP/1.1 endpoint on 127.0.0.1 (a real socket, in a thread of
/// the test) answering each request with the next of its replies (the last
/// one repeats), keeping connections alive.
pub(crate) struct HttpEndpoint {
    pub(crate) url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl HttpEndpoint {
    pub(crate) fn start(replies: Vec<Reply>) -> HttpEndpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook/pre", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(replies));
        let seen = received.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { return };
                let (seen, replies) = (seen.clone(), replies.clone());
                std::thread::spawn(move || serve(stream, n, &seen, &replies));
            }
        });
        HttpEndpoint { url, received }
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    connection: usize,
    seen: &Mutex<Vec<Received>>,
    replies: &Mutex<Vec<Reply>>,
) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        seen.lock().unwrap().push(Received {
            request_line: request_line.trim_end().to_string(),
            headers,
            body: String::from_utf8(body).unwrap(),
            connection,
        });
        let reply = {
            let mut r = replies.lock().unwrap();
            if r.len() > 1 {
                r.remove(0)
            } else {
                r[0].clone()
            }
        };
        let (status, text) = match reply {
            Reply::Send(s, t) => (s, t),
            Reply::Late(after, s, t) => {
                std::thread::sleep(after);
                (s, t)
            }
            Reply::Hangup => return,
        };
        let head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            text.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(text.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

pub(crate) fn pre_decision(decision: &str, extra: Value) -> String {
    let mut specific = json!({"hookEventName": "PreToolUse", "permissionDecision": decision});
    for (k, v) in extra.as_object().unwrap() {
        specific[k] = v.clone();
    }
    json!({ "hookSpecificOutput": specific }).to_string()
}

#[test]
fn an_http_hook_gets_the_command_hooks_payload_and_its_deny_is_honoured() {
    let endpoint = HttpEndpoint::start(vec![Reply::Send(
        200,
        pre_decision(
            "deny",
            json!({"permissionDecisionReason": "MARK_HTTP_DENY"}),
        ),
    )]);
    let project = Project::new(Bridge::Claude, json!({}), bash_calls(&["touch ran"]), "");
    let stdin_copy = project.root().join("stdin.json");
    project.write_hooks(&pre_tool_use(vec![
        json!({"type": "http", "url": endpoint.url,
               "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Braced": "${HOOK_TOKEN}-x",
                           "X-Unlisted": "v=$NOT_LISTED;w=${NOT_LISTED}", "X-Missing": "[$UNSET_VAR]"},
               "allowedEnvVars": ["HOOK_TOKEN"]}),
        json!({"type": "command", "command": format!("cat > {}", stdin_copy.display())}),
    ]));
    let turn =
        project.prompt_with_env("go", &[("HOOK_TOKEN", "tok_S70"), ("NOT_LISTED", "secret")]);
    let ctx = turn.context();
    assert!(!project.proj().join("ran").exists(), "{ctx}");
    let denied = turn.of_type("tool/denied");
    assert_eq!(denied.len(), 1, "{ctx}");
    assert_eq!(denied[0]["reason"], "MARK_HTTP_DENY", "{ctx}");
    let received = endpoint.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let r = &received[0];
    assert_eq!(r.request_line, "POST /hook/pre HTTP/1.1");
    // As recorded in S70-deny.
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("accept"),
        Some("application/json, text/plain, */*")
    );
    assert_eq!(r.header("authorization"), Some("Bearer tok_S70"));
    assert_eq!(r.header("x-braced"), Some("tok_S70-x"));
    assert_eq!(r.header("x-unlisted"), Some("v=;w="));
    assert_eq!(r.header("x-missing"), Some("[]"));
    // The body is exactly what the command hook read, less its newline.
    let stdin = std::fs::read_to_string(&stdin_copy).unwrap();
    assert_eq!(format!("{}\n", r.body), stdin);
    let hooks = turn.of_type("hook/invoked");
    assert_eq!(hooks[0]["command"], endpoint.url.as_str(), "{ctx}");
}

#[test]
fn an_http_hook_allow_with_updated_input_rewrites_the_call_and_reuses_its_connection() {
    let endpoint = HttpEndpoint::start(vec![Reply::Send(
        200,
        pre_decision(
            "allow",
            json!({"updatedInput": {"command": "echo MARK_UPDATED", "description": "changed"}}),
        ),
    )]);
    let project = Project::new(
        Bridge::Claude,
        pre_tool_use(vec![json!({"type": "http", "url": endpoint.url})]),
        bash_calls(&["touch ran", "touch ran2"]),
        "",
    );
    let turn = project.prompt("go");
    let ctx = turn.context();
    assert!(!project.proj().join("ran").exists(), "{ctx}");
    let results = turn.of_type("tool/result");
    assert_eq!(results.len(), 2, "{ctx}");
    for r in results {
        assert!(r["content"].to_string().contains("MARK_UPDATED"), "{ctx}");
    }
    let received = endpoint.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received.iter().map(|r| r.connection).collect::<Vec<_>>(),
        [0, 0],
        "both calls on one kept-alive connection"
    );
}

#[test]
fn an_http_hook_that_times_out_or_answers_500_fails_open() {
    let cases = [
        (
            Reply::Late(
                Duration::from_secs(8),
                200,
                pre_decision("deny", json!({"permissionDecisionReason": "late"})),
            ),
            "timed_out",
            None,
        ),
        (
            Reply::Send(
                500,
                pre_decision("deny", json!({"permissionDecisionReason": "body of a 500"})),
            ),
            "non_blocking_error",
            Some("HTTP 500 from "),
        ),
    ];
    for (reply, outcome, stderr) in cases {
        let endpoint = HttpEndpoint::start(vec![reply]);
        let project = Project::new(
            Bridge::Claude,
            pre_tool_use(vec![
                json!({"type": "http", "url": endpoint.url, "timeout": 1}),
            ]),
            bash_calls(&["touch ran"]),
            "",
        );
        let turn = project.prompt("go");
        let ctx = format!("{outcome}\n{}", turn.context());
        assert!(
            project.proj().join("ran").exists(),
            "the tool did not run: {ctx}"
        );
        assert!(turn.of_type("tool/denied").is_empty(), "{ctx}");
        let result = turn.of_type("hook/result")[0];
        assert_eq!(result["outcome"], outcome, "{ctx}");
        if let Some(stderr) = stderr {
            assert_eq!(
                result["stderr"],
                format!("{stderr}{}", endpoint.url),
                "{ctx}"
            );
        }
        assert_eq!(endpoint.received().len(), 1, "{ctx}");
    }
}

#[test]
fn an_http_hook_on_a_host_the_manifest_does_not_allow_is_never_called() {
    // A loopback endpoint, but a manifest that allows another host only.
    let endpoint = HttpEndpoint::start(vec![Reply::Send(
        200,
        pre_decision(
            "deny",
            json!({"permissionDecisionReason": "should not be asked"}),
        ),
    )]);
    let project = Project::new(
        Bridge::Claude,
        pre_tool_use(vec![json!({"type": "http", "url": endpoint.url})]),
        bash_calls(&["touch ran"]),
        "hooks:\n  http:\n    allowed_hosts: [hooks.example.invalid]\n",
    );
    let turn = project.prompt("go");
    let ctx = turn.context();
    assert!(
        endpoint.received().is_empty(),
        "the endpoint was called: {ctx}"
    );
    let result = turn.of_type("hook/result")[0];
    assert_eq!(result["outcome"], "not_started", "{ctx}");
    let host = endpoint
        .url
        .trim_start_matches("http://")
        .split(':')
        .next()
        .unwrap();
    assert_eq!(
        result["spawn_error"],
        format!(
            "http hook {} not called: host `{host}` is not in the manifest's \
             `hooks.http.allowed_hosts` (default: loopback only)",
            endpoint.url
        ),
        "{ctx}"
    );
    assert!(
        turn.outcome.stderr.contains("hooks.http.allowed_hosts"),
        "{ctx}"
    );
    // By default only loopback is allowed: a URL elsewhere is refused
    // without any network traffic (the name could not even resolve).
    let elsewhere = "http://hooks.example.invalid/pre";
    project.write_hooks(&pre_tool_use(vec![
        json!({"type": "http", "url": elsewhere}),
    ]));
    std::fs::write(
        project.root().join("cordis.yml"),
        std::fs::read_to_string(project.root().join("cordis.yml"))
            .unwrap()
            .replace(
                "hooks:\n  http:\n    allowed_hosts: [hooks.example.invalid]\n",
                "",
            ),
    )
    .unwrap();
    let turn = project.prompt("go");
    let result = turn.of_type("hook/result")[0];
    assert_eq!(result["outcome"], "not_started", "{}", turn.context());
    assert!(
        result["spawn_error"]
            .as_str()
            .unwrap()
            .contains("host `hooks.example.invalid` is not in the manifest's"),
        "{}",
        turn.context()
    );
}
