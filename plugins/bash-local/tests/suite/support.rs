//! Test support: running specs with a timeout, timed waits for files and
//! process liveness; the fake plugin host, seam inputs and the test abort
//! signal come from the shared test-support crate.

use std::path::Path;
use std::time::Duration;

use dsh_bash_local::{RunAnswer, RunRequest};
pub use dsh_test_support::TestSignal;
pub use dsh_test_support::fake_host::{FakeHost, canonical_temp_dir as temp_dir, tool_call};

/// Generous bound for "it finished at all".
pub const FINISH: Duration = Duration::from_secs(20);

/// Runs a spec, failing the test if it does not finish in [`FINISH`].
pub async fn run(spec: RunRequest) -> RunAnswer {
    tokio::time::timeout(FINISH, dsh_bash_local::run(spec))
        .await
        .expect("run did not finish")
}

/// `/bin/sh -c <script>` in `cwd`.
pub fn sh(script: &str, cwd: &Path) -> RunRequest {
    RunRequest::new(vec!["/bin/sh".into(), "-c".into(), script.into()], cwd)
}

/// Waits until `path` exists (and is non-empty).
pub async fn wait_for_file(path: &Path) -> String {
    let wait = async {
        loop {
            if let Ok(text) = std::fs::read_to_string(path)
                && text.ends_with('\n')
            {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(FINISH, wait)
        .await
        .unwrap_or_else(|_| panic!("{} never appeared", path.display()))
}

/// Reads a pid written by `echo $! > file`.
pub async fn read_pid(path: &Path) -> i32 {
    wait_for_file(path).await.trim().parse().expect("a pid")
}

/// Whether `pid` is a live process: `kill -0` succeeds and it is not a
/// zombie waiting for a reaper (zombies are dead for our purposes).
pub fn pid_alive(pid: i32) -> bool {
    let kill0 = std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run kill")
        .success();
    if !kill0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_none_or(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Asserts `pid` dies within [`FINISH`] (killing is asynchronous).
pub async fn assert_dies(pid: i32) {
    let wait = async {
        while pid_alive(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    if tokio::time::timeout(FINISH, wait).await.is_err() {
        panic!("process {pid} is still alive");
    }
}
