//! Holding one session in PostgreSQL: its lock, its connection and the task
//! that stores its events.
//!
//! [`hold`] opens a connection of the session's own and takes the
//! session's advisory lock on it (`pg_try_advisory_lock`, keyed by a hash
//! of the id), then creates or reads the session row and records this host
//! as the holder. The lock lives exactly as long as that connection: the
//! writer's drop unlocks and closes it, a killed host's connection is closed
//! by its kernel and the server releases the lock.
//!
//! [`PgWriter`] hands lines to a task on the store's runtime; they wait in
//! memory until a sync stores them all in one transaction (`INSERT ... ON
//! CONFLICT (session_id, seq) DO NOTHING`, so a batch retried after a lost
//! acknowledgement is stored once). While the database is away a sync
//! retries, reconnecting and taking the lock again, for the store's retry
//! window; after the lock was lost to another host, or the stored events no
//! longer match, the writer stops for good and says why.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::{Shared, why};
use crate::session::backend::StoreWriter;
use crate::session::file_writer::FileWriter;
use crate::session::log::LogError;
use crate::session::writer::PendingSync;

/// What [`hold`] found.
pub(crate) enum Holding {
    /// Held: the header line, the events `(seq, line)`, the writer.
    Held {
        header_line: String,
        lines: Vec<(i64, String)>,
        writer: PgWriter,
    },
    /// Creating, but the id is taken.
    Exists,
    /// Opening, but no such session.
    Missing,
    /// Another host holds it.
    Refused { holder: String },
}

const LOCK: &str = "SELECT pg_try_advisory_lock(hashtextextended('dsh-session:' || $1::text, 0))";

async fn holder_of(client: &tokio_postgres::Client, id: &str) -> String {
    let row = client
        .query_opt(
            "SELECT holder, to_char(held_since AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') \
             FROM dsh_sessions WHERE id = $1",
            &[&id],
        )
        .await;
    match row {
        Ok(Some(row)) => match (
            row.get::<_, Option<String>>(0),
            row.get::<_, Option<String>>(1),
        ) {
            (Some(holder), Some(since)) => format!("{holder}, since {since} UTC"),
            (Some(holder), None) => holder,
            _ => "a host that has not recorded itself yet".into(),
        },
        _ => "a host that has not recorded itself yet".into(),
    }
}

/// Takes session `id` (creating it when `header_line` is given).
pub(crate) async fn hold(
    shared: Shared,
    id: String,
    header_line: Option<String>,
    cwd: Option<String>,
    created_ms: Option<i64>,
) -> Result<Holding, String> {
    let client = shared.connect().await?;
    let locked: bool = client
        .query_one(LOCK, &[&id])
        .await
        .map_err(|e| format!("cannot lock session `{id}`: {}", why(&e)))?
        .get(0);
    if !locked {
        return Ok(Holding::Refused {
            holder: holder_of(&client, &id).await,
        });
    }
    let (header_line, lines) = match header_line {
        Some(line) => {
            let made = client
                .execute(
                    "INSERT INTO dsh_sessions \
                     (id, header, header_line, cwd, host, status, holder, held_since, created_ms) \
                     VALUES ($1, $2::text::jsonb, $2::text, $3, $4, 'held', $5, now(), $6) \
                     ON CONFLICT (id) DO NOTHING",
                    &[
                        &id,
                        &line,
                        &cwd.unwrap_or_default(),
                        &shared.hostname,
                        &shared.me,
                        &created_ms.unwrap_or(0),
                    ],
                )
                .await
                .map_err(|e| format!("cannot create session `{id}`: {}", why(&e)))?;
            if made == 0 {
                return Ok(Holding::Exists);
            }
            (line, Vec::new())
        }
        None => {
            let Some(row) = client
                .query_opt(
                    "UPDATE dsh_sessions SET status = 'held', holder = $2, host = $3, \
                     held_since = now(), updated_at = now() WHERE id = $1 RETURNING header_line",
                    &[&id, &shared.me, &shared.hostname],
                )
                .await
                .map_err(|e| format!("cannot open session `{id}`: {}", why(&e)))?
            else {
                return Ok(Holding::Missing);
            };
            let rows = client
                .query(
                    "SELECT seq, line FROM dsh_events WHERE session_id = $1 ORDER BY seq",
                    &[&id],
                )
                .await
                .map_err(|e| format!("cannot read session `{id}`: {}", why(&e)))?;
            let lines: Vec<(i64, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            if let Some((at, (seq, _))) = lines
                .iter()
                .enumerate()
                .find(|(i, (seq, _))| *seq != *i as i64)
            {
                return Err(format!(
                    "session `{id}`: event {at} is missing (the next stored is {seq})"
                ));
            }
            (row.get(0), lines)
        }
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let task = Task {
        committed: lines.len() as u64,
        shared: shared.clone(),
        id: id.clone(),
        client: Some(client),
        pending: Vec::new(),
        failed: None,
    };
    shared.rt.spawn(task.run(rx));
    Ok(Holding::Held {
        header_line,
        lines,
        writer: PgWriter {
            ops: tx,
            path: PathBuf::from(format!("{}#{id}", shared.shown)),
            transcript: None,
        },
    })
}

enum Op {
    Line(i64, String),
    Sync(oneshot::Sender<Result<(), LogError>>),
}

/// The writer of one held session.
pub(crate) struct PgWriter {
    ops: mpsc::UnboundedSender<Op>,
    path: PathBuf,
    /// The local transcript file's writer, when there is one.
    transcript: Option<Box<FileWriter>>,
}

impl PgWriter {
    /// Also appends every line to the local transcript `writer`.
    pub(crate) fn with_transcript(mut self, writer: FileWriter) -> PgWriter {
        self.transcript = Some(Box::new(writer));
        self
    }

    fn ended(&self) -> LogError {
        LogError::Io {
            path: self.path.clone(),
            message: "the session's store task has ended".into(),
        }
    }

    fn queue_sync(&self) -> Result<oneshot::Receiver<Result<(), LogError>>, LogError> {
        let (tx, rx) = oneshot::channel();
        self.ops.send(Op::Sync(tx)).map_err(|_| self.ended())?;
        Ok(rx)
    }
}

impl StoreWriter for PgWriter {
    fn append(&self, seq: u64, line: &str) -> Result<(), LogError> {
        self.ops
            .send(Op::Line(seq as i64, line.to_string()))
            .map_err(|_| self.ended())?;
        if let Some(transcript) = &self.transcript {
            // A copy for hooks: its failure is logged by its writer and
            // does not fail the append, which the database holds.
            StoreWriter::append(transcript.as_ref(), seq, line).ok();
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), LogError> {
        let rx = self.queue_sync()?;
        futures::executor::block_on(rx).unwrap_or_else(|_| Err(self.ended()))
    }

    fn sync_later(&self, durable: bool) -> Result<PendingSync, LogError> {
        if durable {
            return Ok(PendingSync::new(self.queue_sync()?, self.path.clone()));
        }
        if let Some(transcript) = &self.transcript {
            return transcript.sync_later(false);
        }
        // No transcript file to wait for: a barrier is passed at once.
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(Ok(()));
        Ok(PendingSync::new(rx, self.path.clone()))
    }

    /// The local transcript's file is let go while idle. The database
    /// connection stays: the session's advisory lock lives on it, and
    /// letting it go would let another host take the session.
    fn release_idle(&self) {
        if let Some(transcript) = &self.transcript {
            transcript.release_idle();
        }
    }
}

/// Why an attempt to store failed.
enum Attempt {
    /// The database is away or refused for now: try again.
    Retry(String),
    /// Never again: the session is no longer this host's.
    Fatal(String),
}

struct Task {
    shared: Shared,
    id: String,
    client: Option<tokio_postgres::Client>,
    /// Events stored so far (the next seq to store is this).
    committed: u64,
    pending: Vec<(i64, String)>,
    failed: Option<String>,
}

impl Task {
    async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Op>) {
        while let Some(op) = ops.recv().await {
            match op {
                Op::Line(seq, line) => self.pending.push((seq, line)),
                Op::Sync(reply) => {
                    let result = self.flush().await;
                    let _ = reply.send(result);
                }
            }
        }
        // The session was closed: store what is left, then let it go.
        if let Err(e) = self.flush().await {
            tracing::error!(session = %self.id, "{e}");
        }
        if let Some(client) = self.client.take().filter(|c| !c.is_closed()) {
            let _ = client
                .execute(
                    "UPDATE dsh_sessions SET status = 'released', holder = NULL, \
                     held_since = NULL, updated_at = now() WHERE id = $1 AND holder = $2",
                    &[&self.id, &self.shared.me],
                )
                .await;
            let _ = client
                .execute(
                    "SELECT pg_advisory_unlock(hashtextextended('dsh-session:' || $1::text, 0))",
                    &[&self.id],
                )
                .await;
        }
    }

    async fn flush(&mut self) -> Result<(), LogError> {
        if let Some(message) = &self.failed {
            return Err(self.shared.error(message.clone()));
        }
        let started = Instant::now();
        let deadline = started + self.shared.retry;
        let mut delay = Duration::from_millis(50);
        let mut warned = false;
        loop {
            match self.attempt().await {
                Ok(()) => {
                    if warned {
                        tracing::warn!(session = %self.id, store = %self.shared.shown, "session store reachable again; the queued events are stored");
                    }
                    return Ok(());
                }
                Err(Attempt::Fatal(message)) => {
                    tracing::error!(session = %self.id, store = %self.shared.shown, "{message}");
                    self.failed = Some(message.clone());
                    return Err(self.shared.error(message));
                }
                Err(Attempt::Retry(message)) => {
                    if self.client.as_ref().is_some_and(|c| c.is_closed()) {
                        self.client = None;
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(self.shared.error(format!(
                            "session `{}`: {} events could not be stored within {}s ({message}); \
                             they stay queued and are stored at the next sync",
                            self.id,
                            self.pending.len(),
                            self.shared.retry.as_secs()
                        )));
                    }
                    if !warned {
                        warned = true;
                        tracing::warn!(session = %self.id, store = %self.shared.shown, "session store unavailable ({message}); retrying for up to {}s", self.shared.retry.as_secs());
                    }
                    tokio::time::sleep(delay.min(deadline - now)).await;
                    delay = (delay * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    /// Reconnects (taking the lock again) when needed, then stores every
    /// pending event in one transaction.
    async fn attempt(&mut self) -> Result<(), Attempt> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.client = None;
            let client = self.shared.connect().await.map_err(Attempt::Retry)?;
            self.relock(&client).await?;
            self.client = Some(client);
        }
        if self.pending.is_empty() {
            return Ok(());
        }
        let Some(client) = self.client.as_mut() else {
            return Err(Attempt::Retry("no connection".into()));
        };
        let seqs: Vec<i64> = self.pending.iter().map(|(s, _)| *s).collect();
        let lines: Vec<String> = self.pending.iter().map(|(_, l)| l.clone()).collect();
        let retry = |e: tokio_postgres::Error| Attempt::Retry(why(&e));
        let tx = client.transaction().await.map_err(retry)?;
        tx.execute(
            // jsonb cannot hold U+0000; the exact line keeps it.
            "INSERT INTO dsh_events (session_id, seq, event, line) \
             SELECT $1, s, replace(l, E'\\\\u0000', E'\\\\ufffd')::jsonb, l \
             FROM unnest($2::bigint[], $3::text[]) AS t(s, l) \
             ON CONFLICT (session_id, seq) DO NOTHING",
            &[&self.id, &seqs, &lines],
        )
        .await
        .map_err(retry)?;
        let total = self.committed as i64 + seqs.len() as i64;
        tx.execute(
            "UPDATE dsh_sessions SET events = $2, updated_at = now() WHERE id = $1",
            &[&self.id, &total],
        )
        .await
        .map_err(retry)?;
        tx.commit().await.map_err(retry)?;
        self.committed += seqs.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Takes the session's lock again on a new connection and checks that
    /// nobody stored events meanwhile.
    async fn relock(&self, client: &tokio_postgres::Client) -> Result<(), Attempt> {
        let retry = |e: tokio_postgres::Error| Attempt::Retry(why(&e));
        let locked: bool = client
            .query_one(LOCK, &[&self.id])
            .await
            .map_err(retry)?
            .get(0);
        if !locked {
            return Err(Attempt::Fatal(format!(
                "session `{}` was taken by another dsh host ({}) while the database was away; \
                 this host stores nothing more for it",
                self.id,
                holder_of(client, &self.id).await
            )));
        }
        let stored: i64 = client
            .query_one(
                "SELECT count(*) FROM dsh_events WHERE session_id = $1",
                &[&self.id],
            )
            .await
            .map_err(retry)?
            .get(0);
        let low = self.committed as i64;
        let high = low + self.pending.len() as i64;
        if stored < low || stored > high {
            return Err(Attempt::Fatal(format!(
                "session `{}` changed in the database while it was away ({stored} events stored, \
                 {low} expected); this host stores nothing more for it",
                self.id
            )));
        }
        client
            .execute(
                "UPDATE dsh_sessions SET status = 'held', holder = $2, host = $3, \
                 held_since = now() WHERE id = $1",
                &[&self.id, &self.shared.me, &self.shared.hostname],
            )
            .await
            .map_err(retry)?;
        Ok(())
    }
}
