//! The session's working directory through the real loop and the real
//! `Bash`: a `cd` persists into the session's later calls, never into
//! another session's, and a directory deleted under the session sends it
//! back to where it started.

use std::path::PathBuf;

use serde_json::json;

use super::harness::{Harness, bash, of_kind, text};

fn results(events: &[serde_json::Value]) -> Vec<String> {
    of_kind(events, "tool/result")
        .iter()
        .map(|r| r["content"].as_str().unwrap().to_string())
        .collect()
}

fn physical(p: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cd_persists_into_the_next_bash_call_of_the_session() {
    let h = Harness::new(
        json!([
            bash("mkdir sub && cd sub && pwd"),
            bash("pwd"),
            text("done")
        ]),
        &[],
    );
    let (session, out) = h.run("go").await;
    let sub = physical(&h.project).join("sub");
    let sub = sub.to_string_lossy();
    assert_eq!(results(&out.events), [&*sub, &*sub]);
    assert_eq!(session.current_cwd().to_string_lossy(), sub);
    assert_eq!(session.session_ref().cwd.as_str(), sub);
    // Where the session started does not move.
    assert_eq!(session.cwd, h.project);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_do_not_share_a_cwd() {
    let h = Harness::new(
        json!([
            bash("mkdir sub && cd sub"),
            text("a"),
            bash("pwd"),
            text("b")
        ]),
        &[],
    );
    let (a, _) = h.run("go").await;
    let (b, out) = h.run("go").await;
    assert_ne!(a.id, b.id);
    let project = physical(&h.project);
    assert_eq!(results(&out.events), [project.to_string_lossy()]);
    assert_eq!(a.current_cwd(), project.join("sub"));
    assert_eq!(b.current_cwd(), h.project);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_cwd_sends_the_session_back_where_it_started() {
    // As Claude Code (S236-deleted-under-session*): `pwd` fails in the
    // deleted folder and so does the call; the next `Bash` call runs
    // nothing and moves the session back to its root.
    let h = Harness::new(
        json!([
            bash("mkdir sub && cd sub"),
            bash("rmdir \"$PWD\" && echo removed"),
            bash("pwd"),
            bash("pwd"),
            text("done")
        ]),
        &[],
    );
    let (session, out) = h.run("go").await;
    let project = physical(&h.project);
    let sub = project.join("sub");
    assert_eq!(
        results(&out.events),
        [
            "(Bash completed with no output)".to_string(),
            "Exit code 1\nremoved\npwd: error retrieving current directory: getcwd: cannot \
             access parent directories: No such file or directory"
                .to_string(),
            format!(
                "Working directory \"{}\" was deleted; shell cwd recovered to \"{}\". Re-issue \
                 your command (it will run from the recovered directory).",
                sub.display(),
                h.project.display()
            ),
            project.to_string_lossy().into_owned()
        ]
    );
    assert_eq!(session.current_cwd(), h.project);
}
