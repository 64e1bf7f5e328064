//! Codex's compaction under bad input: an unknown `compaction.style` is
//! refused naming the file and the key; PreCompact/PostCompact answers
//! Codex would not accept (unknown keys, broken JSON, exit 2) change
//! nothing: the compaction happens and the turn goes on (fail open).

use serde_json::json;

use crate::suite::codex_compaction::{
    CHECKPOINT_HEAD, HALF_WINDOW, Project, SUMMARY_MESSAGE, compacting_script, contents,
};

#[test]
fn an_unknown_compaction_style_is_refused_naming_the_key() {
    let p = Project::codex(&[], "compaction:\n  style: gemini\n");
    let run = p.prompt("x1", "hello", json!([{"text": "hi"}]));
    assert_ne!(run.outcome.code, Some(0));
    let e = &run.outcome.stderr;
    assert!(
        e.contains("cordis.yml") && e.contains("compaction") && e.contains("gemini"),
        "{e}"
    );
    assert!(p.requests().is_empty());
    assert!(!p.root().join("state/sessions/x1.jsonl").exists());
}

#[test]
fn compaction_hook_answers_codex_rejects_change_nothing() {
    let p = Project::codex(
        &[
            // `continue: false` beside a key Codex does not know: the whole
            // output is invalid, so it does not stop anything.
            (
                "PreCompact",
                r#"printf '%s' '{"continue":false,"stopReason":"no","bogus":1}'"#,
            ),
            (
                "PostCompact",
                "printf '{not json'; echo 'post says no' >&2; exit 2",
            ),
            ("Stop", "true"),
        ],
        HALF_WINDOW,
    );
    let run = p.prompt("x2", "run echo hi", compacting_script());
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    assert_eq!(p.order(), ["PreCompact", "PostCompact", "Stop"]);
    assert_eq!(run.of_type("session/compacted").len(), 1);
    let requests = p.requests();
    assert_eq!(requests.len(), 3);
    let checkpoint = contents(&requests[1]);
    assert!(checkpoint.last().unwrap().1.starts_with(CHECKPOINT_HEAD));
    assert_eq!(contents(&requests[2]).last().unwrap().1, SUMMARY_MESSAGE);
    // No hook text reached the model.
    let all = serde_json::to_string(&requests).unwrap();
    assert!(!all.contains("post says no") && !all.contains("bogus"));
    assert_eq!(run.of_type("turn/end")[0]["reason"], "completed");
}
