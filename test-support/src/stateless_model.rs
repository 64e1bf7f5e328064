//! A stateless OpenAI-compatible chat-completions endpoint on 127.0.0.1,
//! for load: whatever the order and number of requests, it answers a
//! `Bash` tool call when the request's last message is the user's, and
//! text otherwise (so every turn is: prompt → tool call → tool result →
//! text). HTTP/1.1 with keep-alive (the client's pool reuses connections,
//! as against a real provider), JSON answers with a `Content-Length`. It
//! serves on threads and a runtime of its own until dropped, and counts
//! the requests it answered and refused.
//!
//! The scripted [`crate::openai_mock::OpenAiMock`] is for exact
//! conversations; this one is for many sessions at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// The endpoint; stops serving when dropped.
pub struct StatelessModel {
    /// `http://127.0.0.1:<port>`, for `model-openai`'s `base_url`.
    pub base_url: String,
    answered: Arc<AtomicU64>,
    refused: Arc<AtomicU64>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The answer to one request body: a tool call after the user's message,
/// text after anything else.
pub fn answer(request: &Value) -> Value {
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["role"].clone())
        .unwrap_or(Value::Null);
    let message = if last == "user" {
        let n = request["messages"].as_array().map_or(0, Vec::len);
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("call_{n}"), "type": "function",
            "function": {"name": "Bash", "arguments": "{\"command\":\"echo hi\"}"}}]})
    } else {
        json!({"role": "assistant", "content": "done"})
    };
    let finish = if last == "user" { "tool_calls" } else { "stop" };
    json!({"id": "stateless", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
}

/// Serves one connection until the client closes it.
async fn serve(stream: TcpStream, answered: Arc<AtomicU64>, refused: Arc<AtomicU64>) {
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        let mut first = true;
        loop {
            line.clear();
            match read.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            if first {
                first = false;
                continue;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if read.read_exact(&mut body).await.is_err() {
            return;
        }
        let (status, reply) = match serde_json::from_slice::<Value>(&body) {
            Ok(request) => {
                answered.fetch_add(1, Ordering::Relaxed);
                ("200 OK", answer(&request).to_string())
            }
            Err(e) => {
                refused.fetch_add(1, Ordering::Relaxed);
                (
                    "400 Bad Request",
                    json!({"error": {"message": e.to_string()}}).to_string(),
                )
            }
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n",
            reply.len()
        );
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(reply.as_bytes());
        if write.write_all(&bytes).await.is_err() {
            return;
        }
    }
}

impl StatelessModel {
    /// Starts serving on a free loopback port with `threads` runtime
    /// workers.
    pub fn start(threads: usize) -> StatelessModel {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let base_url = format!("http://{}", listener.local_addr().expect("an address"));
        let (stop, stopped) = oneshot::channel::<()>();
        let answered = Arc::new(AtomicU64::new(0));
        let refused = Arc::new(AtomicU64::new(0));
        let (a, r) = (answered.clone(), refused.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads.max(1))
                .enable_all()
                .build()
                .expect("the endpoint's runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("a tokio listener");
                let accept = async {
                    loop {
                        if let Ok((stream, _)) = listener.accept().await {
                            tokio::spawn(serve(stream, a.clone(), r.clone()));
                        }
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stopped => {}
                }
            });
            runtime.shutdown_background();
        });
        StatelessModel {
            base_url,
            answered,
            refused,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Requests answered so far.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Requests refused (not JSON) so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

impl Drop for StatelessModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_after_the_user_and_text_after_a_tool_result() {
        let user = json!({"messages": [{"role": "user", "content": "go"}]});
        assert_eq!(
            answer(&user)["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
            "Bash"
        );
        let tool = json!({"messages": [{"role": "user", "content": "go"},
            {"role": "tool", "tool_call_id": "call_1", "content": "hi"}]});
        assert_eq!(answer(&tool)["choices"][0]["message"]["content"], "done");
    }
}
