//! The `hook-transport` service's socket connections, driven directly
//! (`HookTransport::call`) against real Unix-socket servers on threads of
//! this test: the calls waiting on one connection take turns reading it
//! and hand each other their answers, and a connection whose server went
//! away while nothing was in flight is replaced by the next call.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use dsh_hook_protocol::RunRequest;
use dsh_hook_protocol::transport::{Handler, SocketHandler, TransportRequest};
use dsh_host::hooks::HookTransport;
use serde_json::{Value, json};

/// A request to the socket at `path` whose stdin is `stdin`.
fn request(path: &Path, stdin: &str) -> TransportRequest {
    let mut run = RunRequest::new(vec![], "/");
    run.stdin = stdin.into();
    run.timeout_ms = Some(30_000);
    TransportRequest {
        handler: Handler::Socket(SocketHandler {
            path: Some(path.to_string_lossy().into_owned()),
            command: None,
        }),
        run,
    }
}

/// The answer line to `request` (one JSON-RPC request line): exit 0 and
/// `stdout`.
fn answer_line(request: &str, stdout: &str) -> String {
    let request: Value = serde_json::from_str(request).unwrap();
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"exit_code": 0, "stdout": stdout}});
    format!("{answer}\n")
}

fn stdin_of(request: &str) -> String {
    let request: Value = serde_json::from_str(request).unwrap();
    request["params"]["stdin"].as_str().unwrap().to_string()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Every wait here is bounded: a lost answer fails the test, never hangs it.
async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .unwrap_or_else(|_| panic!("{what} took over 60 s"))
}

#[test]
fn answers_sent_in_reverse_order_reach_the_calls_that_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let listener = UnixListener::bind(&path).unwrap();
    // Reads two requests on one connection, then answers the second
    // first, each with its own request's stdin.
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut write = stream.try_clone().unwrap();
        let mut read = BufReader::new(stream);
        let mut lines = Vec::new();
        for _ in 0..2 {
            let mut line = String::new();
            read.read_line(&mut line).unwrap();
            lines.push(line);
        }
        for line in lines.iter().rev() {
            write
                .write_all(answer_line(line, &stdin_of(line)).as_bytes())
                .unwrap();
        }
        // Holds the connection open until the test is done with it.
        let mut rest = String::new();
        let _ = read.read_line(&mut rest);
    });
    let rt = runtime();
    let transport = HookTransport::new(dir.path());
    let (one, two) = rt.block_on(within(
        "two calls on one connection",
        futures::future::join(
            transport.call(request(&path, "first\n")),
            transport.call(request(&path, "second\n")),
        ),
    ));
    assert_eq!((one.exit_code, one.stdout.as_str()), (Some(0), "first\n"));
    assert_eq!((two.exit_code, two.stdout.as_str()), (Some(0), "second\n"));
    drop(transport);
    drop(rt);
    server.join().unwrap();
}

#[test]
fn a_connection_whose_server_went_away_while_idle_is_replaced_by_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    // Server one answers one request, then closes the connection and
    // stops listening (it went away between two calls).
    let one = {
        let listener = UnixListener::bind(&path).unwrap();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut write = stream.try_clone().unwrap();
            let mut line = String::new();
            BufReader::new(stream).read_line(&mut line).unwrap();
            write
                .write_all(answer_line(&line, "one").as_bytes())
                .unwrap();
        })
    };
    let rt = runtime();
    let transport = HookTransport::new(dir.path());
    let first = rt.block_on(within(
        "the first call",
        transport.call(request(&path, "{}\n")),
    ));
    assert_eq!((first.exit_code, first.stdout.as_str()), (Some(0), "one"));
    one.join().unwrap();
    std::fs::remove_file(&path).unwrap();
    // Server two listens on the same path.
    let listener = UnixListener::bind(&path).unwrap();
    let two = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut write = stream.try_clone().unwrap();
        let mut read = BufReader::new(stream);
        let mut line = String::new();
        read.read_line(&mut line).unwrap();
        write
            .write_all(answer_line(&line, "two").as_bytes())
            .unwrap();
        let mut rest = String::new();
        let _ = read.read_line(&mut rest);
    });
    let second = rt.block_on(within(
        "the second call",
        transport.call(request(&path, "{}\n")),
    ));
    assert_eq!(
        (
            second.exit_code,
            second.stdout.as_str(),
            second.stderr.as_str()
        ),
        (Some(0), "two", ""),
        "{second:?}"
    );
    drop(transport);
    drop(rt);
    two.join().unwrap();
}
