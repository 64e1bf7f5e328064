//! One `exec_command` process: started on the runner's tapped path
//! ([`crate::runner::start_tapped`]), its output gathered as it comes
//! until a call collects it, its exit seen at once.
//!
//! A call collects until the process exits or its deadline passes,
//! whichever is first, as Codex's unified exec does: output does not end
//! a wait early. After the exit the output still in the pipe is read for
//! at most [`DRAIN_AFTER_EXIT`], so a child left holding the pipe (`sleep
//! 99 &`) does not hold the call.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt as _;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::runner::group::ProcessGroup;
use crate::runner::{self, RunRequest, Tapped};

/// How long output is still read after the process exited (Codex's
/// `POST_EXIT_READER_DRAIN_TIMEOUT_MS`).
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(50);
/// The most output kept between two collections (Codex's
/// `UNIFIED_EXEC_OUTPUT_MAX_BYTES`): past it the middle is dropped, half
/// the cap kept at each end.
pub const PENDING_CAP: usize = 1024 * 1024;

/// What one collection got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    /// The raw bytes written since the last collection (at most
    /// [`PENDING_CAP`], the middle dropped past it).
    pub bytes: Vec<u8>,
    /// How many bytes were written in all since the last collection.
    pub written: usize,
    /// The exit code when the process has ended (`128 + signal` for a
    /// signal, as a shell reports it).
    pub exit_code: Option<i64>,
}

#[derive(Default)]
struct State {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    written: usize,
    exit_code: Option<i64>,
    exited_at: Option<Instant>,
    /// The output pipe closed and the run's supervisor is done.
    closed: bool,
}

impl State {
    fn push(&mut self, bytes: &[u8]) {
        self.written += bytes.len();
        let half = PENDING_CAP / 2;
        let room = half.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(rest);
        let over = self.tail.len().saturating_sub(PENDING_CAP - half);
        self.tail.drain(..over);
    }

    fn exited(&mut self, code: i64) {
        self.exit_code = Some(code);
        self.exited_at = Some(Instant::now());
    }

    fn take(&mut self) -> Collected {
        let mut bytes = std::mem::take(&mut self.head);
        bytes.extend(self.tail.drain(..));
        Collected {
            bytes,
            written: std::mem::take(&mut self.written),
            exit_code: self.exit_code,
        }
    }
}

/// A thread writing what it is sent to `terminal`, in order, until the
/// sender is dropped or a write fails (the terminal closed).
fn typist(terminal: std::fs::File) -> std::sync::mpsc::Sender<Vec<u8>> {
    let (send, receive) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        use std::io::Write as _;
        let mut terminal = terminal;
        while let Ok(bytes) = receive.recv() {
            if terminal.write_all(&bytes).is_err() {
                break;
            }
        }
    });
    send
}

/// A shell's exit code: the code, or `128 + signal`.
fn exit_code(code: Option<i32>, signal: Option<i32>) -> i64 {
    match (code, signal) {
        (Some(c), _) => i64::from(c),
        (None, Some(sig)) => 128 + i64::from(sig),
        (None, None) => -1,
    }
}

/// A running (or just ended) `exec_command` process.
pub struct ExecProcess {
    state: Arc<Mutex<State>>,
    /// Bumped on every change of `state`.
    changed: watch::Receiver<u64>,
    /// The process group's id (signals go to the whole group).
    pgid: i32,
    /// Kills the group when sent (or dropped).
    kill: Mutex<Option<oneshot::Sender<()>>>,
    /// Input for the process's terminal (`tty`), written in order by a
    /// thread of its own: a process that does not read never holds a call.
    terminal: Option<std::sync::mpsc::Sender<Vec<u8>>>,
    /// The sandbox's mask folders, removed when the process is forgotten.
    _masks: Option<crate::sandbox::Masks>,
}

impl ExecProcess {
    /// Starts `spec`, keeping the sandbox's `masks` as long as the process
    /// is: on a terminal of its own with `tty` (what is written to it is
    /// the process's input), else with stdout and stderr on one pipe and
    /// no input. `Err` says why nothing started.
    pub fn start(
        spec: RunRequest,
        masks: Option<crate::sandbox::Masks>,
        tty: bool,
    ) -> Result<ExecProcess, String> {
        let (kill, killed) = oneshot::channel::<()>();
        let (tap, mut tapped) = mpsc::unbounded_channel();
        let killed = async move {
            let _ = killed.await;
        };
        let (started, run): (Result<(i32, Option<std::fs::File>), String>, _) = if tty {
            let (handle, run) = runner::start_tapped_tty(spec, killed, tap);
            (handle.map(|(pgid, t)| (pgid, Some(t))), run.boxed())
        } else {
            let (pgid, run) = runner::start_tapped(spec, killed, tap);
            (pgid.map(|pgid| (pgid, None)), run.boxed())
        };
        let (pgid, terminal) = started?;
        let state = Arc::new(Mutex::new(State::default()));
        let (bump, changed) = watch::channel(0u64);
        let s = state.clone();
        let run = tokio::spawn(run);
        tokio::spawn(async move {
            let update = |f: &mut dyn FnMut(&mut State)| {
                f(&mut s.lock().unwrap_or_else(|p| p.into_inner()));
                bump.send_modify(|n| *n += 1);
            };
            while let Some(event) = tapped.recv().await {
                match event {
                    Tapped::Output(bytes) => update(&mut |st| st.push(&bytes)),
                    Tapped::Exited(status) => {
                        use std::os::unix::process::ExitStatusExt as _;
                        let code = exit_code(status.code(), status.signal());
                        update(&mut |st| st.exited(code));
                    }
                }
            }
            // The tap closes when the run's supervisor is done: every
            // output event is in. A run it ended without seeing the exit
            // (killed, never reaped) still ends.
            let answer = run.await.unwrap_or_default();
            let code = exit_code(answer.exit_code, answer.signal);
            update(&mut |st| {
                if st.exit_code.is_none() {
                    st.exited(code);
                }
                st.closed = true;
            });
        });
        Ok(ExecProcess {
            state,
            changed,
            pgid,
            kill: Mutex::new(Some(kill)),
            terminal: terminal.map(typist),
            _masks: masks,
        })
    }

    /// Collects the output written since the last collection, waiting
    /// until the process has ended (and its output drained) or `deadline`
    /// has passed.
    pub async fn collect(&self, deadline: Instant) -> Collected {
        let mut changed = self.changed.clone();
        loop {
            let until = {
                let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
                let now = Instant::now();
                match st.exited_at {
                    Some(at) if st.closed || now >= at + DRAIN_AFTER_EXIT => return st.take(),
                    Some(at) => at + DRAIN_AFTER_EXIT,
                    None if now >= deadline => return st.take(),
                    None => deadline,
                }
            };
            tokio::select! {
                r = changed.changed() => if r.is_err() {
                    // Both watchers gone: nothing changes any more.
                    tokio::time::sleep_until(until).await;
                },
                () = tokio::time::sleep_until(until) => {}
            }
        }
    }

    /// Whether the process has ended.
    pub fn ended(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .exit_code
            .is_some()
    }

    /// Sends SIGINT to the process group (Codex's Ctrl-C, `"\u{3}"`), while
    /// it runs.
    pub fn interrupt(&self) {
        if self.ended() {
            return;
        }
        if let Some(mut group) = u32::try_from(self.pgid).ok().and_then(ProcessGroup::led_by) {
            group.signal_logged(libc::SIGINT);
            group.disarm();
        }
    }

    /// Whether the process runs on a terminal (and so takes input).
    pub fn has_terminal(&self) -> bool {
        self.terminal.is_some()
    }

    /// Types `bytes` into the process's terminal, as Codex hands input to
    /// its writer: the call does not wait for the process to take them.
    /// `Err` when it has no terminal or the terminal is gone.
    pub fn write(&self, bytes: Vec<u8>) -> Result<(), String> {
        let Some(terminal) = &self.terminal else {
            return Err("no terminal".into());
        };
        terminal
            .send(bytes)
            .map_err(|_| "the terminal is closed".to_string())
    }

    /// Kills the process group.
    pub fn kill(&self) {
        if let Some(kill) = self.kill.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = kill.send(());
        }
    }
}

impl Drop for ExecProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_output_keeps_both_ends_past_the_cap() {
        let mut st = State::default();
        st.push(&vec![b'a'; PENDING_CAP / 2 + 10]);
        st.push(&vec![b'b'; PENDING_CAP]);
        st.push(b"end");
        let got = st.take();
        assert_eq!(got.written, PENDING_CAP / 2 + 10 + PENDING_CAP + 3);
        assert_eq!(got.bytes.len(), PENDING_CAP);
        assert!(got.bytes[..PENDING_CAP / 2].iter().all(|b| *b == b'a'));
        assert!(got.bytes.ends_with(b"bbend"));
        assert_eq!(st.take().bytes, Vec::<u8>::new(), "taken once");
    }
}
