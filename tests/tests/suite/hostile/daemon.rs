//! `dsh serve` against what sits at its socket path, and against running
//! out of file descriptors.

use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_tests::daemon::{RpcClient, ServedDaemon, WAIT};
use dsh_tests::{run_dsh, temp_dir};

/// A manifest with no plugins whose socket is `socket` (relative to `dir`).
fn manifest(dir: &Path, socket: &str) -> PathBuf {
    let path = dir.join("cordis.yml");
    std::fs::write(
        &path,
        format!("state_dir: state\nsocket: {socket}\nplugins: []\n"),
    )
    .unwrap();
    path
}

/// What a path is, in a form that shows any change.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    File(String),
    Folder(Vec<(String, String)>),
    Link(PathBuf),
    Fifo,
    Socket,
    Missing,
}

fn found(path: &Path) -> Found {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Found::Missing;
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        Found::Link(std::fs::read_link(path).unwrap())
    } else if kind.is_dir() {
        let mut entries: Vec<(String, String)> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let text = std::fs::read_to_string(e.path()).unwrap();
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect();
        entries.sort();
        Found::Folder(entries)
    } else if kind.is_fifo() {
        Found::Fifo
    } else if kind.is_socket() {
        Found::Socket
    } else {
        Found::File(std::fs::read_to_string(path).unwrap())
    }
}

#[test]
fn serve_never_deletes_what_is_not_a_stale_socket_at_its_path() {
    // (socket: value, how to make what sits there, what the refusal calls it)
    type Make = fn(&Path);
    let cases: [(&str, Make, &str); 5] = [
        // The typo from the issue: the socket pointed at the manifest itself.
        ("cordis.yml", |_| {}, "a regular file"),
        (
            "notes.txt",
            |p| std::fs::write(p, "keep me\n").unwrap(),
            "a regular file",
        ),
        (
            "folder",
            |p| {
                std::fs::create_dir(p).unwrap();
                std::fs::write(p.join("inside"), "kept\n").unwrap();
            },
            "a folder",
        ),
        (
            "link",
            |p| {
                let target = p.with_file_name("target.txt");
                std::fs::write(&target, "the link's target\n").unwrap();
                std::os::unix::fs::symlink(&target, p).unwrap();
            },
            "a symbolic link",
        ),
        (
            "fifo",
            |p| {
                let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: mkfifo(3) with a NUL-terminated path we own.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            },
            "a fifo",
        ),
    ];
    for (socket, make, what) in cases {
        let dir = temp_dir();
        let config = manifest(dir.path(), socket);
        let at = dir.path().join(socket);
        make(&at);
        let before = found(&at);
        let manifest_before = std::fs::read_to_string(&config).unwrap();

        let out = run_dsh(["serve", "--config", config.to_str().unwrap()], dir.path());

        assert_eq!(out.code, Some(1), "{socket}: {out:?}");
        assert_eq!(
            out.stderr,
            format!(
                "dsh: {}: {what}, not a socket; refusing to replace it (remove it yourself or point `socket:` elsewhere)\n",
                at.display()
            ),
            "{socket}"
        );
        assert_eq!(found(&at), before, "{socket}: what was there is untouched");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), manifest_before);
        if socket == "link" {
            assert_eq!(
                std::fs::read_to_string(dir.path().join("target.txt")).unwrap(),
                "the link's target\n"
            );
        }
    }
}

#[test]
fn serve_replaces_a_stale_socket_and_refuses_a_live_one() {
    let dir = temp_dir();
    let config = manifest(dir.path(), "state/dsh.sock");
    let socket = dir.path().join("state/dsh.sock");
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    // A dead daemon's socket: bound, then its listener gone.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert_eq!(found(&socket), Found::Socket);

    let first = ServedDaemon::start(&config, dir.path(), "warn");
    let answer = RpcClient::connect(&socket).unwrap().initialize();
    assert_eq!(answer["protocolVersion"], 1, "{answer}");

    // A second daemon on the same path finds it live and leaves it alone.
    let second_dir = temp_dir();
    let mut second = ServedDaemon::spawn(&config, second_dir.path(), "warn");
    assert_eq!(second.wait().code(), Some(1));
    assert_eq!(
        second.stderr(),
        format!(
            "dsh: {}: another dsh daemon is already serving here\n",
            socket.display()
        )
    );
    let answer = RpcClient::connect(&socket).unwrap().initialize();
    assert_eq!(answer["protocolVersion"], 1, "{answer}");
    assert!(first.stop().success());
}

/// The file descriptors `pid` has open.
fn open_fds(pid: i32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64
}

/// Sets `pid`'s soft and hard RLIMIT_NOFILE to `limit`.
fn limit_fds(pid: i32, limit: u64) {
    let new = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: prlimit(2) on our own child, with a valid rlimit and no old
    // value requested.
    let rc = unsafe { libc::prlimit(pid, libc::RLIMIT_NOFILE, &new, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "prlimit: {}", std::io::Error::last_os_error());
}

fn accept_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("accept")).collect()
}

#[test]
fn accept_failures_back_off_log_once_and_recover() {
    let dir = temp_dir();
    let config = manifest(dir.path(), "state/dsh.sock");
    let socket = dir.path().join("state/dsh.sock");
    let daemon = ServedDaemon::start(&config, dir.path(), "info");
    // Leave the daemon a handful of descriptors: a few connections use
    // them up and every further accept fails with EMFILE.
    let spare = 4;
    limit_fds(daemon.pid(), open_fds(daemon.pid()) + spare);

    let clients: Vec<RpcClient> = (0..spare + 40)
        .map(|i| RpcClient::connect(&socket).unwrap_or_else(|e| panic!("client {i}: {e}")))
        .collect();
    daemon.expect_stderr("accept failed");
    // Hold the pressure: a loop that retried at once would write thousands
    // of lines in this time; the stimulus lasts 2 s, nothing waits on it.
    std::thread::sleep(Duration::from_secs(2));
    let under_pressure = daemon.stderr();
    let lines = accept_lines(&under_pressure);
    assert!(
        lines.len() < 50,
        "{} accept lines in 2 s of pressure, first ones: {:#?}",
        lines.len(),
        &lines[..lines.len().min(10)]
    );
    let warnings: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("WARN") && l.contains("accept failed"))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning per burst: {lines:#?}");
    assert!(
        warnings[0].contains("Too many open files"),
        "the warning names the error: {}",
        warnings[0]
    );
    assert!(
        under_pressure.lines().count() < 50,
        "nothing else floods stderr either:\n{under_pressure}"
    );

    // Release the descriptors; a new client is answered.
    drop(clients);
    let answer = within_retry(&daemon, || {
        let mut client = RpcClient::connect(&socket).ok()?;
        client.set_timeout(Duration::from_millis(500));
        client.try_initialize()
    });
    assert_eq!(answer["protocolVersion"], 1, "{answer}");
    let stderr = daemon.expect_stderr("accept recovered after");
    let recovered: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("accept recovered after"))
        .collect();
    assert!(
        recovered[0].contains("INFO") && recovered[0].contains("failures="),
        "{recovered:#?}"
    );
    assert!(daemon.stop().success());
}

/// `attempt` until it gives a value, failing after [`WAIT`]. A connect can
/// be refused while the daemon's listen queue is still full of the clients
/// just closed.
fn within_retry<T>(daemon: &ServedDaemon, mut attempt: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(value) = attempt() {
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no client answered within {WAIT:?}; stderr:\n{}",
            daemon.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_reload_stuck_in_a_plugin_apply_does_not_stop_new_connections() {
    let dir = temp_dir();
    let d = dir.path();
    let config = d.join("cordis.yml");
    let with_script = |script: &str| {
        format!(
            "state_dir: state\nplugins:\n  - id: model\n    name: model-scripted\n    config: {{script: {script}}}\n"
        )
    };
    std::fs::write(&config, with_script("[]")).unwrap();
    let daemon = ServedDaemon::start(&config, d, "warn");

    // The new script is a fifo: the model's apply blocks reading it until
    // the test writes and closes it.
    let fifo = d.join("script.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::fs::write(&config, with_script("script.fifo")).unwrap();
    daemon.signal(libc::SIGHUP);
    daemon.expect_notify("RELOADING=1");

    // Mid-reload, a new client is accepted and answered.
    let answer = RpcClient::connect(&d.join("state/dsh.sock"))
        .unwrap()
        .initialize();
    assert_eq!(answer["protocolVersion"], 1, "{answer}");

    std::fs::write(&fifo, "- text: hello\n").unwrap();
    let ready = daemon.expect_notify("READY=1");
    assert!(ready.contains("STATUS=1/1 plugins applied"), "{ready}");
    assert!(!ready.contains("reload failed"), "{ready}");
    assert!(daemon.stop().success());
}
