//! Where a `Bash` command left its shell (`bash_run`'s `moved_to`), the
//! side channel that makes a `cd` persist; the session side is tested
//! through the loop (`host/tests/agent_loop/cwd.rs`).

use std::path::{Path, PathBuf};

use dsh_bash_local::Config;
use dsh_bash_local::bash::{BashRun, bash_run};
use serde_json::json;

use super::support::*;

async fn run(command: &str, cwd: &Path) -> BashRun {
    let args = json!({ "command": command });
    tokio::time::timeout(
        FINISH,
        bash_run(&args, cwd, &Config::default(), std::future::pending()),
    )
    .await
    .expect("finished")
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(path.join("sub")).unwrap();
    (dir, path)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cd_reports_the_new_directory_and_stdout_stays_the_commands() {
    let (_dir, p) = project();
    let out = run("cd sub && pwd", &p).await;
    assert_eq!(out.moved_to, Some(p.join("sub")));
    assert_eq!(out.result.text_content(), p.join("sub").to_string_lossy());
    assert!(!out.result.is_error);
}

#[tokio::test(flavor = "multi_thread")]
async fn staying_put_reports_nothing() {
    let (_dir, p) = project();
    assert_eq!(run("echo hi", &p).await.moved_to, None);
    assert_eq!(run("cd sub && cd ..", &p).await.moved_to, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_commands_exit_status_is_kept_and_only_a_success_moves() {
    let (_dir, p) = project();
    // Claude Code runs `eval <command> && pwd -P >| <file>`: a failed
    // command moves nothing (recorded S238-cd-out-fail).
    let out = run("cd sub; false", &p).await;
    assert!(out.result.is_error);
    assert_eq!(out.result.text_content(), "Exit code 1");
    assert_eq!(out.moved_to, None);
    let out = run("cd sub; true", &p).await;
    assert!(!out.result.is_error);
    assert_eq!(out.moved_to, Some(p.join("sub")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shell_that_exits_or_ends_in_a_deleted_folder_moves_nothing() {
    let (_dir, p) = project();
    let out = run("cd sub && exit 3", &p).await;
    assert_eq!(out.result.text_content(), "Exit code 3");
    assert_eq!(out.moved_to, None);
    // Claude Code's `pwd -P` fails in a deleted folder, and so does the
    // call, with its error (recorded S236-deleted-under-session).
    let out = run("cd sub && rmdir \"$PWD\" && echo gone", &p).await;
    assert!(out.result.is_error);
    assert_eq!(
        out.result.text_content(),
        "Exit code 1\ngone\npwd: error retrieving current directory: getcwd: cannot access \
         parent directories: No such file or directory"
    );
    assert_eq!(out.moved_to, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn quotes_in_the_command_survive_the_wrapping() {
    let (_dir, p) = project();
    let out = run("echo 'it'\"'\"'s' \"$0\"", &p).await;
    // The shell is `/bin/bash` by default, as Claude Code runs it.
    assert_eq!(out.result.text_content(), "it's /bin/bash");
}
