//! `CLAUDE_ENV_FILE` of a resumed session, over the real `dsh` binary, real
//! Claude Code hooks (shell commands), real bash and a real session log;
//! only the model is scripted.
//!
//! Recorded (`S160-resume`, `S160-compact`; `FINDINGS-envfile.md`): a
//! `claude -p --continue` run gives its SessionStart(resume) hooks files
//! under a fresh id of the new process, one each run, and nothing sources
//! them; the resumed run's `Bash` runs what the session's own folder holds,
//! the startup hooks' files of the first run. Two `dsh prompt` processes on
//! one session show the same: the second process's `Bash` sees the startup
//! hook's `A`, not the resume hook's `B`.

use std::path::Path;

use serde_json::{Value, json};

use super::compaction::{Project, Run};

/// The probe the model runs in each process.
const PROBE: &str = "echo \"A=${A-unset} B=${B-unset} C=${C-unset}\"";

/// A hook command that appends `line` to its `CLAUDE_ENV_FILE` and notes
/// the file's path in `<root>/envfiles.log`.
fn writes(root: &Path, line: &str) -> Value {
    json!({"type": "command", "command": format!(
        "cat >/dev/null; printf '%s\\n' '{line}' >> \"$CLAUDE_ENV_FILE\"; \
         printf '%s\\n' \"$CLAUDE_ENV_FILE\" >> {}/envfiles.log",
        root.display()
    )})
}

/// The recorded layout: a startup hook writes `A`, a resume hook `B`, and
/// a hook for every source (after them, so each run has two) writes `C`.
pub(crate) fn project(resume_line: &str) -> Project {
    let p = Project::new(&[], "");
    let root = p.root();
    let hooks = json!({"hooks": {"SessionStart": [
        {"matcher": "startup", "hooks": [writes(root, "export A=1")]},
        {"matcher": "resume", "hooks": [writes(root, resume_line)]},
        {"hooks": [writes(root, "export C=3")]},
    ]}});
    std::fs::write(root.join("hooks.json"), hooks.to_string()).unwrap();
    p
}

/// One process: the model runs the probe, then answers.
pub(crate) fn probe(p: &Project, prompt: &str) -> Run {
    let run = p.prompt(
        "s1",
        prompt,
        json!([
            {"tool_calls": [{"name": "Bash", "arguments": {"command": PROBE}}]},
            {"text": "done"},
        ]),
    );
    assert_eq!(run.outcome.code, Some(0), "{}", run.outcome.stderr);
    run
}

/// What the run's one `Bash` call gave the model.
pub(crate) fn probed(run: &Run) -> String {
    let results = run.of_type("tool/result");
    assert_eq!(results.len(), 1, "{:?}", run.events);
    results[0]["content"]
        .as_str()
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_digit() || ('a'..='f').contains(&c),
        })
}

#[test]
fn a_resumed_session_runs_the_startup_files_not_what_its_resume_hooks_wrote() {
    let p = project("export B=2");
    let first = probe(&p, "do it");
    assert_eq!(probed(&first), "A=1 B=unset C=3");
    let second = probe(&p, "again");
    // Recorded S160-resume: the resumed run's Bash saw A=1 B=unset C=3.
    assert_eq!(probed(&second), "A=1 B=unset C=3");

    // The files each hook was given: the session's folder at startup, a
    // fresh id's folder (one for both resume hooks) when resumed.
    let env_dir = p.root().join("state/session-env");
    let files: Vec<String> = std::fs::read_to_string(p.root().join("envfiles.log"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(files.len(), 4, "{files:?}");
    let in_dir = |f: &str| -> (String, String) {
        let rel = Path::new(f).strip_prefix(&env_dir).unwrap_or_else(|_| {
            panic!("{f} is not under {}", env_dir.display());
        });
        let mut parts = rel.iter().map(|s| s.to_string_lossy().into_owned());
        (parts.next().unwrap(), parts.next().unwrap())
    };
    let mut startup: Vec<(String, String)> = files[..2].iter().map(|f| in_dir(f)).collect();
    let mut resume: Vec<(String, String)> = files[2..].iter().map(|f| in_dir(f)).collect();
    startup.sort();
    resume.sort();
    assert_eq!(
        startup,
        [
            ("s1".into(), "sessionstart-hook-0.sh".into()),
            ("s1".into(), "sessionstart-hook-1.sh".into())
        ]
    );
    let fresh = resume[0].0.clone();
    assert!(is_uuid(&fresh), "{fresh}");
    assert_eq!(
        resume,
        [
            (fresh.clone(), "sessionstart-hook-0.sh".to_string()),
            (fresh.clone(), "sessionstart-hook-1.sh".to_string())
        ]
    );
    // Both folders stay, each with what its hooks wrote.
    let read = |dir: &str, f: &str| std::fs::read_to_string(env_dir.join(dir).join(f)).unwrap();
    assert_eq!(read("s1", "sessionstart-hook-0.sh"), "export A=1\n");
    assert_eq!(read(&fresh, "sessionstart-hook-0.sh"), "export B=2\n");
    assert_eq!(read(&fresh, "sessionstart-hook-1.sh"), "export C=3\n");
    let mut dirs: Vec<String> = std::fs::read_dir(&env_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut want = vec!["s1".to_string(), fresh.clone()];
    want.sort();
    assert_eq!(dirs, want);

    // The fresh id is only the folder's: the session keeps its id.
    let starts = p.log("s1");
    assert!(!serde_json::to_string(&starts).unwrap().contains(&fresh));
    assert!(!second.outcome.stdout.contains(&fresh));

    // A third process gets another fresh folder; the probe is unchanged.
    let third = probe(&p, "and again");
    assert_eq!(probed(&third), "A=1 B=unset C=3");
    let log = std::fs::read_to_string(p.root().join("envfiles.log")).unwrap();
    let last = in_dir(log.lines().last().unwrap()).0;
    assert!(is_uuid(&last) && last != fresh, "{last} after {fresh}");
}
