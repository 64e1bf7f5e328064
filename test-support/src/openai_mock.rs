//! The one scripted OpenAI-compatible chat-completions server for every
//! test, on 127.0.0.1: minimal HTTP/1.1 (request line, headers, a
//! `Content-Length` body), one scripted [`Reply`] per request in arrival
//! order (a 418 once the script runs out), every request recorded. Each
//! reply closes its connection (`Connection: close`), so every request is a
//! new one. It serves on a thread and runtime of its own until dropped, so
//! sync tests (driving the `dsh` binary) and async tests (driving the client
//! in-process) start it the same way.
//!
//! [`tool_calls_answered`] checks a recorded request against the rule
//! OpenAI enforces with an HTTP 400: every assistant `tool_calls` id is
//! answered by a `tool` message before any other message.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

/// What the server answers to one request.
pub enum Reply {
    /// 200 `text/event-stream`, each piece written and flushed on its own,
    /// chunked (`true`) or delimited by closing the connection.
    Sse { pieces: Vec<String>, chunked: bool },
    /// 200 `application/json`.
    Json(Value),
    /// Any status with a body and extra headers.
    Status {
        code: u16,
        body: String,
        headers: Vec<(String, String)>,
    },
    /// 200 SSE pieces, then the connection held open until the client
    /// closes it, which is reported to [`OpenAiMock::wait_closed`].
    Hold { pieces: Vec<String> },
}

impl Reply {
    /// A plain (non-streamed) completion answering with `text`.
    pub fn text(text: &str) -> Reply {
        Reply::Json(text_completion(text))
    }

    pub fn sse(pieces: Vec<String>) -> Reply {
        Reply::Sse {
            pieces,
            chunked: true,
        }
    }

    pub fn status(code: u16, body: &str) -> Reply {
        Reply::Status {
            code,
            body: body.into(),
            headers: Vec::new(),
        }
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A plain (non-streamed) completion body answering with `text`.
pub fn text_completion(text: &str) -> Value {
    json!({"id": "mock", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
}

/// The mock server; stops serving (and drops held connections) when dropped.
pub struct OpenAiMock {
    /// `http://127.0.0.1:<port>`, for `model-openai`'s `base_url`.
    pub base_url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    closed: tokio::sync::Mutex<mpsc::UnboundedReceiver<()>>,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for OpenAiMock {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl OpenAiMock {
    /// Serves `replies`, one per request, from a thread of its own.
    pub fn start(replies: Vec<Reply>) -> OpenAiMock {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("a nonblocking listener");
        let base_url = format!("http://{}", listener.local_addr().expect("local addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (closed_tx, closed) = mpsc::unbounded_channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let recorded = requests.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the mock's runtime");
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("a tokio listener");
                let accept = async {
                    loop {
                        let Ok((socket, _)) = listener.accept().await else {
                            return;
                        };
                        let recorded = recorded.clone();
                        let replies = replies.clone();
                        let closed_tx = closed_tx.clone();
                        tokio::spawn(async move {
                            serve(socket, recorded, replies, closed_tx).await;
                        });
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime here drops every connection still open.
        });
        OpenAiMock {
            base_url,
            requests,
            closed: tokio::sync::Mutex::new(closed),
            stop: Some(stop),
        }
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("requests").clone()
    }

    /// Waits (at most 10 s) until a `Hold` connection is closed by the client.
    pub async fn wait_closed(&self) {
        let mut closed = self.closed.lock().await;
        tokio::time::timeout(Duration::from_secs(10), closed.recv())
            .await
            .expect("the client never closed the held connection")
            .expect("the mock is serving");
    }
}

async fn serve(
    mut socket: TcpStream,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    closed: mpsc::UnboundedSender<()>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    // Record and pick the reply under one lock so both follow arrival order.
    let reply = {
        let mut recorded = recorded.lock().expect("requests");
        recorded.push(request);
        replies.lock().expect("replies").pop_front()
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::status(418, r#"{"error":{"message":"mock: no reply scripted"}}"#)
    });
    let _ = respond(&mut socket, reply, closed).await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

async fn write_chunk(socket: &mut TcpStream, piece: &str) -> std::io::Result<()> {
    let frame = format!("{:x}\r\n{piece}\r\n", piece.len());
    socket.write_all(frame.as_bytes()).await?;
    socket.flush().await
}

async fn respond(
    socket: &mut TcpStream,
    reply: Reply,
    closed: mpsc::UnboundedSender<()>,
) -> std::io::Result<()> {
    let sse_head = |chunked: bool| {
        let te = if chunked {
            "Transfer-Encoding: chunked\r\n"
        } else {
            ""
        };
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{te}Connection: close\r\n\r\n"
        )
    };
    match reply {
        Reply::Sse { pieces, chunked } => {
            socket.write_all(sse_head(chunked).as_bytes()).await?;
            for piece in pieces {
                if chunked {
                    write_chunk(socket, &piece).await?;
                } else {
                    socket.write_all(piece.as_bytes()).await?;
                    socket.flush().await?;
                }
            }
            if chunked {
                socket.write_all(b"0\r\n\r\n").await?;
            }
        }
        Reply::Json(body) => {
            let body = body.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
        }
        Reply::Status {
            code,
            body,
            headers,
        } => {
            let extra: String = headers
                .iter()
                .map(|(n, v)| format!("{n}: {v}\r\n"))
                .collect();
            let head = format!(
                "HTTP/1.1 {code} Mock\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
        }
        Reply::Hold { pieces } => {
            socket.write_all(sse_head(true).as_bytes()).await?;
            for piece in pieces {
                write_chunk(socket, &piece).await?;
            }
            // The client sends nothing more: the next read ends only when
            // it closes the connection (0 bytes) or resets it (an error).
            let mut byte = [0u8; 1];
            let _ = socket.read(&mut byte).await;
            let _ = closed.send(());
            return Ok(());
        }
    }
    socket.shutdown().await
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
