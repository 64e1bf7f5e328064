//! The `dsh acp` binary over stdio: in-process hosting, and relaying to a
//! daemon socket. Every stdout line must be a JSON-RPC frame.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use agent_client_protocol::ByteStreams;
use agent_client_protocol::v1::schema::StopReason;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::UnixListener;
use tokio::process::{Child, Command};
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use crate::support::{Answer, Model, TestClient, TestHost, bash, text, within};

/// `dsh acp` with `args`, its stdout checked line by line and handed to a
/// real client. Returns the client, the child, and the lines that were not
/// JSON-RPC frames.
pub(crate) async fn spawn_acp(args: &[&str]) -> (TestClient, Child, Arc<Mutex<Vec<String>>>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh"))
        .arg("acp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env("DSH_LOG", "warn")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let strays = Arc::new(Mutex::new(Vec::new()));
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let seen = strays.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        let mut theirs = theirs;
        while let Ok(Some(line)) = lines.next_line().await {
            let frame: Option<Value> = serde_json::from_str(&line).ok();
            if frame.as_ref().is_none_or(|f| f["jsonrpc"] != "2.0") {
                seen.lock().unwrap().push(line.clone());
            }
            if theirs
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    });
    let client = TestClient::start(
        ByteStreams::new(stdin.compat_write(), ours.compat()),
        Answer::Fail,
    )
    .await;
    (client, child, strays)
}

fn write_manifest(dir: &Path, socket: &Path) -> std::path::PathBuf {
    std::fs::write(
        dir.join("script.yml"),
        "- text: Checking.\n  tool_calls: [{name: Bash, arguments: {command: echo from-dsh}}]\n- text: Done.\n",
    )
    .unwrap();
    let manifest = dir.join("cordis.yml");
    std::fs::write(
        &manifest,
        format!(
            "state_dir: state\nsocket: {}\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n",
            socket.display()
        ),
    )
    .unwrap();
    manifest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dsh_acp_hosts_the_agent_in_process_on_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let manifest = write_manifest(dir.path(), &dir.path().join("no-daemon.sock"));
    let (mut client, mut child, strays) =
        spawn_acp(&["--config", manifest.to_str().unwrap()]).await;
    let session = client.open(&project).await;
    assert_eq!(
        client.prompt(&session, "check").await.unwrap(),
        StopReason::EndTurn
    );
    let updates = client.take_updates();
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    assert_eq!(updates[2]["content"][0]["content"]["text"], "from-dsh");
    assert!(
        dir.path()
            .join("state/sessions")
            .join(format!("{session}.jsonl"))
            .exists()
    );
    client.close().await;
    let status = within("dsh acp to exit", child.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        strays.lock().unwrap().is_empty(),
        "non-frame stdout: {:?}",
        strays.lock().unwrap()
    );
}

/// Serves every connection on `listener` with the test host's server.
fn serve_socket(host: &TestHost, listener: UnixListener) {
    let server = host.server.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let server = server.clone();
            tokio::spawn(async move {
                let (read, write) = stream.into_split();
                let _ = server.serve(read, write).await;
            });
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dsh_acp_relays_stdio_to_a_live_daemon_socket() {
    let host = TestHost::new(
        Model::Scripted(json!([bash("echo relayed"), text("one"), text("two")])),
        &[],
    );
    let socket = host.dir.path().join("daemon.sock");
    serve_socket(&host, UnixListener::bind(&socket).unwrap());

    // Explicitly, with --connect (the manifest is not even read).
    let (mut client, mut child, strays) = spawn_acp(&[
        "--config",
        "/nonexistent/cordis.yml",
        "--connect",
        socket.to_str().unwrap(),
    ])
    .await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "go").await.unwrap(),
        StopReason::EndTurn
    );
    let updates = client.take_updates();
    assert_eq!(updates[1]["content"][0]["content"]["text"], "relayed");
    client.close().await;
    assert!(
        within("the relay to exit", child.wait())
            .await
            .unwrap()
            .success()
    );
    assert!(strays.lock().unwrap().is_empty());

    // Implicitly: the manifest's socket has a live daemon.
    let manifest = write_manifest(host.dir.path(), &socket);
    let (mut client, mut child, _) = spawn_acp(&["--config", manifest.to_str().unwrap()]).await;
    let session = client.open(&host.project).await;
    assert_eq!(
        client.prompt(&session, "again").await.unwrap(),
        StopReason::EndTurn
    );
    // The daemon's scripted model answered, not an in-process one.
    assert_eq!(client.take_updates()[0]["content"]["text"], "two");
    client.close().await;
    assert!(
        within("the relay to exit", child.wait())
            .await
            .unwrap()
            .success()
    );
}
