//! `dsh serve` as systemd runs it: readiness on `NOTIFY_SOCKET`, a real
//! ACP client over the owner-only socket, SIGHUP reloads with a session
//! open, SIGTERM mid-turn, and the unit file itself.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use agent_client_protocol::ByteStreams;
use agent_client_protocol::v1::schema::StopReason;
use serde_json::Value;
use tokio::net::{UnixDatagram, UnixStream};
use tokio::process::{Child, Command};
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use crate::support::{Answer, TestClient, read_jsonl, until, within};

struct Served {
    dir: tempfile::TempDir,
    child: Child,
    notify: UnixDatagram,
    socket: PathBuf,
    ready: String,
}

fn manifest(dir: &Path, script: &str, extra_plugins: &str) {
    std::fs::write(dir.join("script.yml"), script).unwrap();
    std::fs::write(
        dir.join("cordis.yml"),
        format!(
            "state_dir: state\nshutdown_grace_s: 1\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {{script: script.yml}}\n{extra_plugins}"
        ),
    )
    .unwrap();
}

impl Served {
    async fn start(script: &str) -> Served {
        let dir = tempfile::tempdir().unwrap();
        manifest(dir.path(), script, "");
        let notify_path = dir.path().join("notify.sock");
        let notify = UnixDatagram::bind(&notify_path).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_dsh"))
            .args(["serve", "--config"])
            .arg(dir.path().join("cordis.yml"))
            .env("NOTIFY_SOCKET", &notify_path)
            .env("DSH_LOG", "warn")
            .env_remove("DSH_STATE_DIR")
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let socket = dir.path().join("state/dsh.sock");
        let mut served = Served {
            dir,
            child,
            notify,
            socket,
            ready: String::new(),
        };
        served.ready = served.expect_notify("READY=1").await;
        served
    }

    /// Reads notifications until one contains `what`; returns it.
    async fn expect_notify(&mut self, what: &str) -> String {
        within(&format!("systemd notification {what}"), async {
            let mut buf = vec![0u8; 4096];
            loop {
                let n = self.notify.recv(&mut buf).await.unwrap();
                let msg = String::from_utf8_lossy(&buf[..n]).to_string();
                if msg.lines().any(|l| l == what) {
                    return msg;
                }
            }
        })
        .await
    }

    async fn client(&self) -> TestClient {
        let stream = UnixStream::connect(&self.socket).await.unwrap();
        let (r, w) = stream.into_split();
        TestClient::start(ByteStreams::new(w.compat_write(), r.compat()), Answer::Fail).await
    }

    fn signal(&self, sig: i32) {
        let pid = self.child.id().unwrap() as i32;
        // SAFETY: kill(2) on the daemon this test started.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_two_clients_on_an_owner_only_socket() {
    let script = "- text: one\n- text: two\n";
    let mut served = Served::start(script).await;
    let mode = std::fs::metadata(&served.socket)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    assert!(
        served
            .ready
            .contains("STATUS=2/2 plugins applied, 0 sessions"),
        "{}",
        served.ready
    );
    let first = served.client().await;
    let second = served.client().await;
    let (a, b) = (
        first.open(served.dir.path()).await,
        second.open(served.dir.path()).await,
    );
    let (ra, rb) = tokio::join!(first.prompt(&a, "hi"), second.prompt(&b, "hello"));
    assert_eq!(ra.unwrap(), StopReason::EndTurn);
    assert_eq!(rb.unwrap(), StopReason::EndTurn);
    first.close().await;
    second.close().await;
    served.signal(libc::SIGTERM);
    let exit = within("the daemon to stop", served.child.wait())
        .await
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(!served.socket.exists(), "the socket is removed on stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_applies_a_changed_manifest_to_an_open_session_and_rejects_a_bad_one() {
    let mut served = Served::start("- text: before\n- text: unreachable\n").await;
    let client = served.client().await;
    let session = client.open(served.dir.path()).await;
    assert_eq!(
        client.prompt(&session, "first").await.unwrap(),
        StopReason::EndTurn
    );

    // Add a Claude hook that blocks every prompt, then reload.
    std::fs::write(
        served.path("hooks.json"),
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'closed for maintenance' >&2; exit 2"}]}]}}"#,
    )
    .unwrap();
    let hooks = "  - name: hooks-claude\n    config: {config_path: hooks.json}\n";
    manifest(served.dir.path(), "- text: after\n", hooks);
    served.signal(libc::SIGHUP);
    served.expect_notify("RELOADING=1").await;
    served.expect_notify("READY=1").await;
    assert_eq!(
        client.prompt(&session, "second").await.unwrap(),
        StopReason::Refusal
    );

    // A broken manifest is refused; the running one stays.
    std::fs::write(served.path("cordis.yml"), "plugins: [").unwrap();
    served.signal(libc::SIGHUP);
    served.expect_notify("READY=1").await;
    assert_eq!(
        client.prompt(&session, "third").await.unwrap(),
        StopReason::Refusal
    );
    let log = read_jsonl(&served.path(&format!("state/sessions/{session}.jsonl")));
    let blocked: Vec<&Value> = log
        .iter()
        .filter(|e| e["type"] == "prompt/blocked")
        .collect();
    assert_eq!(blocked.len(), 2);
    assert!(
        blocked[0]["reason"]
            .as_str()
            .unwrap()
            .contains("closed for maintenance")
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_turn_aborts_after_the_grace_and_leaves_a_consistent_log() {
    let dir_pid = tempfile::tempdir().unwrap();
    let pidfile = dir_pid.path().join("pid");
    let script = format!(
        "- tool_calls: [{{name: Bash, arguments: {{command: 'echo $$ > {}; exec sleep 60'}}}}]\n",
        pidfile.display()
    );
    let mut served = Served::start(&script).await;
    let client = served.client().await;
    let session = client.open(served.dir.path()).await;
    let prompt = {
        let cx = client.cx.clone();
        let request = agent_client_protocol::v1::schema::PromptRequest::new(
            session.clone(),
            vec![agent_client_protocol::v1::schema::ContentBlock::from(
                "wait",
            )],
        );
        tokio::spawn(async move { cx.send_request(request).block_task().await })
    };
    until("the tool to start", || {
        std::fs::read_to_string(&pidfile).is_ok_and(|s| s.ends_with('\n'))
    })
    .await;
    let tool_pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    served.signal(libc::SIGTERM);
    served.expect_notify("STOPPING=1").await;
    let exit = within("the daemon to stop", served.child.wait())
        .await
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    // The prompt's connection went with the daemon; what matters is the log.
    let _ = prompt.await;
    let log = read_jsonl(&served.path(&format!("state/sessions/{session}.jsonl")));
    let last = log.last().unwrap();
    assert_eq!(last["type"], "turn/end");
    assert_eq!(last["reason"], "aborted");
    let starts = log.iter().filter(|e| e["type"] == "turn/start").count();
    let ends = log.iter().filter(|e| e["type"] == "turn/end").count();
    assert_eq!(starts, ends);
    assert!(
        log.iter().any(|e| e["type"] == "tool/result"),
        "the call has its result"
    );
    // Dead, or a zombie: killed, and left for whoever inherited it to reap
    // (the daemon is gone; a pid 1 that never reaps keeps it listed).
    until("the aborted tool's process to be gone", || {
        !running(tool_pid)
    })
    .await;
}

/// Whether `pid` is a process that has not died (a zombie has).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

#[test]
fn the_systemd_unit_verifies() {
    let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/dsh.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(
        text.contains("Type=notify")
            && text.contains("ExecReload=")
            && text.contains("StateDirectory=")
    );
    // Point ExecStart at the binary under test so verify can check it.
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("dsh.service");
    std::fs::write(
        &local,
        text.replace("/usr/local/bin/dsh", env!("CARGO_BIN_EXE_dsh")),
    )
    .unwrap();
    let out = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(&local)
        .output()
        .expect("systemd-analyze (Debian package `systemd`) is needed; .ci/run installs it");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dsh_acp_connect_relays_an_editor_session_to_the_daemon() {
    let script =
        "- tool_calls: [{name: Bash, arguments: {command: 'echo relayed'}}]\n- text: done\n";
    let mut served = Served::start(script).await;
    let socket = served.socket.to_string_lossy().into_owned();
    let (mut client, mut acp, strays) = crate::binary::spawn_acp(&["--connect", &socket]).await;
    let session = client.open(served.dir.path()).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    let updates = client.take_updates();
    let result = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(result["status"], "completed");
    assert!(result.to_string().contains("relayed"), "{result}");
    client.close().await;
    let _ = within("dsh acp to exit", acp.wait()).await;
    assert!(
        strays.lock().unwrap().is_empty(),
        "stdout carries frames only"
    );
    served.signal(libc::SIGTERM);
    assert!(
        within("the daemon to stop", served.child.wait())
            .await
            .unwrap()
            .success()
    );
}

/// Sends `initialize` over the socket as the user `uid` (via `setpriv`) and
/// returns the first line the daemon answers (empty when it hangs up).
fn initialize_as(uid: u32, socket: &Path) -> String {
    const CLIENT: &str = r#"
        use IO::Socket::UNIX;
        $SIG{PIPE} = 'IGNORE'; # a peer that was hung up on must not die writing
        my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect: $!\n";
        print $s qq({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n);
        $SIG{ALRM} = sub { exit 0 }; alarm 10;
        my $line = <$s>; print $line if defined $line;
    "#;
    let out = std::process::Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
            "perl",
            "-e",
            CLIENT,
        ])
        .arg(socket)
        .output()
        .expect("setpriv (util-linux) and perl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// Acting as another user needs root. Built as anyone else, the test is
// ignored (the run's summary counts it as such) rather than passing
// without testing; run as root it always runs (see host/build.rs).
#[cfg_attr(
    not(dsh_test_as_root),
    ignore = "needs root to act as another user: run the tests as root"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_running_as_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    assert_eq!(
        me, 0,
        "acting as another user needs root, and this runs as uid {me} \
         (built as root, run as someone else?): run it as root"
    );
    let served = Served::start("- text: hi\n").await;
    // Open the way to the socket so the daemon's own uid check is what
    // stands between the other user and the agent.
    for path in [served.dir.path(), &served.path("state"), &served.socket] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let socket = served.socket.clone();
    let (own, other) = tokio::task::spawn_blocking(move || {
        (initialize_as(me, &socket), initialize_as(65534, &socket))
    })
    .await
    .unwrap();
    // The same client as the daemon's own user gets its answer...
    assert!(own.contains("\"protocolVersion\""), "{own}");
    // ...and as anyone else gets hung up on.
    assert_eq!(other, "");
}
