//! Sessions in PostgreSQL (issue 13), against a real server the test starts
//! ([`dsh_tests::postgres::PgServer`]) and real `dsh serve` processes.
//!
//! - two daemons on one database: a session begun on one is refused to the
//!   other while held (naming the holder), resumed there once released,
//!   and after its holder is killed with SIGKILL resumed back on the first,
//!   with the whole history each time (what the model is sent);
//! - the database restarted mid-turn: the turn waits (bounded), the daemon
//!   keeps answering, reconnects and stores every event once;
//! - the retry window passing: the turn fails with the store's error, and
//!   its events are stored by the next turn once the database is back;
//! - `dsh sessions export` / `import` move a session between the JSONL
//!   files and PostgreSQL unchanged.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dsh_tests::daemon::{RpcClient, ServedDaemon, WAIT};
use dsh_tests::postgres::{PG_PASSWORD, PgServer};
use dsh_tests::{run_dsh, temp_dir};
use serde_json::{Value, json};

/// A host's folder: a manifest on `url` whose scripted model answers
/// `script` and records every request in `requests.jsonl`.
fn host_dir(dir: &Path, url: &str, script: Value, retry_s: u64) -> PathBuf {
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
    let config = dir.join("cordis.yml");
    std::fs::write(
        &config,
        format!(
            "state_dir: state\nsocket: state/dsh.sock\n\
             state: {{store: postgres, url: '{url}', retry_s: {retry_s}}}\n\
             plugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    \
             config: {{script: script.json, record: requests.jsonl}}\n"
        ),
    )
    .unwrap();
    config
}

fn connect(dir: &Path) -> RpcClient {
    let mut client = RpcClient::connect(&dir.join("state/dsh.sock")).unwrap();
    client.initialize();
    client
}

fn load(client: &mut RpcClient, dir: &Path, id: &str) -> Result<Value, Value> {
    client.request(
        "session/load",
        json!({"sessionId": id, "cwd": dir.join("project"), "mcpServers": []}),
    )
}

/// Loads `id`, retrying while it is still held (its holder is going away);
/// fails after [`WAIT`].
fn load_when_released(client: &mut RpcClient, dir: &Path, id: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        match load(client, dir, id) {
            Ok(_) => return,
            Err(e) if e.to_string().contains("held by another dsh host") => {
                assert!(Instant::now() < deadline, "still held after {WAIT:?}: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("session/load {id}: {e}"),
        }
    }
}

/// The user and assistant texts of the last request the model got.
fn last_request_texts(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("requests.jsonl")).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" || m["role"] == "assistant")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

/// `(seq, type)` of every stored event of `id`, in order.
fn stored(pg: &PgServer, id: &str) -> Vec<(i64, String)> {
    pg.psql(&format!(
        "SELECT seq, event->>'type' FROM dsh_events WHERE session_id = '{id}' ORDER BY seq"
    ))
    .lines()
    .filter(|l| !l.is_empty())
    .map(|l| {
        let (seq, kind) = l.split_once('|').unwrap();
        (seq.parse().unwrap(), kind.to_string())
    })
    .collect()
}

/// Every turn opens and closes in order, and the seqs are 0, 1, 2, ...
fn assert_consistent(events: &[(i64, String)]) -> usize {
    let mut open = false;
    let mut turns = 0;
    for (i, (seq, kind)) in events.iter().enumerate() {
        assert_eq!(*seq, i as i64, "{events:?}");
        match kind.as_str() {
            "turn/start" => {
                assert!(!open, "nested turn at {seq}: {events:?}");
                open = true;
            }
            "turn/end" => {
                assert!(open, "turn/end outside a turn at {seq}: {events:?}");
                open = false;
                turns += 1;
            }
            _ => assert!(open, "{kind} outside a turn at {seq}: {events:?}"),
        }
    }
    assert!(!open, "a turn left open: {events:?}");
    turns
}

#[test]
#[cfg_attr(
    not(dsh_have_postgres),
    ignore = "needs PostgreSQL (Debian package postgresql; .ci/run installs it)"
)]
fn two_hosts_share_sessions_one_holder_at_a_time_and_a_killed_holder_lets_go() {
    let Some(pg) = PgServer::start() else { return };
    let root = temp_dir();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    let config_a = host_dir(
        &a,
        &pg.url(),
        json!([{"text": "first answer"}, {"text": "third answer"}]),
        30,
    );
    let config_b = host_dir(&b, &pg.url(), json!([{"text": "second answer"}]), 30);
    let daemon_a = ServedDaemon::start(&config_a, &a, "debug");
    let mut daemon_b = ServedDaemon::start(&config_b, &b, "debug");

    // Begun on A.
    let mut on_a = connect(&a);
    let id = on_a.new_session(&a.join("project"));
    assert_eq!(on_a.prompt(&id, "one"), "end_turn");
    let row = pg.psql(&format!(
        "SELECT status, host, cwd, holder FROM dsh_sessions WHERE id = '{id}'"
    ));
    assert!(
        row.starts_with("held|") && row.contains(&format!("pid {}", daemon_a.pid())),
        "{row}"
    );

    // B is refused while A holds it, and told who holds it.
    let mut on_b = connect(&b);
    let refused = load(&mut on_b, &b, &id).unwrap_err();
    let message = refused["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.contains(&format!("session `{id}` is held by another dsh host"))
            && message.contains(&format!("pid {}", daemon_a.pid())),
        "{refused}"
    );

    // A's editor goes away: the session is released and B resumes it with
    // the whole history.
    drop(on_a);
    load_when_released(&mut on_b, &b, &id);
    assert_eq!(on_b.prompt(&id, "two"), "end_turn");
    assert_eq!(
        last_request_texts(&b),
        ["one", "first answer", "two"],
        "B's model got A's turn"
    );
    // B's local transcript (what its hooks read) holds A's turn and its own.
    let transcript = std::fs::read_to_string(b.join(format!("state/sessions/{id}.jsonl"))).unwrap();
    let order: Vec<usize> = ["\"one\"", "first answer", "\"two\"", "second answer"]
        .iter()
        .map(|t| {
            transcript
                .find(t)
                .unwrap_or_else(|| panic!("{t} not in {transcript}"))
        })
        .collect();
    assert!(order.is_sorted(), "{transcript}");

    // B dies holding it: its connection ends and the lock with it.
    daemon_b.signal(libc::SIGKILL);
    let _ = daemon_b.wait();
    let mut again = connect(&a);
    load_when_released(&mut again, &a, &id);
    assert_eq!(again.prompt(&id, "three"), "end_turn");
    assert_eq!(
        last_request_texts(&a),
        ["one", "first answer", "two", "second answer", "three"]
    );
    let events = stored(&pg, &id);
    assert_eq!(assert_consistent(&events), 3, "{events:?}");

    for stderr in [daemon_a.stderr(), daemon_b.stderr()] {
        assert!(!stderr.contains(PG_PASSWORD), "the password was logged");
    }
}

/// A turn whose tool waits for `go` in the project, after touching `started`.
fn waiting_tool() -> Value {
    json!({"tool_calls": [{"name": "Bash", "arguments": {"command":
        "touch started; n=0; while [ ! -f go ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done; echo released"}}]})
}

fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + WAIT;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[cfg_attr(
    not(dsh_have_postgres),
    ignore = "needs PostgreSQL (Debian package postgresql; .ci/run installs it)"
)]
fn the_database_restarted_mid_turn_loses_nothing_and_the_daemon_reconnects() {
    let Some(pg) = PgServer::start() else { return };
    let root = temp_dir();
    let a = root.path().to_path_buf();
    let config = host_dir(
        &a,
        &pg.url(),
        json!([{"text": "before"}, waiting_tool(), {"text": "after"}, {"text": "later"}]),
        60,
    );
    let daemon = ServedDaemon::start(&config, &a, "info");
    let mut client = connect(&a);
    let id = client.new_session(&a.join("project"));
    assert_eq!(client.prompt(&id, "one"), "end_turn");
    let acknowledged = stored(&pg, &id);

    let turn = {
        let id = id.clone();
        std::thread::spawn(move || client.prompt(&id, "two"))
    };
    wait_for_file(&root.path().join("project/started"));
    pg.stop();
    std::fs::write(root.path().join("project/go"), "").unwrap();
    daemon.expect_stderr("session store unavailable");
    // The daemon keeps serving while the database is away.
    let mut other = RpcClient::connect(&root.path().join("state/dsh.sock")).unwrap();
    assert!(other.try_initialize().is_some(), "the daemon answers");
    pg.start_again();
    assert_eq!(turn.join().unwrap(), "end_turn");
    daemon.expect_stderr("session store reachable again");

    let events = stored(&pg, &id);
    assert_eq!(assert_consistent(&events), 2, "{events:?}");
    assert_eq!(events[..acknowledged.len()], acknowledged[..]);
    let kinds: Vec<&str> = events.iter().map(|(_, k)| k.as_str()).collect();
    assert!(kinds.contains(&"tool/result"), "{kinds:?}");
}

#[test]
#[cfg_attr(
    not(dsh_have_postgres),
    ignore = "needs PostgreSQL (Debian package postgresql; .ci/run installs it)"
)]
fn a_turn_past_the_retry_window_fails_clearly_and_its_events_follow_later() {
    let Some(pg) = PgServer::start() else { return };
    let root = temp_dir();
    let a = root.path().to_path_buf();
    let config = host_dir(
        &a,
        &pg.url(),
        json!([{"text": "kept"}, {"text": "unstored"}, {"text": "back"}]),
        1,
    );
    let daemon = ServedDaemon::start(&config, &a, "info");
    let mut client = connect(&a);
    let id = client.new_session(&a.join("project"));
    assert_eq!(client.prompt(&id, "one"), "end_turn");

    pg.stop();
    let failed = client
        .request(
            "session/prompt",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "two"}]}),
        )
        .unwrap_err();
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the turn's events were not stored")
            && message.contains("could not be stored within 1s"),
        "{failed}"
    );
    assert!(!daemon.stderr().contains(PG_PASSWORD));

    pg.start_again();
    assert_eq!(client.prompt(&id, "three"), "end_turn");
    let events = stored(&pg, &id);
    assert_eq!(assert_consistent(&events), 3, "{events:?}");
    let texts = pg.psql(&format!(
        "SELECT event->>'content' FROM dsh_events WHERE session_id = '{id}' \
         AND event->>'type' = 'user/message' ORDER BY seq"
    ));
    assert_eq!(texts.lines().collect::<Vec<_>>(), ["one", "two", "three"]);
}

#[test]
#[cfg_attr(
    not(dsh_have_postgres),
    ignore = "needs PostgreSQL (Debian package postgresql; .ci/run installs it)"
)]
fn export_and_import_move_a_session_between_files_and_postgres() {
    let Some(pg) = PgServer::start() else { return };
    let root = temp_dir();
    let files = root.path().join("files");
    std::fs::create_dir_all(files.join("project")).unwrap();
    std::fs::write(
        files.join("cordis.yml"),
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    \
         config: {script: [{text: 'hello back'}]}\n",
    )
    .unwrap();
    let files_config = files.join("cordis.yml");
    let made = run_dsh(
        [
            "prompt",
            "--config",
            files_config.to_str().unwrap(),
            "--session",
            "moved-1",
            "hello",
        ],
        &files.join("project"),
    );
    assert_eq!(made.code, Some(0), "{made:?}");
    let original = std::fs::read_to_string(files.join("state/sessions/moved-1.jsonl")).unwrap();

    let pg_dir = root.path().join("pg");
    let pg_config = host_dir(&pg_dir, &pg.url(), json!([]), 5);
    let pg_arg = pg_config.to_str().unwrap();
    let imported = run_dsh(
        [
            "sessions",
            "import",
            "--config",
            pg_arg,
            files.join("state/sessions/moved-1.jsonl").to_str().unwrap(),
        ],
        root.path(),
    );
    assert_eq!(imported.code, Some(0), "{imported:?}");
    assert!(
        imported.stdout.contains("imported session `moved-1`"),
        "{imported:?}"
    );
    let again = run_dsh(
        [
            "sessions",
            "import",
            "--config",
            pg_arg,
            files.join("state/sessions/moved-1.jsonl").to_str().unwrap(),
        ],
        root.path(),
    );
    assert_eq!(
        again.code,
        Some(1),
        "an id already stored is refused: {again:?}"
    );
    assert!(again.stderr.contains("already exists"), "{again:?}");

    let exported = run_dsh(
        ["sessions", "export", "--config", pg_arg, "moved-1"],
        root.path(),
    );
    assert_eq!(exported.code, Some(0), "{exported:?}");
    assert_eq!(exported.stdout, original, "the round trip changes nothing");
    let listed = run_dsh(["sessions", "list", "--config", pg_arg], root.path());
    assert!(
        listed
            .stdout
            .lines()
            .any(|l| l.starts_with("moved-1") && l.contains("completed")),
        "{listed:?}"
    );
}

#[test]
#[cfg_attr(
    not(dsh_have_postgres),
    ignore = "needs PostgreSQL (Debian package postgresql; .ci/run installs it)"
)]
fn store_migrate_applies_each_version_once() {
    let Some(pg) = PgServer::start() else { return };
    let root = temp_dir();
    let config = host_dir(root.path(), &pg.url(), json!([]), 5);
    let arg = config.to_str().unwrap();
    let first = run_dsh(["store", "migrate", "--config", arg], root.path());
    assert_eq!(first.code, Some(0), "{first:?}");
    assert!(
        first
            .stdout
            .contains("applied migration 1: sessions and events")
            && first.stdout.contains("schema version 1 (was 0)"),
        "{first:?}"
    );
    let second = run_dsh(["store", "migrate", "--config", arg], root.path());
    assert_eq!(second.code, Some(0), "{second:?}");
    assert!(!second.stdout.contains("applied"), "{second:?}");
    assert!(
        second.stdout.contains("schema version 1 (was 1)"),
        "{second:?}"
    );
    assert_eq!(
        pg.psql("SELECT version, name FROM dsh_schema_migrations")
            .trim(),
        "1|sessions and events"
    );
    assert!(!first.stdout.contains(PG_PASSWORD) && !first.stderr.contains(PG_PASSWORD));
}

#[test]
#[cfg_attr(
    not(dsh_have_postgres),
    ignore = "needs PostgreSQL (Debian package postgresql; .ci/run installs it)"
)]
fn appends_are_idempotent_per_session_and_seq_and_one_holder_at_a_time() {
    use dsh_host::session::postgres::{PgOptions, PgStore};
    use dsh_host::session::{
        LogError, SessionEvent, SessionHeader, SessionLog, TurnEndReason, TurnKind,
    };
    let Some(pg) = PgServer::start() else { return };
    let here = PgStore::connect(&PgOptions::new(&pg.url())).unwrap();
    let elsewhere = PgStore::connect(&PgOptions::new(&pg.url())).unwrap();
    let mut log = SessionLog::create_in(&here, SessionHeader::new("idem-1", "/w")).unwrap();
    let refused = SessionLog::open_in(&elsewhere, "idem-1").err().unwrap();
    assert!(
        matches!(&refused, LogError::HeldElsewhere { id, holder }
            if id == "idem-1" && holder.contains(&format!("pid {}", std::process::id()))),
        "{refused}"
    );

    log.append(SessionEvent::turn_start("t1", TurnKind::Prompt))
        .unwrap();
    // Event 1 is already stored, as when a commit landed but its
    // acknowledgement was lost: storing it again changes nothing.
    let earlier = r#"{"type":"context/message","content":"first","source":{"kind":"user"}}"#;
    pg.psql(&format!(
        "INSERT INTO dsh_events (session_id, seq, event, line) VALUES ('idem-1', 1, '{earlier}', '{earlier}')"
    ));
    log.append(SessionEvent::from_value(
        json!({"type": "context/message", "content": "second", "source": {"kind": "user"}}),
    ))
    .unwrap();
    log.append(SessionEvent::turn_end("t1", TurnEndReason::Completed, None))
        .unwrap();
    log.sync().unwrap();
    assert_eq!(
        pg.psql(
            "SELECT seq, event->>'content' FROM dsh_events WHERE session_id = 'idem-1' ORDER BY seq"
        )
        .lines()
        .collect::<Vec<_>>(),
        ["0|", "1|first", "2|"]
    );

    // Closed here, it can be opened elsewhere (the release is on its way).
    drop(log);
    let deadline = Instant::now() + WAIT;
    let reopened = loop {
        match SessionLog::open_in(&elsewhere, "idem-1") {
            Ok(l) => break l,
            Err(LogError::HeldElsewhere { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(reopened.events().len(), 3);
    assert_eq!(reopened.header().cwd, "/w");
}
