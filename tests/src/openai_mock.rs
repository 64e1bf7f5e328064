//! A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for
//! driving the real `dsh` binary with `model-openai`: minimal HTTP/1.1
//! (request line, headers, a `Content-Length` body), one scripted JSON
//! completion per request in arrival order (a 418 once the script runs
//! out), every request body recorded. Each answer closes its connection.
//! It serves on a thread of its own until dropped.
//!
//! [`tool_calls_answered`] checks a recorded request against the rule
//! OpenAI enforces with an HTTP 400: every assistant `tool_calls` id is
//! answered by a `tool` message before any other message.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// The mock server; stops serving when dropped.
pub struct OpenAiMock {
    /// `http://127.0.0.1:<port>`, for `model-openai`'s `base_url`.
    pub base_url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
}

/// A plain (non-streamed) completion answering with `text`.
pub fn text_completion(text: &str) -> Value {
    json!({"id": "mock", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
}

impl OpenAiMock {
    /// Serves `replies` (completion bodies), one per request.
    pub fn start(replies: Vec<Value>) -> OpenAiMock {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let base_url = format!("http://{}", listener.local_addr().expect("local addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (recorded, stopping) = (requests.clone(), stop.clone());
        let replies = Mutex::new(VecDeque::from(replies));
        std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((socket, _)) => {
                        let reply = serve(socket, &recorded, &replies);
                        if let Err(e) = reply {
                            eprintln!("openai mock: {e}");
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => return,
                }
            }
        });
        OpenAiMock {
            base_url,
            requests,
            stop,
        }
    }

    /// Every request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("requests").clone()
    }
}

impl Drop for OpenAiMock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(
    mut socket: TcpStream,
    recorded: &Mutex<Vec<Value>>,
    replies: &Mutex<VecDeque<Value>>,
) -> std::io::Result<()> {
    socket.set_nonblocking(false)?;
    socket.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    recorded
        .lock()
        .expect("requests")
        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    let (status, body) = match replies.lock().expect("replies").pop_front() {
        Some(reply) => ("200 OK", reply.to_string()),
        None => (
            "418 Mock",
            r#"{"error":{"message":"mock: no reply scripted"}}"#.into(),
        ),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(answer.as_bytes())?;
    socket.flush()
}

/// Checks `request` (a chat-completions body) against OpenAI's rule that
/// every assistant tool call id is answered by a `tool` message right
/// after it, before any other message; returns what breaks it.
pub fn tool_calls_answered(request: &Value) -> Result<(), String> {
    let messages = request["messages"]
        .as_array()
        .ok_or_else(|| format!("no messages in {request}"))?;
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        i += 1;
        let Some(calls) = m["tool_calls"].as_array().filter(|c| !c.is_empty()) else {
            if m["role"] == "tool" {
                return Err(format!(
                    "message {} is a tool result answering no call: {m}",
                    i - 1
                ));
            }
            continue;
        };
        let mut waiting: Vec<&str> = calls.iter().filter_map(|c| c["id"].as_str()).collect();
        while i < messages.len() && messages[i]["role"] == "tool" {
            let id = messages[i]["tool_call_id"].as_str().unwrap_or_default();
            let Some(at) = waiting.iter().position(|w| *w == id) else {
                return Err(format!(
                    "tool message {i} answers `{id}`, which is not waiting"
                ));
            };
            waiting.remove(at);
            i += 1;
        }
        if !waiting.is_empty() {
            return Err(format!(
                "assistant message {} has tool calls {waiting:?} with no tool message after it",
                i - 1
            ));
        }
    }
    Ok(())
}
