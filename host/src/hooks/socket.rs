//! `socket` hooks: JSON-RPC 2.0 over one long-lived Unix-socket connection
//! per hook server, one message per line.
//!
//! Every call writes one [`transport::SocketRequest`] with a fresh id and waits for
//! the response with that id, so any number of hooks (concurrent tool
//! calls, sessions) share one connection, answered in any order. There is
//! no reader task: the calls waiting on a connection take turns reading it
//! (one at a time), and the one reading hands every answer that is not its
//! own to the call that waits for it. A call whose answer comes first reads
//! it itself, on its own task, so a round trip wakes the caller once (the
//! socket turning readable) and nothing else. A response for an id nobody
//! waits for any more (its hook timed out) is dropped.
//!
//! Failures, read as the command hook they stand for:
//!
//! - the socket cannot be reached (no server, refused) within the hook's
//!   timeout: the hook did not start (non-blocking error);
//! - the connection ends, or a line is not a JSON-RPC response, with the
//!   request in flight: the hook crashed (non-blocking error); the next
//!   call connects again (restarting a dsh-started server first). A
//!   connection whose server went away while nothing was in flight is
//!   found when the next request cannot be written to it: that call
//!   connects again and sends its request on the new connection;
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

use dsh_hook_protocol::transport::{self, SocketHandler, SocketResult};
use dsh_hook_protocol::{MAX_OUTPUT_BYTES, RunAnswer};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::server::{Availability, Supervisor};
use super::socket_call::SocketCall;

/// The longest response line read: both streams at their limit, escaped,
/// plus the envelope. Past it the answer is unreadable.
pub const MAX_LINE_BYTES: usize = 2 * (MAX_OUTPUT_BYTES as usize) + 64 * 1024;

/// How long one call waits to connect when its hook sets no timeout.
const CONNECT_LIMIT: Duration = Duration::from_secs(30);

/// Requests waiting for their answer, by id; `None` once the connection
/// is gone (nothing may wait on it any more).
type Pending = Mutex<Option<HashMap<u64, oneshot::Sender<RunAnswer>>>>;

/// The read side of a connection, read by one waiting call at a time.
struct Reader {
    half: BufReader<OwnedReadHalf>,
    /// The line being read. It outlives a reading call that is dropped
    /// (its hook timed out) halfway through a line: the next reader goes
    /// on from where it stopped.
    line: Vec<u8>,
}

/// One open connection.
struct Connection {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    reader: tokio::sync::Mutex<Reader>,
    pending: Pending,
    next_id: AtomicU64,
    /// The socket, as errors name it.
    socket: String,
}

impl Connection {
    fn alive(&self) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Registers a request; `None` when the connection is gone.
    fn register(&self) -> Option<(u64, oneshot::Receiver<RunAnswer>)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.as_mut()?.insert(id, tx);
        Some((id, rx))
    }

    fn forget(&self, id: u64) {
        if let Some(map) = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            map.remove(&id);
        }
    }

    /// Ends the connection: every call still waiting gets `end`.
    fn close(&self, end: &RunAnswer) {
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        for (_, tx) in waiting {
            let _ = tx.send(end.clone());
        }
    }

    /// Waits for the answer to `id`: handed over by whichever call is
    /// reading, or read here when this call gets its turn to read.
    async fn answer(&self, id: u64, mut rx: oneshot::Receiver<RunAnswer>) -> RunAnswer {
        loop {
            let mut reader = tokio::select! {
                biased;
                answer = &mut rx => return answer.unwrap_or_else(|_| self.gone()),
                reader = self.reader.lock() => reader,
            };
            // The call that read before may have answered this one.
            match rx.try_recv() {
                Ok(answer) => return answer,
                Err(oneshot::error::TryRecvError::Closed) => return self.gone(),
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            if let Some(answer) = self.read_until(&mut reader, id).await {
                return answer;
            }
        }
    }

    /// The answer a call gets when the connection went away under it.
    fn gone(&self) -> RunAnswer {
        transport::crashed_answer(format!(
            "hook server {}: the connection closed before it answered",
            self.socket
        ))
    }

    /// Reads responses, handing each to the call that waits for it, until
    /// the answer to `id` comes (returned) or the connection ends or breaks
    /// the protocol (every call waiting, `id`'s included, gets why; the
    /// answer to `id` is then returned too). `None`: `id` no longer waits
    /// (its answer was handed to it as the connection ended).
    async fn read_until(&self, reader: &mut Reader, id: u64) -> Option<RunAnswer> {
        loop {
            let (got, answer) = match read_response(reader, &self.socket).await {
                Ok(Some(response)) => response,
                Ok(None) => continue,
                Err(end) => {
                    let mine = self.take(id);
                    self.close(&end);
                    return mine.map(|_| end);
                }
            };
            match self.take(got) {
                Some(_) if got == id => return Some(answer),
                Some(tx) => {
                    let _ = tx.send(answer);
                }
                None => {
                    tracing::debug!(socket = %self.socket, id = got, "hook server answered a request nobody waits for");
                    if !self.waits(id) {
                        return None;
                    }
                }
            }
        }
    }

    /// Removes `id`'s waiter.
    fn take(&self, id: u64) -> Option<oneshot::Sender<RunAnswer>> {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .and_then(|m| m.remove(&id))
    }

    fn waits(&self, id: u64) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|m| m.contains_key(&id))
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
    pub async fn call(&self, request: &SocketCall<'_>) -> RunAnswer {
        let deadline = request
            .timeout_ms
            .map(|ms| Instant::now() + Duration::from_millis(ms));
        let mut line = Vec::with_capacity(request.stdin_len() + 512);
        // A connection found dead only when the request could not be
        // written to it (its server went away while it was idle) is
        // replaced once.
        let mut retried = false;
        let (connection, id, rx) = loop {
            let connection = match self.connect(request, deadline).await {
                Ok(c) => c,
                Err(AnswerNow(answer)) => return answer,
            };
            let Some((id, rx)) = connection.register() else {
                return self.crashed("the connection closed");
            };
            line.clear();
            if let Err(e) = request.write_line(id, &mut line) {
                connection.forget(id);
                return transport::unreachable_answer(format!("cannot encode request: {e}"));
            }
            let written = {
                let mut writer = connection.writer.lock().await;
                writer.write_all(&line).await
            };
            match written {
                Ok(()) => break (connection, id, rx),
                Err(e) => {
                    connection.forget(id);
                    connection.close(&connection.gone());
                    if retried {
                        return self.crashed(&format!("cannot send the request: {e}"));
                    }
                    retried = true;
                }
            }
        };
        let answer = connection.answer(id, rx);
        match deadline {
            Some(at) => match tokio::time::timeout_at(at, answer).await {
                Ok(answer) => answer,
                Err(_) => {
                    connection.forget(id);
                    transport::timed_out_answer()
                }
            },
            None => answer.await,
        }
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
        request: &SocketCall<'_>,
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
            let waiting_for_server = match self.server.as_ref().map(|s| s.ensure_running(request)) {
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
        let connection = Arc::new(Connection {
            writer: tokio::sync::Mutex::new(write),
            reader: tokio::sync::Mutex::new(Reader {
                half: BufReader::new(read),
                line: Vec::new(),
            }),
            pending: Mutex::new(Some(HashMap::new())),
            next_id: AtomicU64::new(1),
            socket: self.path.display().to_string(),
        });
        *slot = Some(connection.clone());
        tracing::debug!(socket = %self.path.display(), handler = ?self.handler, "hook server connected");
        Ok(connection)
    }
}

/// An answer to give without calling the server.
struct AnswerNow(RunAnswer);

/// A socket file name for a started server: a hash of its command.
fn socket_name(command: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    command.hash(&mut h);
    format!("{:016x}-{}.sock", h.finish(), std::process::id())
}

/// A response line read straight into what the call needs.
#[derive(Deserialize)]
struct Response {
    id: Option<u64>,
    result: Option<SocketResult>,
    error: Option<RpcError>,
}

/// A response line as read (loosely, to tell what is wrong with it) when
/// it does not read as a [`Response`].
#[derive(Deserialize)]
struct LooseResponse {
    id: Option<u64>,
    result: Option<serde_json::Value>,
    error: Option<RpcError>,
}

#[derive(Deserialize)]
struct RpcError {
    #[serde(default)]
    message: String,
}

/// Reads one response: its id and the answer it carries; `Ok(None)` for
/// a blank line; `Err` with what every call waiting on the connection
/// gets when the connection ended or broke the protocol (the connection
/// is then done).
async fn read_response(
    reader: &mut Reader,
    socket: &str,
) -> Result<Option<(u64, RunAnswer)>, RunAnswer> {
    let end = match read_line(&mut reader.half, &mut reader.line).await {
        Ok(Line::Text) => {
            let read = parse_response(&reader.line, socket);
            reader.line.clear();
            return read;
        }
        Ok(Line::Eof) => transport::crashed_answer(format!(
            "hook server {socket} closed the connection before it answered"
        )),
        Ok(Line::TooLong) => {
            tracing::warn!(%socket, "hook server sent a line over {MAX_LINE_BYTES} bytes; connection closed");
            transport::too_large_answer()
        }
        Err(e) => transport::crashed_answer(format!("hook server {socket}: reading failed: {e}")),
    };
    // The connection is done: what was read of a line goes now.
    reader.line = Vec::new();
    Err(end)
}

fn parse_response(line: &[u8], socket: &str) -> Result<Option<(u64, RunAnswer)>, RunAnswer> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    if let Ok(Response {
        id: Some(id),
        result,
        error,
    }) = serde_json::from_slice::<Response>(line)
    {
        let answer = match (result, error) {
            (_, Some(e)) => transport::error_answer(format!("hook server error: {}", e.message)),
            (Some(r), None) => result_answer(r),
            (None, None) => neither(socket),
        };
        return Ok(Some((id, answer)));
    }
    // Not a well-formed answer: read it again loosely to say what is wrong.
    let Ok(LooseResponse {
        id: Some(id),
        result,
        error,
    }) = serde_json::from_slice::<LooseResponse>(line)
    else {
        let shown: String = String::from_utf8_lossy(line).chars().take(200).collect();
        tracing::warn!(%socket, line = %shown, "hook server sent something that is not a JSON-RPC response; connection closed");
        return Err(transport::crashed_answer(format!(
            "hook server {socket} sent something that is not a JSON-RPC response: {shown}"
        )));
    };
    let answer = match (result, error) {
        (_, Some(e)) => transport::error_answer(format!("hook server error: {}", e.message)),
        (Some(result), None) => match serde_json::from_value::<SocketResult>(result) {
            Ok(r) => result_answer(r),
            Err(e) => transport::crashed_answer(format!(
                "hook server {socket} answered with a malformed result: {e}"
            )),
        },
        (None, None) => neither(socket),
    };
    Ok(Some((id, answer)))
}

/// The answer a result stands for: as it is, or over the limit.
fn result_answer(r: SocketResult) -> RunAnswer {
    if r.stdout.len() as u64 > MAX_OUTPUT_BYTES || r.stderr.len() as u64 > MAX_OUTPUT_BYTES {
        transport::too_large_answer()
    } else {
        r.into_answer()
    }
}

fn neither(socket: &str) -> RunAnswer {
    transport::crashed_answer(format!(
        "hook server {socket} answered with neither `result` nor `error`"
    ))
}

enum Line {
    Text,
    Eof,
    TooLong,
}

/// Reads the rest of one line (without its newline) into `buf`, at most
/// [`MAX_LINE_BYTES`]. Dropped while it waits, it loses nothing: what was
/// read of the line is in `buf`, and a later call goes on from there.
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
