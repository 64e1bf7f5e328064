//! `dsh prompt --continue` over the real `dsh` binary, real Claude Code
//! hooks (shell commands) and real session logs; only the model is
//! scripted.
//!
//! Recorded (`S190-*`, `FINDINGS-continue.md`): `claude -p --continue`
//! continues the folder's last session even when its only prompt was
//! blocked (same id, SessionStart `source: "resume"`, nothing of the
//! blocked prompt reaches the model), and starts a new session where
//! there is none (`S190-continue-first`, as `codex exec resume --last`
//! in C3).

use serde_json::json;

use super::compaction::{Project, Run};

/// Claude's project with a SessionStart observer and a UserPromptSubmit
/// hook that blocks any prompt containing `secret`.
fn project() -> Project {
    // The capture hook saved its stdin as `cap/UserPromptSubmit.$n.json`
    // under the project root before this runs (in the same shell).
    let block = "grep -q secret \"$CAP/UserPromptSubmit.$n.json\" && \
                 printf '%s' '{\"decision\":\"block\",\"reason\":\"no secrets\"}'; true";
    let p = Project::new(&[("SessionStart", ""), ("UserPromptSubmit", block)], "");
    let hooks = std::fs::read_to_string(p.root().join("hooks.json")).unwrap();
    let cap = p.root().join("cap");
    std::fs::write(
        p.root().join("hooks.json"),
        hooks.replace("$CAP", &cap.display().to_string()),
    )
    .unwrap();
    p
}

/// `(session_id, source)` of the `n`th SessionStart.
fn started(p: &Project, n: usize) -> (String, String) {
    let (stdin, _) = p.hook_stdin("SessionStart", n);
    (
        stdin["session_id"].as_str().unwrap().to_string(),
        stdin["source"].as_str().unwrap().to_string(),
    )
}

fn answered(run: &Run, code: i32) {
    assert_eq!(run.outcome.code, Some(code), "{}", run.outcome.stderr);
}

#[test]
fn continue_picks_the_folders_last_session_even_one_whose_prompt_was_blocked() {
    let p = project();
    let root = p.root().to_path_buf();
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let text = |t: &str| json!([{ "text": t }]);

    // Nothing to continue yet: a new session, blocked (exit 3).
    let first = p.prompt_in(
        &p.proj(),
        &["--continue"],
        "the secret prompt",
        text("unused"),
    );
    answered(&first, 3);
    let (id, source) = started(&p, 0);
    assert_eq!(source, "startup");

    // `-c` continues it: same id, resumed; the model sees only the new prompt.
    let second = p.prompt_in(&p.proj(), &["-c"], "normal prompt", text("answer"));
    answered(&second, 0);
    assert_eq!(started(&p, 1), (id.clone(), "resume".to_string()));
    let requests = p.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let sent = requests[0].to_string();
    assert!(sent.contains("normal prompt"), "{sent}");
    assert!(!sent.contains("the secret prompt"), "{sent}");

    // Another folder has its own: a new session, though this one is newer.
    let other = p.prompt_in(&elsewhere, &["--continue"], "over there", text("there"));
    answered(&other, 0);
    let (other_id, source) = started(&p, 2);
    assert_eq!(source, "startup");
    assert_ne!(other_id, id);

    // Back in the project: its session, with the answered exchange.
    let third = p.prompt_in(&p.proj(), &["--continue"], "and again", text("again"));
    answered(&third, 0);
    assert_eq!(started(&p, 3), (id, "resume".to_string()));
    let last = p.requests().last().unwrap().to_string();
    assert!(
        last.contains("normal prompt") && last.contains("and again"),
        "{last}"
    );
    assert!(!last.contains("over there"), "{last}");
}

#[test]
fn continue_and_session_together_are_refused_as_bad_arguments() {
    let p = project();
    let run = p.prompt_in(
        &p.proj(),
        &["--continue", "--session", "s1"],
        "hi",
        json!([]),
    );
    answered(&run, 2);
    assert!(
        run.outcome.stderr.contains("--continue"),
        "{}",
        run.outcome.stderr
    );
    assert!(p.requests().is_empty());
}

#[test]
fn continue_picks_the_session_active_last_not_the_one_created_last() {
    let p = project();
    let text = |t: &str| json!([{ "text": t }]);
    for (session, prompt) in [("a", "one"), ("b", "two"), ("a", "three")] {
        answered(&p.prompt(session, prompt, text("ok")), 0);
    }
    // `b` was created last, `a` was used last.
    answered(
        &p.prompt_in(&p.proj(), &["--continue"], "four", text("ok")),
        0,
    );
    assert_eq!(started(&p, 3), ("a".to_string(), "resume".to_string()));
    let last = p.requests().last().unwrap().to_string();
    assert!(last.contains("three") && last.contains("four"), "{last}");
    assert!(!last.contains("two"), "{last}");
}
