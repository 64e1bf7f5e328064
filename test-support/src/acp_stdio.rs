//! A raw ACP client over `dsh acp`'s stdio: JSON-RPC frames written and
//! read as lines, so a test can send what no typed client would (a
//! `sessionId` holding `../`, a NUL, 200 characters) and see the exact
//! answer frame. Every read has a timeout.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// `dsh acp --config <manifest>` hosting the agent in-process.
pub struct AcpStdio {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<String>,
    next_id: u64,
    /// Notifications received so far (`session/update` and the like).
    pub notifications: Vec<Value>,
}

impl AcpStdio {
    /// Starts `dsh acp` on `manifest` in `cwd` and initializes it.
    pub fn start(manifest: &Path, cwd: &Path) -> AcpStdio {
        let mut command = crate::process::dsh_command(
            ["acp".as_ref(), "--config".as_ref(), manifest.as_os_str()],
            cwd,
        );
        // Refusals are logged at info; the test reads the answers instead.
        command
            .env("DSH_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        let mut child = command.spawn().expect("spawn dsh acp");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, frames) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut client = AcpStdio {
            stdin: child.stdin.take(),
            child,
            frames,
            next_id: 1,
            notifications: Vec::new(),
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        client
    }

    /// Sends one request and returns its response frame (with `result` or
    /// `error`); notifications on the way are kept.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{frame}").expect("write a frame to dsh acp");
        stdin.flush().expect("flush");
        let deadline = Instant::now() + REQUEST_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .frames
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within {REQUEST_TIMEOUT:?}"));
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("dsh acp wrote a non-JSON line {line:?}: {e}"));
            if value.get("id") == Some(&json!(id)) && value.get("method").is_none() {
                return value;
            }
            if value.get("method").is_some() && value.get("id").is_none() {
                self.notifications.push(value);
            }
        }
    }

    /// `session/new` in `cwd`; the new session's id.
    pub fn new_session(&mut self, cwd: &Path) -> String {
        let answer = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new failed: {answer}"))
            .to_string()
    }

    /// Closes stdin and waits (at most 30 s) for dsh acp to exit.
    pub fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.code();
            }
            assert!(
                start.elapsed() < REQUEST_TIMEOUT,
                "dsh acp did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for AcpStdio {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill(2) on the group this client created; the leader
            // is not yet reaped, so the id is still ours.
            unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
            let _ = self.child.wait();
        }
    }
}
