//! Idle sessions cost no file descriptor (issue 15), over the real socket
//! of a real `dsh serve`: after N sessions have each run a turn and gone
//! idle, the daemon has about as many descriptors open as before the first
//! (`/proc/<pid>/fd`), yet each session is still held (another dsh process
//! is refused), and each one's next turn opens its log again and appends
//! in order.

use std::path::Path;
use std::time::{Duration, Instant};

use dsh_tests::daemon::{RpcClient, ServedDaemon, WAIT};
use dsh_tests::{run_dsh, temp_dir};
use serde_json::Value;

const SESSIONS: usize = 24;

/// The descriptors `pid` has open.
fn open_fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

fn kinds(dir: &Path, session: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(format!("state/sessions/{session}.jsonl")))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn idle_sessions_hold_no_file_descriptor_and_stay_held() {
    let dir = temp_dir();
    let d = dir.path();
    let script: String = (0..2 * SESSIONS)
        .map(|n| format!("- text: reply {n}\n"))
        .collect();
    std::fs::write(d.join("script.yml"), script).unwrap();
    let config = d.join("cordis.yml");
    std::fs::write(
        &config,
        "state_dir: state\nshutdown_grace_s: 1\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {script: script.yml}\n",
    )
    .unwrap();
    let daemon = ServedDaemon::start(&config, d, "warn");
    let mut client = RpcClient::connect(&d.join("state/dsh.sock")).unwrap();
    client.initialize();
    let before = open_fds(daemon.pid());

    let sessions: Vec<String> = (0..SESSIONS)
        .map(|n| {
            let id = client.new_session(d);
            assert_eq!(client.prompt(&id, &format!("one {n}")), "end_turn");
            id
        })
        .collect();
    // A log's thread closes its file just after the turn returns; wait for
    // that (not for time), then check nothing per session is left.
    // One more descriptor at most: the holds file all sessions share.
    let deadline = Instant::now() + WAIT;
    loop {
        let now = open_fds(daemon.pid());
        if now <= before + 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{SESSIONS} idle sessions: {before} descriptors before, still {now} after {WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // Still held: another dsh process may not write the log.
    let repair = run_dsh(["sessions", "repair", &sessions[0]], d);
    assert_eq!(repair.code, Some(4), "{repair:?}");
    assert!(
        repair.stderr.contains("in use by another dsh process"),
        "{repair:?}"
    );

    // And each one's next turn opens its log again, in order.
    for (n, id) in sessions.iter().enumerate() {
        assert_eq!(client.prompt(id, &format!("two {n}")), "end_turn");
    }
    for id in &sessions {
        let turn = [
            "turn/start",
            "user/message",
            "step/start",
            "assistant/message",
            "step/end",
            "turn/end",
        ];
        let both: Vec<&str> = turn.iter().chain(turn.iter()).copied().collect();
        assert_eq!(kinds(d, id)[1..], both, "{id}");
    }
    drop(client);
    assert!(daemon.stop().success());
}
