//! `socket` hooks: JSON-RPC 2.0 over one long-lived Unix-socket connection
//! per hook server, one message per line.
//!
//! Every call writes one [`SocketRequest`] with a fresh id and waits for
//! the response with that id, so any number of hooks (concurrent tool
//! calls, sessions) share one connection, answered in any order. A reader
//! task owns the read half; a response for an id nobody waits for any more
//! (its hook timed out) is dropped.
//!
//! Failures, read as the command hook they stand for:
//!
//! - the socket cannot be reached (no server, refused) within the hook's
//!   timeout: the hook did not start (non-blocking error);
//! - the connection ends, or a line is not a JSON-RPC response, with the
//!   request in flight: the hook crashed (non-blocking error); the next
//!   call connects again (restarting a dsh-started server first);
//! - a line longer than [`MAX_LINE_BYTES`], or a result whose stdout or
//!   stderr passes [`MAX_OUTPUT_BYTES`]: an output over the limit, a
//!   blocking error, as for a command hook (the connection is closed: the
//!   requests in flight on it cannot be told apart);
//! - a JSON-RPC `error`: a non-blocking error with its message on stderr;
//! - no answer within the hook's timeout: a timed-out hook.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_hook_protocol::transport::{self, SocketHandler, SocketRequest, SocketResult};
use dsh_hook_protocol::{MAX_OUTPUT_BYTES, RunAnswer, RunRequest};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::server::{Availability, Supervisor};

/// The longest response line read: both streams at their limit, escaped,
/// plus the envelope. Past it the answer is unreadable.
pub const MAX_LINE_BYTES: usize = 2 * (MAX_OUTPUT_BYTES as usize) + 64 * 1024;

/// How long one call waits to connect when its hook sets no timeout.
const CONNECT_LIMIT: Duration = Duration::from_secs(30);

/// Requests waiting for their answer, by id; `None` once the connection
/// is gone (nothing may wait on it any more).
type Pending = Mutex<Option<HashMap<u64, oneshot::Sender<RunAnswer>>>>;

/// One open connection.
struct Connection {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    pending: Arc<Pending>,
    next_id: AtomicU64,
}

impl Connection {
    fn alive(&self) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }
}

/// The peer of one `socket` handler: its connection and, for a `command`
/// handler, the server dsh runs.
pub struct SocketPeer {
    handler: SocketHandler,
    path: std::path::PathBuf,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    server: Option<Supervisor>,
}

impl SocketPeer {
    /// The peer of `handler`; a `command` handler without a `path` gets a
    /// socket under `servers_dir`.
    pub fn new(handler: SocketHandler, servers_dir: &Path) -> SocketPeer {
        let path = match &handler.path {
            Some(p) => std::path::PathBuf::from(p),
            None => servers_dir.join(socket_name(handler.command.as_deref().unwrap_or(""))),
        };
        let server = handler
            .command
            .as_ref()
            .map(|command| Supervisor::new(command.clone(), path.clone()));
        SocketPeer {
            handler,
            path,
            connection: tokio::sync::Mutex::new(None),
            server,
        }
    }

    /// The socket this peer connects to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs one hook on the server. Never fails.
    pub async fn call(&self, run: &RunRequest) -> RunAnswer {
        let deadline = run
            .timeout_ms
            .map(|ms| Instant::now() + Duration::from_millis(ms));
        let connection = match self.connect(run, deadline).await {
            Ok(c) => c,
            Err(AnswerNow(answer)) => return answer,
        };
        let id = connection.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = connection.pending.lock().unwrap_or_else(|p| p.into_inner());
            match pending.as_mut() {
                Some(map) => {
                    map.insert(id, tx);
                }
                None => return self.crashed("the connection closed"),
            }
        }
        let mut line = match serde_json::to_vec(&SocketRequest::new(id, run)) {
            Ok(l) => l,
            Err(e) => return transport::unreachable_answer(format!("cannot encode request: {e}")),
        };
        line.push(b'\n');
        let written = {
            let mut writer = connection.writer.lock().await;
            writer.write_all(&line).await
        };
        if let Err(e) = written {
            forget(&connection.pending, id);
            return self.crashed(&format!("cannot send the request: {e}"));
        }
        let answer = match deadline {
            Some(at) => match tokio::time::timeout_at(at, rx).await {
                Ok(answer) => answer,
                Err(_) => {
                    forget(&connection.pending, id);
                    return transport::timed_out_answer();
                }
            },
            None => rx.await,
        };
        answer.unwrap_or_else(|_| self.crashed("the connection closed"))
    }

    fn crashed(&self, why: &str) -> RunAnswer {
        transport::crashed_answer(format!(
            "hook server {}: {why} before it answered",
            self.path.display()
        ))
    }

    /// The open connection, or a new one (starting the server first when
    /// dsh runs it), retried until `deadline`.
    async fn connect(
        &self,
        run: &RunRequest,
        deadline: Option<Instant>,
    ) -> Result<Arc<Connection>, AnswerNow> {
        let mut slot = self.connection.lock().await;
        if let Some(c) = slot.as_ref()
            && c.alive()
        {
            return Ok(c.clone());
        }
        *slot = None;
        let limit = deadline.unwrap_or_else(|| Instant::now() + CONNECT_LIMIT);
        let mut pause = Duration::from_millis(2);
        let stream = loop {
            let waiting_for_server = match self.server.as_ref().map(|s| s.ensure_running(run)) {
                None => false,
                Some(Ok(Availability::Up)) => true,
                Some(Ok(Availability::Down(why))) | Some(Err(why)) => {
                    return Err(AnswerNow(transport::unreachable_answer(why)));
                }
            };
            match UnixStream::connect(&self.path).await {
                Ok(s) => break s,
                Err(e) => {
                    if !waiting_for_server || Instant::now() + pause >= limit {
                        let answer = if waiting_for_server && deadline.is_some() {
                            transport::timed_out_answer()
                        } else {
                            transport::unreachable_answer(format!(
                                "cannot connect to hook server {}: {e}",
                                self.path.display()
                            ))
                        };
                        return Err(AnswerNow(answer));
                    }
                    // The server is (re)starting: poll until it listens.
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
            }
        };
        let (read, write) = stream.into_split();
        let pending: Arc<Pending> = Arc::new(Mutex::new(Some(HashMap::new())));
        tokio::spawn(read_responses(
            BufReader::new(read),
            pending.clone(),
            self.path.display().to_string(),
        ));
        let connection = Arc::new(Connection {
            writer: tokio::sync::Mutex::new(write),
            pending,
            next_id: AtomicU64::new(1),
        });
        *slot = Some(connection.clone());
        tracing::debug!(socket = %self.path.display(), handler = ?self.handler, "hook server connected");
        Ok(connection)
    }
}

/// An answer to give without calling the server.
struct AnswerNow(RunAnswer);

fn forget(pending: &Pending, id: u64) {
    if let Some(map) = pending.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        map.remove(&id);
    }
}

/// A socket file name for a started server: a hash of its command.
fn socket_name(command: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    command.hash(&mut h);
    format!("{:016x}-{}.sock", h.finish(), std::process::id())
}

/// A response line as read (loosely, to tell what is wrong with it).
#[derive(Deserialize)]
struct Response {
    id: Option<u64>,
    result: Option<serde_json::Value>,
    error: Option<RpcError>,
}

#[derive(Deserialize)]
struct RpcError {
    #[serde(default)]
    message: String,
}

/// Reads responses until the connection ends or breaks the protocol, then
/// answers everything still waiting.
async fn read_responses<R>(mut reader: BufReader<R>, pending: Arc<Pending>, socket: String)
where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut buf = Vec::new();
    let end: RunAnswer = loop {
        buf.clear();
        match read_line(&mut reader, &mut buf).await {
            Ok(Line::Eof) => {
                break transport::crashed_answer(format!(
                    "hook server {socket} closed the connection before it answered"
                ));
            }
            Ok(Line::TooLong) => {
                tracing::warn!(%socket, "hook server sent a line over {MAX_LINE_BYTES} bytes; connection closed");
                break transport::too_large_answer();
            }
            Err(e) => {
                break transport::crashed_answer(format!(
                    "hook server {socket}: reading failed: {e}"
                ));
            }
            Ok(Line::Text) => {}
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = serde_json::from_slice::<Response>(&buf);
        let Ok(Response {
            id: Some(id),
            result,
            error,
        }) = parsed
        else {
            let shown: String = String::from_utf8_lossy(&buf).chars().take(200).collect();
            tracing::warn!(%socket, line = %shown, "hook server sent something that is not a JSON-RPC response; connection closed");
            break transport::crashed_answer(format!(
                "hook server {socket} sent something that is not a JSON-RPC response: {shown}"
            ));
        };
        let answer = match (result, error) {
            (_, Some(e)) => transport::error_answer(format!("hook server error: {}", e.message)),
            (Some(result), None) => match serde_json::from_value::<SocketResult>(result) {
                Ok(r)
                    if r.stdout.len() as u64 > MAX_OUTPUT_BYTES
                        || r.stderr.len() as u64 > MAX_OUTPUT_BYTES =>
                {
                    transport::too_large_answer()
                }
                Ok(r) => r.into_answer(),
                Err(e) => transport::crashed_answer(format!(
                    "hook server {socket} answered with a malformed result: {e}"
                )),
            },
            (None, None) => transport::crashed_answer(format!(
                "hook server {socket} answered with neither `result` nor `error`"
            )),
        };
        let waiter = pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .and_then(|m| m.remove(&id));
        match waiter {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            None => tracing::debug!(%socket, id, "hook server answered a request nobody waits for"),
        }
    };
    let waiting = pending
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or_default();
    for (_, tx) in waiting {
        let _ = tx.send(end.clone());
    }
}

enum Line {
    Text,
    Eof,
    TooLong,
}

/// Reads one line (without its newline) into `buf`, at most
/// [`MAX_LINE_BYTES`].
async fn read_line<R>(reader: &mut BufReader<R>, buf: &mut Vec<u8>) -> std::io::Result<Line>
where
    R: tokio::io::AsyncRead + Unpin,
{
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() {
                Line::Eof
            } else {
                Line::Text
            });
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let end = if done { take - 1 } else { take };
        if buf.len() + end > MAX_LINE_BYTES {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(&available[..end]);
        reader.consume(take);
        if done {
            return Ok(Line::Text);
        }
    }
}
