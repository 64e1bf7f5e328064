//! A running `dsh serve` and a plain ACP client for it.
//!
//! [`ServedDaemon`] starts the real binary on a manifest, with
//! `NOTIFY_SOCKET` pointed at a datagram socket the test reads (so waits
//! are on the daemon's own `READY=1`/`RELOADING=1`, not on time) and its
//! stderr in a file the test can read while it runs. It is killed on drop.
//! A thread drains the notify socket as systemd would: a datagram queue
//! left full (ten messages on Linux) blocks the daemon's next notification.
//! [`RpcClient`] speaks newline-delimited JSON-RPC over the daemon's Unix
//! socket, one request at a time, skipping notifications.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any wait on the daemon may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// How often a condition with no event to wait on is checked.
const POLL: Duration = Duration::from_millis(20);

/// A `dsh serve` child process.
pub struct ServedDaemon {
    child: Child,
    notifications: mpsc::Receiver<String>,
    stop_draining: Arc<AtomicBool>,
    stderr: PathBuf,
}

/// Reads every datagram on `socket` into `sink` until `stop` is set.
fn drain(socket: UnixDatagram, sink: mpsc::Sender<String>, stop: Arc<AtomicBool>) {
    socket
        .set_read_timeout(Some(POLL))
        .expect("set a read timeout");
    let mut buf = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::Relaxed) {
        if let Ok(n) = socket.recv(&mut buf) {
            let _ = sink.send(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    }
}

impl ServedDaemon {
    /// Starts `dsh serve --config config` with `DSH_LOG=log` and no other
    /// `DSH_*` variables; its notify socket and stderr file live in `dir`.
    /// Does not wait for readiness.
    pub fn spawn(config: &Path, dir: &Path, log: &str) -> ServedDaemon {
        ServedDaemon::spawn_binary(&crate::artifacts::workspace().dsh, config, dir, log)
    }

    /// [`ServedDaemon::spawn`] of the `dsh` binary at `dsh` (a bench runs
    /// an older build against the current one with it).
    pub fn spawn_binary(dsh: &Path, config: &Path, dir: &Path, log: &str) -> ServedDaemon {
        let notify_path = dir.join("notify.sock");
        let _ = std::fs::remove_file(&notify_path);
        let notify = UnixDatagram::bind(&notify_path).expect("bind the notify socket");
        let stderr = dir.join("serve.stderr");
        let stderr_file = std::fs::File::create(&stderr).expect("create the stderr file");
        let mut command = Command::new(dsh);
        command
            .arg("serve")
            .arg("--config")
            .arg(config)
            .current_dir(dir)
            .env("NOTIFY_SOCKET", &notify_path)
            .env("DSH_LOG", log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr_file);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("DSH_") && key != "DSH_LOG" {
                command.env_remove(key);
            }
        }
        let child = command.spawn().expect("spawn dsh serve");
        let (sink, notifications) = mpsc::channel();
        let stop_draining = Arc::new(AtomicBool::new(false));
        let stop = stop_draining.clone();
        std::thread::spawn(move || drain(notify, sink, stop));
        ServedDaemon {
            child,
            notifications,
            stop_draining,
            stderr,
        }
    }

    /// [`ServedDaemon::spawn`], then waits for `READY=1`.
    pub fn start(config: &Path, dir: &Path, log: &str) -> ServedDaemon {
        let daemon = ServedDaemon::spawn(config, dir, log);
        daemon.expect_notify("READY=1");
        daemon
    }

    /// [`ServedDaemon::spawn_binary`], then waits for `READY=1`.
    pub fn start_binary(dsh: &Path, config: &Path, dir: &Path, log: &str) -> ServedDaemon {
        let daemon = ServedDaemon::spawn_binary(dsh, config, dir, log);
        daemon.expect_notify("READY=1");
        daemon
    }

    /// The daemon's process id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Reads notifications until one has the line `line`; returns it whole.
    pub fn expect_notify(&self, line: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.notifications.recv_timeout(left) {
                Ok(message) if message.lines().any(|l| l == line) => return message,
                Ok(_) => {}
                Err(_) => panic!(
                    "no `{line}` notification within {WAIT:?}; stderr:\n{}",
                    self.stderr()
                ),
            }
        }
    }

    /// Sends `signal` to the daemon.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on the child this value owns and has not reaped.
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0);
    }

    /// Everything the daemon wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Waits until stderr holds `needle`; returns stderr.
    pub fn expect_stderr(&self, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = self.stderr();
            if text.contains(needle) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "`{needle}` not on stderr within {WAIT:?}:\n{text}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Waits for the daemon to exit (killing it and failing after [`WAIT`]).
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for dsh serve") {
                return status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!(
                    "dsh serve did not exit within {WAIT:?}; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Stops the daemon with SIGTERM and waits for it.
    pub fn stop(mut self) -> ExitStatus {
        self.signal(libc::SIGTERM);
        self.wait()
    }
}

impl Drop for ServedDaemon {
    fn drop(&mut self) {
        self.stop_draining.store(true, Ordering::Relaxed);
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A JSON-RPC client on the daemon's socket.
pub struct RpcClient {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl RpcClient {
    /// Connects to `socket`.
    pub fn connect(socket: &Path) -> std::io::Result<RpcClient> {
        let stream = UnixStream::connect(socket)?;
        stream.set_read_timeout(Some(WAIT))?;
        Ok(RpcClient {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
            next_id: 1,
        })
    }

    /// Sends `method` and returns its result, or the error object.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.writer, "{frame}").expect("write a request");
        loop {
            let mut line = String::new();
            let n = self
                .reader
                .read_line(&mut line)
                .unwrap_or_else(|e| panic!("no answer to `{method}` within {WAIT:?}: {e}"));
            assert!(n > 0, "the daemon hung up before answering `{method}`");
            let message: Value = serde_json::from_str(&line).expect("a JSON frame");
            if message.get("method").is_some() {
                if let Some(request_id) = message.get("id") {
                    // A request from the agent: this client offers nothing.
                    let refusal = json!({"jsonrpc": "2.0", "id": request_id,
                        "error": {"code": -32601, "message": "Method not found"}});
                    writeln!(self.writer, "{refusal}").expect("write a refusal");
                }
                continue;
            }
            if message["id"] == json!(id) {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
            }
        }
    }

    /// How long a read may wait for the daemon (default [`WAIT`]).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.writer
            .set_read_timeout(Some(timeout))
            .expect("set a read timeout");
    }

    /// `initialize`, or `None` when no answer came in time or the daemon
    /// hung up.
    pub fn try_initialize(&mut self) -> Option<Value> {
        let frame = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}});
        writeln!(self.writer, "{frame}").ok()?;
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(n) if n > 0 => serde_json::from_str::<Value>(&line)
                .ok()?
                .get("result")
                .cloned(),
            _ => None,
        }
    }

    /// `initialize` with protocol version 1; returns the result.
    pub fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .unwrap_or_else(|e| panic!("initialize failed: {e}"))
    }

    /// `session/new` in `cwd`; returns the session id.
    pub fn new_session(&mut self, cwd: &Path) -> String {
        let result = self
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .unwrap_or_else(|e| panic!("session/new failed: {e}"));
        result["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no sessionId in {result}"))
            .to_string()
    }

    /// `session/prompt` with `text`; returns the stop reason.
    pub fn prompt(&mut self, session: &str, text: &str) -> String {
        let result = self
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
            )
            .unwrap_or_else(|e| panic!("session/prompt failed: {e}"));
        result["stopReason"]
            .as_str()
            .unwrap_or_else(|| panic!("no stopReason in {result}"))
            .to_string()
    }
}
